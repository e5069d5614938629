"""Regression guards on AUC and MAE through the CLI: the paired interval of (new - baseline) on the
same cases (issue 18, point 4: "paired forms for compare and the regression guard")."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, report
from tests.measures.conftest import measured

APPROX = "  allow_approximate_methods: true\n"


def two_versions(n: int, *, drift: float, seed: int = 11) -> list[dict[str, Any]]:
    """Cases whose v1 prediction errs by about 1 and whose v2 prediction errs by about 1 + drift."""
    rng = np.random.default_rng(seed)
    cases = []
    for i in range(n):
        truth = float(round(rng.uniform(0, 100), 3))
        old = float(round(truth + rng.choice([-1, 1]) * rng.uniform(0.5, 1.5), 3))
        new = float(round(truth + rng.choice([-1, 1]) * (rng.uniform(0.5, 1.5) + drift), 3))
        score_old = float(round(rng.normal(2.0 * (i % 2), 1.0), 4))
        score_new = float(round(rng.normal(2.0 * (i % 2) * (1 - drift / 3), 1.0), 4))
        cases.append(
            {
                "id": f"c{i:04d}",
                "out": {"label": 1, "value": old, "score": score_old},
                "out_v2": {"label": 1, "value": new, "score": score_new},
                "expected": {"label": i % 2, "value": truth},
            }
        )
    return cases


def gate_v2(project: Project, cases: list[dict[str, Any]], rule: str, **extra: str) -> tuple[int, dict[str, Any]]:
    measured(project, cases, "  - {id: any, criterion: mae, field: value, max: 1000, bound: 1000}", version="v1")
    assert project.cli("run") == 0  # the baseline run of v1
    measured(project, cases, rule, key="out_v2", version="v2", **extra)
    return report(project)


def test_mae_guard_passes_when_the_error_does_not_rise(project: Project) -> None:
    rule = "  - {id: no_worse, criterion: mae, field: value, bound: 10, baseline: 'version:v1', max_drop: 0.5}"
    code, data = gate_v2(project, two_versions(400, drift=0.0), rule)
    result = data["rules"][0]
    assert code == ExitCode.PASS, result["sentence"]
    assert result["interval"]["approximate"] is False and result["kind"] == "regression"
    assert "within the allowed rise 0.5" in result["sentence"]


def test_mae_guard_fails_when_the_error_rises(project: Project) -> None:
    rule = "  - {id: no_worse, criterion: mae, field: value, bound: 10, baseline: 'version:v1', max_drop: 0.5}"
    code, data = gate_v2(project, two_versions(400, drift=2.0), rule)
    assert code == ExitCode.FAIL, data["rules"][0]["sentence"]
    assert data["rules"][0]["interval"]["low"] > 0.5


def test_auc_guard_delong_is_approximate(project: Project) -> None:
    rule = "  - {id: auc_kept, criterion: auc, score: score, baseline: 'version:v1', max_drop: 0.05, method: delong}"
    code, data = gate_v2(project, two_versions(400, drift=0.0), rule)
    assert code == ExitCode.MANUAL_REVIEW and "approximate_method" in data["rules"][0]["reasons"]
    code, data = gate_v2(project, two_versions(400, drift=2.0), rule, policy_extra=APPROX)
    assert code == ExitCode.FAIL, data["rules"][0]["sentence"]  # v2's scores lose two thirds of their signal


def test_an_error_above_the_bound_in_either_version_never_passes(project: Project) -> None:
    cases = two_versions(100, drift=0.0)
    cases[0]["out"]["value"] = cases[0]["expected"]["value"] + 50.0  # the baseline breaks the bound
    rule = "  - {id: no_worse, criterion: mae, field: value, bound: 10, baseline: 'version:v1', max_drop: 0.5}"
    code, data = gate_v2(project, cases, rule)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "bound_exceeded" in data["rules"][0]["reasons"]


def test_compare_picks_an_evaluator_criterion_not_a_guarded_measure(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # Two plain evaluators and an mae guard: compare's default criterion is never 'mae' (it reads
    # evaluators' pass/fail criteria only); it falls back to a rule's evaluator criterion.
    cases = two_versions(60, drift=0.0)
    evaluators = "  - {type: label_match, field: label}\n  - {type: label_match, field: label, criterion: again}"
    rules = (
        "  - {id: ok, criterion: correct, min: 0.5}\n"
        "  - {id: no_worse, criterion: mae, field: value, bound: 10, baseline: 'version:v1', max_drop: 0.5}"
    )
    measured(project, cases, rules, evaluators=evaluators, version="v1")
    assert project.cli("run") == 0
    measured(project, cases, rules, evaluators=evaluators, key="out_v2", version="v2")
    assert project.cli("run") == 0
    capsys.readouterr()
    code = project.cli("compare", "version:v1", "version:v2")
    out = capsys.readouterr()
    assert code == ExitCode.PASS, out.err
    assert "correct" in out.out and "mae" not in out.out
