"""Area under the ROC curve (AUC) of a score against a binary label, and paired differences.

The AUC is the two-sample Mann–Whitney statistic: the fraction of (positive, negative) pairs
in which the positive case scores higher, ties counting one half (equal to scikit-learn's
``roc_auc_score`` and to pROC's ``auc``). Label 1 is the positive class and a higher score
means "more likely positive". The estimand is θ = P(X > Y) + ½·P(X = Y) for a random positive
X and a random negative Y. Every interval is conditional on the labels: the numbers of positives
``m`` and negatives ``n`` are taken as fixed, the cases of each class independent draws.

Methods
-------
* :func:`auc_interval` — **approximate**: DeLong, DeLong & Clarke-Pearson (1988), computed
  with the fast algorithm of Sun & Xu (2014) (midranks instead of the m·n comparison matrix;
  the same numbers as pROC's ``ci.auc(method = "delong")``). θ̂ ± z·SE, clipped to [0, 1].
  When DeLong's variance is zero (perfect separation, AUC 0 or 1, or every score tied) or a
  class has a single case (no variance estimate), the Wald interval would collapse to a point;
  the function then returns the exact interval of :func:`auc_interval_exact` instead, with
  method ``"delong-fallback-betting"`` (still labelled approximate: the procedure as a whole
  is DeLong's).
* :func:`auc_interval_exact` — **exact** (coverage ≥ confidence for every pair of score
  distributions, cases independent): a betting interval on a reduced design. The cases are
  split at random into k = min(m, n) disjoint blocks, each with one case of the smaller class
  and ⌊N/k⌋ cases of the larger class (N its size); a block's value is the fraction of its
  pairs that are concordant (ties ½). The k block values are independent, lie in [0, 1] and
  have mean θ, so the betting interval of :mod:`oloproof.stats.bounded` applies; its capital is
  averaged over seeded random partitions (a mean of e-values is an e-value: the argument
  Hoeffding (1963, §5) used for U-statistics, in betting form). The effective sample size is
  min(m, n): with 5 positives the interval is wide whatever the number of negatives — that
  width is honest, as the 5 positives alone carry the positive class's variability.
* :func:`paired_auc_difference` — **approximate**: DeLong's paired test of two scores on the same
  cases, θ_b − θ_a (b minus a: new minus old), Wald interval with DeLong's covariance; the same
  fallback to :func:`paired_auc_difference_exact` when the variance of the difference is zero.
* :func:`paired_auc_difference_exact` — **exact**: the block design above with the same blocks
  for both scores; block differences lie in [−1, 1] and the betting interval applies.

Missing scores (NaN: a case with no usable output) follow :mod:`oloproof.stats.bounded`: the
lower bound is computed with every missing score at its worst (a positive scored below every
case, a negative above every case), the upper bound with every missing score at its best; the
estimate is the AUC of the answered cases (0.0 when the answered cases lack a class, the
estimate that never flatters). In the paired forms a case missing in either score counts as
missing in both (worst for b and best for a in the lower bound, the reverse in the upper), and
the estimate uses the cases both scores answered.

One class absent (no positive or no negative case) raises ValueError: the AUC is undefined and
no interval is given; a caller reports it as insufficient evidence.

References
----------
DeLong ER, DeLong DM, Clarke-Pearson DL (1988). Comparing the areas under two or more correlated
receiver operating characteristic curves: a nonparametric approach. Biometrics 44:837–845.
Sun X, Xu W (2014). Fast implementation of DeLong's algorithm for comparing the areas under
correlated receiver operating characteristic curves. IEEE Signal Processing Letters 21:1389–1393.
Hoeffding W (1963). Probability inequalities for sums of bounded random variables. JASA 58:13–30.
Waudby-Smith I, Ramdas A (2023). Estimating means of bounded random variables by betting. JRSS-B.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from oloproof.stats._validate import check_confidence, check_seed
from oloproof.stats.bounded import betting_lower_rows
from oloproof.stats.interval import Interval

__all__ = [
    "auc_estimate",
    "auc_interval",
    "auc_interval_exact",
    "paired_auc_difference",
    "paired_auc_difference_exact",
]

Values: TypeAlias = Sequence[float] | NDArray[Any]

DELONG = "delong"
DELONG_FALLBACK = "delong-fallback-betting"
EXACT = "auc-betting"


# --------------------------------------------------------------------------------------------
# Inputs


def _scores(name: str, values: Values, size: int | None = None) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if size is not None and array.size != size:
        raise ValueError(f"{name} has {array.size} values but labels has {size}")
    if np.isinf(array).any():
        raise ValueError(f"{name} must be finite (NaN marks a case with no score)")
    return array


def _labels(labels: Values) -> NDArray[np.bool_]:
    array = np.asarray(labels)
    if array.ndim != 1:
        raise ValueError("labels must be one-dimensional")
    if array.size == 0:
        raise ValueError("labels is empty: the AUC needs at least one positive and one negative case")
    try:
        numeric = array.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError("labels must be 0 or 1 (or booleans)") from None
    bad = ~((numeric == 0.0) | (numeric == 1.0))
    if bad.any():
        raise ValueError(f"labels must be 0 or 1 (or booleans), got {array[bad][0].item()!r}")
    positive: NDArray[np.bool_] = np.asarray(numeric == 1.0, dtype=np.bool_)
    m, n = int(positive.sum()), int((~positive).sum())
    if m == 0 or n == 0:
        raise ValueError(
            f"the AUC needs at least one positive (label 1) and one negative (label 0) case; "
            f"got {m} positive and {n} negative"
        )
    return positive


def _canonical(positive: NDArray[np.bool_], *scores: NDArray[np.float64]) -> tuple[NDArray[Any], ...]:
    """The cases sorted by label, then by each score (NaN last): every sum is then taken in the
    same order whatever order the caller gave the cases in, so the interval is bit-for-bit the
    same."""
    order = np.lexsort([*scores[::-1], positive])
    return (positive[order], *(s[order] for s in scores))


def _fill(scores: NDArray[np.float64], positive: NDArray[np.bool_], *, worst: bool) -> NDArray[np.float64]:
    """Missing scores at their worst (positives −∞, negatives +∞) or at their best."""
    low_for_positive = -np.inf if worst else np.inf
    value = np.where(positive, low_for_positive, -low_for_positive)
    return np.where(np.isnan(scores), value, scores)


def auc_estimate(scores: Values, labels: Values) -> float:
    """The AUC of the answered cases (ties ½), 0.0 when they lack a class. Equal to
    ``sklearn.metrics.roc_auc_score(labels, scores)`` when no score is missing."""
    positive = _labels(labels)
    values = _scores("scores", scores, positive.size)
    return _answered_auc([values], positive)[0]


def _answered_auc(scores: list[NDArray[np.float64]], positive: NDArray[np.bool_]) -> list[float]:
    keep = ~np.any([np.isnan(s) for s in scores], axis=0)
    pos, neg = positive & keep, ~positive & keep
    if not pos.any() or not neg.any():
        return [0.0 for _ in scores]
    aucs, _, _ = _placements(np.array([s[pos] for s in scores]), np.array([s[neg] for s in scores]))
    return [float(a) for a in aucs]


# --------------------------------------------------------------------------------------------
# DeLong, fast (Sun & Xu 2014)


def _placements(
    pos: NDArray[np.float64], neg: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """AUCs and DeLong's structural components for k score rows: pos (k, m), neg (k, n).

    Sun & Xu (2014): with midranks T_Z over all cases, T_X within positives and T_Y within
    negatives, V10_i = (T_Z(x_i) − T_X(x_i))/n (the fraction of negatives below positive i,
    ties ½) and V01_j = 1 − (T_Z(y_j) − T_Y(y_j))/m (the fraction of positives above negative j);
    the AUC is the mean of V10 (and of V01).
    """
    m, n = pos.shape[1], neg.shape[1]
    tz = stats.rankdata(np.concatenate([pos, neg], axis=1), axis=1)
    tx = stats.rankdata(pos, axis=1)
    ty = stats.rankdata(neg, axis=1)
    v10 = (tz[:, :m] - tx) / n
    v01 = 1.0 - (tz[:, m:] - ty) / m
    return v10.mean(axis=1), v10, v01


def _delong_covariance(
    pos: NDArray[np.float64], neg: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """AUCs and DeLong's covariance matrix S10/m + S01/n (None when a class has one case)."""
    aucs, v10, v01 = _placements(pos, neg)
    m, n = pos.shape[1], neg.shape[1]
    if m < 2 or n < 2:
        return aucs, None
    s10 = np.atleast_2d(np.cov(v10, ddof=1))
    s01 = np.atleast_2d(np.cov(v01, ddof=1))
    return aucs, s10 / m + s01 / n


