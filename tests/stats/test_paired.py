"""Paired comparison (STATISTICS.md §4): Tango and melded intervals, McNemar tests, counts."""

from __future__ import annotations

import math
import random
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from oloproof.stats.interval import Interval
from oloproof.stats.paired import (
    PairedCounts,
    mcnemar_exact_p,
    mcnemar_mid_p,
    paired_counts,
    paired_difference,
)

Z95 = 1.959963984540054


# ---------------------------------------------------------------------------- references


def _tango_by_likelihood(b: int, c: int, n: int, delta: float) -> float:
    """Tango's statistic with the restricted MLE found by numerical maximisation.

    Independent of the closed-form root in the module: maximise the multinomial log-likelihood
    b·log(p_c + Δ) + c·log(p_c) + (n − b − c)·log(1 − 2p_c − Δ) over p_c numerically.
    """
    lo = max(0.0, -delta) + 1e-12
    hi = (1.0 - delta) / 2.0 - 1e-12

    def neg_loglik(p_c: float) -> float:
        total = 0.0
        for count, prob in ((b, p_c + delta), (c, p_c), (n - b - c, 1.0 - 2.0 * p_c - delta)):
            if count:
                total += count * math.log(prob)
        return -total

    p_c = optimize.minimize_scalar(neg_loglik, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12}).x
    return (b - c - n * delta) / math.sqrt(n * (2.0 * p_c + delta * (1.0 - delta)))


def _melded_monte_carlo(b: int, c: int, n: int, alpha: float, draws: int) -> tuple[float, float]:
    """R exact2x2::mcnemarExactDP's Monte Carlo branch (nmc > 0), transcribed independently."""
    rng = np.random.default_rng(20210301)

    def beta(a: int, b_: int) -> np.ndarray:
        # R's rbeta: a zero shape parameter is a point mass at 0 (a = 0) or 1 (b = 0).
        if a == 0 or b_ == 0:
            return np.full(draws, 0.0 if a == 0 else 1.0)
        return rng.beta(a, b_, draws)

    m = b + c
    t_low = beta(m, n - m + 1)
    t_up = beta(m + 1, n - m)
    b_low = beta(b, m - b + 1)
    b_up = beta(b + 1, m - b)
    lower = min(np.quantile(t_low * (2 * b_low - 1), alpha / 2),
                np.quantile(t_up * (2 * b_low - 1), alpha / 2))
    upper = max(np.quantile(t_low * (2 * b_up - 1), 1 - alpha / 2),
                np.quantile(t_up * (2 * b_up - 1), 1 - alpha / 2))
    return float(lower), float(upper)


def _exact_mcnemar_by_enumeration(b: int, c: int) -> float:
    m = b + c
    k = min(b, c)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2**m
    return min(1.0, 2 * tail)


def _multinomial_pmf(b: int, c: int, n: int, p_b: float, p_c: float) -> float:
    rest = n - b - c
    log_p = (math.lgamma(n + 1) - math.lgamma(b + 1) - math.lgamma(c + 1) - math.lgamma(rest + 1)
             + b * math.log(p_b) + c * math.log(p_c) + rest * math.log(1 - p_b - p_c))
    return math.exp(log_p)


@cache
def _cached(b: int, c: int, n: int, method: str, confidence: float = 0.95) -> Interval:
    return paired_difference(b, c, n, confidence=confidence, method=method)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- exact values


def test_tango_reproduces_the_worked_example() -> None:
    # STATISTICS.md §4 / gap chapter: n = 120, b = 9, c = 5 -> +3.3 points, Tango [-3.1, +10.2].
    result = paired_difference(9, 5, 120, confidence=0.95)
    assert result.estimate == pytest.approx(4 / 120)
    assert round(100 * result.low, 1) == -3.1
    assert round(100 * result.high, 1) == 10.2
    assert result.method == "tango-score"
    assert result.approximate is True
    assert result.level == 0.95


def test_tango_limits_solve_the_score_equation_with_an_independent_mle() -> None:
    # Each limit is where |T| = z, with the restricted MLE found by brute-force maximisation.
    for b, c, n in [(9, 5, 120), (40, 20, 160), (3, 9, 32), (0, 4, 50), (7, 0, 20)]:
        result = paired_difference(b, c, n, confidence=0.95)
        assert _tango_by_likelihood(b, c, n, result.low) == pytest.approx(Z95, abs=1e-5)
        assert _tango_by_likelihood(b, c, n, result.high) == pytest.approx(-Z95, abs=1e-5)


