"""The dev-to-holdout gap (STATISTICS.md §5): MOVER and post-stratification."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oloproof.stats.gap import (
    mover_difference,
)
from oloproof.stats.interval import Interval
from oloproof.stats.paired import PairedCounts, paired_difference

Z95 = 1.959963984540054


def wald(estimate: float, se: float, level: float = 0.95) -> Interval:
    z = stats.norm.ppf(0.5 + level / 2)
    return Interval(
        estimate=estimate, low=estimate - z * se, high=estimate + z * se, level=level, method="wald", approximate=True
    )


def table(b: int, c: int, n: int) -> PairedCounts:
    return PairedCounts(n=n, b=b, c=c, both=n - b - c, neither=0, missing=0)


@cache
def tango(b: int, c: int, n: int) -> Interval:
    return paired_difference(b, c, n, confidence=0.95)


# ---------------------------------------------------------------------------- MOVER


def test_mover_with_symmetric_inputs_is_the_root_sum_of_squares() -> None:
    # With Wald inputs MOVER reduces to F ± z·√(SE₁² + SE₂²) (Zou & Donner 2008, §2).
    result = mover_difference(wald(0.17, 0.03), wald(0.033, 0.031), confidence=0.95)
    assert result.estimate == pytest.approx(0.137)
    half = Z95 * math.hypot(0.03, 0.031)
    assert result.low == pytest.approx(0.137 - half)
    assert result.high == pytest.approx(0.137 + half)
    assert result.method == "mover" and result.approximate is True


def test_mover_keeps_asymmetry_of_the_inputs() -> None:
    # Hand computation from Zou & Donner (2008) eqs. 7–8 with the chapter's holdout interval.
    dev = Interval(estimate=0.17, low=0.11, high=0.24, level=0.95, method="x", approximate=True)
    hold = tango(9, 5, 120)  # 0.0333 [-0.0310, 0.1018]
    result = mover_difference(dev, hold, confidence=0.95)
    fit = 0.17 - 4 / 120
    assert result.low == pytest.approx(fit - math.sqrt(0.06**2 + (hold.high - 4 / 120) ** 2))
    assert result.high == pytest.approx(fit + math.sqrt(0.07**2 + (4 / 120 - hold.low) ** 2))


def test_the_fit_margin_is_at_least_eight_points_with_200_and_120_cases() -> None:
    # STATISTICS.md §5: "even with 200 dev and 120 holdout cases the fit's ± margin is ≥ 8
    # points". Dev moved 17 points (b − c = 34 of 200) with any amount of churn; holdout is the
    # chapter's 9 vs 5 of 120.
    hold = tango(9, 5, 120)
    for c in range(0, 60):
        fit = mover_difference(tango(34 + c, c, 200), hold, confidence=0.95)
        assert fit.estimate == pytest.approx(0.17 - 4 / 120)
        assert min(fit.estimate - fit.low, fit.high - fit.estimate) >= 0.08


def test_mover_rejects_mismatched_levels() -> None:
    with pytest.raises(ValueError, match=r"d_hold.level must equal confidence \(0.95\)"):
        mover_difference(wald(0.1, 0.02), wald(0.0, 0.02, level=0.9), confidence=0.95)
    broken = Interval(estimate=0.5, low=0.6, high=0.7, level=0.95, method="x", approximate=True)
    with pytest.raises(ValueError, match="d_dev must satisfy low <= estimate <= high"):
        mover_difference(broken, wald(0.0, 0.02), confidence=0.95)


def test_mover_of_two_tango_intervals_covers_the_fit() -> None:
    # Dev (200 cases): p_b = .20, p_c = .03 -> Δ = .17; holdout (120): .075 vs .042 -> Δ = .033.
    rng = np.random.default_rng(2008)
    sims, hits = 3000, 0
    dev = rng.multinomial(200, [0.20, 0.03, 0.77], size=sims)
    hold = rng.multinomial(120, [0.075, 0.042, 0.883], size=sims)
    truth = 0.17 - 0.033
    for (b1, c1, _), (b2, c2, _) in zip(dev, hold, strict=True):
        fit = mover_difference(tango(int(b1), int(c1), 200), tango(int(b2), int(c2), 120), confidence=0.95)
        hits += fit.low <= truth <= fit.high
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.01


# ---------------------------------------------------------------------------- MOVER properties


levels = st.floats(min_value=0.5, max_value=0.995)


intervals = st.tuples(st.floats(-1, 1), st.floats(0, 0.5), st.floats(0, 0.5)).map(
    lambda t: (t[0], t[0] - t[1], t[0] + t[2])
)


@settings(max_examples=150, deadline=None)
@given(intervals, intervals, levels)
def test_mover_properties(dev: tuple[float, float, float], hold: tuple[float, float, float], level: float) -> None:
    d = Interval(estimate=dev[0], low=dev[1], high=dev[2], level=level, method="x", approximate=True)
    h = Interval(estimate=hold[0], low=hold[1], high=hold[2], level=level, method="x", approximate=True)
    fit = mover_difference(d, h, confidence=level)
    assert fit.low <= fit.estimate <= fit.high
    # Never wider than the crude union of the inputs' ranges.
    assert fit.low >= d.low - h.high - 1e-12 and fit.high <= d.high - h.low + 1e-12
    # Widening either input never narrows the result.
    wider = Interval(estimate=dev[0], low=dev[1] - 0.01, high=dev[2] + 0.01, level=level, method="x", approximate=True)
    wide_fit = mover_difference(wider, h, confidence=level)
    assert wide_fit.low <= fit.low + 1e-12 and wide_fit.high >= fit.high - 1e-12


@pytest.mark.parametrize(
    ("dev", "hold"),
    [
        ((200, 0.02, 0.01), (120, 0.01, 0.01)),  # rare disagreements on both sets
        ((200, 0.30, 0.00), (120, 0.05, 0.05)),  # a one-sided dev movement, none on the holdout
        ((40, 0.20, 0.05), (30, 0.10, 0.10)),  # tiny sets
        ((1000, 0.10, 0.05), (500, 0.06, 0.05)),  # large sets, small effects
        ((200, 0.50, 0.00), (120, 0.50, 0.00)),  # half the cases move, all one way, on both sets
        ((60, 0.00, 0.00), (40, 0.00, 0.00)),  # nothing moves anywhere
    ],
)
def test_mover_coverage_across_regimes(dev: tuple[int, float, float], hold: tuple[int, float, float]) -> None:
    # Measured (seed 7, 3000 draws each): 0.982, 0.955, 0.963, 0.943, 0.950, 1.000.
    rng = np.random.default_rng(7)
    sims, hits = 3000, 0
    (n_d, b_d, c_d), (n_h, b_h, c_h) = dev, hold
    draws_d = rng.multinomial(n_d, [b_d, c_d, 1 - b_d - c_d], size=sims)
    draws_h = rng.multinomial(n_h, [b_h, c_h, 1 - b_h - c_h], size=sims)
    truth = (b_d - c_d) - (b_h - c_h)
    for (b1, c1, _), (b2, c2, _) in zip(draws_d, draws_h, strict=True):
        fit = mover_difference(tango(int(b1), int(c1), n_d), tango(int(b2), int(c2), n_h), confidence=0.95)
        hits += fit.low <= truth <= fit.high
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.001
