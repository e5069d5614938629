"""Judge vs human agreement: exact raw agreement, Cohen's kappa with FCE (1969) interval."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from scipy import stats

from oloproof.stats.agreement import judge_agreement
from oloproof.stats.binomial import clopper_pearson


def _labels_from_table(counts: list[list[int]]) -> tuple[list[int], list[int]]:
    judge: list[int] = []
    human: list[int] = []
    for i, row in enumerate(counts):
        for j, count in enumerate(row):
            judge += [i] * count
            human += [j] * count
    return judge, human


def _kappa_of(p: np.ndarray) -> float:
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    chance = float(rows @ cols)
    return (float(np.trace(p)) - chance) / (1 - chance)


def _delta_method_se(counts: list[list[int]]) -> float:
    """Large-sample SE of kappa by the multinomial delta method, numerically.

    Var(κ̂) ≈ (Σ p_ij g_ij² − (Σ p_ij g_ij)²)/n with g = ∂κ/∂p_ij by central differences.
    Fleiss, Cohen & Everitt (1969) derived their closed form exactly this way, so the two must
    agree; this route shares no code or algebra with the module.
    """
    table = np.asarray(counts, dtype=float)
    n = table.sum()
    p = table / n
    gradient = np.zeros_like(p)
    h = 1e-7
    for index in np.ndindex(p.shape):
        up, down = p.copy(), p.copy()
        up[index] += h
        down[index] -= h
        gradient[index] = (_kappa_of(up) - _kappa_of(down)) / (2 * h)
    variance = (np.sum(p * gradient**2) - np.sum(p * gradient) ** 2) / n
    return math.sqrt(variance)


# Fleiss, Levin & Paik (2003) ch. 18 example: two raters, 100 patients, three diagnoses.
FLEISS_TABLE = [[75, 1, 4], [5, 4, 1], [0, 0, 10]]


def test_fleiss_example() -> None:
    judge, human = _labels_from_table(FLEISS_TABLE)
    result = judge_agreement(judge, human, confidence=0.95)
    # By hand: p_o = 0.89, p_e = 0.8·0.8 + 0.1·0.05 + 0.1·0.15 = 0.66, κ = 0.23/0.34.
    assert result.kappa == pytest.approx(0.23 / 0.34, rel=1e-12)
    assert result.n == 100
    se = _delta_method_se(FLEISS_TABLE)
    assert se == pytest.approx(0.0877, abs=1e-4)
    interval = result.kappa_interval
    assert interval is not None
    z = stats.norm.isf(0.025)
    assert interval.low == pytest.approx(result.kappa - z * se, abs=1e-7)
    assert interval.high == pytest.approx(result.kappa + z * se, abs=1e-7)
    assert interval.approximate is True
    assert result.agreement == clopper_pearson(89, 100, confidence=0.95)


@pytest.mark.parametrize(
    "counts",
    [
        [[40, 10], [5, 45]],
        [[3, 9], [1, 2]],
        [[20, 3, 1, 0], [2, 15, 4, 1], [0, 5, 30, 2], [1, 0, 3, 13]],
        [[10, 0, 0], [0, 10, 5], [0, 0, 0]],  # a label the judge never uses
    ],
)
def test_kappa_se_matches_delta_method(counts: list[list[int]]) -> None:
    judge, human = _labels_from_table(counts)
    result = judge_agreement(judge, human, confidence=0.9)
    assert result.kappa_interval is not None
    z = stats.norm.isf(0.05)
    se = _delta_method_se(counts)
    # Compare on a side the [-1, 1] clipping did not touch (there always is one here).
    if result.kappa_interval.high < 1.0:
        half_width = result.kappa_interval.high - result.kappa
    else:
        assert result.kappa_interval.low > -1.0
        half_width = result.kappa - result.kappa_interval.low
    assert half_width / z == pytest.approx(se, rel=1e-5)


def test_string_labels() -> None:
    judge = ["good", "bad", "good", "good", "bad", "ok"]
    human = ["good", "bad", "bad", "good", "bad", "ok"]
    result = judge_agreement(judge, human, confidence=0.95)
    assert result.agreement.estimate == pytest.approx(5 / 6)
    # p_e = (3·2 + 2·3 + 1·1)/36 = 13/36, κ = (5/6 − 13/36)/(1 − 13/36) = 17/23.
    assert result.kappa == pytest.approx(17 / 23)


def test_kappa_undefined_when_everyone_uses_one_label() -> None:
    result = judge_agreement(["pass"] * 12, ["pass"] * 12, confidence=0.95)
    assert math.isnan(result.kappa)
    assert result.kappa_interval is None
    assert result.agreement.estimate == 1.0
    assert result.agreement.low == pytest.approx(0.025 ** (1 / 12))


def test_constant_judge_has_zero_kappa() -> None:
    result = judge_agreement(["pass"] * 10, ["pass"] * 7 + ["fail"] * 3, confidence=0.95)
    assert result.kappa == pytest.approx(0.0)
    assert result.kappa_interval is not None


def test_perfect_agreement_has_kappa_one() -> None:
    labels = ["a", "b", "c"] * 5
    result = judge_agreement(labels, labels, confidence=0.95)
    assert result.kappa == 1.0
    assert result.kappa_interval is not None
    assert result.kappa_interval.low == result.kappa_interval.high == 1.0


def test_single_case() -> None:
    same = judge_agreement(["x"], ["x"], confidence=0.95)
    assert math.isnan(same.kappa) and same.agreement.low == pytest.approx(0.025)
    different = judge_agreement(["x"], ["y"], confidence=0.95)
    assert different.kappa == 0.0  # p_o = 0, p_e = 0
    assert different.agreement.high == pytest.approx(0.975)


@pytest.mark.parametrize(
    ("judge", "human", "message"),
    [([1, 2], [1], "same cases"), ([], [], "must not be empty")],
)
def test_rejects_bad_input(judge: list[int], human: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        judge_agreement(judge, human, confidence=0.95)


def test_kappa_interval_coverage() -> None:
    # Joint label distribution with population κ = 0.693; 200 cases per simulated study.
    joint = np.array([[0.5, 0.08], [0.07, 0.35]])
    true_kappa = _kappa_of(joint)
    rng = np.random.default_rng(2024)
    trials, n = 1000, 200
    hits = 0
    for _ in range(trials):
        cells = rng.choice(4, size=n, p=joint.ravel())
        result = judge_agreement((cells // 2).tolist(), (cells % 2).tolist(), confidence=0.95)
        assert result.kappa_interval is not None
        hits += result.kappa_interval.low <= true_kappa <= result.kappa_interval.high
    # Approximate method: coverage near nominal (two-sided).
    assert stats.binomtest(hits, trials, 0.95).pvalue > 0.01


label_pairs = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
        st.lists(st.integers(0, 3), min_size=n, max_size=n),
    )
)


@given(pair=label_pairs, confidence=st.floats(0.5, 0.999))
def test_intervals_contain_estimates(pair: tuple[list[int], list[int]], confidence: float) -> None:
    judge, human = pair
    result = judge_agreement(judge, human, confidence=confidence)
    assert result.agreement.low <= result.agreement.estimate <= result.agreement.high
    if result.kappa_interval is None:
        assert math.isnan(result.kappa)
        assert len(set(judge) | set(human)) == 1
    else:
        interval = result.kappa_interval
        assert -1.0 <= interval.low <= result.kappa <= interval.high <= 1.0


@given(pair=label_pairs)
@example(pair=([0, 0, 0, 0, 0, 0], [1, 2, 0, 0, 0, 0]))  # a constant rater: zero variance, ±1e-16 before
def test_kappa_is_symmetric_in_the_two_raters(pair: tuple[list[int], list[int]]) -> None:
    judge, human = pair
    forward = judge_agreement(judge, human, confidence=0.95)
    backward = judge_agreement(human, judge, confidence=0.95)
    if forward.kappa_interval is None or backward.kappa_interval is None:
        assert forward.kappa_interval is None and backward.kappa_interval is None
        return
    assert backward.kappa == pytest.approx(forward.kappa, abs=1e-12)
    assert backward.kappa_interval.low == pytest.approx(forward.kappa_interval.low, abs=1e-9)
    assert backward.kappa_interval.high == pytest.approx(forward.kappa_interval.high, abs=1e-9)


@given(pair=label_pairs, a=st.floats(0.5, 0.999), b=st.floats(0.5, 0.999))
def test_higher_confidence_never_narrows(
    pair: tuple[list[int], list[int]], a: float, b: float
) -> None:
    judge, human = pair
    lo_conf, hi_conf = sorted((a, b))
    narrow = judge_agreement(judge, human, confidence=lo_conf)
    wide = judge_agreement(judge, human, confidence=hi_conf)
    eps = 1e-12  # levels one ulp apart give bounds one ulp apart, in either direction
    assert wide.agreement.low <= narrow.agreement.low + eps
    assert wide.agreement.high >= narrow.agreement.high - eps
    if narrow.kappa_interval is not None and wide.kappa_interval is not None:
        assert wide.kappa_interval.low <= narrow.kappa_interval.low + eps
        assert wide.kappa_interval.high >= narrow.kappa_interval.high - eps
