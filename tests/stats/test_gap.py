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
    StratumGroup,
    mover_difference,
    paired_strata_groups,
    rate_strata_groups,
    reweighted_paired_difference,
    reweighted_rate,
)
from oloproof.stats.interval import Interval
from oloproof.stats.paired import PairedCounts, paired_difference

Z95 = 1.959963984540054


def wald(estimate: float, se: float, level: float = 0.95) -> Interval:
    z = stats.norm.ppf(0.5 + level / 2)
    return Interval(estimate=estimate, low=estimate - z * se, high=estimate + z * se, level=level,
                    method="wald", approximate=True)


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
        fit = mover_difference(tango(int(b1), int(c1), 200), tango(int(b2), int(c2), 120),
                               confidence=0.95)
        hits += fit.low <= truth <= fit.high
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.01


# ---------------------------------------------------------------------------- reweighting


def test_reweighting_removes_the_chapters_composition_gap() -> None:
    # Gap chapter, "Ruling out the explanations": 40% vs 22% supply agreements, identical
    # per-category scores .90 (supply) and .65 (other). Set sizes as in the chapter: 200 dev,
    # 120 holdout. Dev: 80 supply (72 pass) + 120 other (78 pass) = 150/200 = .750. Holdout:
    # 26 supply (21.7% ≈ 22%) + 94 other. The chapter's ".90/.65 on both sides" are expected
    # counts, 26·.90 = 23.4 and 94·.65 = 61.1 passes, which reproduce its 4.6-point apparent gap
    # (0.750 − 84.5/120 = 0.0458) exactly; pass totals may be fractional (sums of scores).
    dev_counts = {"supply": (72, 80), "other": (78, 120)}
    hold_counts = {"supply": (23.4, 26), "other": (61.1, 94)}
    assert round(100 * (150 / 200 - 84.5 / 120), 1) == 4.6
    weights = {"supply": 0.40, "other": 0.60}  # the dev set's composition, fixed in advance
    dev = reweighted_rate(dev_counts, weights, confidence=0.95)
    hold = reweighted_rate(hold_counts, weights, confidence=0.95)
    gap = mover_difference(dev, hold, confidence=0.95)
    # Reference by hand: Var_dev = .4²·.9·.1/80 + .6²·.65·.35/120 = 8.625e-4,
    # Var_hold = .4²·.9·.1/26 + .6²·.65·.35/94 = 1.42512e-3, 1.96·√(2.28762e-3) = 0.0937.
    assert gap.estimate == pytest.approx(0.0, abs=1e-12)
    half = Z95 * math.sqrt(0.16 * 0.09 / 80 + 0.36 * 0.2275 / 120
                           + 0.16 * 0.09 / 26 + 0.36 * 0.2275 / 94)
    assert gap.high == pytest.approx(half, abs=1e-12)
    assert round(100 * gap.high, 1) == 9.4 and round(100 * gap.low, 1) == -9.4
    assert dev.method == hold.method == "post-stratified-wald"


def test_reweighting_an_integer_realisation_of_the_chapter_example() -> None:
    # With whole cases (23/26 and 61/94 on the holdout) the per-category rates are only nearly
    # identical: 0.7 ± 9.5 points, still nothing like the apparent gap's significance.
    weights = {"supply": 0.40, "other": 0.60}
    dev = reweighted_rate({"supply": (72, 80), "other": (78, 120)}, weights, confidence=0.95)
    hold = reweighted_rate({"supply": (23, 26), "other": (61, 94)}, weights, confidence=0.95)
    gap = mover_difference(dev, hold, confidence=0.95)
    assert gap.estimate == pytest.approx(0.75 - (0.4 * 23 / 26 + 0.6 * 61 / 94))
    assert round(100 * gap.estimate, 1) == 0.7
    assert round(100 * (gap.high - gap.estimate), 1) == 9.5


def test_own_composition_weights_give_the_plain_rate() -> None:
    counts = {"a": (30, 40), "b": (50, 100), "c": (9, 10)}
    result = reweighted_rate(counts, {"a": 40, "b": 100, "c": 10}, confidence=0.95)
    assert result.estimate == pytest.approx(89 / 150)


