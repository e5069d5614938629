"""Paired difference of two versions on clustered cases (STATISTICS.md §4b) — approximate.

When a test set declares ``group`` (several cases about one document, turns of one dialogue), the
per-case paired differences d_i = new_i − old_i ∈ {−1, 0, +1} are not independent: cases of one
document tend to regress together. The exact intervals of ``oloproof.stats.paired`` treat the n
cases as n independent pairs and are too narrow (on 40 documents × 5 cases, at a true drop equal
to ``max_drop``, the melded interval let the guard PASS 16–28% of the time against 2.5%).

The method here works at the level of the groups, the units that are independent. It is the
paired analogue of the clustered pass rate's Korn–Graubard interval (``oloproof.stats.clustered``):

* the estimate is the mean difference over all n cases, Δ̂ = Σ d_i / n (as ungrouped);
* its variance is the cluster-robust (sandwich, CR1) variance of that mean,
  V = G/(G − 1) · Σ_g S_g² / n², with S_g = D_g − m_g·Δ̂ the group's sum of residuals (D_g the
  sum of the group's differences, m_g its size). This is exactly statsmodels' OLS of d on a
  constant with ``cov_type='cluster'`` (and Stata's ``regress d, vce(cluster g)``);
* the design effect V / V_srs (V_srs = (b + c − (b − c)²/n)/n², the variance if the cases were
  independent) turns n into an effective number of independent cases, n_eff = n·V_srs/V (at most
  n), adjusted for the degrees of freedom as Korn & Graubard do, n_eff·(t_{n−1}/t_ν)², where
  ν = G − 1, lowered to K − 1 when the discordant cases sit in few groups (K = (Σ_g a_g)² / Σ_g
  a_g², the Kish effective number of groups holding the a_g discordant cases; clipped to
  [min(5, G − 1), G − 1]), the rule of the clustered pass rate;
* the limits are the Fay–Lumbard melded limits at the effective counts (b·n_eff/n, c·n_eff/n of
  n_eff). A symmetric t interval, Δ̂ ∓ t_ν·√V, was measured too optimistic at its lower limit
  where regressions are rare and come by document (false PASS of the guard 4–8% at 30–100
  groups): the sum of a few clumps is skewed, and the melded limits carry that skew as the
  Clopper–Pearson limits of the pass-rate rule do;
* the interval is never narrower than the ungrouped exact one on the same tables (its hull with
  the melded interval on the n cases): grouping can only remove information.

Missing outputs are counted against the new version for the lower limit and in its favour for the
upper one, each limit from its own full clustered analysis (as ``oloproof.pairs`` does for the
exact interval), so missing outputs alone never PASS or FAIL a comparison.

The interval is approximate (a central limit theorem over groups); with fewer than
``MIN_CLUSTERS`` groups, counted or by size (``groups_by_size``), ``few_clusters`` is set and the gate
sends the rule to a manual review.
Measured coverage: ``benchmarks/grouped_paired_coverage.py`` and docs/statistics.md.

References
----------
Cameron AC, Miller DL (2015). A practitioner's guide to cluster-robust inference. J Human
Resources 50:317–372 (CR1 variance, t on G − 1 degrees of freedom).
Carter AV, Schnepel KT, Steigerwald DG (2017). Asymptotic behavior of a t-test robust to cluster
heterogeneity. Rev Econ Stat 99:698–709 (the effective number of clusters).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from scipy import special

from oloproof.stats._validate import check_confidence
from oloproof.stats.clustered import MIN_DF, groups_by_size, too_few_groups
from oloproof.stats.interval import Interval
from oloproof.stats.paired import melded_limit

__all__ = ["METHOD", "ClusteredPaired", "cluster_t", "clustered_paired_difference", "effective_limit"]

METHOD = "clustered-paired-melded"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteredPaired:
    """A clustered paired interval (new minus old) and the design facts behind it.

    ``se`` and ``df`` are the lower limit's (missing outputs counted against the new version);
    ``n_eff`` the number of independent cases with the same variance of the difference (the
    design effect applied to n, at most n); ``by_size`` the effective number of groups given their
    sizes (``oloproof.stats.clustered.groups_by_size``); ``few_clusters`` is True below
    ``MIN_CLUSTERS`` groups, counted either way.
    """

    interval: Interval
    n: int
    n_clusters: int
    se: float
    df: float
    n_eff: float
    few_clusters: bool
    by_size: float = 0.0


def cluster_t(differences: Sequence[int], cluster: Sequence[int], n_clusters: int) -> tuple[float, float, float]:
    """(mean, cluster-robust SE, effective df) of integer differences grouped by ``cluster`` codes.

    Order-free: group sums are exact integers and Σ S_g² is summed with ``math.fsum``.
    """
    n = len(differences)
    sums = [0] * n_clusters
    sizes = [0] * n_clusters
    moved = [0] * n_clusters
    for value, code in zip(differences, cluster, strict=True):
        sums[code] += value
        sizes[code] += 1
        moved[code] += value != 0
    mean = sum(sums) / n
    g = n_clusters
    residual = math.fsum((d - m * mean) ** 2 for d, m in zip(sums, sizes, strict=True))
    se = math.sqrt(g / (g - 1) * residual) / n
    total = sum(moved)
    squares = sum(a * a for a in moved)
    effective = total * total / squares if squares else float(g)
    df = min(max(effective - 1.0, min(MIN_DF, g - 1.0)), g - 1.0)
    return mean, se, df


@dataclass(frozen=True, slots=True)
class _Side:
    limit: float
    se: float
    df: float
    n_eff: float


def effective_limit(differences: list[int], cluster: list[int], g: int, *, confidence: float, upper: bool) -> float:
    """The lower (or upper) limit of the clustered paired interval before its hull with the
    case-level exact interval, for integer differences with no missing output (the benchmark's)."""
    return _side(differences, cluster, g, check_confidence(confidence), upper=upper).limit


def _side(differences: list[int], cluster: list[int], g: int, level: float, *, upper: bool) -> _Side:
    """The effective-count melded limit (lower or upper) of one imputed table (module docstring)."""
    n = len(differences)
    tail = (1.0 - level) / 2.0
    _, se, df = cluster_t(differences, cluster, g)
    b = sum(1 for d in differences if d > 0)
    c = sum(1 for d in differences if d < 0)
    independent = (b + c - (b - c) ** 2 / n) / (n * n)
    n_eff = float(n) if se <= 0.0 else min(float(n), n * independent / (se * se))
    n_eff *= (float(special.stdtrit(n - 1.0, tail)) / float(special.stdtrit(df, tail))) ** 2
    n_eff = min(float(n), max(n_eff, 1.0))
    share = n_eff / n
    limit = melded_limit(b * share, c * share, n_eff, confidence=level, upper=upper)
    return _Side(limit=limit, se=se, df=df, n_eff=n_eff)


def _imputed(old: bool | None, new: bool | None, *, against_new: bool) -> int:
    """One case's difference with a missing output counted against (or for) the new version."""
    o = (1 if against_new else 0) if old is None else int(old)
    w = (0 if against_new else 1) if new is None else int(new)
    return w - o


def clustered_paired_difference(
    old: Sequence[bool | None],
    new: Sequence[bool | None],
    groups: Sequence[Hashable],
    *,
    confidence: float,
    floor: Interval | None = None,
) -> ClusteredPaired:
    """Approximate interval for new − old pass rate on clustered paired cases.

    ``old[i]``/``new[i]`` are the two versions' outcomes on case ``i`` (True, False, None for no
    output), ``groups[i]`` its group. ``floor``: the ungrouped exact interval on the same tables;
    the result is never narrower than it. A single group gives [−1, 1] (one observation).
    """
    level = check_confidence(confidence)
    n = len(old)
    if n == 0 or len(new) != n or len(groups) != n:
        raise ValueError(f"old, new and groups must have one entry per case ({len(old)}, {len(new)}, {len(groups)})")
    codes: dict[Hashable, int] = {}
    cluster = [codes.setdefault(group, len(codes)) for group in groups]
    g = len(codes)
    answered = [w - o for o, w in zip(old, new, strict=True) if o is not None and w is not None]
    point = sum(answered) / len(answered) if answered else 0.0
    if g < 2:  # one group is one observation: it says nothing about the spread
        whole = Interval(estimate=point, low=-1.0, high=1.0, level=level, method=METHOD, approximate=True)
        return ClusteredPaired(
            interval=whole, n=n, n_clusters=g, se=math.inf, df=0.0, n_eff=1.0, few_clusters=True, by_size=float(g)
        )
    against = [_imputed(o, w, against_new=True) for o, w in zip(old, new, strict=True)]
    favour = [_imputed(o, w, against_new=False) for o, w in zip(old, new, strict=True)]
    low_side = _side(against, cluster, g, level, upper=False)
    high_side = _side(favour, cluster, g, level, upper=True)
    low, high = low_side.limit, high_side.limit
    if floor is not None:
        low, high = min(low, floor.low), max(high, floor.high)
    low, high = max(-1.0, low), min(1.0, high)
    se_low, df_low, n_eff = low_side.se, low_side.df, low_side.n_eff
    sizes = [0] * g
    for code in cluster:
        sizes[code] += 1
    by_size = groups_by_size(sizes)
    df_high = high_side.df
    return ClusteredPaired(
        interval=Interval(
            estimate=min(max(point, low), high),
            low=low,
            high=high,
            level=level,
            method=METHOD,
            approximate=True,
        ),
        n=n,
        n_clusters=g,
        se=se_low,
        df=min(df_low, df_high),
        n_eff=n_eff,
        few_clusters=too_few_groups(g, by_size),
        by_size=by_size,
    )
