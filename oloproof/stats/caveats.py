"""The caveats a method carries where its measured error exceeds its nominal one (docs/statistics.md).

Each was measured at 95% intervals (a nominal one-sided error of 2.5%). A policy at another
confidence has another nominal error, and the measurement does not carry over: the text then says
both, rather than comparing a measured 3% with a nominal 2.5% the policy does not use.
"""

from __future__ import annotations

__all__ = ["JUDGE_GRADED", "clustered_caveat", "clustered_paired_caveat", "nominal", "ppi_caveat"]

JUDGE_GRADED = "judge-graded"  # the prefix of a paired interval's method when a judge graded both versions
MEASURED_AT = 0.95  # the confidence every coverage benchmark ran at


def nominal(confidence: float) -> str:
    """The nominal one-sided error of a two-sided interval at ``confidence``: "2.5%" at 0.95."""
    return f"{(1.0 - confidence) / 2.0 * 100:.3g}%"


def _against(confidence: float) -> str:
    """ "against a nominal 2.5%", or at another confidence what was measured and what this policy's nominal is."""
    if abs(confidence - MEASURED_AT) < 1e-12:
        return f"against a nominal {nominal(MEASURED_AT)}"
    return (
        f"at 95% intervals, against a nominal {nominal(MEASURED_AT)}; this policy's {confidence * 100:g}% intervals "
        f"have a nominal {nominal(confidence)} a side, where it was not measured"
    )


def clustered_caveat(confidence: float) -> str:
    """The clustered pass-rate interval's caveat (``oloproof.stats.clustered``)."""
    return (
        "The clustered interval is approximate: where groups of unequal size are strongly correlated, ICC 0.2 or more, "
        f"at pass rates of 0.90 to 0.95, its one-sided error was measured at about 3% {_against(confidence)}."
    )


def clustered_paired_caveat(confidence: float) -> str:
    """The clustered paired interval's caveat (``oloproof.stats.clustered_paired``)."""
    return (
        "The clustered paired interval is approximate: with groups of very unequal size, within-group correlation "
        "and rare regressions, the guard's false-PASS rate was measured at up to 4% (where groups are few by count or "
        f"by size the gate does not decide) {_against(confidence)}."
    )


def ppi_caveat(confidence: float) -> str:
    """PPI++'s caveat, with the worst one-sided error measured by label count (benchmarks/judge_coverage.py)."""
    return (
        "; it is approximate: its one-sided error was measured up to 31% with 50 labels, 19% with 100 and 10% with "
        f"300 (the worst regime of each: a lenient judge at a pass rate of 0.95; docs/statistics.md), "
        f"{_against(confidence)}"
    )
