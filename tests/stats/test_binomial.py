"""Clopper–Pearson (STATISTICS.md §1): reference values, exact coverage, edges, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import optimize, stats

from oloproof.stats.binomial import (
    clopper_pearson,
    min_cases_to_pass,
    min_cases_to_pass_max,
)


def _reference_by_tail_inversion(x: int, n: int, confidence: float) -> tuple[float, float]:
    """CP bounds by their definition, without the beta form the module uses.

    lower: the p with P(X ≥ x | p) = α/2;  upper: the p with P(X ≤ x | p) = α/2 (root-finding
    on the binomial tail).
    """
    tail = (1 - confidence) / 2
    low = 0.0 if x == 0 else optimize.brentq(
        lambda p: stats.binom.sf(x - 1, n, p) - tail, 1e-15, 1 - 1e-15, xtol=1e-14
    )
    high = 1.0 if x == n else optimize.brentq(
        lambda p: stats.binom.cdf(x, n, p) - tail, 1e-15, 1 - 1e-15, xtol=1e-14
    )
    return low, high


# --- exact values -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        # R 4.x: binom.test(7, 20)$conf.int -> 0.1539092 0.5921885
        (7, 20, 0.1539092, 0.5921885),
        # R: binom.test(c(682, 243), p = 3/4)$conf.int (Mendel's peas, ?binom.test example)
        # -> 0.7076683 0.7654066
        (682, 925, 0.7076683, 0.7654066),
    ],
)
def test_matches_r_binom_test(x: int, n: int, low: float, high: float) -> None:
    interval = clopper_pearson(x, n, confidence=0.95)
    assert interval.low == pytest.approx(low, abs=5e-8)
    assert interval.high == pytest.approx(high, abs=5e-8)
    assert interval.estimate == pytest.approx(x / n)
    assert interval.method == "clopper-pearson"
    assert interval.approximate is False
    assert interval.level == 0.95


@pytest.mark.parametrize(
    ("x", "n", "confidence"),
    [(1, 10, 0.95), (9, 10, 0.95), (3, 37, 0.9), (50, 100, 0.99), (996, 1000, 0.95)],
)
def test_matches_binomial_tail_inversion(x: int, n: int, confidence: float) -> None:
    low, high = _reference_by_tail_inversion(x, n, confidence)
    interval = clopper_pearson(x, n, confidence=confidence)
    assert interval.low == pytest.approx(low, rel=1e-9)
    assert interval.high == pytest.approx(high, rel=1e-9)


# --- edge cases ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 17, 368])
def test_zero_and_all_passes_have_closed_forms(n: int) -> None:
    # x = 0: upper = 1 − (α/2)^{1/n};  x = n: lower = (α/2)^{1/n} (Beta(n, 1) quantile).
    none = clopper_pearson(0, n, confidence=0.95)
    assert none.low == 0.0
    assert none.high == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-12)
    assert none.estimate == 0.0
    everything = clopper_pearson(n, n, confidence=0.95)
    assert everything.high == 1.0
    assert everything.low == pytest.approx(0.025 ** (1 / n), rel=1e-12)
    assert everything.estimate == 1.0


def test_single_case() -> None:
    assert clopper_pearson(0, 1, confidence=0.95).high == pytest.approx(0.975)
    assert clopper_pearson(1, 1, confidence=0.95).low == pytest.approx(0.025)


def test_missing_counted_as_failures_below_and_passes_above() -> None:
    # 10 cases: 5 answered passes, 2 answered failures, 3 without output.
    interval = clopper_pearson(5, 10, confidence=0.95, missing=3)
    assert interval.low == clopper_pearson(5, 10, confidence=0.95).low
    assert interval.high == clopper_pearson(8, 10, confidence=0.95).high
    assert interval.estimate == pytest.approx(5 / 7)


def test_all_missing_is_uninformative_with_estimate_zero() -> None:
    interval = clopper_pearson(0, 4, confidence=0.95, missing=4)
    assert (interval.low, interval.estimate, interval.high) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"passes": 0, "n": 0}, ValueError, "n must be >= 1"),
        ({"passes": -1, "n": 5}, ValueError, "passes must be >= 0"),
        ({"passes": 6, "n": 5}, ValueError, "passes \\+ missing must be <= n"),
        ({"passes": 3, "n": 5, "missing": 3}, ValueError, "passes \\+ missing must be <= n"),
        ({"passes": 1.0, "n": 5}, TypeError, "passes must be an integer"),
        ({"passes": 1, "n": 5, "confidence": 1.0}, ValueError, "confidence must lie strictly"),
    ],
)
def test_rejects_bad_input(kwargs: dict[str, object], error: type[Exception], message: str) -> None:
    arguments: dict[str, object] = {"confidence": 0.95, **kwargs}
    with pytest.raises(error, match=message):
        clopper_pearson(**arguments)  # type: ignore[arg-type]


# --- minimum set sizes (§1) ---------------------------------------------------------------


@pytest.mark.parametrize(("threshold", "cases"), [(0.80, 17), (0.90, 36), (0.95, 72), (0.99, 368)])
def test_min_cases_to_pass_matches_statistics_md(threshold: float, cases: int) -> None:
    # STATISTICS.md §1: n ≥ ln(α/2)/ln(min), e.g. ln(0.025)/ln(0.8) = 16.53 -> 17.
    assert min_cases_to_pass(threshold, confidence=0.95) == cases
    assert clopper_pearson(cases, cases, confidence=0.95).low >= threshold
    assert clopper_pearson(cases - 1, cases - 1, confidence=0.95).low < threshold


@pytest.mark.parametrize(("threshold", "cases"), [(0.20, 17), (0.10, 36), (0.05, 72), (0.01, 368)])
def test_min_cases_to_pass_max_mirrors_min(threshold: float, cases: int) -> None:
    assert min_cases_to_pass_max(threshold, confidence=0.95) == cases
    assert clopper_pearson(0, cases, confidence=0.95).high <= threshold
    assert clopper_pearson(0, cases - 1, confidence=0.95).high > threshold


def test_min_cases_edges() -> None:
    assert min_cases_to_pass(0.0, confidence=0.95) == 1
    assert min_cases_to_pass_max(1.0, confidence=0.95) == 1
    with pytest.raises(ValueError, match="never be cleared"):
        min_cases_to_pass(1.0, confidence=0.95)
    with pytest.raises(ValueError, match="never be cleared"):
        min_cases_to_pass_max(0.0, confidence=0.95)


@given(
    threshold=st.floats(0.01, 0.999),
    confidence=st.sampled_from([0.8, 0.9, 0.95, 0.99]),
)
def test_min_cases_to_pass_is_the_boundary(threshold: float, confidence: float) -> None:
    n = min_cases_to_pass(threshold, confidence=confidence)
    assert clopper_pearson(n, n, confidence=confidence).low >= threshold
    if n > 1:
        assert clopper_pearson(n - 1, n - 1, confidence=confidence).low < threshold


# --- coverage -----------------------------------------------------------------------------


@pytest.mark.parametrize("n", [10, 37, 120])
def test_exact_coverage_by_enumeration(n: int) -> None:
    """Coverage(p) = Σ_x P(X = x | p)·[p ∈ CI(x)], enumerated over every x, on a grid of p.

    Exact: each side may miss at most α/2 = 2.5% for every p (§1's "false PASS ≤ α/2").
    """
    intervals = [clopper_pearson(x, n, confidence=0.95) for x in range(n + 1)]
    lows = np.array([i.low for i in intervals])
    highs = np.array([i.high for i in intervals])
    xs = np.arange(n + 1)
    for p in np.linspace(0.001, 0.999, 211):
        pmf = stats.binom.pmf(xs, n, p)
        assert pmf[lows > p].sum() <= 0.025 + 1e-12
        assert pmf[highs < p].sum() <= 0.025 + 1e-12


def test_coverage_simulation() -> None:
    rng = np.random.default_rng(20240611)
    trials = 4000
    n = 60
    rates = rng.uniform(0.02, 0.98, size=trials)
    passes = rng.binomial(n, rates)
    hits = 0
    for p, x in zip(rates, passes, strict=True):
        interval = clopper_pearson(int(x), n, confidence=0.9)
        hits += interval.low <= p <= interval.high
    # Exact method: coverage must not be significantly below nominal.
    assert stats.binomtest(hits, trials, 0.9, alternative="less").pvalue > 0.01


# --- properties ---------------------------------------------------------------------------


@st.composite
def runs(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(1, 2000))
    missing = draw(st.integers(0, n))
    passes = draw(st.integers(0, n - missing))
    return passes, n, missing


@given(run=runs(), confidence=st.floats(0.5, 0.999))
def test_estimate_inside_interval(run: tuple[int, int, int], confidence: float) -> None:
    passes, n, missing = run
    interval = clopper_pearson(passes, n, confidence=confidence, missing=missing)
    assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0


@given(run=runs(), a=st.floats(0.5, 0.999), b=st.floats(0.5, 0.999))
def test_higher_confidence_never_narrows(run: tuple[int, int, int], a: float, b: float) -> None:
    passes, n, missing = run
    lo_conf, hi_conf = sorted((a, b))
    narrow = clopper_pearson(passes, n, confidence=lo_conf, missing=missing)
    wide = clopper_pearson(passes, n, confidence=hi_conf, missing=missing)
    eps = 1e-12  # levels one ulp apart give bounds one ulp apart, in either direction
    assert wide.low <= narrow.low + eps
    assert wide.high >= narrow.high - eps


@given(run=runs(), was_pass=st.booleans())
def test_more_missing_never_narrows(run: tuple[int, int, int], was_pass: bool) -> None:
    passes, n, missing = run
    before = clopper_pearson(passes, n, confidence=0.95, missing=missing)
    # One more answered case loses its output: a pass, or a failure.
    if was_pass and passes > 0:
        after = clopper_pearson(passes - 1, n, confidence=0.95, missing=missing + 1)
    elif not was_pass and passes + missing < n:
        after = clopper_pearson(passes, n, confidence=0.95, missing=missing + 1)
    else:
        after = clopper_pearson(passes, n + 1, confidence=0.95, missing=missing + 1)
    assert after.low <= before.low
    assert after.high >= before.high


def test_width_shrinks_like_root_n() -> None:
    # Sanity on scale: at p̂ = 0.5 the CP width is close to 2·1.96·√(0.25/n) for large n.
    interval = clopper_pearson(5000, 10000, confidence=0.95)
    assert interval.width == pytest.approx(2 * 1.959964 * math.sqrt(0.25 / 10000), rel=0.01)