def test_tango_with_no_discordant_cases_has_the_closed_form_width() -> None:
    # b = c = 0: T(Δ) = −√(nΔ/(1 − Δ)), so |T| = z at Δ = ±z²/(n + z²); Wald would be [0, 0].
    for n in (1, 10, 120):
        result = paired_difference(0, 0, n, confidence=0.95)
        expected = Z95**2 / (n + Z95**2)
        assert result.estimate == 0.0
        assert result.high == pytest.approx(expected, abs=1e-9)
        assert result.low == pytest.approx(-expected, abs=1e-9)


def test_melded_reproduces_the_worked_example() -> None:
    # STATISTICS.md §4: R exact2x2::mcnemarExactDP(x = 9, m = 14, n = 120) gives [-3.7, +10.6]
    # points (figure as published there).
    result = paired_difference(9, 5, 120, confidence=0.95, method="melded")
    assert result.estimate == pytest.approx(4 / 120)
    assert round(100 * result.low, 1) == -3.7
    assert round(100 * result.high, 1) == 10.6
    assert result.method == "fay-lumbard-melded"
    assert result.approximate is False


@pytest.mark.parametrize(("b", "c", "n"), [(9, 5, 120), (1, 7, 21), (12, 3, 40), (0, 6, 30), (4, 0, 4)])
def test_melded_agrees_with_the_monte_carlo_implementation(b: int, c: int, n: int) -> None:
    # mcnemarExactDP's Monte Carlo branch is a different computation of the same interval;
    # with 400 000 draws its quantiles are good to about 0.002.
    low, high = _melded_monte_carlo(b, c, n, 0.05, 400_000)
    result = paired_difference(b, c, n, confidence=0.95, method="melded")
    assert result.low == pytest.approx(low, abs=0.003)
    assert result.high == pytest.approx(high, abs=0.003)


def test_melded_with_no_discordant_cases_has_the_closed_form_limits() -> None:
    # m = 0: the upper limit is qbeta(1 − α/2, 1, n) = 1 − (α/2)^(1/n) (mcnemarExactDP, m == 0).
    for n in (1, 10, 120):
        result = paired_difference(0, 0, n, confidence=0.95, method="melded")
        assert result.high == pytest.approx(1 - 0.025 ** (1 / n), abs=1e-12)
        assert result.low == pytest.approx(-result.high, abs=1e-12)


def test_mcnemar_p_values_for_the_worked_example() -> None:
    # P(Bin(14, ½) ≤ 5) = 3473/16384, so p = 3473/8192 = 0.424; mid-p subtracts ½·P(X = 5)
    # = ½·2002/16384: 2·(3473 − 1001)/16384 = 2472/8192 = 0.302.
    assert mcnemar_exact_p(9, 5) == pytest.approx(3473 / 8192, abs=1e-12)
    assert round(mcnemar_exact_p(9, 5), 2) == 0.42
    assert mcnemar_mid_p(9, 5) == pytest.approx(2472 / 8192, abs=1e-12)


def test_mcnemar_p_matches_enumeration_and_mid_p_is_smaller() -> None:
    for b in range(0, 16):
        for c in range(0, 16):
            exact = mcnemar_exact_p(b, c)
            assert exact == pytest.approx(_exact_mcnemar_by_enumeration(b, c), abs=1e-12)
            assert mcnemar_exact_p(c, b) == exact
            assert mcnemar_mid_p(b, c) <= exact
    assert mcnemar_exact_p(0, 0) == 1.0
    assert mcnemar_mid_p(0, 0) == 1.0
    assert mcnemar_mid_p(4, 4) == 1.0


def test_melded_excludes_zero_exactly_when_the_exact_mcnemar_test_rejects() -> None:
    # Fay & Lumbard (2021): the melded interval is compatible with the exact McNemar test.
    # Grid: every table for small n, and b, c < 12 for larger n, at two confidence levels.
    checked = rejected = 0
    for confidence in (0.95, 0.9):
        for n in (1, 2, 3, 6, 10, 30, 120):
            for b in range(0, min(n, 11) + 1):
                for c in range(0, min(n - b, 11) + 1):
                    interval = _cached(b, c, n, "melded", confidence)
                    excludes_zero = interval.low > 0 or interval.high < 0
                    rejects = mcnemar_exact_p(b, c) < 1 - confidence
                    assert excludes_zero == rejects, (b, c, n, confidence, interval)
                    checked += 1
                    rejected += rejects
    assert checked > 500 and rejected > 100  # the grid exercises both outcomes


# ---------------------------------------------------------------------------- calibration


