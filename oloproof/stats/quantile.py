"""The exact distribution-free interval for a quantile, from order statistics.

For the ``p``-quantile ``ξ_p = inf{x : F(x) >= p}`` of any distribution — continuous, discrete or
tied — and ``n`` independent draws sorted as ``X(1) <= ... <= X(n)``, with ``B ~ Binomial(n, p)``:

- ``P(X(r) > ξ_p) = P(#{X_i <= ξ_p} < r) <= P(B <= r - 1)``, since ``F(ξ_p) >= p``;
- ``P(X(s) < ξ_p) = P(#{X_i < ξ_p} >= s) <= P(B >= s)``, since ``F(ξ_p-) <= p``.

So with ``r`` the largest rank with ``P(B <= r - 1) <= α/2`` and ``s`` the smallest with
``P(B >= s) <= α/2``, ``[X(r), X(s)]`` covers ``ξ_p`` with probability at least ``1 - α`` whatever
``F`` is (Hahn & Meeker, *Statistical Intervals*, 1991, §5.2; Conover, *Practical Nonparametric
Statistics*, 3rd ed., 1999, §3.2). Where no rank qualifies the bound is infinite: a set that small
cannot bound the quantile on that side at all.

Missing values (NaN) are never dropped: they are taken as ``-inf`` for the lower bound and ``+inf``
for the upper, so the interval holds whatever the missing values were, and missing values alone can
neither clear nor miss a threshold. The estimate is the empirical quantile of the answered values
(``numpy.quantile(..., method="inverted_cdf")``, the sample version of ``ξ_p``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from oloproof.stats._validate import check_confidence
from oloproof.stats.interval import Interval

METHOD = "order statistics (binomial)"


def quantile_ranks(n: int, p: float, *, confidence: float) -> tuple[int | None, int | None]:
    """The 1-based ranks ``(r, s)`` of the order statistics bounding the ``p``-quantile of ``n``
    draws at two-sided ``confidence``; None where no rank keeps that side's error <= (1 - confidence) / 2."""
    confidence = check_confidence(confidence)
    _check_p(p)
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    tail = (1.0 - confidence) / 2.0
    if n == 0:
        return None, None
    ranks = np.arange(1, n + 1)
    below = stats.binom.cdf(ranks - 1, n, p)  # P(B <= r - 1), increasing in r
    above = stats.binom.sf(ranks - 1, n, p)  # P(B >= s), decreasing in s
    lows = ranks[below <= tail]
    highs = ranks[above <= tail]
    r = int(lows[-1]) if lows.size else None
    s = int(highs[0]) if highs.size else None
    return r, s


def min_cases_for_bound(p: float, *, confidence: float, side: str) -> int:
    """The fewest draws with a finite ``side`` bound ("upper": ``p**n <= α/2``; "lower":
    ``(1 - p)**n <= α/2``): below it the quantile cannot be bounded on that side."""
    confidence = check_confidence(confidence)
    _check_p(p)
    tail = (1.0 - confidence) / 2.0
    base = p if side == "upper" else 1.0 - p
    n = max(1, math.ceil(math.log(tail) / math.log(base)))
    while base**n > tail:  # guard against rounding in the logarithms
        n += 1
    while n > 1 and base ** (n - 1) <= tail:
        n -= 1
    return n


def quantile_interval(values: Sequence[float] | np.ndarray, p: float, *, confidence: float) -> Interval:
    """Exact distribution-free interval for the ``p``-quantile of the distribution ``values`` were
    drawn from (NaN = missing, bounded both ways). ``n`` counts every value, missing included."""
    confidence = check_confidence(confidence)
    _check_p(p)
    data = np.asarray(values, dtype=float)
    if data.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {data.shape}")
    if np.isinf(data).any():
        raise ValueError("values must be finite numbers or NaN (missing)")
    n = int(data.size)
    answered = np.sort(data[~np.isnan(data)])
    missing = n - int(answered.size)
    r, s = quantile_ranks(n, p, confidence=confidence)
    low_sample = np.concatenate([np.full(missing, -math.inf), answered])  # missing as small as can be
    high_sample = np.concatenate([answered, np.full(missing, math.inf)])  # missing as large as can be
    low = float(low_sample[r - 1]) if r is not None else -math.inf
    high = float(high_sample[s - 1]) if s is not None else math.inf
    if answered.size:
        estimate = float(np.quantile(answered, p, method="inverted_cdf"))
        estimate = min(max(estimate, low), high)
    else:
        estimate = math.nan
    return Interval(estimate=estimate, low=low, high=high, level=confidence, method=METHOD, approximate=False)


def _check_p(p: float) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p) or not 0.0 < p < 1.0:
        raise ValueError(f"p must lie strictly between 0 and 1, got {p!r}")
