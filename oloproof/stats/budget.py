"""Holdout read budget (STATISTICS.md §6).

Reusing a holdout adaptively inflates its error like √(k/n) (Dwork et al. 2015, "The reusable
holdout", Science 349:636; Blum & Hardt 2015, "The Ladder", ICML). When the user sets no budget we
suggest one from a union bound: each read of a paired comparison on n cases has probability
2·Φ̄(δ/SE) of showing a spurious difference of δ or more when there is none, with
SE = √(ψ/n) the paired standard error under discordance ψ (STATISTICS.md §4, §7). B reads keep
the total chance of such a spurious δ-sized result at or below α = 1 − confidence when

    B = ⌊α / (2·Φ̄(δ·√n / √ψ))⌋,

capped (default 50) and never below 1. The chapter's set (n = 120, δ = 9.5 points, its observed
discordance ψ = 14/120 ≈ 0.117) gives 21 reads ("run 3 of 20 in budget").

The budget is a union bound over reads **planned in advance**, each comparing a version fixed
before the read with the baseline. It does not protect reads that steer tuning: when each read
decides what to try next (keep a change if the holdout score rose), the gains of the kept
changes add up. :func:`spurious_gain_probability` simulates both: on 120 cases with ψ = 0.12 and
no real improvement, a spurious gain of 9.5 points or more appears after 5, 10 and 18 planned
reads with probability 0.007, 0.014 and 0.024 (within α = 0.05), but after 5, 10 and 18 reads
that steer a greedy tuner with probability 0.20, 0.67 and 0.96 (20,000 runs, seed 2015).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from oloproof.stats._validate import check_confidence, check_count
from oloproof.stats.resolution import paired_mdd

__all__ = ["NON_ADAPTIVE_CAVEAT", "BudgetSuggestion", "spurious_gain_probability", "suggested_holdout_budget"]

BUDGET_FORMULA = "B = floor(alpha / (2 * normal_sf(delta * sqrt(n) / sqrt(psi)))), capped, at least 1"
MDD_FORMULA = "delta = (z_(1 - alpha/2) + z_power) * sqrt(psi / n)"
DEFAULT_POWER = 0.8
NON_ADAPTIVE_CAVEAT = (
    "this budget bounds reads planned in advance (a union bound); it does not protect reads that steer tuning: "
    "on 120 cases, keeping each change whose holdout score rose shows a spurious gain of 9.5 points or more "
    "with probability 0.20 after 5 such reads, 0.67 after 10 and 0.96 after 18 (STATISTICS.md §6)"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetSuggestion:
    """A suggested number of holdout reads, with everything needed to explain it.

    ``reads`` is the suggestion (1 ≤ reads ≤ cap). ``n`` counts holdout cases; ``delta`` is the
    smallest new-minus-old difference (fraction, 0.095 = 9.5 points) the set should settle;
    ``delta_source`` says whether it was given or derived (and how); ``psi`` is the expected
    discordance (fraction of cases on which two versions disagree); ``alpha`` = 1 − confidence;
    ``z`` = δ·√n/√ψ; ``uncapped`` = α/(2·Φ̄(z)) before flooring and capping (may be inf).
    """

    reads: int
    n: int
    delta: float
    delta_source: str
    psi: float
    alpha: float
    z: float
    uncapped: float
    cap: int
    capped: bool
    formula: str

    def explanation(self) -> str:
        """One line for a CLI or report: the formula with this set's numbers filled in."""
        limit = f", capped at {self.cap}" if self.capped else ""
        unit = "read" if self.reads == 1 else "reads"
        return (
            f"B = floor({self.alpha:g} / (2 * Phi_bar({self.delta:.4g} * sqrt({self.n})"
            f" / sqrt({self.psi:g})))) = floor({self.uncapped:.4g}) -> {self.reads} {unit}{limit}"
            f" (delta {self.delta * 100:.1f} points: {self.delta_source})"
        )


