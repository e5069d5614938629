"""regex and contains on text outputs, through the real CLI and a real system process.

The echo system (tests/fixtures/echo_system.py, run with ``--field text``) answers each case's
input ``answer`` as the output ``text``, so every case below states the text the system says.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, config_error, report

HOSTILE_TEXT = "a" * 5000 + "b"


def text_cases(texts: list[Any], *, expected: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Cases c0, c1, ... whose system output `text` is texts[i]."""
    return [
        {"id": f"c{i}", "answer": text, "expected": expected[i] if expected is not None else {}}
        for i, text in enumerate(texts)
    ]



def write_text_project(project: Project, cases: list[dict[str, Any]], evaluators: str, rules: str) -> Project:
    return project.write(cases=cases, system_args="--field text", evaluators=evaluators, rules=rules)



# ---------------------------------------------------------------------------------------------
# regex


def test_regex_match_and_no_match_grade_each_case(project: Project) -> None:
    texts = ["call 555-0100", "no number here", "555-0199 today", "55-0100", "", "x555-0123"]
    write_text_project(
        project, text_cases(texts),
        evaluators=(
            r"  - {type: regex, field: text, pattern: '\d{3}-\d{4}'}" "\n"
            r"  - {type: regex, field: text, pattern: '\d{3}-\d{4}', passes_when: no_match, criterion: no_phone}"
        ),
        rules="  - {id: has_phone, criterion: matches, min: 0.5}\n  - {id: no_phone, criterion: no_phone, max: 0.9}",
    )
    _, data = report(project)
    matches, no_phone = data["criteria"]["matches"], data["criteria"]["no_phone"]
    assert matches["kind"] == "binary" and matches["missing"] == 0
    assert matches["failed_ids"] == ["c1", "c3", "c4"]
    assert no_phone["failed_ids"] == ["c0", "c2", "c5"]
    assert data["rules"][0]["passes"] == 3 and data["rules"][1]["passes"] == 3


