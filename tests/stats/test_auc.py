"""AUC intervals (oloproof.stats.auc): DeLong (approximate) and block betting (exact)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from sklearn.metrics import roc_auc_score

from oloproof.stats.auc import (
    auc_estimate,
    auc_interval,
    auc_interval_exact,
    paired_auc_difference,
    paired_auc_difference_exact,
)

# pROC's aSAH data set (113 patients with aneurysmal subarachnoid haemorrhage; Turck et al. 2010,
# shipped as data/aSAH.RData in github.com/xrobin/pROC): outcome (1 = "Poor"), s100b, ndka and
# the WFNS grade, read from that file with the `rdata` Python package.
# fmt: off
ASAH_POOR = np.array([
    0, 0, 0, 0, 1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    1, 0, 0, 1, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1,
    1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 0
])
ASAH_S100B = np.array([
    0.13, 0.14, 0.1, 0.04, 0.13, 0.1, 0.47, 0.16, 0.18, 0.1, 0.12, 0.1, 0.44, 0.71, 0.04, 0.08,
    0.49, 0.04, 0.07, 0.33, 0.09, 0.09, 0.07, 0.11, 0.07, 0.17, 0.07, 0.11, 0.13, 0.19, 0.05, 0.16,
    0.41, 0.14, 0.34, 0.35, 0.48, 0.09, 0.96, 0.25, 0.5, 0.46, 0.16, 0.07, 0.43, 0.45, 0.11, 0.08,
    0.09, 0.86, 0.52, 0.08, 0.06, 0.13, 2.07, 0.1, 0.14, 0.15, 0.07, 0.06, 0.77, 0.05, 0.09, 0.3,
    0.03, 0.09, 0.04, 0.23, 0.7, 0.09, 0.27, 0.71, 0.08, 0.26, 0.08, 0.16, 0.09, 0.13, 0.1, 0.08,
    0.11, 0.33, 0.11, 0.28, 0.07, 0.1, 0.32, 0.22, 0.07, 0.05, 0.24, 0.38, 0.1, 0.15, 0.08, 0.14,
    0.1, 0.07, 0.04, 0.19, 0.56, 0.14, 0.58, 0.32, 0.82, 0.74, 0.15, 0.47, 0.17, 0.44, 0.15, 0.5,
    0.48
])
ASAH_NDKA = np.array([
    3.01, 8.54, 8.09, 10.42, 17.4, 12.75, 6.0, 13.2, 15.54, 6.01, 15.96, 17.86, 5.18, 8.9, 13.41,
    20.75, 11.6, 16.11, 32.37, 54.82, 32.41, 49.94, 40.34, 9.47, 6.29, 12.53, 6.54, 6.3, 80.3,
    12.8, 9.8, 9.81, 9.85, 18.21, 5.03, 14.04, 21.93, 8.02, 7.42, 8.38, 6.59, 9.63, 13.12, 7.96,
    14.34, 41.43, 7.63, 7.06, 12.59, 13.56, 3.87, 9.44, 7.66, 12.98, 419.19, 27.19, 22.27, 9.95,
    21.22, 11.73, 10.4, 58.83, 6.39, 11.09, 12.22, 13.67, 17.21, 22.63, 12.9, 9.7, 21.57, 8.23,
    72.57, 15.54, 10.51, 10.6, 14.57, 5.19, 9.63, 4.61, 21.48, 17.3, 12.71, 9.44, 11.07, 19.46,
    10.83, 5.37, 11.97, 7.75, 9.83, 10.55, 28.49, 8.53, 12.57, 12.9, 46.83, 11.68, 12.67, 9.01,
    9.57, 34.06, 11.72, 14.26, 47.61, 11.67, 24.58, 10.33, 13.87, 15.89, 22.43, 6.79, 13.45
])
ASAH_WFNS = np.array([
    1, 1, 1, 1, 3, 2, 5, 4, 1, 2, 5, 2, 5, 5, 1, 2, 5, 2, 2, 5, 2, 1, 1, 1, 1, 2, 1, 2, 1, 1, 3, 4,
    2, 1, 4, 5, 4, 1, 4, 2, 5, 5, 1, 1, 2, 4, 1, 1, 2, 5, 5, 2, 1, 2, 5, 1, 2, 2, 2, 1, 5, 1, 1, 2,
    5, 2, 1, 4, 5, 2, 4, 4, 1, 4, 1, 2, 1, 4, 2, 1, 2, 3, 2, 4, 2, 1, 4, 5, 1, 1, 5, 4, 2, 2, 1, 1,
    1, 3, 1, 2, 5, 2, 2, 5, 5, 5, 2, 4, 4, 5, 1, 1, 1
])
# fmt: on

# Hanley & McNeil (1982), "The meaning and use of the area under a receiver operating
# characteristic (ROC) curve", Radiology 143:29–36, Table 1: ratings 1..5 of 58 normal and 51
# abnormal CT images; the paper gives the area as 0.893.
HM_RATINGS = np.repeat([1, 2, 3, 4, 5, 1, 2, 3, 4, 5], [33, 6, 6, 11, 2, 3, 2, 2, 11, 33]).astype(float)
HM_LABELS = np.repeat([0, 1], [58, 51])


def _delong_reference(scores: list[np.ndarray], labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong, DeLong & Clarke-Pearson (1988) written out in O(m·n): the kernel ψ(x, y) = 1, ½, 0
    for x > y, x = y, x < y; V10 = row means, V01 = column means; S = S10/m + S01/n."""
    pos, neg = labels == 1, labels == 0
    m, n = int(pos.sum()), int(neg.sum())
    v10, v01, aucs = [], [], []
    for s in scores:
        psi = np.array([[1.0 if x > y else 0.5 if x == y else 0.0 for y in s[neg]] for x in s[pos]])
        aucs.append(psi.mean())
        v10.append(psi.mean(axis=1))
        v01.append(psi.mean(axis=0))
    s10 = np.atleast_2d(np.cov(np.array(v10)))
    s01 = np.atleast_2d(np.cov(np.array(v01)))
    return np.array(aucs), s10 / m + s01 / n


