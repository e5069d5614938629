"""MAE, RMSE and the paired MAE difference (oloproof.stats.regression_error)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oloproof.stats.bounded import bounded_mean_bca, bounded_mean_betting
from oloproof.stats.regression_error import mae_interval, paired_mae_difference, rmse_interval

RNG = np.random.default_rng(2026)
ERRORS = RNG.exponential(2.0, 80)
OTHER = RNG.exponential(1.6, 80)


# --------------------------------------------------------------------------------------------
# Values against numpy and the bounded-mean functions


def test_mae_with_bound_is_the_betting_interval_scaled() -> None:
    iv = mae_interval(ERRORS, confidence=0.95, bound=20.0, seed=4)
    ref = bounded_mean_betting(ERRORS / 20.0, confidence=0.95, seed=4)
    assert iv.estimate == pytest.approx(np.mean(ERRORS), rel=1e-12)
    assert (iv.low, iv.high) == pytest.approx((ref.low * 20.0, ref.high * 20.0), rel=1e-12)
    assert iv.method == "betting-wsr" and not iv.approximate and iv.seed == 4


def test_signed_errors_are_taken_in_absolute_value() -> None:
    signed = ERRORS * np.where(np.arange(80) % 2, 1.0, -1.0)
    assert mae_interval(signed, confidence=0.9, bound=20.0) == mae_interval(ERRORS, confidence=0.9, bound=20.0)
    assert rmse_interval(signed, confidence=0.9) == rmse_interval(ERRORS, confidence=0.9)


def test_rmse_is_the_square_root_of_the_mse_interval() -> None:
    iv = rmse_interval(ERRORS, confidence=0.95, bound=20.0, seed=1)
    ref = bounded_mean_betting(ERRORS**2 / 400.0, confidence=0.95, seed=1)
    assert iv.estimate == pytest.approx(math.sqrt(np.mean(ERRORS**2)), rel=1e-12)
    assert (iv.low, iv.high) == pytest.approx((math.sqrt(ref.low * 400.0), math.sqrt(ref.high * 400.0)), rel=1e-12)
    assert not iv.approximate
    approx = rmse_interval(ERRORS, confidence=0.95, seed=1)
    squares = np.sort(ERRORS) ** 2  # the function sorts the errors first (order-free sums)
    top = float(np.max(squares))
    boot = bounded_mean_bca(squares / top, confidence=0.95, rng=np.random.default_rng(1), n_resamples=9999)
    assert (approx.low, approx.high) == pytest.approx(
        (math.sqrt(boot.low * top), math.sqrt(boot.high * top)), rel=1e-12
    )
    assert approx.method == "bca-bootstrap" and approx.approximate


def test_mae_without_bound_is_bca_and_close_to_scipy() -> None:
    iv = mae_interval(ERRORS, confidence=0.95, seed=9)
    assert iv.approximate and iv.method == "bca-bootstrap" and iv.seed == 9
    assert iv.estimate == pytest.approx(np.mean(ERRORS), rel=1e-12)
    ref = stats.bootstrap((ERRORS,), np.mean, confidence_level=0.95, method="BCa", rng=np.random.default_rng(9))
    assert iv.low == pytest.approx(ref.confidence_interval.low, rel=0.03)
    assert iv.high == pytest.approx(ref.confidence_interval.high, rel=0.03)
    assert iv == mae_interval(ERRORS, confidence=0.95, seed=9)


def test_paired_difference_new_minus_old() -> None:
    iv = paired_mae_difference(ERRORS, OTHER, confidence=0.95, bound=20.0, seed=2)
    d = OTHER - ERRORS
    ref = bounded_mean_betting((d + 20.0) / 40.0, confidence=0.95, seed=2)
    assert iv.estimate == pytest.approx(np.mean(d), abs=1e-12)
    assert (iv.low, iv.high) == pytest.approx((40.0 * ref.low - 20.0, 40.0 * ref.high - 20.0), abs=1e-12)
    assert not iv.approximate
    swapped = paired_mae_difference(OTHER, ERRORS, confidence=0.95, bound=20.0, seed=2)
    assert swapped.estimate == pytest.approx(-iv.estimate, abs=1e-12)
    approx = paired_mae_difference(ERRORS, OTHER, confidence=0.95, seed=2)
    assert approx.approximate and approx.low < approx.estimate < approx.high
    assert approx.estimate == pytest.approx(np.mean(d), abs=1e-12)


# --------------------------------------------------------------------------------------------
# Missing cases, bounds, bad input


def test_missing_cases_count_as_bound_above_and_zero_below() -> None:
    gone = ERRORS.copy()
    gone[:5] = np.nan
    iv = mae_interval(gone, confidence=0.95, bound=20.0)
    assert iv.estimate == pytest.approx(np.mean(ERRORS[5:]))
    low_ref = bounded_mean_betting(np.where(np.isnan(gone), 0.0, gone) / 20.0, confidence=0.95, seed=0)
    high_ref = bounded_mean_betting(np.where(np.isnan(gone), 20.0, gone) / 20.0, confidence=0.95, seed=0)
    assert iv.low == pytest.approx(low_ref.low * 20.0) and iv.high == pytest.approx(high_ref.high * 20.0)
    nothing = mae_interval([math.nan] * 4, confidence=0.95, bound=3.0)
    assert (nothing.estimate, nothing.low, nothing.high) == (3.0, 0.0, 3.0)


def test_paired_case_missing_in_either_version_spans_the_whole_range() -> None:
    a, b = ERRORS.copy(), OTHER.copy()
    a[0], b[1] = np.nan, np.nan
    iv = paired_mae_difference(a, b, confidence=0.95, bound=20.0)
    d = (b - a)[2:]
    assert iv.estimate == pytest.approx(np.mean(d))
    worst = np.concatenate([[-20.0, -20.0], d])
    best = np.concatenate([[20.0, 20.0], d])
    assert iv.low == pytest.approx(40.0 * bounded_mean_betting((worst + 20) / 40, confidence=0.95, seed=0).low - 20)
    assert iv.high == pytest.approx(40.0 * bounded_mean_betting((best + 20) / 40, confidence=0.95, seed=0).high - 20)


def test_without_bound_missing_or_tiny_input_raises() -> None:
    with pytest.raises(ValueError, match=r"errors: 1 case\(s\) have no usable output; without a declared bound"):
        mae_interval([1.0, math.nan, 2.0], confidence=0.95)
    with pytest.raises(ValueError, match="errors_b: 1 case"):
        paired_mae_difference([1.0, 2.0], [1.0, math.nan], confidence=0.95)
    with pytest.raises(ValueError, match="need at least 2 cases to estimate the spread without a bound, got 1"):
        rmse_interval([1.0], confidence=0.95)


def test_an_error_above_the_bound_is_refused_never_clipped() -> None:
    with pytest.raises(ValueError, match=r"errors: 1 absolute error\(s\) above the declared bound 5.0 \(largest 7.0\)"):
        mae_interval([1.0, -7.0, 2.0], confidence=0.95, bound=5.0)
    with pytest.raises(ValueError, match="errors_a: 1 absolute error"):
        paired_mae_difference([9.0, 1.0], [1.0, 1.0], confidence=0.95, bound=5.0)
    with pytest.raises(ValueError, match="above the declared bound"):
        rmse_interval([6.0], confidence=0.95, bound=5.0)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match=r"bound must be a finite number > 0, got 0"):
        mae_interval([1.0], confidence=0.95, bound=0)
    with pytest.raises(TypeError, match="bound must be a number, got str"):
        mae_interval([1.0], confidence=0.95, bound="5")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"errors must be finite \(NaN marks a case with no usable output\)"):
        mae_interval([1.0, math.inf], confidence=0.95, bound=5.0)
    with pytest.raises(ValueError, match="errors is empty"):
        rmse_interval([], confidence=0.95, bound=5.0)
    with pytest.raises(ValueError, match="errors_a has 2 cases but errors_b has 1; the cases must be paired"):
        paired_mae_difference([1.0, 2.0], [1.0], confidence=0.95)
    with pytest.raises(ValueError, match="seed must lie in"):
        mae_interval([1.0], confidence=0.95, bound=2.0, seed=-1)


def test_all_zero_errors_without_bound_give_a_point_labelled_approximate() -> None:
    iv = mae_interval([0.0, 0.0, 0.0], confidence=0.95)
    assert (iv.estimate, iv.low, iv.high, iv.approximate) == (0.0, 0.0, 0.0, True)
    exact = mae_interval([0.0, 0.0, 0.0], confidence=0.95, bound=1.0)
    assert exact.low == 0.0 and exact.high > 0.5  # three cases prove little


# --------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.one_of(st.floats(0, 10), st.just(math.nan)), min_size=1, max_size=30),
    st.randoms(use_true_random=False),
)
def test_order_never_changes_the_interval(values: list[float], shuffler: object) -> None:
    shuffled = list(values)
    shuffler.shuffle(shuffled)  # type: ignore[attr-defined]
    assert mae_interval(values, confidence=0.9, bound=10.0) == mae_interval(shuffled, confidence=0.9, bound=10.0)
    assert rmse_interval(values, confidence=0.9, bound=10.0) == rmse_interval(shuffled, confidence=0.9, bound=10.0)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0, 10), min_size=1, max_size=30), st.integers(0, 29), st.floats(0, 10))
def test_an_answer_in_place_of_a_missing_case_never_loosens_the_exact_interval(
    values: list[float], index: int, answer: float
) -> None:
    """More evidence: answering a missing case (any answer within the bound) keeps the interval
    inside the one with the case missing — the exact interval counts the missing case as 0 for
    the lower limit and as the bound for the upper. (Adding a NEW case can move either limit
    either way; no such monotonicity is claimed.)"""
    index %= len(values)
    gone = list(values)
    gone[index] = math.nan
    answered = list(values)
    answered[index] = answer
    wide = mae_interval(gone, confidence=0.9, bound=10.0)
    narrow = mae_interval(answered, confidence=0.9, bound=10.0)
    assert wide.low <= narrow.low + 1e-6 and narrow.high <= wide.high + 1e-6
