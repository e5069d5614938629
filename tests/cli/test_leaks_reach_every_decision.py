"""A known leak invalidates every decision, not only the gate's: `compare --max-drop` and
`oloproof seeds` on a test set whose recorded leakage check found cases are INSUFFICIENT_EVIDENCE
with `leaked_cases` (the difference and the recipe are still shown)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from tests.conftest import Project, write_cases
from tests.seeds.test_check import five_seeds, seeds_file


@pytest.fixture
def leaked(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    five_seeds(project)
    monkeypatch.chdir(project.root)
    write_cases(project.root / "train.jsonl", [{"answer": 1}])  # every case's input: all leaked
    assert main(["leakage", "check", "--training", "train.jsonl", "--record", "--quiet"]) == ExitCode.INSUFFICIENT_EVIDENCE
    return project


def test_compare_with_a_threshold_does_not_decide_on_a_leaked_set(leaked: Project, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main(["compare", "version:s1", "version:s2", "--max-drop", "0.2", "--json", "c.json"])
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    data = json.loads(Path("c.json").read_text())
    assert data["decision"]["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert "leaked_cases" in data["decision"]["reasons"]
    out = capsys.readouterr().out
    assert "verdict: INSUFFICIENT_EVIDENCE" in out and "appear in the training data" in out
    assert main(["compare", "version:s1", "version:s2"]) == 0  # no decision asked: shown, with a note


def test_seeds_do_not_decide_on_a_leaked_set(leaked: Project, capsys: pytest.CaptureFixture[str]) -> None:
    seeds_file(leaked, [f"s{k}" for k in range(1, 6)], min_=0.5)
    out = leaked.root / "seeds.json"
    code = main(["seeds", "seeds.yaml", "--policy", "recipe.yaml", "--json", str(out)])
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = json.loads(out.read_text())["rule"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "leaked_cases" in rule["reasons"]
    assert "leakage: " in capsys.readouterr().out


def test_a_clean_record_changes_nothing(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    five_seeds(project)
    monkeypatch.chdir(project.root)
    write_cases(project.root / "train.jsonl", [{"answer": 7}])
    assert main(["leakage", "check", "--training", "train.jsonl", "--record", "--quiet"]) == 0
    assert main(["compare", "version:s1", "version:s2", "--max-drop", "0.2"]) == ExitCode.PASS