def test_thin_strata_are_pooled_then_merged_into_the_largest() -> None:
    weights = {"big": 0.5, "mid": 0.2, "tiny": 0.1, "perfect": 0.2}
    counts = {"big": (60, 100), "mid": (30, 40), "tiny": (2, 3), "perfect": (20, 20)}
    # tiny (n < 5) and perfect (p̂ = 1) are pooled: 22/23 is healthy, so it stays a group.
    assert rate_strata_groups(counts, weights) == (
        StratumGroup(strata=("big",), weight=0.5),
        StratumGroup(strata=("mid",), weight=0.2),
        StratumGroup(strata=("perfect", "tiny"), weight=pytest.approx(0.3)),  # type: ignore[arg-type]
    )
    result = reweighted_rate(counts, weights, confidence=0.95)
    assert result.estimate == pytest.approx(0.5 * 0.6 + 0.2 * 0.75 + 0.3 * 22 / 23)
    # Two perfect strata pool to a perfect group, which is merged into the largest stratum.
    counts2 = {"big": (60, 100), "mid": (30, 40), "tiny": (3, 3), "perfect": (20, 20)}
    groups = rate_strata_groups(counts2, weights)
    assert groups[0] == StratumGroup(strata=("big", "perfect", "tiny"),
                                     weight=pytest.approx(0.8))  # type: ignore[arg-type]
    merged = reweighted_rate(counts2, weights, confidence=0.95)
    assert merged.estimate == pytest.approx(0.8 * 83 / 123 + 0.2 * 0.75)


def test_all_strata_thin_falls_back_to_wilson_on_the_pooled_rate() -> None:
    counts = {"a": (4, 4), "b": (10, 10)}
    result = reweighted_rate(counts, {"a": 0.5, "b": 0.5}, confidence=0.95)
    assert result.method == "wilson"
    assert result.estimate == 1.0 and result.high == 1.0
    # Wilson lower limit for 14/14: n/(n + z²).
    assert result.low == pytest.approx(14 / (14 + Z95**2))


def test_weights_must_cover_the_strata_and_zero_weight_drops_one() -> None:
    with pytest.raises(ValueError, match="weights has no entry for stratum 'b'"):
        reweighted_rate({"a": (5, 10), "b": (5, 10)}, {"a": 1.0}, confidence=0.95)
    with pytest.raises(ValueError, match=r"weights\['a'\] must be finite and >= 0"):
        reweighted_rate({"a": (5, 10)}, {"a": -1.0}, confidence=0.95)
    with pytest.raises(ValueError, match=r"passes must lie in \[0, n\]"):
        reweighted_rate({"a": (11, 10)}, {"a": 1.0}, confidence=0.95)
    with pytest.raises(TypeError, match=r"must be a \(passes, n\) tuple"):
        reweighted_rate({"a": [5, 10]}, {"a": 1.0}, confidence=0.95)  # type: ignore[dict-item]
    # A zero-weight stratum's cases do not leak into anything.
    dropped = reweighted_rate({"a": (30, 50), "b": (40, 50), "x": (0, 2)},
                              {"a": 1, "b": 1, "x": 0}, confidence=0.95)
    assert dropped.estimate == pytest.approx(0.7)
    # A weighted stratum the set lacks is pooled (and, being empty, merged into the largest).
    lacking = rate_strata_groups({"a": (30, 50), "b": (40, 60)}, {"a": 1, "b": 1, "c": 2})
    assert lacking[1] == StratumGroup(strata=("b", "c"), weight=0.75)


def test_reweighted_paired_difference() -> None:
    # Same per-stratum paired difference in two compositions -> same reweighted estimate.
    weights = {"supply": 0.4, "other": 0.6}
    set_a = {"supply": table(12, 4, 80), "other": table(18, 6, 120)}    # +10 points in each
    set_b = {"supply": table(5, 2, 30), "other": table(27, 9, 180)}     # +10 points in each
    a = reweighted_paired_difference(set_a, weights, confidence=0.95)
    b = reweighted_paired_difference(set_b, weights, confidence=0.95)
    assert a.estimate == pytest.approx(0.1) and b.estimate == pytest.approx(0.1)
    # Hand computation: Var = Σ w²·(b + c − (b − c)²/n)/n².
    var = 0.16 * (16 - 64 / 80) / 80**2 + 0.36 * (24 - 144 / 120) / 120**2
    assert a.high - a.estimate == pytest.approx(Z95 * math.sqrt(var))
    assert a.method == "post-stratified-paired-wald"
    # A stratum with no discordant case has zero paired variance and one with 3 cases is thin:
    # both are pooled; the pool (1 vs 0 of 53) is healthy, so it stays a group of its own.
    equal = {"supply": 1, "other": 1, "rare": 1}
    mixed = {"supply": table(0, 0, 50), "other": table(9, 5, 120), "rare": table(1, 0, 3)}
    assert paired_strata_groups(mixed, equal) == (
        StratumGroup(strata=("other",), weight=pytest.approx(1 / 3)),  # type: ignore[arg-type]
        StratumGroup(strata=("rare", "supply"), weight=pytest.approx(2 / 3)),  # type: ignore[arg-type]
    )
    # A pool with zero variance (0 vs 0 of 53) is merged into the largest stratum; with one group
    # left the weights no longer matter and the pooled table gets Tango.
    flat = {"supply": table(0, 0, 50), "other": table(9, 5, 120), "rare": table(0, 0, 3)}
    assert paired_strata_groups(flat, equal) == (
        StratumGroup(strata=("other", "rare", "supply"), weight=pytest.approx(1.0)),  # type: ignore[arg-type]
    )
    pooled = reweighted_paired_difference(flat, equal, confidence=0.95)
    assert pooled == paired_difference(9, 5, 173, confidence=0.95)


