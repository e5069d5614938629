"""Mean absolute error (MAE), root mean squared error (RMSE) and the paired MAE difference.

``errors`` holds one error per case, output minus expected or its absolute value (only the
absolute value is used); NaN marks a case with no usable output. Cases are independent draws.

With ``bound`` (the declared largest absolute error, > 0) every interval is **exact**: the
betting interval of :func:`oloproof.stats.bounded.bounded_mean_betting` (Waudby-Smith & Ramdas
2023) on the errors scaled into [0, 1], scaled back. A missing case counts as ``bound`` for the
upper limit and 0 for the lower (the interval contains the interval of every possible outcome of
the missing cases). An error above ``bound`` raises ValueError: clipping it would make the upper
limit too low, so the caller must decide (fix the bound, or fail the rule).

Without ``bound`` nothing is exact for a mean of unbounded values (a tiny probability of a huge
error moves the mean arbitrarily; Bahadur & Savage 1956), so the intervals are **approximate**:
the BCa bootstrap (Efron 1987; scipy.stats.bootstrap, seeded with ``seed``). BCa rather than
Student's t: absolute and squared errors are skewed to the right, and t's symmetric interval
puts the upper limit — the one a ``max:`` rule decides on — too low for right-skewed data; BCa's
acceleration and bias corrections move it up (the coverage table in docs/statistics.md measures
both). Without ``bound`` a missing case cannot be bounded, so it raises ValueError (declare a
bound to gate a system that sometimes gives no output), and fewer than two answered cases raise
ValueError too (no spread can be estimated).

The RMSE interval is the square root of the interval for the mean squared error (bound²):
the square root is increasing, so exactness (and BCa's transformation-respecting property)
carries over. The estimate is √(mean squared error).

Estimates are over the answered cases; when none was answered (only possible with ``bound``)
the MAE and RMSE estimates are ``bound`` (the estimate never flatters the run) and the paired
estimate is 0.0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray

from oloproof.stats._validate import check_confidence, check_seed
from oloproof.stats.bounded import bounded_mean_bca, bounded_mean_betting
from oloproof.stats.interval import Interval

__all__ = ["mae_interval", "paired_mae_difference", "rmse_interval"]

Errors: TypeAlias = Sequence[float] | NDArray[Any]

# Resamples of the BCa bootstrap (scipy's default).
N_RESAMPLES = 9999


def _errors(name: str, errors: Errors) -> NDArray[np.float64]:
    values = np.asarray(errors, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional")
    if values.size == 0:
        raise ValueError(f"{name} is empty: need at least one case")
    if np.isinf(values).any():
        raise ValueError(f"{name} must be finite (NaN marks a case with no usable output)")
    return np.abs(values)


def _bound(bound: float | None) -> float | None:
    if bound is None:
        return None
    if isinstance(bound, bool) or not isinstance(bound, (int, float)):
        raise TypeError(f"bound must be a number, got {type(bound).__name__}")
    if not (math.isfinite(bound) and bound > 0.0):
        raise ValueError(f"bound must be a finite number > 0, got {bound!r}")
    return float(bound)


def _within(name: str, values: NDArray[np.float64], bound: float) -> None:
    above = values[~np.isnan(values)] > bound
    if above.any():
        worst = float(values[~np.isnan(values)][above].max())
        raise ValueError(
            f"{name}: {int(above.sum())} absolute error(s) above the declared bound {bound!r} "
            f"(largest {worst!r}); the interval would not be valid (raise the bound or fix the output)"
        )


def _answered(name: str, values: NDArray[np.float64]) -> NDArray[np.float64]:
    """The errors, for a method with no bound: no missing case, at least two cases."""
    missing = int(np.isnan(values).sum())
    if missing:
        raise ValueError(
            f"{name}: {missing} case(s) have no usable output; without a declared bound they "
            "cannot be accounted for (declare the largest absolute error as the bound)"
        )
    if values.size < 2:
        raise ValueError(f"{name}: need at least 2 cases to estimate the spread without a bound, got {values.size}")
    return values


def _result(
    estimate: float, low: float, high: float, level: float, method: str, approximate: bool, seed: int | None
) -> Interval:
    if not low <= estimate <= high:
        raise ArithmeticError(
            f"{method} interval [{low!r}, {high!r}] does not contain its estimate {estimate!r}; "
            "this is a bug in oloproof, please report it with the errors"
        )
    return Interval(
        estimate=estimate, low=low, high=high, level=level, method=method, approximate=approximate, seed=seed
    )


def _mean_interval(
    values: NDArray[np.float64], *, level: float, bound: float | None, seed: int, name: str
) -> tuple[float, float, float, str, bool, int | None]:
    """(estimate, low, high, method, approximate, seed) for the mean of values in [0, bound]."""
    if bound is not None:
        _within(name, values, bound)
        scaled = bounded_mean_betting(values / bound, confidence=level, seed=seed)
        # Scaling by a positive number is monotone in floating point, so the estimate stays
        # inside the limits; with no answered case the estimate is the bound.
        estimate = scaled.estimate * bound if (~np.isnan(values)).any() else bound
        return estimate, scaled.low * bound, scaled.high * bound, scaled.method, False, seed
    values = _answered(name, values)
    top = float(values.max())
    if top == 0.0:
        return 0.0, 0.0, 0.0, "bca-bootstrap", True, seed
    boot = bounded_mean_bca(values / top, confidence=level, rng=np.random.default_rng(seed), n_resamples=N_RESAMPLES)
    return boot.estimate * top, boot.low * top, boot.high * top, boot.method, True, seed


def mae_interval(errors: Errors, *, confidence: float, bound: float | None = None, seed: int = 0) -> Interval:
    """Interval for the mean absolute error: exact betting with ``bound``, else BCa (approximate)."""
    level = check_confidence(confidence)
    check_seed(seed)
    values = np.sort(_errors("errors", errors))  # sorted: sums in one order whatever the input's
    estimate, low, high, method, approximate, used = _mean_interval(
        values, level=level, bound=_bound(bound), seed=seed, name="errors"
    )
    return _result(estimate, low, high, level, method, approximate, used)


def rmse_interval(errors: Errors, *, confidence: float, bound: float | None = None, seed: int = 0) -> Interval:
    """Interval for the root mean squared error: √ of the interval for the mean squared error."""
    level = check_confidence(confidence)
    check_seed(seed)
    values = np.sort(_errors("errors", errors))  # sorted: sums in one order whatever the input's
    limit = _bound(bound)
    if limit is not None:
        _within("errors", values, limit)
    estimate, low, high, method, approximate, used = _mean_interval(
        values**2, level=level, bound=None if limit is None else limit**2, seed=seed, name="errors"
    )
    return _result(math.sqrt(estimate), math.sqrt(low), math.sqrt(high), level, method, approximate, used)


def paired_mae_difference(
    errors_a: Errors, errors_b: Errors, *, confidence: float, bound: float | None = None, seed: int = 0
) -> Interval:
    """Interval for MAE(b) − MAE(a), the mean of |e_b| − |e_a| over the same cases (new minus old:
    negative means b, the new version, errs less).

    With ``bound``: each difference lies in [−bound, bound]; exact betting on (d + bound)/(2·bound).
    A case missing in either version is missing from the pair: −bound for the lower limit,
    +bound for the upper. Without ``bound``: BCa bootstrap of the differences (approximate);
    a missing case raises ValueError.
    """
    level = check_confidence(confidence)
    check_seed(seed)
    a = _errors("errors_a", errors_a)
    b = _errors("errors_b", errors_b)
    if a.size != b.size:
        raise ValueError(f"errors_a has {a.size} cases but errors_b has {b.size}; the cases must be paired")
    order = np.lexsort([a, b])  # sorted pairs: sums in one order whatever the input's
    a, b = a[order], b[order]
    limit = _bound(bound)
    if limit is not None:
        _within("errors_a", a, limit)
        _within("errors_b", b, limit)
        d = b - a  # NaN where either is missing
        scaled = bounded_mean_betting((d + limit) / (2.0 * limit), confidence=level, seed=seed)
        estimate = 2.0 * limit * scaled.estimate - limit if (~np.isnan(d)).any() else 0.0
        low = 2.0 * limit * scaled.low - limit
        high = 2.0 * limit * scaled.high - limit
        return _result(estimate, low, high, level, scaled.method, False, seed)
    if np.isnan(a).any() or np.isnan(b).any():
        _answered("errors_a", a)
        _answered("errors_b", b)
    d = _answered("errors", b - a)
    top = float(np.abs(d).max())
    if top == 0.0:
        return _result(0.0, 0.0, 0.0, level, "bca-bootstrap", True, seed)
    boot = bounded_mean_bca(
        (d / top + 1.0) / 2.0, confidence=level, rng=np.random.default_rng(seed), n_resamples=N_RESAMPLES
    )
    estimate = (2.0 * boot.estimate - 1.0) * top
    low = (2.0 * boot.low - 1.0) * top
    high = (2.0 * boot.high - 1.0) * top
    return _result(estimate, low, high, level, boot.method, True, seed)
