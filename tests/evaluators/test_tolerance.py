"""within_tolerance and label_match: numeric and exact comparisons, through the real CLI.

The echo system answers each case's input ``answer`` as the output ``label`` (or, with
``--field NAME``, as the output NAME), so every case below states what the system says.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, config_error, report


def cases_answering(pairs: list[tuple[Any, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Cases c0, c1, ...: (what the system answers, the expected object)."""
    return [{"id": f"c{i}", "answer": answer, "expected": expected} for i, (answer, expected) in enumerate(pairs)]




TOLERANCE_RULE = "  - {id: close, criterion: within_tolerance, min: 0.5}"


# ---------------------------------------------------------------------------------------------
# within_tolerance


def test_tolerance_boundary_passes_and_just_beyond_fails(project: Project) -> None:
    project.write(
        cases=cases_answering([
            (2.5, {"score": 2.0}),      # |diff| == tol exactly (binary-exact values)
            (1.5, {"score": 2.0}),      # the other side of it
            (2.5000001, {"score": 2.0}),
            (1.4999999, {"score": 2.0}),
            (2, {"score": 2.0}),        # an int output is a number
            (-1.5, {"score": -2}),
        ]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0.5}",
        rules=TOLERANCE_RULE,
    )
    _, data = report(project)
    criterion = data["criteria"]["within_tolerance"]
    assert criterion["missing"] == 0
    assert criterion["failed_ids"] == ["c2", "c3"]


def test_tolerance_boundary_in_decimal_is_not_lost_to_binary_rounding(project: Project) -> None:
    # In binary floating point 1.0 - 1.1 is -0.10000000000000009 and 0.3 - 0.1 is
    # 0.19999999999999998: a person who writes tolerance 0.1 means the decimal 0.1.
    project.write(
        cases=cases_answering([
            (1.0, {"score": 1.1}),
            (1.2, {"score": 1.1}),
            (0.3, {"score": 0.2}),
            (100.1, {"score": 100.2}),
            (1.0, {"score": 1.1000001}),
            (1.2000001, {"score": 1.1}),
        ]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0.1}",
        rules=TOLERANCE_RULE,
    )
    _, data = report(project)
    assert data["criteria"]["within_tolerance"]["failed_ids"] == ["c4", "c5"]


def test_tolerance_zero_needs_the_same_number(project: Project) -> None:
    project.write(
        cases=cases_answering([(3, {"score": 3.0}), (3.0000001, {"score": 3})]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0}",
        rules=TOLERANCE_RULE,
    )
    _, data = report(project)
    assert data["criteria"]["within_tolerance"]["failed_ids"] == ["c1"]


def test_tolerance_non_numeric_output_is_missing_with_a_note(project: Project) -> None:
    project.write(
        cases=cases_answering([
            (3.0, {"score": 3.0}), ("3.0", {"score": 3.0}), (True, {"score": 1.0}), (None, {"score": 3.0}),
            ([3.0], {"score": 3.0}),
        ]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0.5}",
        rules=TOLERANCE_RULE,
    )
    code, data = report(project)
    criterion = data["criteria"]["within_tolerance"]
    assert criterion["missing_ids"] == ["c1", "c2", "c3", "c4"]
    assert criterion["failed_ids"] == []
    assert criterion["notes"] == {f"c{i}": "output 'score' is missing or not a finite number" for i in (1, 2, 3, 4)}
    rule = data["rules"][0]
    assert rule["missing"] == 4 and "missing_outputs" in rule["reasons"]
    assert code != ExitCode.PASS


def test_tolerance_expected_field_differs_from_output_field(project: Project) -> None:
    project.write(
        cases=cases_answering([(10.0, {"price": 10.4}), (10.0, {"price": 11.0})]),
        system_args="--field estimate",
        evaluators="  - {type: within_tolerance, field: estimate, expected_field: price, tolerance: 0.5}",
        rules=TOLERANCE_RULE,
    )
    _, data = report(project)
    assert data["criteria"]["within_tolerance"]["failed_ids"] == ["c1"]