def test_reweighted_rate_coverage() -> None:
    # Three strata of a 260-case set; post-stratified Wald is approximate (≈94.6% here).
    rng = np.random.default_rng(1977)
    names, sizes = ("supply", "services", "nda"), np.array([80, 120, 60])
    rates, weights = np.array([0.9, 0.7, 0.5]), np.array([0.2, 0.5, 0.3])
    w = dict(zip(names, weights, strict=True))
    sims, hits = 2000, 0
    for passes in rng.binomial(sizes, rates, size=(sims, 3)):
        counts = {h: (int(x), int(m)) for h, x, m in zip(names, passes, sizes, strict=True)}
        interval = reweighted_rate(counts, w, confidence=0.95)
        hits += interval.low <= float(weights @ rates) <= interval.high
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.01


def test_reweighted_paired_difference_coverage() -> None:
    rng = np.random.default_rng(1998)
    names, sizes = ("supply", "services", "nda"), (80, 120, 60)
    p_b, p_c = (0.15, 0.10, 0.06), (0.05, 0.08, 0.04)
    weights = (0.2, 0.5, 0.3)
    truth = sum(w * (b - c) for w, b, c in zip(weights, p_b, p_c, strict=True))
    sims, hits = 2000, 0
    draws = [rng.multinomial(m, [b, c, 1 - b - c], size=sims)
             for m, b, c in zip(sizes, p_b, p_c, strict=True)]
    for i in range(sims):
        tables = {h: table(int(d[i, 0]), int(d[i, 1]), m)
                  for h, d, m in zip(names, draws, sizes, strict=True)}
        interval = reweighted_paired_difference(tables, dict(zip(names, weights, strict=True)),
                                                confidence=0.95)
        hits += interval.low <= truth <= interval.high
    assert stats.binomtest(hits, sims, 0.95, alternative="less").pvalue > 0.01


# ---------------------------------------------------------------------------- properties

strata_counts = st.dictionaries(
    st.sampled_from(["a", "b", "c", "d", "e"]),
    st.integers(0, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    min_size=1,
).filter(lambda d: sum(n for _, n in d.values()) > 0)
levels = st.floats(min_value=0.5, max_value=0.995)


@settings(max_examples=150, deadline=None)
@given(strata_counts, st.data(), levels, levels)
def test_reweighted_rate_properties(counts: dict[str, tuple[int, int]], data: st.DataObject,
                                    level_a: float, level_b: float) -> None:
    weights = {h: data.draw(st.floats(0.01, 10.0)) for h in counts}
    narrow = reweighted_rate(counts, weights, confidence=min(level_a, level_b))
    wide = reweighted_rate(counts, weights, confidence=max(level_a, level_b))
    for interval in (narrow, wide):
        assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0
    assert wide.low <= narrow.low + 1e-12 and wide.high >= narrow.high - 1e-12
    groups = rate_strata_groups(counts, weights)
    assert sorted(h for g in groups for h in g.strata) == sorted(counts)
    assert sum(g.weight for g in groups) == pytest.approx(1.0)


intervals = st.tuples(st.floats(-1, 1), st.floats(0, 0.5), st.floats(0, 0.5)).map(
    lambda t: (t[0], t[0] - t[1], t[0] + t[2])
)


@settings(max_examples=150, deadline=None)
@given(intervals, intervals, levels)
def test_mover_properties(dev: tuple[float, float, float], hold: tuple[float, float, float],
                          level: float) -> None:
    d = Interval(estimate=dev[0], low=dev[1], high=dev[2], level=level, method="x",
                 approximate=True)
    h = Interval(estimate=hold[0], low=hold[1], high=hold[2], level=level, method="x",
                 approximate=True)
    fit = mover_difference(d, h, confidence=level)
    assert fit.low <= fit.estimate <= fit.high
    # Never wider than the crude union of the inputs' ranges.
    assert fit.low >= d.low - h.high - 1e-12 and fit.high <= d.high - h.low + 1e-12
    # Widening either input never narrows the result.
    wider = Interval(estimate=dev[0], low=dev[1] - 0.01, high=dev[2] + 0.01, level=level,
                     method="x", approximate=True)
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