# --------------------------------------------------------------------------------------------
# Point estimate and DeLong's interval against references


def test_pROC_aSAH_s100b_delong_interval() -> None:
    # pROC README / ci.auc(aSAH$outcome, aSAH$s100b): "95% CI: 0.6301-0.8326 (DeLong)", AUC 0.7314.
    iv = auc_interval(ASAH_S100B, ASAH_POOR, confidence=0.95)
    assert iv.estimate == pytest.approx(0.7314, abs=5e-5)
    assert (round(iv.low, 4), round(iv.high, 4)) == (0.6301, 0.8326)
    assert iv.method == "delong" and iv.approximate and iv.seed is None


def test_pROC_aSAH_ndka_matches_pROC_test_suite() -> None:
    # pROC tests/testthat/test-ci.auc.R: expected.ci.auc <- c(0.501244999271703, 0.611957994579946,
    # 0.722670989888189) for ci.auc(r.ndka).
    iv = auc_interval(ASAH_NDKA, ASAH_POOR, confidence=0.95)
    assert (iv.low, iv.estimate, iv.high) == pytest.approx(
        (0.501244999271703, 0.611957994579946, 0.722670989888189), abs=1e-12
    )


@pytest.mark.parametrize(
    ("a", "b", "low", "high"),
    [
        # pROC tests/testthat/test-roc.test.R: t1 <- roc.test(r.wfns, r.s100b), conf.int of
        # AUC(wfns) − AUC(s100b); t2 <- roc.test(r.wfns, r.ndka); t3 <- roc.test(r.ndka, r.s100b).
        ("s100b", "wfns", 0.0104061769564846, 0.174214419249478),
        ("ndka", "wfns", 0.0634011709339876, 0.3600405634833566),
        ("s100b", "ndka", -0.2876917446341914, 0.0488706064228094),
    ],
)
def test_paired_difference_matches_pROC_roc_test(a: str, b: str, low: float, high: float) -> None:
    data = {"s100b": ASAH_S100B, "ndka": ASAH_NDKA, "wfns": ASAH_WFNS}
    iv = paired_auc_difference(data[a], data[b], ASAH_POOR, confidence=0.95)
    assert (iv.low, iv.high) == pytest.approx((low, high), abs=1e-12)
    assert iv.estimate == pytest.approx(
        roc_auc_score(ASAH_POOR, data[b]) - roc_auc_score(ASAH_POOR, data[a]), abs=1e-12
    )