def test_melded_is_exact_for_every_true_value_at_small_n() -> None:
    # Exact coverage by enumerating every table (no simulation error): ≥ 95% on a grid of
    # (p_b, p_c), which is what "exact" promises. Tango, approximate, may dip below.
    n = 10
    tables = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    intervals = {t: _cached(t[0], t[1], n, "melded") for t in tables}
    worst = 1.0
    for p_b in np.linspace(0.01, 0.6, 25):
        for p_c in np.linspace(0.01, 0.6, 25):
            if p_b + p_c >= 1:
                continue
            delta = p_b - p_c
            coverage = sum(_multinomial_pmf(b, c, n, p_b, p_c)
                           for (b, c), iv in intervals.items() if iv.low <= delta <= iv.high)
            worst = min(worst, coverage)
    assert worst >= 0.95


@pytest.mark.parametrize(("n", "method", "floor"), [(5, "melded", 0.95), (20, "melded", 0.95), (5, "tango", 0.92),
                                                     (20, "tango", 0.93)])
def test_small_n_coverage_by_full_enumeration(n: int, method: str, floor: float) -> None:
    # Every table of n cases, a 20×20 grid of true (p_b, p_c). Melded (exact) never dips below 95%;
    # Tango (approximate) does, to 92.2% at n = 5 and 93.5% at n = 20 (measured on a 40×40 grid):
    # why verdicts use the exact interval and Tango is printed as "approximate".
    tables = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    intervals = {t: _cached(t[0], t[1], n, method) for t in tables}
    worst = 1.0
    for p_b in np.linspace(0.005, 0.7, 20):
        for p_c in np.linspace(0.005, 0.7, 20):
            if p_b + p_c >= 1:
                continue
            coverage = sum(_multinomial_pmf(b, c, n, p_b, p_c)
                           for (b, c), iv in intervals.items() if iv.low <= p_b - p_c <= iv.high)
            worst = min(worst, coverage)
    assert worst >= floor
    if method == "tango":
        assert worst < 0.95  # approximate: the enumeration does find it below nominal


@pytest.mark.parametrize("method", ["tango", "melded"])
def test_coverage_with_rare_disagreements(method: str) -> None:
    # STATISTICS.md §4: at 2% vs 1% on n = 120, Wald and the exact conditional interval cover
    # only 0.87–0.91. Tango (≈0.975 exactly) and melded (≈0.996) should be at or above 95%.
    rng = np.random.default_rng(4_120)
    n, p_b, p_c, sims = 120, 0.02, 0.01, 4000
    draws = rng.multinomial(n, [p_b, p_c, 1 - p_b - p_c], size=sims)
    hits = wald_hits = 0
    for b, c, _ in draws:
        interval = _cached(int(b), int(c), n, method)
        hits += interval.low <= p_b - p_c <= interval.high
        half = Z95 * math.sqrt(b + c - (b - c) ** 2 / n) / n
        wald_hits += (b - c) / n - half <= p_b - p_c <= (b - c) / n + half
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.01
    # The same draws do detect an under-covering interval: Wald fails this check.
    assert stats.binomtest(wald_hits, sims, 0.95, alternative="less").pvalue < 0.01


# ---------------------------------------------------------------------------- edge cases


@pytest.mark.parametrize("method", ["tango", "melded"])
def test_boundary_tables(method: str) -> None:
    all_new = paired_difference(120, 0, 120, confidence=0.95, method=method)  # type: ignore[arg-type]
    assert all_new.estimate == 1.0 and all_new.high == 1.0 and 0.9 < all_new.low < 1.0
    all_old = paired_difference(0, 120, 120, confidence=0.95, method=method)  # type: ignore[arg-type]
    assert all_old.estimate == -1.0 and all_old.low == -1.0 and -1.0 < all_old.high < -0.9
    for b, c in [(0, 0), (1, 0), (0, 1)]:
        single = paired_difference(b, c, 1, confidence=0.95, method=method)  # type: ignore[arg-type]
        assert -1.0 <= single.low <= single.estimate <= single.high <= 1.0
        assert single.width > 0.5  # one case settles almost nothing


@pytest.mark.parametrize("method", ["tango", "melded"])
def test_swapping_versions_mirrors_the_interval(method: str) -> None:
    for b, c, n in [(9, 5, 120), (0, 3, 10), (7, 0, 7), (2, 2, 5)]:
        forward = _cached(b, c, n, method)
        backward = _cached(c, b, n, method)
        assert backward.low == pytest.approx(-forward.high, abs=1e-9)
        assert backward.high == pytest.approx(-forward.low, abs=1e-9)


def test_invalid_inputs_are_named() -> None:
    with pytest.raises(ValueError, match=r"b \+ c must be <= n"):
        paired_difference(5, 6, 10, confidence=0.95)
    with pytest.raises(ValueError, match="n must be >= 1"):
        paired_difference(0, 0, 0, confidence=0.95)
    with pytest.raises(ValueError, match="b must be >= 0"):
        paired_difference(-1, 0, 10, confidence=0.95)
    with pytest.raises(TypeError, match="c must be an integer"):
        paired_difference(1, 2.0, 10, confidence=0.95)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence"):
        paired_difference(1, 2, 10, confidence=95)
    with pytest.raises(ValueError, match="method must be"):
        paired_difference(1, 2, 10, confidence=0.95, method="wald")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="b must be an integer"):
        mcnemar_exact_p(True, 2)