def _split(scores: NDArray[np.float64], positive: NDArray[np.bool_]) -> tuple[NDArray[np.float64], ...]:
    return scores[positive][None, :], scores[~positive][None, :]


def _interval(
    estimate: float,
    low: float,
    high: float,
    level: float,
    method: str,
    approximate: bool,
    seed: int | None,
    lowest: float,
) -> Interval:
    low, high = max(low, lowest), min(high, 1.0)
    if not low <= estimate <= high:
        raise ArithmeticError(
            f"{method} interval [{low!r}, {high!r}] does not contain its estimate {estimate!r}; "
            "this is a bug in oloproof, please report it with the scores"
        )
    return Interval(
        estimate=estimate, low=low, high=high, level=level, method=method, approximate=approximate, seed=seed
    )


def auc_interval(scores: Values, labels: Values, *, confidence: float) -> Interval:
    """Approximate interval for the AUC: DeLong's variance, fast algorithm (Sun & Xu 2014).

    θ̂ ± z_{1−α/2}·√(S10/m + S01/n), clipped to [0, 1] (pROC's ``ci.auc`` with
    ``method = "delong"``: 0.7314 [0.6301, 0.8326] for s100b on pROC's aSAH data). Under-covers
    when a class is small or the AUC is near 1 (see docs/statistics.md for measured coverage).
    When the variance is zero or a class has one case, returns :func:`auc_interval_exact`'s
    interval (seed 0) with method ``"delong-fallback-betting"``, labelled approximate.
    Raises ValueError when a class is absent.
    """
    level = check_confidence(confidence)
    positive = _labels(labels)
    values = _scores("scores", scores, positive.size)
    positive, values = _canonical(positive, values)
    estimate = _answered_auc([values], positive)[0]
    z = float(stats.norm.isf((1.0 - level) / 2.0))
    bounds = []
    for worst in (True, False):
        filled = _fill(values, positive, worst=worst)
        aucs, cov = _delong_covariance(*_split(filled, positive))
        if cov is None or not cov[0, 0] > 0.0:
            fallback = auc_interval_exact(values, positive, confidence=level, seed=0)
            return _interval(estimate, fallback.low, fallback.high, level, DELONG_FALLBACK, True, 0, 0.0)
        half = z * math.sqrt(float(cov[0, 0]))
        bounds.append(float(aucs[0]) - half if worst else float(aucs[0]) + half)
    return _interval(estimate, bounds[0], bounds[1], level, DELONG, True, None, 0.0)