def test_hanley_mcneil_1982_rating_data() -> None:
    iv = auc_interval(HM_RATINGS, HM_LABELS, confidence=0.95)
    assert round(iv.estimate, 3) == 0.893  # the area printed in the paper
    aucs, cov = _delong_reference([HM_RATINGS], HM_LABELS)
    z = stats.norm.isf(0.025)
    assert iv.estimate == pytest.approx(aucs[0], abs=1e-12)
    assert (iv.low, iv.high) == pytest.approx(
        (aucs[0] - z * math.sqrt(cov[0, 0]), aucs[0] + z * math.sqrt(cov[0, 0])), abs=1e-12
    )
    # Hanley & McNeil's own SE for these data is 0.032; DeLong's nonparametric SE is close.
    assert (iv.high - iv.low) / (2 * z) == pytest.approx(0.032, abs=0.002)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 6), st.booleans()), min_size=4, max_size=40).filter(
        lambda cases: 2 <= sum(label for _, label in cases) <= len(cases) - 2
    )
)
def test_estimate_equals_sklearn_and_delong_equals_the_literal_formula(cases: list[tuple[int, bool]]) -> None:
    scores = np.array([s for s, _ in cases], dtype=float)
    labels = np.array([int(label) for _, label in cases])
    assert auc_estimate(scores, labels) == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    iv = auc_interval(scores, labels, confidence=0.9)
    aucs, cov = _delong_reference([scores], labels)
    assert iv.estimate == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    if cov[0, 0] > 0:
        half = stats.norm.isf(0.05) * math.sqrt(cov[0, 0])
        assert iv.method == "delong"
        assert iv.low == pytest.approx(max(aucs[0] - half, 0.0), abs=1e-12)
        assert iv.high == pytest.approx(min(aucs[0] + half, 1.0), abs=1e-12)
    else:
        assert iv.method == "delong-fallback-betting"
        assert iv.low < iv.high


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.booleans()), min_size=4, max_size=30).filter(
        lambda cases: 2 <= sum(label for *_, label in cases) <= len(cases) - 2
    )
)
def test_paired_delong_equals_the_literal_formula(cases: list[tuple[int, int, bool]]) -> None:
    a = np.array([x for x, _, _ in cases], dtype=float)
    b = np.array([y for _, y, _ in cases], dtype=float)
    labels = np.array([int(label) for *_, label in cases])
    aucs, cov = _delong_reference([a, b], labels)
    variance = cov[0, 0] + cov[1, 1] - 2 * cov[0, 1]
    iv = paired_auc_difference(a, b, labels, confidence=0.95)
    assert iv.estimate == pytest.approx(aucs[1] - aucs[0], abs=1e-12)
    if variance > 1e-15:
        half = stats.norm.isf(0.025) * math.sqrt(variance)
        assert iv.method == "delong"
        assert (iv.low, iv.high) == pytest.approx(
            (max(aucs[1] - aucs[0] - half, -1), min(aucs[1] - aucs[0] + half, 1)), abs=1e-9
        )


# --------------------------------------------------------------------------------------------
# Edge cases: a class absent, tiny classes, AUC 1, missing scores, bad input