# ---------------------------------------------------------------------------- paired_counts


def test_paired_counts_tabulates_the_four_cells() -> None:
    old = [True, True, False, False, True]
    new = [True, False, True, False, True]
    counts = paired_counts(old, new)
    assert counts == PairedCounts(n=5, b=1, c=1, both=2, neither=1, missing=0)
    assert counts.discordant == 2 and counts.difference == 0.0


def test_missing_outputs_count_against_the_new_version_by_default() -> None:
    # old missing -> old pass; new missing -> new fail; both missing -> a c case.
    old = [None, None, None, True, False]
    new = [True, False, None, None, None]
    conservative = paired_counts(old, new)
    # (·, T) -> both, (·, F) -> c, (·, ·) -> c, (T, ·) -> c, (F, ·) -> neither
    assert conservative == PairedCounts(n=5, b=0, c=3, both=1, neither=1, missing=5)
    optimistic = paired_counts(old, new, impute="optimistic")
    # mirror image: (·, T) -> b, (·, F) -> neither, (·, ·) -> b, (T, ·) -> both, (F, ·) -> b
    assert optimistic == PairedCounts(n=5, b=3, c=0, both=1, neither=1, missing=5)


outcome = st.sampled_from([True, False, None])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(outcome, outcome), min_size=1, max_size=40), st.randoms())
def test_conservative_counts_bound_every_imputation(
    pairs: list[tuple[bool | None, bool | None]], rnd: random.Random
) -> None:
    # Whatever the missing outputs would have been, the conservative table gives the smallest
    # difference (so the lowest lower bound) and the optimistic one the largest.
    old = [o for o, _ in pairs]
    new = [w for _, w in pairs]
    imputed = paired_counts([rnd.random() < 0.5 if o is None else o for o in old],
                            [rnd.random() < 0.5 if w is None else w for w in new])
    low = paired_counts(old, new)
    high = paired_counts(old, new, impute="optimistic")
    assert low.difference <= imputed.difference <= high.difference
    assert low.n == high.n == imputed.n == len(pairs)
    assert low.b + low.c + low.both + low.neither == low.n
    assert low.missing == sum(o is None or w is None for o, w in pairs)
    assert (paired_difference(low.b, low.c, low.n, confidence=0.95).low
            <= paired_difference(imputed.b, imputed.c, imputed.n, confidence=0.95).low)


def test_paired_counts_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match=r"len\(old\) = 2, len\(new\) = 1"):
        paired_counts([True, False], [True])
    with pytest.raises(TypeError, match=r"new\[1\] must be True, False or None"):
        paired_counts([True, False], [True, 1])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="impute must be"):
        paired_counts([True], [True], impute="ignore")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- properties


@st.composite
def tables(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(min_value=1, max_value=400))
    b = draw(st.integers(min_value=0, max_value=n))
    c = draw(st.integers(min_value=0, max_value=n - b))
    return b, c, n


levels = st.floats(min_value=0.5, max_value=0.995)


@settings(max_examples=150, deadline=None)
@given(tables(), levels, levels)
def test_tango_properties(table: tuple[int, int, int], level_a: float, level_b: float) -> None:
    b, c, n = table
    narrow = paired_difference(b, c, n, confidence=min(level_a, level_b))
    wide = paired_difference(b, c, n, confidence=max(level_a, level_b))
    for interval in (narrow, wide):
        assert -1.0 <= interval.low <= interval.estimate <= interval.high <= 1.0
    assert wide.low <= narrow.low + 1e-12 and wide.high >= narrow.high - 1e-12


@settings(max_examples=40, deadline=None)
@given(tables(), levels, levels)
def test_melded_properties(table: tuple[int, int, int], level_a: float, level_b: float) -> None:
    b, c, n = table
    narrow = paired_difference(b, c, n, confidence=min(level_a, level_b), method="melded")
    wide = paired_difference(b, c, n, confidence=max(level_a, level_b), method="melded")
    for interval in (narrow, wide):
        assert -1.0 <= interval.low <= interval.estimate <= interval.high <= 1.0
    assert wide.low <= narrow.low + 1e-9 and wide.high >= narrow.high - 1e-9
    # Compatible with the exact test: when it does not reject at this level, 0 is inside.
    if mcnemar_exact_p(b, c) >= 1 - max(level_a, level_b):
        assert wide.low <= 0.0 <= wide.high
