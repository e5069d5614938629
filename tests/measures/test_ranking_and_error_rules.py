"""`criterion: auc` and `criterion: mae` / `rmse` through the CLI (issue 18, point 4): estimates
checked against scikit-learn, verdicts on the interval, exact vs approximate, bad config exit 2."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn.metrics import mean_absolute_error, mean_squared_error, roc_auc_score

from oloproof.errors import ExitCode
from tests.conftest import Project, config_error, report
from tests.measures.conftest import measured

AUC = "  - {id: auc, criterion: auc, score: score, min: 0.8}"
MAE = "  - {id: mae, criterion: mae, field: value, max: 5}"
APPROX = "  allow_approximate_methods: true\n"


def scored(scores: list[float | None], labels: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"c{i:04d}",
            "out": {"label": 1, **({"score": s} if s is not None else {})},
            "expected": {"label": y},
        }
        for i, (s, y) in enumerate(zip(scores, labels, strict=True))
    ]


def separable(n: int, *, overlap: float, seed: int = 7) -> tuple[list[float], list[int]]:
    rng = np.random.default_rng(seed)
    labels = [i % 2 for i in range(n)]
    scores = [float(round(rng.normal(loc=y * (1 - overlap) * 4, scale=1.0), 4)) for y in labels]
    return scores, labels


def test_auc_estimate_is_scikit_learns_and_a_clear_ranker_passes(project: Project) -> None:
    scores, labels = separable(400, overlap=0.0)
    measured(project, scored(scores, labels), AUC)
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["estimate"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    assert rule["interval"]["approximate"] is False  # the default method is the exact block betting
    assert code == ExitCode.PASS, rule["sentence"]
    assert "(200 positive, 200 negative" in rule["sentence"]


def test_auc_of_a_coin_fails(project: Project) -> None:
    scores, labels = separable(400, overlap=1.0)
    measured(project, scored(scores, labels), AUC)
    code, data = report(project)
    assert code == ExitCode.FAIL, data["rules"][0]["sentence"]
    assert data["rules"][0]["estimate"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)


def test_auc_on_few_cases_is_insufficient(project: Project) -> None:
    scores, labels = separable(12, overlap=0.5)
    measured(project, scored(scores, labels), AUC)
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["rules"][0]["reasons"][0] == "interval_straddles_threshold"


def test_delong_is_approximate_and_decides_only_when_allowed(project: Project) -> None:
    scores, labels = separable(400, overlap=0.0)
    rule = "  - {id: auc, criterion: auc, score: score, min: 0.8, method: delong}"
    measured(project, scored(scores, labels), rule)
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW
    assert data["rules"][0]["interval"]["approximate"] is True
    assert "approximate_method" in data["rules"][0]["reasons"]
    measured(project, scored(scores, labels), rule, policy_extra=APPROX)
    assert report(project)[0] == ExitCode.PASS


def test_auc_with_one_class_is_not_decided(project: Project) -> None:
    measured(project, scored([0.1 * i for i in range(20)], [1] * 20), AUC)
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "one_class" in data["rules"][0]["reasons"]
    assert "has 20 positive (1) and 0 negative (0) cases" in data["rules"][0]["sentence"]


def test_auc_labels_must_be_binary(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    measured(project, scored([0.1, 0.9], ["Adelie", "Gentoo"]), AUC)
    monkeypatch.chdir(project.root)
    capsys.readouterr()
    code = run_cli("gate", "-c", "release.yaml")
    assert code == ExitCode.USAGE
    assert capsys.readouterr().err == (
        "oloproof: error: data/test.jsonl:1: case 'c0000': expected.label is 'Adelie'; policy.rules[0] (criterion "
        "auc) needs 0/1 or false/true (1 is the positive class), or the rule's positive: naming the positive "
        "class\n"
    )


def test_auc_with_a_named_positive_class_matches_scikit_learn(project: Project) -> None:
    scores, labels = separable(400, overlap=0.0)
    names = ["malignant" if y else "benign" for y in labels]
    rule = "  - {id: auc, criterion: auc, score: score, positive: malignant, min: 0.8}"
    measured(project, scored(scores, names), rule)
    code, data = report(project)
    assert code == ExitCode.PASS, data["rules"][0]["sentence"]
    assert data["rules"][0]["estimate"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
    flipped = "  - {id: auc, criterion: auc, score: score, positive: benign, max: 0.2}"  # the other class ranks low
    measured(project, scored(scores, names), flipped)
    code, data = report(project)
    assert code == ExitCode.PASS and data["rules"][0]["estimate"] == pytest.approx(1 - roc_auc_score(labels, scores))


def test_a_positive_class_no_case_has_is_a_config_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    rule = "  - {id: auc, criterion: auc, score: score, positive: malignent, min: 0.8}"
    measured(project, scored([0.1, 0.9, 0.4], ["benign", "malignant", 1]), rule)
    monkeypatch.chdir(project.root)
    capsys.readouterr()
    assert run_cli("gate", "-c", "release.yaml") == ExitCode.USAGE
    assert capsys.readouterr().err == (
        "oloproof: error: release.yaml:12: policy.rules[0].positive: \"malignent\" is not the expected.label of any "
        "case (labels seen: \"benign\", \"malignant\", 1); name the positive class as the test set writes it\n"
    )
    typed = "  - {id: auc, criterion: auc, score: score, positive: '1', min: 0.8}"  # "1" is not 1
    measured(project, scored([0.1, 0.9], [0, 1]), typed)
    capsys.readouterr()
    assert run_cli("gate", "-c", "release.yaml") == ExitCode.USAGE
    assert "policy.rules[0].positive: \"1\" is not the expected.label of any case (labels seen: 0, 1)" in capsys.readouterr().err


def errors_cases(predicted: list[float | None], truth: list[float]) -> list[dict[str, Any]]:
    return [
        {"id": f"c{i:04d}", "out": {"label": 1, **({"value": p} if p is not None else {})}, "expected": {"value": t, "label": 1}}
        for i, (p, t) in enumerate(zip(predicted, truth, strict=True))
    ]


def test_mae_without_bound_is_approximate_and_matches_scikit_learn(project: Project) -> None:
    rng = np.random.default_rng(3)
    truth = [float(round(x, 3)) for x in rng.uniform(0, 100, size=200)]
    predicted = [float(round(t + rng.normal(0, 2), 3)) for t in truth]
    measured(project, errors_cases(predicted, truth), MAE)
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["estimate"] == pytest.approx(mean_absolute_error(truth, predicted), rel=1e-9)
    assert rule["interval"]["approximate"] is True and code == ExitCode.MANUAL_REVIEW
    measured(project, errors_cases(predicted, truth), MAE, policy_extra=APPROX)
    assert report(project)[0] == ExitCode.PASS  # MAE about 1.6, far under 5


def test_rmse_matches_scikit_learn(project: Project) -> None:
    rng = np.random.default_rng(4)
    truth = [float(x) for x in rng.integers(0, 50, size=150)]
    predicted = [t + float(rng.integers(-3, 4)) for t in truth]
    measured(
        project, errors_cases(predicted, truth), "  - {id: rmse, criterion: rmse, field: value, max: 5, bound: 3}"
    )
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["estimate"] == pytest.approx(math.sqrt(mean_squared_error(truth, predicted)), rel=1e-9)
    assert rule["interval"]["approximate"] is False and code == ExitCode.PASS  # every error <= 3 < 5


def test_mae_with_bound_is_exact_and_fails_a_bad_model(project: Project) -> None:
    truth = [float(i % 10) for i in range(200)]
    predicted = [t + 9.0 for t in truth]  # every error 9
    rule = "  - {id: mae, criterion: mae, field: value, max: 5, bound: 10}"
    measured(project, errors_cases(predicted, truth), rule)
    code, data = report(project)
    assert code == ExitCode.FAIL and data["rules"][0]["interval"]["approximate"] is False


def test_an_error_above_the_declared_bound_never_passes(project: Project) -> None:
    truth = [0.0] * 200
    predicted = [0.0] * 199 + [50.0]  # one error of 50 against a declared bound of 10
    rule = "  - {id: mae, criterion: mae, field: value, max: 5, bound: 10}"
    measured(project, errors_cases(predicted, truth), rule)
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "bound_exceeded" in data["rules"][0]["reasons"]
    assert "1 case(s) have an absolute error above the declared bound 10 (largest 50)" in data["rules"][0]["sentence"]


def test_missing_outputs_bounded_by_bound_or_left_undecided(project: Project) -> None:
    truth = [1.0] * 100
    predicted: list[float | None] = [1.0] * 97 + [None] * 3
    measured(project, errors_cases(predicted, truth), "  - {id: mae, criterion: mae, field: value, max: 5}")
    code, data = report(project, "--rerun")
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "without bound: a missing output's error could be anything" in data["rules"][0]["sentence"]
    rule = "  - {id: mae, criterion: mae, field: value, max: 5, bound: 10}"
    measured(project, errors_cases(predicted, truth), rule)
    code, data = report(project)
    assert code == ExitCode.PASS  # 3 missing counted as errors of 10: the upper bound is still under 5
    assert data["rules"][0]["missing"] == 3


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ("{id: auc, criterion: auc, min: 0.8}", "policy.rules[0].criterion: criterion: auc needs score:"),
        ("{id: auc, criterion: auc, score: s, min: 1.2}", "policy.rules[0].min: expected a number in (0, 1), got 1.2"),
        ("{id: m, criterion: mae, max: 5}", "policy.rules[0].criterion: criterion: mae needs field:"),
        ("{id: m, criterion: mae, field: value, min: 5}", "policy.rules[0].min: an error (mae) is gated from above: use max"),
        ("{id: m, criterion: rmse, field: value, max: 5, bound: 0}", "policy.rules[0].bound: expected a number > 0, got 0"),
        (
            "{id: m, criterion: correct, min: 0.8, bound: 3}",
            "policy.rules[0].bound: bound applies to criterion: mae or rmse; this rule's criterion is 'correct'",
        ),
        (
            "{id: m, criterion: rmse, field: value, baseline: latest, max_drop: 0.5}",
            "policy.rules[0].baseline: no paired interval is implemented for rmse, so it cannot guard against a "
            "regression; use min or max",
        ),
        (
            "{id: m, criterion: mae, field: value, baseline: latest, max_drop: 0}",
            "policy.rules[0].max_drop: expected a number > 0, got 0: max_drop: 0 could never pass",
        ),
        (
            "{id: a, criterion: auc, score: s, baseline: latest, max_drop: 1}",
            "policy.rules[0].max_drop: expected a number in (0, 1), got 1: max_drop: 1 could never fail",
        ),
        (
            "{id: a, criterion: auc, score: s, min: 0.8, method: bca}",
            "policy.rules[0].method: criterion: auc takes method exact (block betting) or delong (approximate)",
        ),
        ("{id: a, criterion: correct, min: 0.8, method: delong}", "policy.rules[0].method: method delong applies to criterion: auc only"),
    ],
)
def test_config_errors(
    project: Project,
    run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    message: str,
) -> None:
    measured(project, errors_cases([1.0], [1.0]), f"  - {rule}")
    assert f"release.yaml:12: {message}" in config_error(project, run_cli, capsys, monkeypatch)


def test_the_holdout_score_never_defaults_to_a_built_in_measure(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from oloproof.config import load_release

    holdout = "holdout:\n  cases: holdout.jsonl\n"
    rules = "  - {id: auc, criterion: auc, score: score, min: 0.8}\n  - {id: ok, criterion: correct, min: 0.8}"
    measured(project, errors_cases([1.0], [1.0]), rules, extra=holdout)
    release = load_release(project.config)
    assert release.holdout is not None and release.holdout.criterion == "correct"
    measured(project, errors_cases([1.0], [1.0]), AUC, extra=holdout)
    assert "release.yaml:13: holdout: holdout needs criterion: every rule reads a built-in measure" in config_error(
        project, run_cli, capsys, monkeypatch
    )
