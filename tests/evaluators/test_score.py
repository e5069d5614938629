"""score: a numeric output in [0, 1] is the case's score, through the real CLI.

The echo system answers each case's input ``answer`` as the output ``reward`` (``--field
reward``), so every case below states what the system says.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oloproof.errors import ExitCode
from oloproof.evaluators.score import unit_score
from oloproof.stats.bounded import bounded_mean_betting, order_seed
from tests.conftest import Project, config_error, report

SCORE = "  - {type: score, field: reward, criterion: mean_reward}"


def scored_cases(answers: list[Any]) -> list[dict[str, Any]]:
    return [{"id": f"c{i}", "answer": answer, "expected": {}} for i, answer in enumerate(answers)]


def write_score_project(project: Project, answers: list[Any], *, rule: str = "min: 0.5", evaluators: str = SCORE) -> None:
    project.write(
        cases=scored_cases(answers), system_args="--field reward", evaluators=evaluators,
        rules=f"  - {{id: rewarded, criterion: mean_reward, {rule}}}",
    )


def test_scores_are_read_as_they_are_and_decided_on_the_betting_interval(project: Project) -> None:
    answers = [1, 0.75, 0.5, 0.25, 0, 1.0, 0.875, 0.625] * 8
    write_score_project(project, answers, rule="min: 0.3")
    code, data = report(project)
    criterion = data["criteria"]["mean_reward"]
    assert criterion["kind"] == "score"
    assert criterion["missing"] == 0
    assert criterion["notes"] == {}
    rule = data["rules"][0]
    # The reference: the bounded-mean betting interval of the same scores, seeded by the test set.
    reference = bounded_mean_betting(
        np.array(answers, dtype=float), confidence=0.95, seed=order_seed(data["testset"]["digest"])
    )
    assert rule["estimate"] == pytest.approx(float(np.mean(answers)), abs=1e-12)
    assert rule["interval"]["method"] == "betting-wsr"
    assert rule["interval"]["approximate"] is False
    assert rule["interval"]["low"] == pytest.approx(reference.low, abs=1e-12)
    assert rule["interval"]["high"] == pytest.approx(reference.high, abs=1e-12)
    assert reference.low > 0.3
    assert (code, rule["verdict"]) == (ExitCode.PASS, "PASS")


def test_all_binary_scores_stay_a_score_criterion(project: Project) -> None:
    # A reward that happens to be 0 or 1 on every case is still a mean of scores: the
    # interval must not switch to Clopper-Pearson behind the user's back.
    write_score_project(project, [1, 0] * 20)
    _, data = report(project)
    assert data["criteria"]["mean_reward"]["kind"] == "score"
    assert data["rules"][0]["interval"]["method"] == "betting-wsr"


def test_outputs_outside_the_unit_interval_or_not_numbers_are_missing_never_clamped(project: Project) -> None:
    answers = [0.5, True, "0.5", 1.5, -0.1, None, [0.5], {"v": 1}, 1, 0]
    write_score_project(project, answers)
    code, data = report(project)
    criterion = data["criteria"]["mean_reward"]
    assert criterion["missing_ids"] == ["c1", "c2", "c3", "c4", "c5", "c6", "c7"]
    assert criterion["notes"] == {
        "c1": "output 'reward' must be a number in [0, 1], got True",
        "c2": "output 'reward' must be a number in [0, 1], got '0.5'",
        "c3": "output 'reward' must be a number in [0, 1], got 1.5",
        "c4": "output 'reward' must be a number in [0, 1], got -0.1",
        "c5": "output 'reward' must be a number in [0, 1], got None",
        "c6": "output 'reward' must be a number in [0, 1], got [0.5]",
        "c7": "output 'reward' must be a number in [0, 1], got {'v': 1}",
    }
    rule = data["rules"][0]
    assert rule["missing"] == 7
    assert rule["estimate"] == pytest.approx(0.5)  # the three usable scores 0.5, 1, 0
    assert "missing_outputs" in rule["reasons"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_no_output_with_the_field_is_a_config_error_not_missing_outputs(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # The system writes `reward`, the evaluator reads `score`: a mismatch, decided nothing (issue 16).
    write_score_project(project, [0.5, 0.5], evaluators="  - {type: score, field: score, criterion: mean_reward}")
    capsys.readouterr()
    assert project.cli("gate", "-q") == ExitCode.USAGE
    assert "evaluators[0].field: 2 of 2 outputs have no 'score' (they have: reward)" in capsys.readouterr().err


def test_criterion_defaults_to_score(project: Project) -> None:
    project.write(
        cases=scored_cases([1, 1, 1]), system_args="--field reward",
        evaluators="  - {type: score, field: reward}", rules="  - {id: s, criterion: score, min: 0.5}",
    )
    _, data = report(project)
    assert list(data["criteria"]) == ["score"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, 0.0), (1, 1.0), (0.25, 0.25), (1.0000001, None), (-0.0, 0.0), (math.nan, None), (math.inf, None),
     (-math.inf, None), (True, None), (False, None), ("1", None), (None, None)],
)
def test_unit_score_accepts_only_finite_numbers_in_the_unit_interval(value: Any, expected: float | None) -> None:
    # NaN and infinities cannot arrive through JSON (the reader rejects them), but an
    # in-process caller can pass them: they are missing, not a score.
    assert unit_score(value) == expected


def test_an_unknown_key_is_a_config_error_with_a_suggestion(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_score_project(project, [1], evaluators="  - {type: score, field: reward, criterio: mean_reward}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == (
        "oloproof: error: release.yaml:8: evaluators[0].criterio: unknown key (did you mean 'criterion'?); "
        "allowed keys: criterion, field\n"
    )


def test_field_is_required(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_score_project(project, [1], evaluators="  - {type: score, criterion: mean_reward}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: release.yaml:8: evaluators[0]: missing required key 'field'\n"
