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
from oloproof.holdout.history import Reading, holdout_history
from oloproof.stats.resolution import paired_cases_needed, paired_cases_needed_exact, paired_exact_power, paired_mdd

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
    exact_power: float  # of the exact test at ``cases``
    cases_exact: int | None  # from where the exact power stays at or above ``power`` (None: not scanned)
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
            "cases_exact": self.cases_exact,
            "holdout": None if self.holdout_n is None else {"n": self.holdout_n, "resolution": self.holdout_resolution},
        }


def _observed_psi(readings: tuple[Reading, ...]) -> tuple[float, str] | None:
    """ψ between the latest scored read and the earliest one of another version on the same set and
    criterion: the pair the gap compares (week 0 against now), so the widest span of the work."""
    usable = [r for r in readings if r.outcomes is not None and r.scored]
    if not usable:
        return None
    later = usable[-1]
    for earlier in usable[:-1]:
        if earlier.set_digest != later.set_digest or earlier.criterion != later.criterion:
            continue
        if earlier.version == later.version:
            continue
        assert earlier.outcomes is not None and later.outcomes is not None
        moved = sum(1 for a, b in zip(earlier.outcomes, later.outcomes, strict=True) if a is not b)
        if moved:
            return moved / later.n, (
                f"observed: {moved} of {later.n} holdout cases differ between read {earlier.seq} "
                f"({earlier.version}) and read {later.seq} ({later.version})"
            )
    return None


def holdout_size(release: Release, *, delta: float, power: float = 0.8, psi: float | None = None) -> Sizing:
    confidence = release.policy.confidence
    readings: tuple[Reading, ...] = ()
    if release.holdout is not None:
        readings = holdout_history(release).readings
    if psi is not None:
        source = "given (--psi)"
    else:
        observed = _observed_psi(readings)
        psi, source = observed if observed is not None else (DEFAULT_PSI, "assumed: the planning value (no two reads)")
    if delta > psi:
        raise UsageError(
            f"--delta {delta:g} is larger than the discordance ψ = {psi:.3f} ({source}): a paired difference cannot "
            "exceed the share of cases on which the two versions disagree"
        )
    cases = paired_cases_needed(delta, psi=psi, confidence=confidence, power=power)
    n = readings[-1].n if readings else None
    return Sizing(
        delta=delta,
        power=power,
        confidence=confidence,
        psi=psi,
        psi_source=source,
        cases=cases,
        exact_power=paired_exact_power(cases, delta=delta, psi=psi, confidence=confidence),
        cases_exact=paired_cases_needed_exact(delta, psi=psi, confidence=confidence, power=power),
        holdout_n=n,
        holdout_resolution=None if n is None else paired_mdd(n, psi=psi, confidence=confidence, power=power),
    )