def paired_auc_difference(scores_a: Values, scores_b: Values, labels: Values, *, confidence: float) -> Interval:
    """Approximate interval for AUC(b) − AUC(a) (b minus a: new minus old) on the same cases.

    DeLong, DeLong & Clarke-Pearson (1988): the difference ± z·√(V_a + V_b − 2·C_ab) with DeLong's
    covariance matrix (pROC's ``roc.test(..., method = "delong", paired = TRUE)``), clipped to
    [−1, 1]. When the variance of the difference is zero (e.g. both scores separate the classes
    perfectly, or the two scores rank every case alike) or a class has one case, returns
    :func:`paired_auc_difference_exact`'s interval (seed 0) with method
    ``"delong-fallback-betting"``, labelled approximate. Raises ValueError when a class is absent.
    """
    level = check_confidence(confidence)
    positive = _labels(labels)
    a = _scores("scores_a", scores_a, positive.size)
    b = _scores("scores_b", scores_b, positive.size)
    positive, a, b = _canonical(positive, a, b)
    auc_a, auc_b = _answered_auc([a, b], positive)
    estimate = auc_b - auc_a
    z = float(stats.norm.isf((1.0 - level) / 2.0))
    a, b = _either_missing(a, b)
    bounds = []
    for worst in (True, False):
        filled_a = _fill(a, positive, worst=not worst)
        filled_b = _fill(b, positive, worst=worst)
        pos = np.array([filled_a[positive], filled_b[positive]])
        neg = np.array([filled_a[~positive], filled_b[~positive]])
        aucs, cov = _delong_covariance(pos, neg)
        variance = None if cov is None else float(cov[0, 0] + cov[1, 1] - 2.0 * cov[0, 1])
        if variance is None or not variance > 0.0:
            fallback = paired_auc_difference_exact(a, b, positive, confidence=level, seed=0)
            return _interval(estimate, fallback.low, fallback.high, level, DELONG_FALLBACK, True, 0, -1.0)
        half = z * math.sqrt(variance)
        difference = float(aucs[1] - aucs[0])
        bounds.append(difference - half if worst else difference + half)
    return _interval(estimate, bounds[0], bounds[1], level, DELONG, True, None, -1.0)


