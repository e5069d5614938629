"""Paired difference of two versions on clustered cases (STATISTICS.md §4b) — approximate.

When a test set declares ``group`` (several cases about one document, turns of one dialogue), the
per-case paired differences d_i = new_i − old_i ∈ {−1, 0, +1} are not independent: cases of one
document tend to regress together. The exact intervals of ``oloproof.stats.paired`` treat the n
cases as n independent pairs and are too narrow (on 40 documents × 5 cases, at a true drop equal
to ``max_drop``, the melded interval let the guard PASS 16–28% of the time against 2.5%).

The method here works at the level of the groups, the units that are independent:

* the estimate is the mean difference over all n cases, Δ̂ = Σ d_i / n (as ungrouped);
* its variance is the cluster-robust (sandwich, CR1) variance of that mean,
  V = G/(G − 1) · Σ_g S_g² / n², with S_g = D_g − m_g·Δ̂ the group's sum of residuals (D_g the
  sum of the group's differences, m_g its size). This is exactly statsmodels' OLS of d on a
  constant with ``cov_type='cluster'`` (and Stata's ``regress d, vce(cluster g)``);
* the limits are Δ̂ ∓ t_{ν, 1−α/2}·√V with ν = G − 1 degrees of freedom, lowered to K − 1 when
  the discordant cases sit in few groups (K = (Σ_g a_g)² / Σ_g a_g², the Kish effective number
  of groups holding the a_g discordant cases; clipped to [min(5, G − 1), G − 1]), the same rule
  as the clustered pass rate (``oloproof.stats.clustered``), because the variance then rests on
  those few groups;
* the interval is never narrower than the ungrouped exact one on the same tables (its hull with
  the Fay–Lumbard melded interval): grouping can only remove information, and the hull keeps a
  positive width where every group's residuals happen to be 0 (no discordant case at all).

Missing outputs are counted against the new version for the lower limit and in its favour for the
upper one, each limit from its own full clustered analysis (as ``oloproof.pairs`` does for the
exact interval), so missing outputs alone never PASS or FAIL a comparison.

The interval is approximate (a central limit theorem over groups); with fewer than
``MIN_CLUSTERS`` groups ``few_clusters`` is set and the gate sends the rule to a manual review.
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
from oloproof.stats.clustered import MIN_CLUSTERS, MIN_DF
from oloproof.stats.interval import Interval

__all__ = ["METHOD", "ClusteredPaired", "cluster_t", "clustered_paired_difference"]

METHOD = "clustered-paired-t"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteredPaired:
    """A clustered paired interval (new minus old) and the design facts behind it.

    ``se`` and ``df`` are the lower limit's (missing outputs counted against the new version);
    ``n_eff`` the number of independent cases with the same variance of the difference (the
    design effect applied to n, at most n); ``few_clusters`` is True below ``MIN_CLUSTERS``.
    """

    interval: Interval
    n: int
    n_clusters: int
    se: float
    df: float
    n_eff: float
    few_clusters: bool


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
        return ClusteredPaired(interval=whole, n=n, n_clusters=g, se=math.inf, df=0.0, n_eff=1.0, few_clusters=True)
    low_d = [_imputed(o, w, against_new=True) for o, w in zip(old, new, strict=True)]
    high_d = [_imputed(o, w, against_new=False) for o, w in zip(old, new, strict=True)]
    tail = (1.0 - level) / 2.0
    mean_low, se_low, df_low = cluster_t(low_d, cluster, g)
    mean_high, se_high, df_high = cluster_t(high_d, cluster, g)
    low = mean_low + float(special.stdtrit(df_low, tail)) * se_low
    high = mean_high - float(special.stdtrit(df_high, tail)) * se_high
    if floor is not None:
        low, high = min(low, floor.low), max(high, floor.high)
    low, high = max(-1.0, low), min(1.0, high)
    # The variance of the mean if the n cases were independent: the design effect's denominator.
    independent = (sum(abs(d) for d in low_d) / n - mean_low**2) / n
    n_eff = float(n) if se_low <= 0.0 else min(float(n), n * independent / se_low**2)
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
        few_clusters=g < MIN_CLUSTERS,
    )
