"""Reweighting by stratum: score intervals per stratum, combined by MOVER (STATISTICS.md §5).

Two sets that hold different mixes of strata are compared only after each is recombined under
one shared set of weights w_h (the holdout's mix, or production's), fixed before any score is
seen. Every stratum with a positive weight keeps it: nothing is pooled or collapsed, so one more
case can never move a stratum from "alone" to "merged" and make the bounds jump.

* A rate: θ_w = Σ w_h p_h. Each p_h gets its Wilson score interval with continuity correction
  [l_h, u_h] (inside [0, 1] by construction, with positive width at p̂_h ∈ {0, 1}), and the
  weighted sum gets MOVER limits
  (Zou & Donner 2008; the same square-and-add as Newcombe's hybrid score interval):

      L = θ̂_w − √(Σ w_h² (p̂_h − l_h)²),   U = θ̂_w + √(Σ w_h² (u_h − p̂_h)²),

  clipped to [Σ w_h l_h, Σ w_h u_h] ⊆ [0, 1] (the limits cannot leave the hull of the strata's own
  intervals). Method "wilson-cc-mover", approximate.
* A paired movement (current − baseline on the same cases): each stratum's Δ_h gets Tango's score
  interval (``oloproof.stats.paired``), combined the same way. Method "tango-mover", approximate.
* A stratum with a positive weight and no case in a set leaves its rate there unknown: the
  reweighting of that set is refused (:class:`NotReweighted`, with the reason), never filled in.

Monotone by construction: the Wilson and Tango limits are non-decreasing in a stratum's passes,
and ∂L/∂p̂_h = w_h − w_h²(p̂_h − l_h)(1 − ∂l_h/∂p̂_h)/√(…) ≥ 0 because w_h(p̂_h − l_h) ≤ √(…) and
0 ≤ ∂l_h/∂p̂_h; so one more pass in any stratum never lowers either bound (tested by hypothesis).

A stratum is *thin* in a set when its own score interval is wider than :data:`THIN_WIDTH`: it
then says little about its rate, and reports name it; it still keeps its weight, and its width is
carried into the combined interval.

References
----------
Wilson EB (1927). Probable inference, the law of succession, and statistical inference. JASA 22.
Tango T (1998). Equivalence test and confidence interval for the difference in proportions for
the paired-sample design. Statistics in Medicine 17:891–908.
Zou GY, Donner A (2008). Construction of confidence limits about effect measures: a general
approach. Statistics in Medicine 27:1693–1702.
Newcombe RG (1998). Interval estimation for the difference between independent proportions.
Statistics in Medicine 17:873–890.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy import stats

from oloproof.stats._validate import check_confidence, check_count
from oloproof.stats.interval import Interval
from oloproof.stats.paired import PairedCounts, paired_difference

__all__ = [
    "THIN_WIDTH",
    "NotReweighted",
    "Reweighting",
    "StratumPart",
    "mover_combination",
    "reweight_paired",
    "reweight_rate",
    "wilson_interval",
]

# A stratum whose own score interval is wider than this (60 of the 100 points [0, 1] spans) says
# next to nothing about its rate: reports name it. At 95% a continuity-corrected Wilson interval
# is this wide up to 9 cases at a 50% rate, 7 at 80%, 4 at 100%.
THIN_WIDTH = 0.6


class NotReweighted(ValueError):
    """The reweighting cannot be computed; the message says why (a weighted stratum with no case)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StratumPart:
    """One stratum's share of a reweighted figure: its normalised weight, cases and interval."""

    name: str
    weight: float
    n: int
    interval: Interval

    @property
    def thin(self) -> bool:
        return self.interval.width > THIN_WIDTH


@dataclass(frozen=True, slots=True, kw_only=True)
class Reweighting:
    """A reweighted rate or movement: the combined interval and the parts it was made of."""

    interval: Interval
    parts: tuple[StratumPart, ...]


@functools.lru_cache(maxsize=64)
def _z(level: float) -> float:
    return float(stats.norm.ppf(0.5 + level / 2.0))


def wilson_interval(passes: int, n: int, *, confidence: float, continuity: bool = True) -> Interval:
    """Wilson's score interval for passes/n, by default with the continuity correction.

    Approximate; contains the estimate; inside [0, 1]; the lower limit is 0 at passes = 0 and the
    upper 1 at passes = n. With ``continuity`` (default; method "wilson-cc") the limits solve
    |p̂ − p| − 1/(2n) = z·√(p(1 − p)/n) (Newcombe 1998, method 4; R's ``prop.test``), which
    reweighting uses: plain Wilson ("wilson") under-covers one side by up to 7% once summed over
    strata near 0 or 1 (docs/statistics.md).
    """
    check_count("n", n, minimum=1)
    check_count("passes", passes)
    if passes > n:
        raise ValueError(f"passes must be <= n = {n}, got {passes}")
    level = check_confidence(confidence)
    z = _z(level)
    p = passes / n
    if continuity:
        root_low = z * z - 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) + 1.0)
        root_high = z * z + 2.0 - 1.0 / n + 4.0 * p * (n * (1.0 - p) - 1.0)
        denom = 2.0 * (n + z * z)
        low = (2.0 * n * p + z * z - 1.0 - z * math.sqrt(max(root_low, 0.0))) / denom
        high = (2.0 * n * p + z * z + 1.0 + z * math.sqrt(max(root_high, 0.0))) / denom
        method = "wilson-cc"
    else:
        denom = 1.0 + z * z / n
        centre = (p + z * z / (2.0 * n)) / denom
        half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
        low, high = centre - half, centre + half
        method = "wilson"
    low = 0.0 if passes == 0 else max(0.0, min(p, low))
    high = 1.0 if passes == n else min(1.0, max(p, high))
    return Interval(estimate=p, low=low, high=high, level=level, method=method, approximate=True)


