"""Exact Clopper–Pearson intervals for one run's pass rate (STATISTICS.md §1).

Counts are numbers of cases: ``n`` counts every case of the test set, answered or not.
Rates and bounds are proportions in [0, 1] (not percentages).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from oloproof.stats._validate import check_confidence, check_count, check_probability
from oloproof.stats.interval import Interval

__all__ = [
    "clopper_pearson",
    "min_cases_to_pass",
    "min_cases_to_pass_max",
]

METHOD = "clopper-pearson"


def cp_lower(x: NDArray[np.int64], n: NDArray[np.int64] | int, tail: float) -> NDArray[np.float64]:
    """Clopper–Pearson lower bounds, vectorised: Beta⁻¹(tail; x, n − x + 1), 0 where x = 0.

    ``tail`` is the one-sided error (α/2 for a two-sided interval). Clopper & Pearson (1934);
    the beta form is the identity P(X ≥ x | p) = I_p(x, n − x + 1). Every caller that decides a
    rule goes through this function, so "PASS iff lower ≥ min" means the same thing everywhere.
    """
    x = np.asarray(x, dtype=np.int64)
    n_arr = np.broadcast_to(np.asarray(n, dtype=np.int64), x.shape)
    safe_x = np.where(x > 0, x, 1)
    low = stats.beta.ppf(tail, safe_x, n_arr - safe_x + 1)
    return np.where(x > 0, low, 0.0).astype(np.float64)


def cp_upper(x: NDArray[np.int64], n: NDArray[np.int64] | int, tail: float) -> NDArray[np.float64]:
    """Clopper–Pearson upper bounds, vectorised: Beta⁻¹(1 − tail; x + 1, n − x), 1 where x = n.

    Computed with the inverse survival function, which keeps precision for bounds near 1.
    """
    x = np.asarray(x, dtype=np.int64)
    n_arr = np.broadcast_to(np.asarray(n, dtype=np.int64), x.shape)
    safe_x = np.where(x < n_arr, x, n_arr - 1)
    high = stats.beta.isf(tail, safe_x + 1, n_arr - safe_x)
    return np.where(x < n_arr, high, 1.0).astype(np.float64)


def _lower(x: int, n: int, tail: float) -> float:
    return float(cp_lower(np.array(x), n, tail))


def _upper(x: int, n: int, tail: float) -> float:
    return float(cp_upper(np.array(x), n, tail))


def clopper_pearson(passes: int, n: int, *, confidence: float, missing: int = 0) -> Interval:
    """Exact two-sided Clopper–Pearson interval for a pass rate.

    ``n`` counts every case of the run, including the ``missing`` ones (cases that produced
    no output); ``passes`` counts answered cases that passed. Following STATISTICS.md §1, the
    lower bound counts missing cases as failures (``passes`` of ``n``) and the upper bound counts
    them as passes (``passes + missing`` of ``n``), so the interval contains the exact interval
    of every possible outcome of the missing cases.

    The estimate is the pass rate of the answered cases, ``passes / (n - missing)``; it always
    lies in [low, high] (low ≤ passes/n ≤ passes/(n − missing) ≤ (passes + missing)/n ≤ high).
    When no case was answered the estimate is 0.0, the rate that counts every missing case as a
    failure: the interval [0, 1] then says that nothing is known, and the estimate never flatters
    the run.

    Coverage is at least ``confidence`` for every true rate, and at most (1 − confidence)/2 on
    each side: "PASS iff low ≥ min" is the exact one-sided binomial test of p ≤ min.
    """
    level = check_confidence(confidence)
    check_count("n", n, minimum=1)
    check_count("passes", passes)
    check_count("missing", missing)
    if passes + missing > n:
        raise ValueError(f"passes + missing must be <= n, got passes={passes}, missing={missing}, n={n}")
    tail = (1.0 - level) / 2.0
    answered = n - missing
    estimate = passes / answered if answered > 0 else 0.0
    return Interval(
        estimate=estimate,
        low=_lower(passes, n, tail),
        high=_upper(passes + missing, n, tail),
        level=level,
        method=METHOD,
        approximate=False,
    )


def min_cases_to_pass(threshold: float, *, confidence: float) -> int:
    """Smallest number of cases with which a perfect run (every case passes) clears ``min``.

    A perfect run of n cases has Clopper–Pearson lower bound (α/2)^{1/n}, so it PASSes a rule
    ``min: threshold`` iff n ≥ ln(α/2) / ln(threshold) (STATISTICS.md §1: 17, 36, 72 and 368
    cases for 0.80, 0.90, 0.95 and 0.99 at 95%). A smaller set can never clear the threshold.
    The closed form gives the candidate; the final answer is checked against the same
    Clopper–Pearson lower bound the gate uses, so the two can never disagree by rounding.

    Raises ValueError for threshold 1: no finite run has a lower bound of 1.
    """
    level = check_confidence(confidence)
    threshold = check_probability("threshold", threshold)
    if threshold >= 1.0:
        raise ValueError("threshold 1 can never be cleared: no finite run has a lower bound of 1")
    if threshold <= 0.0:
        return 1
    tail = (1.0 - level) / 2.0
    n = max(1, math.ceil(math.log(tail) / math.log(threshold)))
    while n > 1 and _lower(n - 1, n - 1, tail) >= threshold:
        n -= 1
    while _lower(n, n, tail) < threshold:
        n += 1
    return n


def min_cases_to_pass_max(threshold: float, *, confidence: float) -> int:
    """Smallest number of cases with which a zero-event run clears a ``max`` rule.

    For a rule ``max: threshold`` on the rate of some event (a failure, a harmful output), the
    best possible run has no event at all; its Clopper–Pearson upper bound is 1 − (α/2)^{1/n},
    which is ≤ threshold iff n ≥ ln(α/2) / ln(1 − threshold). Mirror image of
    :func:`min_cases_to_pass`.

    Raises ValueError for threshold 0: no finite run has an upper bound of 0.
    """
    level = check_confidence(confidence)
    threshold = check_probability("threshold", threshold)
    if threshold <= 0.0:
        raise ValueError("threshold 0 can never be cleared: no finite run has an upper bound of 0")
    if threshold >= 1.0:
        return 1
    tail = (1.0 - level) / 2.0
    n = max(1, math.ceil(math.log(tail) / math.log1p(-threshold)))
    while n > 1 and _upper(0, n - 1, tail) <= threshold:
        n -= 1
    while _upper(0, n, tail) > threshold:
        n += 1
    return n