@pytest.mark.parametrize("function", [auc_interval, auc_interval_exact])
def test_one_class_absent_raises_a_clear_error(function: object) -> None:
    with pytest.raises(
        ValueError,
        match=r"at least one positive \(label 1\) and one negative \(label 0\) case; got 0 positive and 3 negative",
    ):
        function([0.1, 0.2, 0.3], [0, 0, 0], confidence=0.95)  # type: ignore[operator]
    with pytest.raises(ValueError, match="got 2 positive and 0 negative"):
        paired_auc_difference([0.1, 0.2], [0.3, 0.4], [1, 1], confidence=0.95)


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match=r"labels must be 0 or 1 \(or booleans\), got 2"):
        auc_interval([0.1, 0.2], [0, 2], confidence=0.95)
    with pytest.raises(ValueError, match="labels must be 0 or 1"):
        auc_interval([0.1, 0.2], ["no", "yes"], confidence=0.95)
    with pytest.raises(ValueError, match="scores has 3 values but labels has 2"):
        auc_interval([0.1, 0.2, 0.3], [0, 1], confidence=0.95)
    with pytest.raises(ValueError, match=r"scores must be finite \(NaN marks a case with no score\)"):
        auc_interval([0.1, math.inf], [0, 1], confidence=0.95)
    with pytest.raises(ValueError, match="scores_b has 1 values but labels has 2"):
        paired_auc_difference([0.1, 0.2], [0.3], [0, 1], confidence=0.95)
    with pytest.raises(ValueError, match="confidence must lie strictly between 0 and 1"):
        auc_interval([0.1, 0.2], [0, 1], confidence=1.0)


def test_perfect_separation_does_not_collapse_to_a_point() -> None:
    scores = np.arange(20, dtype=float)
    labels = (scores >= 10).astype(int)
    iv = auc_interval(scores, labels, confidence=0.95)
    exact = auc_interval_exact(scores, labels, confidence=0.95)
    assert iv.estimate == 1.0 and iv.high == 1.0
    assert iv.low < 0.9  # 10 against 10 cases cannot prove an AUC of 0.9
    assert iv.method == "delong-fallback-betting" and iv.approximate
    assert (iv.low, iv.high) == (exact.low, exact.high)
    # A perfectly wrong score, and scores all tied, do not collapse either.
    assert auc_interval(-scores, labels, confidence=0.95).high > 0.1
    tied = auc_interval(np.zeros(20), labels, confidence=0.95)
    assert tied.estimate == 0.5 and tied.low < 0.5 < tied.high


def test_a_class_of_one_case_uses_the_exact_interval() -> None:
    iv = auc_interval([0.1, 0.2, 0.3, 0.9], [0, 0, 0, 1], confidence=0.95)
    assert iv.method == "delong-fallback-betting"
    assert (iv.low, iv.high) == (0.0, 1.0)  # one positive: nothing can be excluded at 95%


def test_missing_scores_widen_to_every_completion() -> None:
    rng = np.random.default_rng(3)
    labels = np.repeat([0, 1], 30)
    scores = rng.normal(labels * 1.0, 1.0)
    gone = scores.copy()
    gone[[0, 1, 40]] = np.nan
    iv = auc_interval(gone, labels, confidence=0.95)
    keep = ~np.isnan(gone)
    assert iv.estimate == pytest.approx(roc_auc_score(labels[keep], gone[keep]))
    # Every completion of the missing scores gives an interval inside the one with them missing.
    for fill in itertools.product([-10.0, 0.0, 10.0], repeat=3):
        done = gone.copy()
        done[[0, 1, 40]] = fill
        inner = auc_interval(done, labels, confidence=0.95)
        assert iv.low <= inner.low + 1e-12 and inner.high <= iv.high + 1e-12
    exact = auc_interval_exact(gone, labels, confidence=0.95, seed=5)
    assert exact.low < iv.low and exact.high > iv.high
    everything_gone = auc_interval(np.full(60, np.nan), labels, confidence=0.95)
    assert (everything_gone.estimate, everything_gone.low) == (0.0, 0.0)


# --------------------------------------------------------------------------------------------
# The exact interval


