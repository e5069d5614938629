"""`leakage:` in the gate: BLOCKED until a clean record of *this* test set exists (exit 3),
stale after an edit (exit 3), invalidated by leaked cases (exit 4, never FAIL), and the
status shown either way, in the terminal and in the JSON report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

PASSING_RULE = "  - {id: accurate, criterion: correct, min: 0.8}"


def cases(n: int = 60, *, correct: int | None = None) -> list[dict[str, Any]]:
    correct = n if correct is None else correct
    return [{"id": f"c{i:03d}", "answer": 1 if i < correct else 0, "text": f"Case number {i}", "expected": {"label": 1}} for i in range(n)]


def training(tmp_path: Path, texts: list[str], *, answer: int = 1) -> Path:
    path = tmp_path / "data-private" / "training.jsonl"
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps({"answer": answer, "text": text, "label": 1}) + "\n" for text in texts))
    return path


def gate(project: Project) -> tuple[int, dict[str, Any]]:
    out = project.root / "gate.json"
    code = project.cli("gate", "--json", str(out))
    return code, json.loads(out.read_text())


def leakage_of(report: dict[str, Any]) -> dict[str, Any]:
    return next(check for check in report["checks"] if check["name"] == "leakage")


def record(project: Project, path: Path, *options: str) -> int:
    return project.cli("leakage", "check", "--training", str(path), "--record", "-q", *options)


def test_required_without_a_record_blocks(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)  # the command shown is one that works from here
    project.write(cases=cases(), extra="leakage: required\n")
    code, report = gate(project)
    assert code == 3
    assert report["verdict"] == "BLOCKED"
    check = leakage_of(report)
    assert check["reasons"] == ["leakage_unchecked"] and check["blocks"] is True
    assert check["data"]["status"] == "unchecked" and check["data"]["required"] is True
    assert all(rule["verdict"] == "BLOCKED" and "leakage_unchecked" in rule["reasons"] for rule in report["rules"])
    assert not (project.root / ".oloproof" / "runs").exists()  # blocked before the system runs
    assert check["sentence"].startswith("leakage: required, and no leakage check of ")
    assert check["sentence"].endswith("is recorded: run `oloproof leakage check --training FILE --record`.")
    assert "leakage: not checked" in capsys.readouterr().out


def test_clean_record_unblocks_and_shows_status(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(), extra="leakage: required\n")
    assert record(project, training(tmp_path, ["something else", "case number 1000"])) == 0
    capsys.readouterr()
    code, report = gate(project)
    assert code == 0 and report["verdict"] == "PASS"
    check = leakage_of(report)
    assert check["data"]["status"] == "clean" and check["data"]["leaked_ids"] == []
    assert check["data"]["training"]["name"] == "training.jsonl"
    assert project.cli("gate") == 0
    out = capsys.readouterr().out
    assert "leakage: clean: 60 cases checked against 2 rows of data-private/training.jsonl (all input keys; numbers exact)" in out


def test_editing_the_test_set_makes_the_record_stale(
    project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project.root)  # the command shown is one that works from here
    project.write(cases=cases(), extra="leakage: required\n")
    assert record(project, training(tmp_path, ["unrelated"])) == 0
    edited = cases()
    edited[5]["text"] = "Case number five, reworded"
    project.write(cases=edited, extra="leakage: required\n")
    capsys.readouterr()
    code, report = gate(project)
    assert code == 3
    check = leakage_of(report)
    assert check["reasons"] == ["leakage_stale"]
    assert check["data"]["status"] == "stale"
    assert check["data"]["stale_record"]["testset_digest"] != report["testset"]["digest"]
    assert "run `oloproof leakage check --training data-private/training.jsonl --record`" in check["sentence"]  # as given
    assert "stale: no check of this version of the test set is recorded" in capsys.readouterr().out
    assert record(project, training(tmp_path, ["unrelated"])) == 0
    assert gate(project)[0] == 0


def test_leaked_cases_invalidate_every_rule_not_fail(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(correct=0), extra="leakage: required\n")  # the model is wrong on every case: would FAIL
    assert gate(project)[0] == 3
    assert record(project, training(tmp_path, ["  CASE   number 7 ", "case number 42", "other"], answer=0)) == 4
    capsys.readouterr()
    code, report = gate(project)
    assert code == 4 and report["verdict"] == "INSUFFICIENT_EVIDENCE"
    (rule,) = report["rules"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "leaked_cases" in rule["reasons"]
    assert "Leaked cases invalidate this evidence" in rule["sentence"]
    check = leakage_of(report)
    assert check["invalidates"] == ["leaked_cases"] and check["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert check["data"]["leaked_ids"] == ["c007", "c042"] and check["data"]["n_leaked"] == 2
    assert project.cli("gate") == 4
    out = capsys.readouterr().out
    assert "leaked case ids (2): c007, c042" in out
    assert "verdict: INSUFFICIENT_EVIDENCE" in out and "│ FAIL" not in out


def test_many_leaked_ids_are_listed_in_full_in_json(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(80), extra="leakage: required\n")
    record(project, training(tmp_path, [f"case number {i}" for i in range(70)]))
    capsys.readouterr()
    code, report = gate(project)
    assert code == 4 and len(leakage_of(report)["data"]["leaked_ids"]) == 70
    project.cli("gate")
    assert "and 20 more (all in the JSON report)" in capsys.readouterr().out


@pytest.mark.parametrize(("declared", "why"), [("leakage: optional\n", "optional in release.yaml"), ("", "does not declare leakage")])
def test_not_required_reports_not_checked(project: Project, declared: str, why: str, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(), extra=declared)
    code, report = gate(project)
    assert code == 0
    check = leakage_of(report)
    assert check["data"]["status"] == "unchecked" and check["blocks"] is False and check["verdict"] is None
    project.cli("gate")
    out = capsys.readouterr().out
    assert "leakage: not checked: nobody has recorded whether these test cases appear in the training data" in out
    assert why in out


def test_stale_record_does_not_block_when_optional(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(), extra="leakage: optional\n")
    record(project, training(tmp_path, ["unrelated"]))
    project.write(cases=cases(61), extra="leakage: optional\n")
    code, report = gate(project)
    assert code == 0 and leakage_of(report)["data"]["status"] == "stale"
    project.cli("gate")
    assert "not checked for this version of the test set" in capsys.readouterr().out


def test_a_known_leak_invalidates_even_when_leakage_is_not_declared(project: Project, tmp_path: Path) -> None:
    project.write(cases=cases())
    assert record(project, training(tmp_path, ["case number 3"])) == 4
    code, report = gate(project)
    assert code == 4 and "leaked_cases" in report["rules"][0]["reasons"]


def test_corrupt_record_is_an_error_naming_the_file(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=cases(), extra="leakage: required\n")
    record(project, training(tmp_path, ["unrelated"]))
    (path,) = (project.root / ".oloproof" / "evidence" / "leakage").glob("*.json")
    path.write_text('{"schema": "oloproof.leakage/1"')
    capsys.readouterr()
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert f".oloproof/evidence/leakage/{path.name}: not a valid leakage record" in err