def mover_combination(parts: Sequence[tuple[float, Interval]], *, confidence: float, method: str) -> Interval:
    """MOVER limits for Σ c_k θ_k from intervals for independent θ_k (Zou & Donner 2008).

    ``parts`` are (coefficient, interval) pairs; a negative coefficient swaps which side of its
    interval feeds which limit. The limits are clipped to the hull [Σ c_k·(its lower end),
    Σ c_k·(its upper end)], which holds the estimate. Always approximate.
    """
    level = check_confidence(confidence)
    if not parts:
        raise ValueError("parts must hold at least one (coefficient, interval)")
    estimate = 0.0
    down = up = 0.0
    hull_low = hull_high = 0.0
    for coefficient, interval in parts:
        if not math.isfinite(coefficient):
            raise ValueError(f"coefficients must be finite, got {coefficient!r}")
        if not math.isclose(interval.level, level, rel_tol=0.0, abs_tol=1e-12):
            raise ValueError(f"every interval must be at level {level} for MOVER, got {interval.level}")
        if not (interval.low <= interval.estimate <= interval.high):
            raise ValueError(f"an interval must satisfy low <= estimate <= high, got {interval}")
        below, above = interval.estimate - interval.low, interval.high - interval.estimate
        if coefficient < 0:
            below, above = above, below
        estimate += coefficient * interval.estimate
        down += (coefficient * below) ** 2
        up += (coefficient * above) ** 2
        ends = (coefficient * interval.low, coefficient * interval.high)
        hull_low += min(ends)
        hull_high += max(ends)
    low = max(hull_low, estimate - math.sqrt(down))
    high = min(hull_high, estimate + math.sqrt(up))
    return Interval(
        estimate=estimate,
        low=min(low, estimate),
        high=max(high, estimate),
        level=level,
        method=method,
        approximate=True,
    )


def _weights(weights: Mapping[str, float], named: Sequence[str]) -> dict[str, float]:
    unknown = sorted(set(named) - set(weights))
    if unknown:
        raise ValueError(f"weights has no entry for stratum {unknown[0]!r} (give 0 to leave it out)")
    clean: dict[str, float] = {}
    for name, raw in weights.items():
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise TypeError(f"weights[{name!r}] must be a number, got {type(raw).__name__}")
        if not math.isfinite(raw) or raw < 0:
            raise ValueError(f"weights[{name!r}] must be finite and >= 0, got {raw!r}")
        clean[name] = float(raw)
    total = sum(clean.values())
    if not math.isfinite(total) or total <= 0.0:
        raise ValueError("weights must add up to a positive, finite number")
    return {name: value / total for name, value in clean.items() if value > 0.0}


def _no_case(name: str, weight: float, what: str) -> NotReweighted:
    shown = f"{weight:.3f}" if weight >= 0.0005 else f"{weight:.1e}"  # a tiny weight is not "0.000"
    return NotReweighted(
        f"stratum {name} carries weight {shown} but has no case in {what}: its rate there is unknown, so "
        "this set is not reweighted (declare its weight 0 with --weights to leave it out of both sets)"
    )


def reweight_rate(
    passes_by_stratum: Mapping[str, tuple[int, int]],
    weights: Mapping[str, float],
    *,
    confidence: float,
    what: str = "this set",
) -> Reweighting:
    """Σ w_h p_h with a Wilson (continuity-corrected) interval per stratum, combined by MOVER ("wilson-cc-mover").

    ``passes_by_stratum[h] = (passes_h, n_h)``; ``weights[h]`` the shares (normalised; strata of
    weight 0 are left out). Raises :class:`NotReweighted` when a stratum of positive weight has no
    case (``what`` names the set in the message).
    """
    level = check_confidence(confidence)
    shares = _weights(weights, list(passes_by_stratum))
    parts: list[StratumPart] = []
    for name in sorted(shares):
        passes, n = passes_by_stratum.get(name, (0, 0))
        if n == 0:
            raise _no_case(name, shares[name], what)
        parts.append(
            StratumPart(name=name, weight=shares[name], n=n, interval=wilson_interval(passes, n, confidence=level))
        )
    combined = mover_combination([(p.weight, p.interval) for p in parts], confidence=level, method="wilson-cc-mover")
    return Reweighting(interval=combined, parts=tuple(parts))


def reweight_paired(
    counts_by_stratum: Mapping[str, PairedCounts],
    weights: Mapping[str, float],
    *,
    confidence: float,
    what: str = "this set",
) -> Reweighting:
    """Σ w_h Δ_h with Tango's score interval per stratum, combined by MOVER ("tango-mover").

    ``counts_by_stratum[h]`` is stratum h's paired table (n its cases, b only the current version
    passes, c only the baseline). Raises :class:`NotReweighted` as :func:`reweight_rate` does.
    """
    level = check_confidence(confidence)
    shares = _weights(weights, list(counts_by_stratum))
    parts: list[StratumPart] = []
    seen: dict[tuple[int, int, int], Interval] = {}  # many small strata share a table: solve each once
    for name in sorted(shares):
        table = counts_by_stratum.get(name)
        if table is None or table.n == 0:
            raise _no_case(name, shares[name], what)
        key = (table.b, table.c, table.n)
        if key not in seen:
            seen[key] = paired_difference(table.b, table.c, table.n, confidence=level, method="tango")
        interval = seen[key]
        parts.append(StratumPart(name=name, weight=shares[name], n=table.n, interval=interval))
    combined = mover_combination([(p.weight, p.interval) for p in parts], confidence=level, method="tango-mover")
    return Reweighting(interval=combined, parts=tuple(parts))