def test_regex_searches_anywhere_unless_anchored(project: Project) -> None:
    write_text_project(
        project, text_cases(["refund now", "no refund", "REFUND"]),
        evaluators="  - {type: regex, field: text, pattern: '^refund'}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["matches"]["failed_ids"] == ["c1", "c2"]


def test_regex_ignore_case(project: Project) -> None:
    texts = ["Refund issued", "REFUND", "refund", "no money back"]
    write_text_project(
        project, text_cases(texts),
        evaluators=(
            "  - {type: regex, field: text, pattern: 'refund', ignore_case: true}\n"
            "  - {type: regex, field: text, pattern: 'refund', criterion: exact_case}"
        ),
        rules="  - {id: a, criterion: matches, min: 0.5}\n  - {id: b, criterion: exact_case, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["matches"]["failed_ids"] == ["c3"]
    assert data["criteria"]["exact_case"]["failed_ids"] == ["c0", "c1", "c3"]


def test_regex_expected_field_gives_each_case_its_own_pattern(project: Project) -> None:
    texts = ["order 1234 shipped", "order 99 shipped", "Total: $5.00", "Total: 5 dollars"]
    patterns = [{"pat": r"order \d{4}\b"}, {"pat": r"order \d{4}\b"}, {"pat": r"\$\d+\.\d\d"}, {"pat": r"\$\d+"}]
    write_text_project(
        project, text_cases(texts, expected=patterns),
        evaluators="  - {type: regex, field: text, expected_field: pat}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["matches"]["failed_ids"] == ["c1", "c3"]


def test_regex_output_that_is_not_text_is_missing_with_a_note(project: Project) -> None:
    write_text_project(
        project, text_cases(["abc", 42, None, ["abc"]]),
        evaluators="  - {type: regex, field: text, pattern: 'abc'}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    code, data = report(project)
    criterion = data["criteria"]["matches"]
    assert criterion["missing_ids"] == ["c1", "c2", "c3"]
    assert criterion["notes"] == {f"c{i}": "output 'text' is missing or not a string" for i in (1, 2, 3)}
    assert "missing_outputs" in data["rules"][0]["reasons"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_regex_that_does_not_compile_is_a_config_error_naming_the_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x"]),
        evaluators="  - {type: label_match, field: label}\n  - {type: regex, field: text, pattern: '(unclosed'}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: release.yaml:9: evaluators[1].pattern: invalid regular expression: missing ) at position 9\n"
    assert not (project.root / ".oloproof").exists()  # refused before the system ran


def test_per_case_regex_that_does_not_compile_names_the_case_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x", "y"], expected=[{"pat": "x"}, {"pat": "[y"}]),
        evaluators="  - {type: regex, field: text, expected_field: pat}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err.startswith("oloproof: error: data/test.jsonl:2: case 'c1': invalid regular expression: ")


def test_per_case_pattern_that_is_not_a_string_names_the_case_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x", "y"], expected=[{"pat": "x"}, {"pat": 7}]),
        evaluators="  - {type: regex, field: text, expected_field: pat}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/test.jsonl:2: case 'c1': expected 'pat' must be a string\n"


@pytest.mark.parametrize(
    "declaration",
    [
        "{type: regex, field: text, pattern: 'x', expected_field: pat}",
        "{type: regex, field: text}",
    ],
    ids=["both", "neither"],
)
def test_regex_needs_exactly_one_of_pattern_and_expected_field(
    declaration: str, project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_text_project(
        project, text_cases(["x"], expected=[{"pat": "x"}]), evaluators=f"  - {declaration}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == (
        "oloproof: error: release.yaml:8: evaluators[0].pattern: "
        "give exactly one of 'pattern' (fixed) or 'expected_field' (per case)\n"
    )


def test_regex_longer_than_the_limit_is_refused(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x"]), evaluators="  - {type: regex, field: text, pattern: '" + "a" * 2001 + "'}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: release.yaml:8: evaluators[0].pattern: pattern is longer than 2000 characters\n"


def test_hostile_pattern_times_out_per_match_and_the_gate_does_not_pass(project: Project) -> None:
    # (a+)+$ backtracks exponentially on a run of a's that ends in a non-a: without the
    # per-match timeout one case would take longer than the universe has left.
    texts = ["aaa", "zzz", *[HOSTILE_TEXT] * 6]
    write_text_project(
        project, text_cases(texts),
        evaluators="  - {type: regex, field: text, pattern: '(a+)+$', timeout_ms: 20, budget_s: 10}",
        rules="  - {id: r, criterion: matches, min: 0.2}",
    )
    started = time.monotonic()
    code, data = report(project)
    assert time.monotonic() - started < 60  # a hang guard, not a performance target
    criterion = data["criteria"]["matches"]
    hostile = [f"c{i}" for i in range(2, 8)]
    assert criterion["missing_ids"] == hostile
    assert criterion["failed_ids"] == ["c1"]  # the benign cases were still decided
    assert criterion["notes"] == {case_id: "pattern timed out after 0.02 s" for case_id in hostile}
    assert criterion["reasons"] == ["regex_timeout"]
    rule = data["rules"][0]
    assert "regex_timeout" in rule["reasons"] and "missing_outputs" in rule["reasons"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["problems"] == [
        "evaluators[0] (regex): 6 case(s) could not be decided in time (6 match(es) over 0.02 s, total budget 10 s); "
        "simplify the pattern (nested quantifiers such as (a+)+ backtrack catastrophically)"
    ]


def test_hostile_pattern_stops_at_the_total_budget(project: Project) -> None:
    # 40 hostile cases at 100 ms each would take 4 s; the 0.3 s budget stops the evaluator
    # after a few and leaves the rest undecided (missing), never silently passed.
    texts = ["aaa", *[HOSTILE_TEXT] * 40]
    write_text_project(
        project, text_cases(texts),
        evaluators="  - {type: regex, field: text, pattern: '(a+)+$', timeout_ms: 100, budget_s: 0.3}",
        rules="  - {id: r, criterion: matches, min: 0.5}",
    )
    started = time.monotonic()
    code, data = report(project)
    assert time.monotonic() - started < 60  # a hang guard, not a performance target
    criterion = data["criteria"]["matches"]
    assert criterion["missing_ids"] == [f"c{i}" for i in range(1, 41)]
    assert criterion["failed_ids"] == []
    notes = criterion["notes"]
    timed_out = [case_id for case_id, note in notes.items() if note == "pattern timed out after 0.1 s"]
    cut_short = [case_id for case_id, note in notes.items() if note == "not decided: the evaluator's time budget ran out during the match"]
    unspent = [case_id for case_id, note in notes.items() if note == "not evaluated: the evaluator's time budget was spent"]
    # Which case the budget runs out on depends on the clock; that every case is accounted
    # for, in order, does not: timed out, then at most one cut short, then never started.
    assert timed_out + cut_short + unspent == [f"c{i}" for i in range(1, 41)]
    assert 1 <= len(timed_out) <= 3 and len(cut_short) <= 1 and "c40" in unspent
    rule = data["rules"][0]
    assert "regex_timeout" in rule["reasons"] and "missing_outputs" in rule["reasons"]
    assert rule["verdict"] != "PASS" and code != ExitCode.PASS
    assert data["problems"] == [
        f"evaluators[0] (regex): 40 case(s) could not be decided in time ({len(timed_out)} match(es) over 0.1 s, total budget 0.3 s); "
        "simplify the pattern (nested quantifiers such as (a+)+ backtrack catastrophically)"
    ]


# ---------------------------------------------------------------------------------------------
# contains


def test_contains_found_and_absent(project: Project) -> None:
    texts = ["please see a doctor", "take two aspirin", "consult your doctor.", "doc tor"]
    write_text_project(
        project, text_cases(texts),
        evaluators=(
            "  - {type: contains, field: text, value: doctor}\n"
            "  - {type: contains, field: text, value: aspirin, passes_when: absent, criterion: no_drug_names}"
        ),
        rules="  - {id: a, criterion: contains, min: 0.5}\n  - {id: b, criterion: no_drug_names, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["contains"]["failed_ids"] == ["c1", "c3"]
    assert data["criteria"]["no_drug_names"]["failed_ids"] == ["c1"]


def test_contains_ignore_case(project: Project) -> None:
    texts = ["DOCTOR", "Doctor", "doctor", "nurse"]
    write_text_project(
        project, text_cases(texts),
        evaluators=(
            "  - {type: contains, field: text, value: doctor, ignore_case: true}\n"
            "  - {type: contains, field: text, value: doctor, criterion: exact_case}"
        ),
        rules="  - {id: a, criterion: contains, min: 0.5}\n  - {id: b, criterion: exact_case, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["contains"]["failed_ids"] == ["c3"]
    assert data["criteria"]["exact_case"]["failed_ids"] == ["c0", "c1", "c3"]


def test_contains_takes_the_value_literally(project: Project) -> None:
    # Regex metacharacters in a substring are plain characters.
    texts = ["costs $5.00 (incl. tax)", "costs $5x00 (incl. tax)", "a+b", "aab"]
    write_text_project(
        project, text_cases(texts, expected=[{"s": "$5.00 (incl"}, {"s": "$5.00 (incl"}, {"s": "a+b"}, {"s": "a+b"}]),
        evaluators="  - {type: contains, field: text, expected_field: s}",
        rules="  - {id: a, criterion: contains, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["contains"]["failed_ids"] == ["c1", "c3"]


def test_contains_expected_field_per_case(project: Project) -> None:
    texts = ["The capital is Paris.", "The capital is Lyon.", "Berlin, of course"]
    expected = [{"city": "Paris"}, {"city": "Paris"}, {"city": "Berlin"}]
    write_text_project(
        project, text_cases(texts, expected=expected),
        evaluators="  - {type: contains, field: text, expected_field: city}",
        rules="  - {id: a, criterion: contains, min: 0.5}",
    )
    _, data = report(project)
    assert data["criteria"]["contains"]["failed_ids"] == ["c1"]
    assert data["criteria"]["contains"]["missing"] == 0


def test_contains_needs_exactly_one_of_value_and_expected_field(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x"], expected=[{"s": "x"}]),
        evaluators="  - {type: contains, field: text, value: x, expected_field: s}",
        rules="  - {id: a, criterion: contains, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == (
        "oloproof: error: release.yaml:8: evaluators[0].value: give exactly one of 'value' (fixed) or 'expected_field' (per case)\n"
    )


def test_contains_case_without_the_expected_field_names_its_line(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_text_project(
        project, text_cases(["x", "y"], expected=[{"s": "x"}, {}]),
        evaluators="  - {type: contains, field: text, expected_field: s}",
        rules="  - {id: a, criterion: contains, min: 0.5}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/test.jsonl:2: case 'c1': expected has no 's' (needed by evaluators[0] (contains))\n"
