"""Ways to read the holdout without spending budget, each closed (docs/holdout.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import Project, write_cases

from holdout.test_read import holdout_cases, log_path, read, setup, state


def _edit(project: Project, old: str, new: str) -> None:
    path = project.root / "release.yaml"
    text = path.read_text()
    assert old in text, text
    path.write_text(text.replace(old, new))


# --------------------------------------------------------------------------- 1. moving the log


def test_renaming_the_log_does_not_reset_the_budget(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=3)
    for index in range(3):
        assert read(project, f"read {index}") == 0
    _edit(project, "log: evals/holdout/READS.log", "log: evals/holdout/READS2.log")
    capsys.readouterr()
    assert read(project, "fresh budget?") == 3
    out = capsys.readouterr().out
    assert "BLOCKED (holdout_log_moved, holdout_budget_spent)" in out
    assert "Moving or renaming the log does not reset the budget" in out
    assert not (project.root / "evals" / "holdout" / "READS2.log").exists()
    assert project.cli("holdout", "status", "--json", str(project.root / "s.json")) == 3
    status = json.loads((project.root / "s.json").read_text())
    assert status["budget"]["used"] == 3 and "holdout_log_moved" in status["reasons"]


def test_respelling_the_log_path_keeps_its_records(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=3)
    for index in range(3):
        assert read(project, f"read {index}") == 0
    _edit(project, "log: evals/holdout/READS.log", "log: ./evals/holdout/../holdout/READS.log")
    capsys.readouterr()
    assert read(project, "respelled") == 3
    out = capsys.readouterr().out
    assert "BLOCKED (holdout_budget_spent)" in out and "3 of 3 reads used" in out
    # deleting the last entry is still caught through the respelled path
    data = log_path(project).read_bytes()
    log_path(project).write_bytes(data[: data.rstrip(b"\n").rfind(b"\n") + 1])
    assert project.cli("holdout", "status") == 3


# --------------------------------------------------------------------------- 2. the budget in force


@pytest.mark.parametrize("change", ["", "  budget: 5\n"])
def test_removing_or_raising_the_budget_after_a_read_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str], change: str
) -> None:
    setup(project, budget=2)
    assert read(project, "one") == 0
    _edit(project, "  budget: 2\n", change)
    capsys.readouterr()
    assert read(project, "two") == 3
    out = capsys.readouterr().out
    assert "holdout_budget_unlogged" in out and "the budget in force is 2" in out and "oloproof holdout budget" in out
    assert len(state(project).reads) == 1


def test_a_logged_budget_entry_raises_the_budget(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=1)
    assert read(project, "one") == 0
    assert read(project, "two") == 3
    assert project.cli("holdout", "budget", "3", "--reason", "") == 2
    assert project.cli("holdout", "budget", "0", "--reason", "x") == 2
    capsys.readouterr()
    assert project.cli("holdout", "budget", "3", "--reason", "two more reads for the release") == 0
    out = capsys.readouterr().out
    assert "appended a budget entry" in out and "spends independence" in out and "declare holdout.budget: 3" in out
    assert read(project, "still declared 1") == 3  # release.yaml's lower budget stays in force
    _edit(project, "  budget: 1\n", "  budget: 3\n")
    assert read(project, "two") == 0 and read(project, "three") == 0 and read(project, "four") == 3
    final = state(project)
    assert final.intact and [e.budget for e in final.budgets] == [3] and [e.fields.budget for e in final.reads] == [1, 3, 3]
    text = log_path(project).read_text()
    assert '\nbudget | ' in text and 'reason="two more reads for the release"' in text
    # editing the budget entry breaks the chain
    log_path(project).write_text(text.replace("budget=3 |", "budget=9 |"))
    assert project.cli("holdout", "status") == 3


def test_lowering_the_budget_needs_no_entry_and_without_reads_the_declared_one_holds(project: Project) -> None:
    setup(project, budget=None)
    assert read(project, "one") == 0  # no budget declared, none logged: as before
    _edit(project, "holdout:\n", "holdout:\n  budget: 2\n")  # adding a budget lowers it from unlimited
    assert read(project, "two") == 0 and read(project, "three") == 3
    _edit(project, "  budget: 2\n", "  budget: 1\n")
    assert read(project, "four") == 3


# --------------------------------------------------------------------------- 4. the holdout as a dev set


@pytest.mark.parametrize("command", [("gate",), ("run",)])
def test_the_holdout_cannot_be_scored_as_the_dev_set(project: Project, capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    setup(project)
    _edit(project, "cases: data/test.jsonl", "cases: evals/holdout/cases.jsonl")
    capsys.readouterr()
    assert project.cli(*command) == 2
    err = capsys.readouterr().err
    assert "is the holdout file" in err and "oloproof holdout run" in err
    runs = project.root / ".oloproof" / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def test_a_copy_of_the_holdout_is_refused_by_digest_even_when_its_path_is_unset(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    setup(project)
    write_cases(project.root / "data" / "copy.jsonl", list(reversed(holdout_cases())))
    _edit(project, "cases: data/test.jsonl", "cases: data/copy.jsonl")
    assert project.cli("run") == 2
    assert "has the digest of the holdout set" in capsys.readouterr().err
    # with the holdout behind an unset variable, the log's digests still recognise it
    _edit(project, "cases: data/copy.jsonl", "cases: data/test.jsonl")
    assert read(project, "one") == 0
    _edit(project, "cases: evals/holdout/cases.jsonl", "cases: ${HOLDOUT_NOT_SET}")
    _edit(project, "cases: data/test.jsonl", "cases: data/copy.jsonl")
    monkeypatch.delenv("HOLDOUT_NOT_SET", raising=False)
    assert project.cli("gate") == 2
    assert "has the digest of the holdout set" in capsys.readouterr().err
    _edit(project, "cases: data/copy.jsonl", "cases: data/test.jsonl")
    assert project.cli("run") == 0  # the dev set itself is fine


# --------------------------------------------------------------------------- 5, 6. status


@pytest.mark.parametrize("option", [("--delta", "5"), ("--delta", "-1"), ("--delta", "nan"), ("--psi", "0"), ("--psi", "inf")])
@pytest.mark.parametrize("budget", [None, 20])
def test_status_rejects_impossible_fractions(
    project: Project, capsys: pytest.CaptureFixture[str], option: tuple[str, str], budget: int | None
) -> None:
    setup(project, budget=budget)
    assert project.cli("holdout", "status", *option) == 2
    assert f"{option[0]} takes a fraction strictly between 0 and 1" in capsys.readouterr().err


def test_status_of_a_deleted_log_with_records_says_tampered(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "one") == 0
    log_path(project).unlink()
    capsys.readouterr()
    assert project.cli("holdout", "status") == 3
    out = capsys.readouterr().out
    assert "no reads yet" not in out and "TAMPERED" in out and "deleted or reset" in out
    assert Path(project.root / ".oloproof" / "holdout").is_dir()
