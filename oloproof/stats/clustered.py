"""Pass rate of one run whose cases come in clusters (STATISTICS.md §2) — approximate.

Cases that share a ``group`` (several questions about one document, turns of one dialogue)
are not independent; treating them as independent makes intervals too narrow. The clustered
standard error is that of Miller (2024), "Adding Error Bars to Evals", arXiv 2411.00640,
App. A (also inspect_ai's ``stderr(cluster=...)``); the interval is the Korn–Graubard
effective-sample-size Clopper–Pearson interval (Korn & Graubard 1998, Survey Methodology 24:
193–201), as R's ``survey::svyciprop(method="beta")`` computes it.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from oloproof.stats._validate import check_confidence
from oloproof.stats.binomial import cp_lower, cp_upper
from oloproof.stats.interval import Interval

__all__ = ["MIN_CLUSTERS", "ClusteredResult", "clustered_proportion"]

METHOD = "clustered-korn-graubard"

# Below this many clusters the cluster-level central limit theorem behind the clustered SE is
# not trustworthy (STATISTICS.md §2): the gate sends such a rule to MANUAL_REVIEW.
MIN_CLUSTERS = 30


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteredResult:
    """A clustered pass-rate interval and the design facts behind it.

    ``n`` counts every case (answered or not), ``n_clusters`` the distinct groups, ``n_eff``
    the Korn–Graubard effective number of independent cases (after the degrees-of-freedom
    adjustment; the smaller of the two bounds' values when cases are missing; the number of
    clusters when every answered case passed or every one failed). ``few_clusters`` is True
    when there are fewer than ``MIN_CLUSTERS`` clusters.
    """

    interval: Interval
    n: int
    n_clusters: int
    n_eff: float
    few_clusters: bool


def _check_inputs(
    scores: Sequence[float] | NDArray[Any],
    groups: Sequence[Hashable],
    missing: Sequence[bool] | NDArray[np.bool_] | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.bool_], int]:
    n = len(scores)
    if n == 0:
        raise ValueError("scores must not be empty")
    if len(groups) != n:
        raise ValueError(f"groups must have one entry per score: {len(groups)} groups, {n} scores")
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    mask = np.isnan(values)
    if missing is not None:
        if len(missing) != n:
            raise ValueError(f"missing must have one entry per score: {len(missing)} flags, {n} scores")
        mask |= np.asarray(missing, dtype=bool)
    answered = values[~mask]
    bad = ~((answered == 0.0) | (answered == 1.0))
    if bad.any():
        raise ValueError(
            f"scores must be 0 or 1 for answered cases, got {answered[bad][0]!r}; "
            "graded scores in [0, 1] belong to oloproof.stats.bounded"
        )
    codes: dict[Hashable, int] = {}
    cluster = np.fromiter((codes.setdefault(g, len(codes)) for g in groups), np.int64, n)
    if len(codes) < 2:
        raise ValueError(f"groups must name at least 2 clusters, got {len(codes)}")
    return np.where(mask, 0.0, values), cluster, mask, len(codes)


def _korn_graubard(
    y: NDArray[np.float64], cluster: NDArray[np.int64], n_clusters: int, tail: float
) -> tuple[float, float, float]:
    """(low, high, n_eff) for 0/1 outcomes ``y`` with cluster labels 0..G−1."""
    n = y.size
    g = n_clusters
    p = float(y.mean())
    if p == 0.0 or p == 1.0:
        # No within-sample variation: the clustered SE is 0 and n_eff is undefined. Treat each
        # cluster as one trial (STATISTICS.md §2): CP with 0 or G successes of G.
        if p == 1.0:
            return float(cp_lower(np.array(g), g, tail)), 1.0, float(g)
        return 0.0, float(cp_upper(np.array(0), g, tail)), float(g)
    # Miller (2024) App. A: SE_C² = G/(G−1) · Σ_g S_g² / n², S_g = Σ_{i∈g} (y_i − p̂); this is
    # svymean's linearisation variance for a with-replacement one-stage cluster design.
    cluster_sums = np.bincount(cluster, weights=y - p, minlength=g)
    variance = g / (g - 1) * float(np.sum(cluster_sums**2)) / n**2
    # n_eff = p̂(1−p̂)/SE²; capped at n, so clustering never claims more information than n
    # independent cases (svyciprop does not cap; the cap only binds when the design effect is
    # below 1, e.g. every cluster holding exactly its share of passes, where SE_C can be 0).
    n_eff = min(p * (1.0 - p) / variance, float(n)) if variance > 0.0 else float(n)
    # Korn & Graubard's degrees-of-freedom adjustment, as in svyciprop(method="beta"):
    # n_eff · (t_{α/2, n−1} / t_{α/2, G−1})².
    n_eff *= (float(stats.t.ppf(tail, n - 1)) / float(stats.t.ppf(tail, g - 1))) ** 2
    x_eff = n_eff * p
    # Clopper–Pearson quantiles at the (non-integer) effective counts.
    low = float(stats.beta.ppf(tail, x_eff, n_eff - x_eff + 1.0))
    high = float(stats.beta.isf(tail, x_eff + 1.0, n_eff - x_eff))
    # Guard: the interval always contains p̂ (widening only adds coverage).
    return min(low, p), max(high, p), n_eff


def clustered_proportion(
    scores: Sequence[float] | NDArray[Any],
    groups: Sequence[Hashable],
    *,
    confidence: float,
    missing: Sequence[bool] | NDArray[np.bool_] | None = None,
) -> ClusteredResult:
    """Approximate interval for a pass rate over clustered cases (Korn–Graubard, §2).

    ``scores`` holds one 0/1 outcome per case (bools work); ``groups`` the cluster label of each
    case (any hashable). A case that produced no output is marked NaN in ``scores``, or flagged
    in the optional ``missing`` mask (its score is then ignored). As in the exact binomial interval, the
    lower bound is computed with missing cases scored 0 and the upper bound with them scored 1,
    each as a full clustered analysis. The estimate is the pass rate of the answered cases
    (0.0 when none was answered, as in :func:`~oloproof.stats.binomial.clopper_pearson`).

    Only 0/1 scores are accepted: the effective-n Clopper–Pearson construction is for
    proportions. Graded scores belong to :mod:`oloproof.stats.bounded`.

    The result is approximate (its coverage rests on a central limit theorem over clusters);
    with fewer than ``MIN_CLUSTERS`` clusters ``few_clusters`` is set and the gate should not
    decide on it. At least two clusters are required.
    """
    level = check_confidence(confidence)
    tail = (1.0 - level) / 2.0
    y, cluster, mask, g = _check_inputs(scores, groups, missing)
    n_answered = int((~mask).sum())
    estimate = float(y[~mask].mean()) if n_answered else 0.0
    if mask.any():
        low, _, n_eff_low = _korn_graubard(y, cluster, g, tail)
        _, high, n_eff_high = _korn_graubard(np.where(mask, 1.0, y), cluster, g, tail)
        n_eff = min(n_eff_low, n_eff_high)
    else:
        low, high, n_eff = _korn_graubard(y, cluster, g, tail)
    if math.isnan(low) or math.isnan(high):  # pragma: no cover - defensive
        raise ArithmeticError("clustered interval came out NaN")
    return ClusteredResult(
        interval=Interval(
            estimate=estimate,
            low=low,
            high=high,
            level=level,
            method=METHOD,
            approximate=True,
        ),
        n=int(y.size),
        n_clusters=g,
        n_eff=n_eff,
        few_clusters=g < MIN_CLUSTERS,
    )
