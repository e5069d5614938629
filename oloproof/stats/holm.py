"""Holm's step-down over the rows of a ``per:`` rule, and the exact one-sided binomial p-values it
runs on (docs/statistics.md, "Slices").

A ``min: t`` row may claim PASS (H0: rate <= t, rejected when P(X >= passes | n, t) is small) or
FAIL (H0: rate >= t, rejected when P(X <= passes + missing | n, t) is small). Missing outputs
count against each claim: failures for the PASS claim, passes for the FAIL claim, as the
Clopper–Pearson interval counts them (``oloproof.stats.binomial``). A ``max`` rule mirrors this.

Holm (1979), "A simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65–70.
Its adjusted p-values are ``max_{j<=i} min(1, (m - j) p_(j))`` over the sorted p-values, which is
what statsmodels' ``multipletests(method="holm")`` returns (tests/stats/test_holm.py pins both).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scipy import stats

from oloproof.stats._validate import check_count, check_probability

__all__ = ["ClaimP", "holm_adjust", "holm_reject", "row_p_values"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimP:
    """Exact one-sided p-values of a row's two possible claims against the threshold."""

    pass_p: float  # H0: the row does not meet the rule (a small value supports PASS)
    fail_p: float  # H0: the row meets the rule (a small value supports FAIL)

    @property
    def p(self) -> float:
        """The p-value of the claim the data lean to (the smaller one)."""
        return min(self.pass_p, self.fail_p)

    @property
    def claim(self) -> Literal["PASS", "FAIL"]:
        return "PASS" if self.pass_p <= self.fail_p else "FAIL"


def row_p_values(passes: int, n: int, *, missing: int = 0, threshold: float, kind: Literal["min", "max"]) -> ClaimP:
    """The two exact one-sided binomial p-values of a row with ``passes`` of ``n`` cases (``missing``
    of them without an output) against ``threshold``."""
    check_count("n", n, minimum=1)
    check_count("passes", passes)
    check_count("missing", missing)
    if passes + missing > n:
        raise ValueError(f"passes + missing must be <= n, got {passes} + {missing} > {n}")
    t = check_probability("threshold", threshold)
    low_x, high_x = passes, passes + missing  # missing as failures / as passes
    at_least = float(stats.binom.sf(low_x - 1, n, t))  # P(X >= passes | t)
    at_most = float(stats.binom.cdf(high_x, n, t))  # P(X <= passes + missing | t)
    if kind == "min":
        return ClaimP(pass_p=at_least, fail_p=at_most)
    # max: PASS claims rate <= t (H0: rate >= t, small when few passes); FAIL claims rate > t.
    return ClaimP(pass_p=float(stats.binom.cdf(high_x, n, t)), fail_p=float(stats.binom.sf(low_x - 1, n, t)))


def holm_adjust(p_values: list[float] | tuple[float, ...]) -> tuple[float, ...]:
    """Holm's adjusted p-values, in the input order: reject row i at level a iff adjusted[i] <= a."""
    for index, value in enumerate(p_values):
        check_probability(f"p_values[{index}]", value)
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return tuple(adjusted)


def holm_reject(p_values: list[float] | tuple[float, ...], *, alpha: float) -> tuple[bool, ...]:
    """Which hypotheses Holm's step-down rejects at family-wise level ``alpha``."""
    check_probability("alpha", alpha)
    return tuple(value <= alpha for value in holm_adjust(p_values))