@pytest.mark.parametrize("bad", ["3.2", True, None, [1]], ids=["string", "bool", "null", "list"])
def test_tolerance_non_numeric_expected_is_a_data_error_naming_the_line(
    bad: Any, project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=cases_answering([(1.0, {"score": 1.0}), (1.0, {"score": 1.0}), (1.0, {"score": bad})]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0.5}",
        rules=TOLERANCE_RULE,
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/test.jsonl:3: case 'c2': expected 'score' must be a finite number\n"


def test_tolerance_case_without_the_expected_field_names_its_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=cases_answering([(1.0, {"score": 1.0}), (1.0, {"value": 1.0})]),
        system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: 0.5}",
        rules=TOLERANCE_RULE,
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/test.jsonl:2: case 'c1': expected has no 'score' (needed by evaluators[0] (within_tolerance))\n"


def test_tolerance_must_be_given_and_not_negative(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=cases_answering([(1.0, {"score": 1.0})]), system_args="--field score",
        evaluators="  - {type: within_tolerance, field: score, tolerance: -0.1}", rules=TOLERANCE_RULE,
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err.startswith("oloproof: error: release.yaml:8: evaluators[0].tolerance: ")


# ---------------------------------------------------------------------------------------------
# label_match


def test_label_match_compares_json_values(project: Project) -> None:
    project.write(
        cases=cases_answering([
            (1.0, {"label": 1}),          # 1 and 1.0 are the same JSON number
            (1, {"label": 1.0}),
            (True, {"label": 1}),         # true is not 1
            (1, {"label": True}),
            (False, {"label": 0}),
            ("1", {"label": 1}),          # "1" is not 1
            (True, {"label": True}),
            ("cat", {"label": "cat"}),
            ("Cat", {"label": "cat"}),
            (None, {"label": None}),
            ([1, 2], {"label": [1.0, 2]}),
            ([True], {"label": [1]}),     # nested: true is still not 1
            ({"a": 1}, {"label": {"a": True}}),
            ({"a": [0]}, {"label": {"a": [0.0]}}),
        ]),
        rules="  - {id: accurate, criterion: correct, min: 0.5}",
    )
    _, data = report(project)
    criterion = data["criteria"]["correct"]
    assert criterion["missing"] == 0
    assert criterion["failed_ids"] == ["c2", "c3", "c4", "c5", "c8", "c11", "c12"]


def test_label_match_when_no_output_has_the_field_decides_nothing(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # Every output lacks `label` (the system writes `prediction`): not 8 missing outputs and "add
    # cases to settle it", but a mismatch between release.yaml and the system (issue 16), exit 2.
    cases = cases_answering([(1, {"label": 1})] * 8)
    project.write(cases=cases, system_args="--field prediction", rules="  - {id: accurate, criterion: correct, min: 0.5}")
    capsys.readouterr()
    assert project.cli("gate", "--json", str(project.root / "r.json")) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "evaluators[0].field: 8 of 8 outputs have no 'label' (they have: prediction)" in err
    assert not (project.root / "r.json").exists()  # nothing decided, nothing reported as if it were


def test_label_match_case_the_system_did_not_answer_is_missing(project: Project) -> None:
    cases = cases_answering([(1, {"label": 1})] * 8)
    project.write(cases=cases, system_args="--drop c3", rules="  - {id: accurate, criterion: correct, min: 0.5}")
    _, data = report(project)
    criterion = data["criteria"]["correct"]
    assert criterion["missing_ids"] == ["c3"] and criterion["failed_ids"] == []
    assert data["rules"][0]["passes"] == 7 and data["rules"][0]["missing"] == 1


def test_label_match_expected_field_differs_from_output_field(project: Project) -> None:
    project.write(
        cases=cases_answering([("spam", {"gold": "spam"}), ("ham", {"gold": "spam"})]),
        evaluators="  - {type: label_match, field: label, expected_field: gold}",
        rules="  - {id: accurate, criterion: correct, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["correct"]["failed_ids"] == ["c1"]


def test_label_match_case_without_the_expected_field_names_its_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(cases=[
        {"id": "a", "answer": 1, "expected": {"label": 1}},
        {"id": "b", "answer": 1, "expected": {"label": 0}},
        {"id": "odd-one", "answer": 1, "expected": {"labl": 1}},
    ])
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/test.jsonl:3: case 'odd-one': expected has no 'label' (needed by evaluators[0] (label_match))\n"