def _either_missing(a: NDArray[np.float64], b: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    gone = np.isnan(a) | np.isnan(b)
    return np.where(gone, np.nan, a), np.where(gone, np.nan, b)


# --------------------------------------------------------------------------------------------
# Exact: betting on a block design

# Random partitions averaged: many for small sets, since one partition uses only min(m, n)
# independent block values and partitions differ much more than random orders do; fewer for large
# sets (where partitions differ little), so the work stays near two million block values.
MAX_PARTITIONS = 1024
MIN_PARTITIONS = 1
_PARTITION_TERMS = 2_000_000
_CHUNK_CASES = 1_000_000


def partition_count(cases: int) -> int:
    """How many random partitions the exact interval averages over for ``cases`` cases (m + n):
    1024 up to about 2,000 cases, then fewer (20 at 100,000, one from two million). Depends only
    on the count, never on the scores, so validity is untouched (one partition is already exact).
    """
    return int(min(MAX_PARTITIONS, max(MIN_PARTITIONS, _PARTITION_TERMS // max(cases, 1))))


def _block_values(rows: list[tuple[NDArray[np.float64], NDArray[np.float64]]], seed: int) -> list[NDArray[np.float64]]:
    """For each score (pos, neg), the block values over ``partition_count`` random partitions.

    Returns, per score, an array (R, k): row r holds the k block values of partition r, in a
    random order. Every score uses the same partitions. Partitions are drawn and compared in
    chunks of about a million cases, so memory stays bounded for any number of cases.
    """
    pos0, neg0 = rows[0]
    m, n = pos0.size, neg0.size
    k = min(m, n)
    small_is_pos = m <= n
    big = max(m, n)
    width = big // k
    count = partition_count(m + n)
    rng = np.random.default_rng(seed)
    # Sort each class by every score (the first as the primary key): the partitions then depend
    # only on the multiset of cases, never on the order the caller gave them in.
    order_pos = np.lexsort([pos for pos, _ in rows][::-1])
    order_neg = np.lexsort([neg for _, neg in rows][::-1])
    sorted_rows = [(pos[order_pos], neg[order_neg]) for pos, neg in rows]
    values = [np.empty((count, k)) for _ in rows]
    chunk = max(1, _CHUNK_CASES // (m + n))
    for first_row in range(0, count, chunk):
        size = min(chunk, count - first_row)
        perm_small = np.argsort(rng.random((size, k)), axis=1, kind="stable")
        perm_big = np.argsort(rng.random((size, big)), axis=1, kind="stable")[:, : k * width]
        for out, (pos, neg) in zip(values, sorted_rows, strict=True):
            small, large = (pos, neg) if small_is_pos else (neg, pos)
            one = small[perm_small][:, :, None]
            block = large[perm_big].reshape(size, k, width)
            high, low = (one, block) if small_is_pos else (block, one)
            wins = np.count_nonzero(high > low, axis=2) + 0.5 * np.count_nonzero(high == low, axis=2)
            out[first_row : first_row + size] = wins / width
    return values


def _betting(rows: NDArray[np.float64], alpha: float) -> tuple[float, float]:
    low = betting_lower_rows(rows, alpha=alpha)
    high = 1.0 - betting_lower_rows(1.0 - rows, alpha=alpha)
    return low, high


def auc_interval_exact(scores: Values, labels: Values, *, confidence: float, seed: int = 0) -> Interval:
    """Exact interval for the AUC: hedged-capital betting on k = min(m, n) independent blocks.

    See the module docstring for the design. Coverage is at least ``confidence`` for every
    pair of score distributions (ties allowed), given the labels; the guarantee averages over
    the seed, which a caller fixes in advance (e.g. :func:`oloproof.stats.bounded.order_seed`
    of the test set). The interval depends only on the multiset of (score, label) cases and
    ``seed``. Raises ValueError when a class is absent.
    """
    level = check_confidence(confidence)
    check_seed(seed)
    positive = _labels(labels)
    values = _scores("scores", scores, positive.size)
    positive, values = _canonical(positive, values)
    estimate = _answered_auc([values], positive)[0]
    alpha = 1.0 - level
    worst = _fill(values, positive, worst=True)
    blocks = _block_values([(worst[positive], worst[~positive])], seed)[0]
    if np.isnan(values).any():
        low, _ = _betting(blocks, alpha)
        best = _fill(values, positive, worst=False)
        _, high = _betting(_block_values([(best[positive], best[~positive])], seed)[0], alpha)
    else:
        low, high = _betting(blocks, alpha)
    return _interval(estimate, low, high, level, EXACT, False, seed, 0.0)


def paired_auc_difference_exact(
    scores_a: Values, scores_b: Values, labels: Values, *, confidence: float, seed: int = 0
) -> Interval:
    """Exact interval for AUC(b) − AUC(a) (new minus old): betting on paired block differences.

    The same random blocks for both scores; a block's value is its b-concordance minus its
    a-concordance, in [−1, 1], with mean θ_b − θ_a; the betting interval of (d + 1)/2 is mapped
    back. Exact for every joint distribution of the two scores, given the labels.
    """
    level = check_confidence(confidence)
    check_seed(seed)
    positive = _labels(labels)
    a = _scores("scores_a", scores_a, positive.size)
    b = _scores("scores_b", scores_b, positive.size)
    positive, a, b = _canonical(positive, a, b)
    auc_a, auc_b = _answered_auc([a, b], positive)
    a, b = _either_missing(a, b)
    alpha = 1.0 - level
    bounds = []
    for worst in (True, False):
        fa = _fill(a, positive, worst=not worst)
        fb = _fill(b, positive, worst=worst)
        block_a, block_b = _block_values([(fa[positive], fa[~positive]), (fb[positive], fb[~positive])], seed)
        low, high = _betting((block_b - block_a + 1.0) / 2.0, alpha)
        bounds.append(2.0 * low - 1.0 if worst else 2.0 * high - 1.0)
    return _interval(auc_b - auc_a, bounds[0], bounds[1], level, EXACT, False, seed, -1.0)