def test_exact_interval_is_wider_than_delong_and_reproducible() -> None:
    iv = auc_interval_exact(ASAH_S100B, ASAH_POOR, confidence=0.95, seed=11)
    delong = auc_interval(ASAH_S100B, ASAH_POOR, confidence=0.95)
    assert iv.method == "auc-betting" and not iv.approximate and iv.seed == 11
    assert iv.estimate == delong.estimate
    assert iv.low < delong.low and iv.high > delong.high
    assert iv == auc_interval_exact(list(ASAH_S100B), list(ASAH_POOR), confidence=0.95, seed=11)
    # The seed moves the bound a little, never by much.
    other = auc_interval_exact(ASAH_S100B, ASAH_POOR, confidence=0.95, seed=12)
    assert abs(other.low - iv.low) < 0.015


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1))
def test_order_of_cases_never_changes_any_interval(data_seed: int, shuffle_seed: int) -> None:
    rng = np.random.default_rng(data_seed)
    labels = rng.integers(0, 2, 40)
    labels[:2] = [0, 1]
    a = rng.integers(0, 4, 40).astype(float)  # heavy ties
    b = a + rng.integers(0, 2, 40)
    a[rng.random(40) < 0.1] = np.nan
    order = np.random.default_rng(shuffle_seed).permutation(40)
    for function in (auc_interval, auc_interval_exact):
        assert function(a, labels, confidence=0.9) == function(a[order], labels[order], confidence=0.9)  # type: ignore[operator]
    for paired in (paired_auc_difference, paired_auc_difference_exact):
        first = paired(a, b, labels, confidence=0.9)  # type: ignore[operator]
        second = paired(a[order], b[order], labels[order], confidence=0.9)  # type: ignore[operator]
        assert (first.low, first.high) == pytest.approx((second.low, second.high), abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=2, max_size=30), st.integers(0, 5))
def test_exact_bounds_move_the_right_way_when_a_positive_scores_higher(
    cases: list[tuple[int, bool]], bump: int
) -> None:
    """Raising a positive's score (or lowering a negative's) never lowers the exact bounds: the
    block values only grow, case by case, with the same partitions (same seed). DeLong has no
    such property (its variance can grow)."""
    labels = np.array([int(label) for _, label in cases] + [0, 1])
    scores = np.array([s for s, _ in cases] + [2, 3], dtype=float)
    before = auc_interval_exact(scores, labels, confidence=0.9, seed=7)
    better = scores.copy()
    better[-1] += bump
    after = auc_interval_exact(better, labels, confidence=0.9, seed=7)
    assert after.estimate >= before.estimate
    # Sorting, and so the partitions, may change when the bumped score passes others; the
    # guarantee is then about the capital averaged over all partitions: allow the seed noise.
    assert after.low >= before.low - 0.02
    assert after.high >= before.high - 0.02


def test_paired_exact_against_itself_and_reversed() -> None:
    same = paired_auc_difference_exact(ASAH_S100B, ASAH_S100B, ASAH_POOR, confidence=0.95)
    assert same.estimate == 0.0 and same.low < 0.0 < same.high
    forward = paired_auc_difference_exact(ASAH_S100B, ASAH_WFNS, ASAH_POOR, confidence=0.95, seed=3)
    backward = paired_auc_difference_exact(ASAH_WFNS, ASAH_S100B, ASAH_POOR, confidence=0.95, seed=3)
    assert forward.estimate == pytest.approx(-backward.estimate)
    assert forward.low < forward.estimate < forward.high
    delong = paired_auc_difference(ASAH_S100B, ASAH_WFNS, ASAH_POOR, confidence=0.95)
    assert forward.low < delong.low and forward.high > delong.high
    # Identical scores: DeLong's variance of the difference is zero; the fallback is the exact one.
    fallback = paired_auc_difference(ASAH_S100B, ASAH_S100B, ASAH_POOR, confidence=0.95)
    assert fallback.method == "delong-fallback-betting" and fallback.low < 0.0 < fallback.high


# --------------------------------------------------------------------------------------------
# Seeded coverage (small; the full grid is benchmarks/measures_coverage.py)


def _binormal(rng: np.random.Generator, m: int, n: int, auc: float) -> tuple[np.ndarray, np.ndarray]:
    """Positives N(δ, 1), negatives N(0, 1): the AUC is Φ(δ/√2)."""
    labels = np.repeat([1, 0], [m, n])
    return rng.normal(math.sqrt(2) * stats.norm.ppf(auc) * labels, 1.0), labels


