"""The reweighting by stratum used before issue 17, kept only as the "before" column of
``benchmarks/reweight_coverage.py`` (it is not part of oloproof: it covered 0.09–0.95 in the
audit's regimes and one extra failure could raise both bounds by 5 points).

Post-stratified Wald intervals, with thin or degenerate strata pooled at their sample share and
then merged into the largest stratum; Wilson on the pooled rate when every stratum is thin.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from scipy import stats

from oloproof.stats._validate import check_confidence, check_count
from oloproof.stats.interval import Interval
from oloproof.stats.paired import PairedCounts, paired_difference

# A stratum is "thin" (its variance estimate cannot be trusted) below this many cases.
MIN_STRATUM_SIZE = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class StratumGroup:
    """Strata scored together after collapsing, with their summed (normalised) weight."""

    strata: tuple[str, ...]
    weight: float


def _normalised_weights(weights: Mapping[str, float], strata: Mapping[str, object]) -> dict[str, float]:
    unknown = sorted(set(strata) - set(weights))
    if unknown:
        raise ValueError(
            f"weights has no entry for stratum {unknown[0]!r}: every scored stratum needs a weight "
            "(give 0 explicitly to exclude it)"
        )
    clean: dict[str, float] = {}
    for name, raw in weights.items():
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise TypeError(f"weights[{name!r}] must be a number, got {type(raw).__name__}")
        value = float(raw)
        if not math.isfinite(value) or value < 0.0:
            raise ValueError(f"weights[{name!r}] must be finite and >= 0, got {raw!r}")
        clean[name] = value
    total = sum(clean.values())
    if total <= 0.0:
        raise ValueError("weights must not all be 0")
    # Weights may be given as proportions or counts; only their ratios matter.
    return {name: value / total for name, value in clean.items()}


def _collapse(
    sizes: Mapping[str, int],
    weights: Mapping[str, float],
    is_thin: Callable[[list[str]], bool],
) -> tuple[StratumGroup, ...]:
    """Merge strata whose variance estimate cannot be trusted (STATISTICS.md §5).

    Rule, deterministic and independent of label order:
    1. every stratum that is thin on its own (fewer than 5 cases, or a degenerate score such as
       p̂ ∈ {0, 1}, which would claim zero variance) goes into one pooled group;
    2. if that pooled group is itself thin, it is merged into the largest healthy stratum
       (most cases; ties broken by name);
    3. if no stratum is healthy, everything is one group (the plain pooled score).
    A group's weight is the sum of its members' weights; a stratum that carries weight but has
    no cases in this set (a category the set lacks) is pooled the same way. Strata with weight 0
    are dropped before collapsing, so their cases never leak into another stratum's score.
    """
    # A stratum with weight 0 is outside the reference population: it is left out entirely.
    names = sorted(h for h, w in weights.items() if w > 0.0)
    thin = [h for h in names if is_thin([h])]
    healthy = [h for h in names if h not in thin]
    groups: list[list[str]] = [[h] for h in healthy]
    if thin:
        if not is_thin(thin):
            groups.append(thin)
        elif healthy:
            largest = min(groups, key=lambda g: (-sizes.get(g[0], 0), g[0]))
            largest.extend(thin)
        else:
            groups = [names]
    return tuple(StratumGroup(strata=tuple(sorted(g)), weight=sum(weights[h] for h in g)) for g in groups)


def _check_rate_strata(passes_by_stratum: Mapping[str, tuple[float, int]]) -> None:
    if not passes_by_stratum:
        raise ValueError("passes_by_stratum must name at least one stratum")
    for name, pair in passes_by_stratum.items():
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"passes_by_stratum[{name!r}] must be a (passes, n) tuple, got {pair!r}")
        passes, n = pair
        check_count(f"passes_by_stratum[{name!r}] n", n)
        if isinstance(passes, bool) or not isinstance(passes, (int, float)):
            raise TypeError(f"passes_by_stratum[{name!r}] passes must be a number, got {passes!r}")
        if not (0.0 <= passes <= n):
            raise ValueError(f"passes_by_stratum[{name!r}] passes must lie in [0, n] = [0, {n}], got {passes!r}")


def rate_strata_groups(
    passes_by_stratum: Mapping[str, tuple[float, int]], weights: Mapping[str, float]
) -> tuple[StratumGroup, ...]:
    """The strata groups :func:`reweighted_rate` scores, after collapsing thin strata.

    A group is thin when it has fewer than 5 cases or its pass rate is 0 or 1.
    """
    _check_rate_strata(passes_by_stratum)
    w = _normalised_weights(weights, passes_by_stratum)

    def totals(group: list[str]) -> tuple[float, int]:
        pairs = [passes_by_stratum.get(h, (0, 0)) for h in group]
        return sum(p for p, _ in pairs), sum(n for _, n in pairs)

    def is_thin(group: list[str]) -> bool:
        passes, n = totals(group)
        return n < MIN_STRATUM_SIZE or passes <= 0.0 or passes >= n

    sizes = {h: passes_by_stratum.get(h, (0, 0))[1] for h in w}
    return _collapse(sizes, w, is_thin)


def _wilson(passes: float, n: int, z: float) -> tuple[float, float]:
    # Wilson (1927) score interval for one proportion.
    p = passes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def reweighted_rate(
    passes_by_stratum: Mapping[str, tuple[float, int]],
    weights: Mapping[str, float],
    *,
    confidence: float,
) -> Interval:
    """Post-stratified pass rate: per-stratum rates recombined under shared weights.

    ``passes_by_stratum[h] = (passes_h, n_h)``: n_h cases of stratum h in this set, passes_h of
    them passing (a sum of scores in [0, 1] is also accepted, so passes_h may be fractional).
    ``weights[h]`` is the share of stratum h in the reference composition (either set's or
    production's, fixed before looking at scores; normalised to sum to 1, so counts work too).
    Every scored stratum needs a weight; a weighted stratum absent from the set counts as n_h = 0.

    p̂_w = Σ w_h p̂_h, Var = Σ w_h² p̂_h(1 − p̂_h)/n_h (Cochran 1977, §5A.9, weights treated as
    known), interval p̂_w ± z·√Var (approximate, "post-stratified-wald"). Strata with n_h < 5 or
    p̂_h ∈ {0, 1} are collapsed first (see :func:`rate_strata_groups` for the rule). If collapsing
    leaves a single group, the weights no longer matter and the pooled rate gets a Wilson
    interval instead ("wilson"), which unlike Wald does not collapse at 0 or 1.
    """
    level = check_confidence(confidence)
    groups = rate_strata_groups(passes_by_stratum, weights)
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    rates: list[tuple[float, float, int]] = []
    for group in groups:
        passes = sum(passes_by_stratum.get(h, (0, 0))[0] for h in group.strata)
        n = sum(passes_by_stratum.get(h, (0, 0))[1] for h in group.strata)
        rates.append((group.weight, float(passes), n))
    if len(rates) == 1:
        _, passes, n = rates[0]
        if n == 0:
            raise ValueError("passes_by_stratum has no cases in any stratum with a positive weight")
        low, high = _wilson(passes, n, z)
        estimate = passes / n
        return Interval(
            estimate=estimate,
            low=min(low, estimate),
            high=max(high, estimate),
            level=level,
            method="wilson",
            approximate=True,
        )
    estimate = sum(w * p / n for w, p, n in rates)
    variance = sum(w * w * (p / n) * (1.0 - p / n) / n for w, p, n in rates)
    half = z * math.sqrt(variance)
    return Interval(
        estimate=estimate,
        low=max(0.0, estimate - half),
        high=min(1.0, estimate + half),
        level=level,
        method="post-stratified-wald",
        approximate=True,
    )


def _sum_counts(counts: list[PairedCounts]) -> PairedCounts:
    return PairedCounts(
        n=sum(t.n for t in counts),
        b=sum(t.b for t in counts),
        c=sum(t.c for t in counts),
        both=sum(t.both for t in counts),
        neither=sum(t.neither for t in counts),
        missing=sum(t.missing for t in counts),
    )


def _paired_variance(table: PairedCounts) -> float:
    # Unconditional (multinomial) variance of (b − c)/n: (b + c − (b − c)²/n)/n²
    # (STATISTICS.md §4; Fagerland et al. 2014, Wald interval).
    b, c, n = table.b, table.c, table.n
    return (b + c - (b - c) ** 2 / n) / (n * n)


def paired_strata_groups(
    counts_by_stratum: Mapping[str, PairedCounts], weights: Mapping[str, float]
) -> tuple[StratumGroup, ...]:
    """The strata groups :func:`reweighted_paired_difference` scores, after collapsing.

    A group is thin when it has fewer than 5 cases or its paired variance estimate is 0 (no
    discordant case, or every case discordant in the same direction).
    """
    if not counts_by_stratum:
        raise ValueError("counts_by_stratum must name at least one stratum")
    for name, table in counts_by_stratum.items():
        if not isinstance(table, PairedCounts):
            raise TypeError(f"counts_by_stratum[{name!r}] must be a PairedCounts, got {type(table).__name__}")
    w = _normalised_weights(weights, counts_by_stratum)
    empty = PairedCounts(n=0, b=0, c=0, both=0, neither=0, missing=0)

    def is_thin(group: list[str]) -> bool:
        table = _sum_counts([counts_by_stratum.get(h, empty) for h in group])
        return table.n < MIN_STRATUM_SIZE or _paired_variance(table) <= 0.0

    sizes = {h: counts_by_stratum.get(h, empty).n for h in w}
    return _collapse(sizes, w, is_thin)


def reweighted_paired_difference(
    counts_by_stratum: Mapping[str, PairedCounts],
    weights: Mapping[str, float],
    *,
    confidence: float,
) -> Interval:
    """Post-stratified paired difference (new minus old) on one set, under shared weights.

    ``counts_by_stratum[h]`` is the paired table of stratum h (from
    :func:`oloproof.stats.paired.paired_counts` on that stratum's cases; n counts its cases);
    ``weights`` as in :func:`reweighted_rate`. Δ_w = Σ w_h (b_h − c_h)/n_h,
    Var = Σ w_h² (b_h + c_h − (b_h − c_h)²/n_h)/n_h², interval Δ_w ± z·√Var (approximate,
    "post-stratified-paired-wald"). Strata with n_h < 5 or zero paired variance are collapsed
    (see :func:`paired_strata_groups`); if one group is left, the pooled table gets the Tango
    interval ("tango-score"), which keeps a positive width when b + c = 0.

    For the gap, compute this on the dev set and on the holdout set with the *same* weights and
    combine them with :func:`mover_difference`.
    """
    level = check_confidence(confidence)
    groups = paired_strata_groups(counts_by_stratum, weights)
    empty = PairedCounts(n=0, b=0, c=0, both=0, neither=0, missing=0)
    tables = [(g.weight, _sum_counts([counts_by_stratum.get(h, empty) for h in g.strata])) for g in groups]
    if len(tables) == 1:
        table = tables[0][1]
        if table.n == 0:
            raise ValueError("counts_by_stratum has no cases in any stratum with a positive weight")
        return paired_difference(table.b, table.c, table.n, confidence=level, method="tango")
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    estimate = sum(w * t.difference for w, t in tables)
    variance = sum(w * w * _paired_variance(t) for w, t in tables)
    half = z * math.sqrt(variance)
    return Interval(
        estimate=estimate,
        low=max(-1.0, estimate - half),
        high=min(1.0, estimate + half),
        level=level,
        method="post-stratified-paired-wald",
        approximate=True,
    )
