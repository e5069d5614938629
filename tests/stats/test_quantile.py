"""The order-statistic interval for a quantile (oloproof.stats.quantile): exact values against
scipy.stats.quantile_test (an independent implementation) and published table ranks, seeded
coverage on adversarial, discrete and tied distributions, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, quantile_test

from oloproof.stats.quantile import min_cases_for_bound, quantile_interval, quantile_ranks


@pytest.mark.parametrize(
    ("n", "p", "ranks"),
    [
        # Conover (1999), Table A3 / §3.2 example: n = 20, median, 95%: X(6) to X(15).
        (20, 0.5, (6, 15)),
        # Hahn & Meeker (1991) Table A.15-style values, recomputed with scipy.stats.binom:
        (100, 0.9, (84, 96)),
        (100, 0.95, (90, 100)),
        (200, 0.95, (184, 197)),
        (50, 0.95, (44, None)),  # 0.95**50 > 0.025: no upper bound from 50 draws
        (5, 0.5, (None, None)),
    ],
)
def test_ranks_match_tables(n: int, p: float, ranks: tuple[int | None, int | None]) -> None:
    assert quantile_ranks(n, p, confidence=0.95) == ranks


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("p", [0.05, 0.25, 0.5, 0.9, 0.95, 0.99])
@pytest.mark.parametrize("n", [7, 30, 73, 250])
def test_matches_scipy_quantile_test(seed: int, p: float, n: int) -> None:
    rng = np.random.default_rng(seed)
    values = np.round(rng.lognormal(5.0, 0.7, size=n))  # latencies in ms, with ties
    ours = quantile_interval(values, p, confidence=0.9)
    theirs = quantile_test(values, q=0, p=p).confidence_interval(0.9)
    assert ours.low == (-math.inf if np.isnan(theirs.low) else theirs.low)
    assert ours.high == (math.inf if np.isnan(theirs.high) else theirs.high)
    assert ours.estimate == np.quantile(values, p, method="inverted_cdf")
    assert not ours.approximate and ours.method == "order statistics (binomial)"


def test_minimum_cases_for_a_p95_upper_bound() -> None:
    # 0.95**72 = 0.0249 <= 0.025 < 0.95**71 = 0.0262
    assert min_cases_for_bound(0.95, confidence=0.95, side="upper") == 72
    assert quantile_ranks(71, 0.95, confidence=0.95)[1] is None
    assert quantile_ranks(72, 0.95, confidence=0.95)[1] == 72
    assert min_cases_for_bound(0.5, confidence=0.95, side="lower") == 6


def test_missing_values_widen_both_sides() -> None:
    values = np.arange(1.0, 101.0)
    full = quantile_interval(values, 0.5, confidence=0.95)
    values[:5] = np.nan  # five of the smallest unknown
    gapped = quantile_interval(values, 0.5, confidence=0.95)
    assert gapped.low <= full.low and gapped.high >= full.high
    for fill in (-1e9, 1e9):  # whatever they were, the interval covers the filled set's
        filled = np.where(np.isnan(values), fill, values)
        again = quantile_interval(filled, 0.5, confidence=0.95)
        assert gapped.low <= again.low and again.high <= gapped.high


@pytest.mark.parametrize(
    "bad",
    [
        {"values": [1.0, math.inf], "p": 0.5},
        {"values": [1.0], "p": 1.0},
        {"values": [1.0], "p": 0.0},
        {"values": [[1.0]], "p": 0.5},
    ],
)
def test_bad_input(bad: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        quantile_interval(bad["values"], bad["p"], confidence=0.95)  # type: ignore[arg-type]


def _two_point(p: float):  # type: ignore[no-untyped-def]
    """F(0) = p exactly: the 0-mass sits right at the quantile (the lower side's worst case)."""
    return lambda rng, n: np.where(rng.random(n) < p, 0.0, 1.0), 0.0


DISTRIBUTIONS = {
    "normal": (lambda rng, n: rng.normal(size=n), None),
    "cauchy (heavy tail)": (lambda rng, n: rng.standard_cauchy(size=n), None),
    "all tied": (lambda rng, n: np.full(n, 3.0), 3.0),
    "integer latencies": (lambda rng, n: np.round(rng.exponential(3.0, size=n)), None),
}


def _truth(name: str, p: float) -> float:
    from scipy import stats

    if name == "normal":
        return float(stats.norm.ppf(p))
    if name == "cauchy (heavy tail)":
        return float(stats.cauchy.ppf(p))
    if name == "all tied":
        return 3.0
    # round(Exp(3)): P(X <= k) = 1 - exp(-(k + 0.5) / 3); quantile = smallest k with that >= p
    k = 0
    while 1 - math.exp(-(k + 0.5) / 3.0) < p:
        k += 1
    return float(k)


@pytest.mark.parametrize("name", [*DISTRIBUTIONS, "two-point at the quantile"])
@pytest.mark.parametrize(("n", "p"), [(40, 0.5), (120, 0.95)])
def test_coverage(name: str, n: int, p: float) -> None:
    rng = np.random.default_rng(20261202)
    if name == "two-point at the quantile":
        draw, truth = _two_point(p)
    else:
        draw, truth = DISTRIBUTIONS[name][0], _truth(name, p)
    reps = 1500
    covered = sum(
        (found := quantile_interval(draw(rng, n), p, confidence=0.95)).low <= truth <= found.high for _ in range(reps)
    )
    # Never below nominal: one-sided binomial test of the coverage count against 0.95.
    assert binomtest(covered, reps, 0.95, alternative="less").pvalue > 0.01, (name, covered / reps)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=20), min_size=1, max_size=60),
    st.floats(min_value=0.05, max_value=0.95),
)
def test_properties(data: list[int], p: float) -> None:
    values = np.array(data, dtype=float)
    narrow = quantile_interval(values, p, confidence=0.8)
    wide = quantile_interval(values, p, confidence=0.95)
    assert narrow.low <= narrow.estimate <= narrow.high
    assert wide.low <= narrow.low and narrow.high <= wide.high  # a higher level never narrows it
    raised = quantile_interval(values + 1.0, p, confidence=0.95)  # shifting the data shifts the bounds
    assert raised.low == wide.low + 1.0 and raised.high == wide.high + 1.0