def _ties(rng: np.random.Generator, m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Three score levels; positives (.2, .3, .5), negatives (.5, .3, .2): AUC 0.695 (TIES_AUC)."""
    pos = rng.choice(3, size=m, p=[0.2, 0.3, 0.5])
    neg = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    return np.concatenate([pos, neg]).astype(float), np.repeat([1, 0], [m, n])


TIES_AUC = 0.3 * 0.5 + 0.5 * 0.8 + 0.5 * (0.2 * 0.5 + 0.3 * 0.3 + 0.5 * 0.2)  # Σ p⁺ᵢ p⁻ⱼ [i>j] + ½ Σ p⁺ᵢ p⁻ᵢ


@pytest.mark.parametrize(
    ("regime", "truth"),
    [
        ("ties", TIES_AUC),
        ("near-one", 0.98),
        ("five-positives", 0.8),
        ("imbalanced-1:50", 0.85),
    ],
)
def test_exact_interval_covers_in_adversarial_regimes(regime: str, truth: float) -> None:
    """At 90%, each side errs at most 5% (one-sided binomial tests on the counts, 80 trials)."""
    rng = np.random.default_rng(len(regime))
    trials, above, below = 80, 0, 0
    for trial in range(trials):
        if regime == "ties":
            scores, labels = _ties(rng, 25, 25)
        elif regime == "near-one":
            scores, labels = _binormal(rng, 20, 20, truth)
        elif regime == "five-positives":
            scores, labels = _binormal(rng, 5, 50, truth)
        else:
            scores, labels = _binormal(rng, 4, 200, truth)
        iv = auc_interval_exact(scores, labels, confidence=0.9, seed=trial)
        above += iv.low > truth
        below += iv.high < truth
    assert stats.binomtest(above, trials, 0.05, alternative="greater").pvalue > 0.01
    assert stats.binomtest(below, trials, 0.05, alternative="greater").pvalue > 0.01


def test_delong_covers_when_classes_are_large_and_undercovers_when_tiny() -> None:
    """What docs/statistics.md says: near nominal for 50 against 50 at AUC .75; below nominal with
    5 positives (the lower limit above the truth far more often than 2.5%)."""
    rng = np.random.default_rng(18)
    trials = 600
    misses = sum(
        not (iv.low <= 0.75 <= iv.high)
        for iv in (auc_interval(*_binormal(rng, 50, 50, 0.75), confidence=0.95) for _ in range(trials))
    )
    assert 0.03 <= misses / trials <= 0.075
    above = sum(auc_interval(*_binormal(rng, 5, 50, 0.8), confidence=0.95).low > 0.8 for _ in range(trials))
    assert stats.binomtest(above, trials, 0.025, alternative="greater").pvalue < 1e-6


def test_paired_exact_covers_with_five_positives() -> None:
    rng = np.random.default_rng(5)
    trials, misses = 60, 0
    da, db = math.sqrt(2) * stats.norm.ppf(0.75), math.sqrt(2) * stats.norm.ppf(0.85)
    labels = np.repeat([1, 0], [5, 40])
    for trial in range(trials):
        e1, e2 = rng.normal(size=45), rng.normal(size=45)
        a, b = da * labels + e1, db * labels + 0.5 * e1 + math.sqrt(0.75) * e2
        iv = paired_auc_difference_exact(a, b, labels, confidence=0.9, seed=trial)
        misses += not (iv.low <= 0.1 <= iv.high)
    assert stats.binomtest(misses, trials, 0.1, alternative="greater").pvalue > 0.01


def test_delong_jumps_at_perfect_separation_and_the_exact_interval_does_not() -> None:
    """Pinned in docs/statistics.md: DeLong's fallback at AUC 1 is the exact interval, while one
    discordant pair gives DeLong's narrow interval — a perfect score gets the lower limit."""
    scores = np.arange(20, dtype=float)
    labels = (scores >= 10).astype(int)
    almost = scores.copy()
    almost[10] = 8.5  # one positive below one negative: AUC 0.99
    perfect_delong = auc_interval(scores, labels, confidence=0.95)
    almost_delong = auc_interval(almost, labels, confidence=0.95)
    assert round(perfect_delong.low, 2) == 0.53 and round(almost_delong.low, 3) == 0.962
    perfect_exact = auc_interval_exact(scores, labels, confidence=0.95)
    almost_exact = auc_interval_exact(almost, labels, confidence=0.95)
    assert almost_exact.low <= perfect_exact.low
    assert round(almost_exact.low, 2) == 0.52