def _check_fraction(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if math.isnan(value) or not (0.0 < value <= 1.0):
        raise ValueError(f"{name} must lie in (0, 1], got {value!r}")
    return float(value)


def suggested_holdout_budget(
    n: int,
    *,
    delta: float | None = None,
    psi: float = 0.12,
    confidence: float = 0.95,
    cap: int = 50,
) -> BudgetSuggestion:
    """Suggest how many times a holdout of n cases may be read (STATISTICS.md §6).

    ``n`` counts holdout cases. ``delta`` is the smallest difference the set should settle, as a
    fraction (0.095 = 9.5 points); ``psi`` the expected discordance between compared versions
    (default 0.12); ``confidence`` fixes α = 1 − confidence; ``cap`` bounds the suggestion.

    B = ⌊α / (2·Φ̄(δ·√n/√ψ))⌋, then min(B, cap), then max(·, 1): a set too small to settle δ
    even once still gets one read, and the report's resolution line says why it is weak.
    Example: n = 120, δ = 0.095, ψ = 0.117 → 21 reads (ψ = 0.12 gives 18).

    When ``delta`` is None we use the set's own resolution: the paired minimum detectable
    difference at 80% power, δ = (z_{1−α/2} + z_{0.8})·√(ψ/n) (§7,
    :func:`oloproof.stats.resolution.paired_mdd`, with this call's ψ), the smallest difference
    this set can settle at all. Then δ·√n/√ψ = z_{1−α/2} + z_{0.8} regardless of n and ψ, so the
    suggestion depends only on the confidence: 9 reads at 95% (2·Φ̄(2.80) = 0.0051). Asking for
    a δ larger than the set's resolution buys more reads; a smaller one, fewer.
    """
    check_count("n", n, minimum=1)
    psi = _check_fraction("psi", psi)
    level = check_confidence(confidence)
    check_count("cap", cap, minimum=1)
    alpha = round(1.0 - level, 12)  # 1 − 0.95 is 0.050000000000000044 in binary floating point
    if delta is None:
        used_delta = paired_mdd(n, psi=psi, confidence=level, power=DEFAULT_POWER)
        source = f"the paired minimum detectable difference at {DEFAULT_POWER:.0%} power for n = {n}, {MDD_FORMULA}"
    else:
        used_delta = _check_fraction("delta", delta)
        source = "given"
    z = used_delta * math.sqrt(n) / math.sqrt(psi)
    # Φ̄(z) underflows to 0 only for z > ~38: then any number of reads is allowed, i.e. the cap.
    tail = 2.0 * float(stats.norm.sf(z))
    uncapped = alpha / tail if tail > 0.0 else math.inf
    capped = uncapped >= cap + 1  # i.e. floor(uncapped) > cap; true for inf as well
    reads = cap if capped else max(1, math.floor(uncapped))
    return BudgetSuggestion(
        reads=reads,
        n=n,
        delta=used_delta,
        delta_source=source,
        psi=psi,
        alpha=alpha,
        z=z,
        uncapped=uncapped,
        cap=cap,
        capped=capped,
        formula=BUDGET_FORMULA,
    )


def spurious_gain_probability(
    n: int,
    reads: int,
    *,
    delta: float,
    psi: float = 0.12,
    adaptive: bool,
    trials: int = 20_000,
    seed: int = 2015,
) -> list[float]:
    """Simulated chance of a spurious gain ≥ delta after 1, …, ``reads`` holdout reads (no real change).

    Every version is as good as the baseline. A new version differs from the one it is compared
    with on Binomial(n, ψ) holdout cases, each of them as likely to turn right as wrong, so the
    measured difference is (b − c)/n with b ~ Binomial(discordant, 1/2), c = discordant − b.

    * ``adaptive=False`` — reads planned in advance: each read compares a fresh version with the
      baseline; the result after r reads is whether *any* of the r differences reached delta
      (what the union bound of :func:`suggested_holdout_budget` controls).
    * ``adaptive=True`` — reads that steer a greedy tuner: each read compares a change to the
      current best version and keeps it if the holdout score rose; the result is whether the
      kept version is delta or more above the baseline on the holdout.

    Returns one probability per read count (index 0 is after one read). Seeded: the same
    arguments give the same numbers. ``delta`` and ``psi`` are fractions.
    """
    check_count("n", n, minimum=1)
    check_count("reads", reads, minimum=1)
    check_count("trials", trials, minimum=1)
    delta = _check_fraction("delta", delta)
    psi = _check_fraction("psi", psi)
    rng = np.random.default_rng(seed)
    # Drawn read by read (rows), so the first r reads do not depend on how many are asked for.
    discordant = rng.binomial(n, psi, size=(reads, trials))
    right = np.random.default_rng([seed, 1]).binomial(discordant, 0.5)
    difference = ((2 * right - discordant) / n).T
    if adaptive:
        reached = np.cumsum(np.maximum(difference, 0.0), axis=1)
    else:
        reached = np.maximum.accumulate(difference, axis=1)
    # A small tolerance so that a gain of exactly delta (e.g. 12/120 ≥ 0.1) counts.
    return [float(v) for v in (reached >= delta - 1e-12).mean(axis=0)]
