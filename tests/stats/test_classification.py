"""The classification report against scikit-learn, and the coverage of its intervals (issue 18 §3).

scikit-learn is a dev dependency (pyproject.toml, `dev` extra) used only as the reference here.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from oloproof.stats.binomial import cp_lower, cp_upper
from oloproof.stats.classification import classification_report, f1_bootstrap

sklearn_metrics = pytest.importorskip("sklearn.metrics")


def _ours(truth: list[int], predicted: list[int], k: int) -> dict[str, object]:
    report = classification_report(np.array(truth), np.array(predicted), k, confidence=0.95, seed=0, replicates=200)
    return {
        "precision": [row.precision for row in report.rows],
        "recall": [row.recall for row in report.rows],
        "f1": [row.f1 for row in report.rows],
        "support": [row.support for row in report.rows],
        "accuracy": report.accuracy,
        "macro": report.macro,
        "weighted": report.weighted,
    }


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_values_equal_precision_recall_fscore_support_and_classification_report(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = 4
    truth = rng.integers(0, k, 200)
    predicted = np.where(rng.random(200) < 0.7, truth, rng.integers(0, k, 200))
    if seed == 1:
        predicted[predicted == 3] = 2  # class 3 never predicted: precision undefined (zero_division)
    if seed == 2:
        truth[truth == 0] = 1  # class 0 only predicted: support 0, recall undefined
    ours = _ours(list(truth), list(predicted), k)
    labels = list(range(k))
    p, r, f, s = sklearn_metrics.precision_recall_fscore_support(truth, predicted, labels=labels, zero_division=0)
    assert ours["precision"] == pytest.approx(list(p), abs=1e-15)
    assert ours["recall"] == pytest.approx(list(r), abs=1e-15)
    assert ours["f1"] == pytest.approx(list(f), abs=1e-15)
    assert ours["support"] == list(s)
    cr = sklearn_metrics.classification_report(truth, predicted, labels=labels, zero_division=0, output_dict=True)
    assert ours["accuracy"] == pytest.approx(cr["accuracy"] if "accuracy" in cr else cr["micro avg"]["f1-score"])
    for name, key in (("macro", "macro avg"), ("weighted", "weighted avg")):
        expected = (cr[key]["precision"], cr[key]["recall"], cr[key]["f1-score"])
        assert ours[name] == pytest.approx(expected, abs=1e-15)


def test_a_case_without_output_is_a_miss_for_recall_and_outside_every_precision() -> None:
    truth = np.array([0, 0, 0, 1, 1, 1])
    predicted = np.array([0, -1, 1, 1, 1, -1])
    report = classification_report(truth, predicted, 2, confidence=0.95, seed=0, replicates=100)
    zero, one = report.rows
    assert (zero.tp, zero.support, zero.predicted, zero.missing) == (1, 3, 1, 1)
    assert (one.tp, one.support, one.predicted, one.missing) == (2, 3, 3, 1)
    assert report.matrix.tolist() == [[1, 1, 1], [0, 2, 1]]
    # As scikit-learn with the missing ones predicted as a third label that is not reported:
    p, r, _, _ = sklearn_metrics.precision_recall_fscore_support(
        truth, np.where(predicted < 0, 2, predicted), labels=[0, 1], zero_division=0
    )
    assert [zero.precision, one.precision] == pytest.approx(list(p))
    assert [zero.recall, one.recall] == pytest.approx(list(r))
    # Recall's interval counts the missing case as a miss below and a find above: [CP low of 1/3, CP high of 2/3].
    assert zero.recall_interval is not None
    assert zero.recall_interval.low == pytest.approx(float(stats.beta.ppf(0.025, 1, 3)))
    assert zero.recall_interval.high == pytest.approx(float(stats.beta.isf(0.025, 3, 1)))


def test_precision_is_exact_conditional_on_the_number_selected() -> None:
    # Cases i.i.d.: truth one of three classes, the prediction right with a class-dependent rate.
    # Precision of class 1 = P(truth 1 | predicted 1); its Clopper-Pearson interval over the cases
    # predicted 1 covers it at least 95% of the time for every number predicted, hence overall.
    rng = np.random.default_rng(1818)
    reps, n = 4000, 40
    prior = np.array([0.5, 0.2, 0.3])
    right = np.array([0.9, 0.7, 0.8])
    truth = rng.choice(3, size=(reps, n), p=prior)
    wrong = (truth + rng.integers(1, 3, size=(reps, n))) % 3
    predicted = np.where(rng.random((reps, n)) < right[truth], truth, wrong)
    # P(pred 1) = 0.2*0.7 + (0.5*0.1 + 0.3*0.2)/2 ; P(truth 1, pred 1) = 0.14
    called_p = 0.2 * 0.7 + (0.5 * 0.1 + 0.3 * 0.2) / 2
    precision = 0.14 / called_p
    called = (predicted == 1).sum(axis=1)
    hits = ((predicted == 1) & (truth == 1)).sum(axis=1)
    has = called > 0
    low = cp_lower(hits[has], called[has], 0.025)
    high = cp_upper(hits[has], called[has], 0.025)
    covered = (low <= precision) & (precision <= high)
    count, total = int(covered.sum()), int(has.sum())
    assert stats.binomtest(count, total, 0.95, alternative="less").pvalue > 0.01
    for size in (3, 5, 8):  # conditional on a selection size too
        at = called[has] == size
        if at.sum() >= 100:
            assert covered[at].mean() >= 0.95 - 3 * np.sqrt(0.05 * 0.95 / at.sum())


def test_f1_bootstrap_is_seeded_labelled_approximate_and_roughly_covers() -> None:
    one = f1_bootstrap(40, 8, 10, 200, confidence=0.95, rng=np.random.default_rng(5), seed=5)
    two = f1_bootstrap(40, 8, 10, 200, confidence=0.95, rng=np.random.default_rng(5), seed=5)
    assert one == two and one.approximate and one.seed == 5 and one.method == "percentile bootstrap over cases"
    assert one.low <= one.estimate <= one.high
    # Coverage at n = 300, true F1 known from the cell probabilities (a small run; the grid is in
    # benchmarks/slices_coverage.py and docs/statistics.md).
    rng = np.random.default_rng(7)
    cells = np.array([0.2, 0.05, 0.05, 0.7])  # TP, FP, FN, rest
    true_f1 = 2 * 0.2 / (2 * 0.2 + 0.05 + 0.05)
    reps, covered = 300, 0
    for _ in range(reps):
        tp, fp, fn, _rest = rng.multinomial(300, cells)
        interval = f1_bootstrap(int(tp), int(fp), int(fn), 300, confidence=0.95, rng=rng, replicates=400)
        covered += interval.low <= true_f1 <= interval.high
    assert stats.binomtest(covered, reps, 0.95).pvalue > 0.001


def test_undefined_values_are_flagged_and_degenerate_f1_gets_no_interval() -> None:
    # Class 0 is only predicted (support 0), class 2 never predicted, class 1 perfect on its own cases.
    truth = np.array([1, 1, 1, 2, 2])
    predicted = np.array([1, 1, 1, 0, 0])
    report = classification_report(truth, predicted, 3, confidence=0.95, seed=0, replicates=100)
    only_predicted, perfect, never_predicted = report.rows
    assert not only_predicted.recall_defined and only_predicted.recall_interval is None
    assert not never_predicted.precision_defined and never_predicted.precision_interval is None
    assert only_predicted.f1_interval is None and never_predicted.f1_interval is None  # TP = 0
    assert perfect.f1 == 1.0 and perfect.f1_interval is None  # no FP or FN: every resample gives 1
