"""``oloproof holdout size --delta D``: how many reserved cases settle a paired difference of D.

A reserved set is sized against the smallest difference it must settle (the gap chapter): a
paired comparison of two versions on n shared cases detects a true difference δ at level α with
the given power when n ≥ (z_{1−α/2} + z_power)² · ψ / δ², ψ being the share of cases on which the
two versions disagree. ψ comes from ``--psi``, else from this holdout's own reads (the latest two
reads: the earliest read of another version against the latest), else the planning value 0.12 (STATISTICS.md §6). The
normal answer is checked against the exact McNemar test's power, which saw-tooths in n.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.holdout.budget import DEFAULT_PSI
from oloproof.holdout.history import Reading, holdout_history, usable
from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.resolution import (
    EXACT_SCAN_LIMIT,
    paired_cases_needed,
    paired_cases_needed_exact,
    paired_exact_power,
    paired_mdd,
)

if TYPE_CHECKING:
    from oloproof.config import Release

SIZE_SCHEMA = "oloproof.holdout-size/1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Sizing:
    delta: float
    power: float
    confidence: float
    psi: float
    psi_source: str
    cases: int  # normal approximation
    exact_power: float | None  # of the exact test at ``cases`` (None: beyond the exact scan's limit)
    cases_exact: int | None  # from where the exact power stays at or above ``power`` (None: not scanned)
    psi_range: tuple[float, float] | None  # 95% Clopper–Pearson range of an observed ψ
    cases_range: tuple[int, int] | None  # the cases needed at the two ends of that range
    holdout_n: int | None  # the declared holdout's size, when known from its reads
    holdout_resolution: float | None  # the difference it resolves at this power and ψ

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SIZE_SCHEMA,
            "delta": self.delta,
            "power": self.power,
            "confidence": self.confidence,
            "psi": self.psi,
            "psi_source": self.psi_source,
            "cases": self.cases,
            "method": "normal approximation, (z_(1-alpha/2) + z_power)^2 * psi / delta^2",
            "exact_power_at_cases": self.exact_power,
            "psi_range": None if self.psi_range is None else list(self.psi_range),
            "cases_range": None if self.cases_range is None else list(self.cases_range),
            "cases_exact": self.cases_exact,
            "holdout": None if self.holdout_n is None else {"n": self.holdout_n, "resolution": self.holdout_resolution},
        }


def _observed_psi(readings: tuple[Reading, ...]) -> tuple[int, int, str] | None:
    """Cases that moved, of how many, between the pair ``oloproof gap`` compares: the earliest
    scored read (the week-0 baseline) and the latest scored read of another version, on the same set
    and criterion."""
    scored = usable(readings)
    if not scored:
        return None
    first = scored[0]
    later = [
        r
        for r in scored[1:]
        if r.version != first.version and r.set_digest == first.set_digest and r.criterion == first.criterion
    ]
    if not later:
        return None
    last = later[-1]
    assert first.outcomes is not None and last.outcomes is not None
    moved = sum(1 for a, b in zip(first.outcomes, last.outcomes, strict=True) if a is not b)
    if moved == 0:
        return None
    return (
        moved,
        last.n,
        (
            f"observed: {moved} of {last.n} holdout cases differ between read {first.seq} ({first.version}) and read "
            f"{last.seq} ({last.version})"
        ),
    )


def holdout_size(release: Release, *, delta: float, power: float = 0.8, psi: float | None = None) -> Sizing:
    confidence = release.policy.confidence
    readings: tuple[Reading, ...] = ()
    if release.holdout is not None:
        readings = holdout_history(release).readings
    if not 0.5 <= power < 1.0:
        raise UsageError(
            f"--power {power:g}: give a power of at least 0.5 (0.8 is usual); below that the set would miss the "
            "difference more often than it finds it"
        )
    psi_range: tuple[float, float] | None = None
    if psi is not None:
        source = "given (--psi)"
    else:
        observed = _observed_psi(readings)
        if observed is None:
            psi, source = DEFAULT_PSI, "assumed: the planning value (no two reads of different versions to measure it)"
        else:
            moved, n_read, source = observed
            psi = moved / n_read
            interval = clopper_pearson(moved, n_read, confidence=confidence)
            psi_range = (interval.low, interval.high)
    if delta > psi:
        raise UsageError(
            f"--delta {delta:.6g} is larger than the discordance ψ = {psi:.3f} ({source}): a paired difference cannot "
            "exceed the share of cases on which the two versions disagree"
        )
    try:
        cases = paired_cases_needed(delta, psi=psi, confidence=confidence, power=power)
        cases_range = None
        if psi_range is not None:
            low_psi = max(psi_range[0], delta)  # a difference cannot exceed the discordance
            cases_range = (
                paired_cases_needed(delta, psi=low_psi, confidence=confidence, power=power),
                paired_cases_needed(delta, psi=psi_range[1], confidence=confidence, power=power),
            )
    except ValueError:
        raise UsageError(
            f"--delta {delta:.6g} is too small to size: settling it would need more cases than can be counted "
            "(above 1e308); give the smallest difference that matters, e.g. 0.02 (2 points)"
        ) from None
    n = readings[-1].n if readings else None
    exact = cases <= EXACT_SCAN_LIMIT  # beyond it, exact power is seconds to minutes of work
    return Sizing(
        delta=delta,
        power=power,
        confidence=confidence,
        psi=psi,
        psi_source=source,
        cases=cases,
        exact_power=paired_exact_power(cases, delta=delta, psi=psi, confidence=confidence) if exact else None,
        cases_exact=paired_cases_needed_exact(delta, psi=psi, confidence=confidence, power=power) if exact else None,
        psi_range=psi_range,
        cases_range=cases_range,
        holdout_n=n,
        holdout_resolution=None if n is None else paired_mdd(n, psi=psi, confidence=confidence, power=power),
    )
