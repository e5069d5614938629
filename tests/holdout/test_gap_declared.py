"""Issue 16, point 4: ``gap`` takes as the current version's holdout reading only a read made by the
declared ``system.command`` — not imported outputs, not another ``--command`` scored under the
version's name, not a command that was declared before it changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, Project, write_cases

from tests.holdout.test_read import holdout_cases, read, setup


def two_versions(project: Project) -> None:
    """v0 (week 0): a dev run and the week-0 read; then v1 declared, with its dev run."""
    setup(project)
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("version: v1", "version: v0"))
    assert project.cli("run", "--quiet") == 0
    assert read(project, "week 0", "--quiet") == 0
    (project.root / "release.yaml").write_text(text)
    assert project.cli("run", "--quiet") == 0


def gap(project: Project) -> tuple[int, dict[str, Any]]:
    out = project.root / "gap.json"
    code = project.cli("gap", "--baseline", "version:v0", "--json", str(out))
    return code, json.loads(out.read_text())


def test_imported_outputs_are_not_the_current_versions_reading(project: Project) -> None:
    two_versions(project)
    outputs = project.root / "made-elsewhere.jsonl"
    write_cases(outputs, [{"id": case["id"], "label": 1} for case in holdout_cases()])  # every answer right
    assert read(project, "week 3", "--outputs", str(outputs), "--version", "v1", "--quiet") == 0
    code, data = gap(project)
    assert code == 4 and data["reasons"] == ["holdout_read_not_declared"], data
    assert data["sentence"].startswith(
        "no read of v1 was made by the declared system.command (read 2 (imported outputs)): imported outputs or "
        "another command are not the current version's reading"
    )
    assert data["holdout"] is None


def test_another_command_under_the_versions_name_is_not_its_reading(project: Project) -> None:
    two_versions(project)
    other = f"{sys.executable} {ECHO}"
    assert read(project, "week 3", "--command", other, "--version", "v1", "--quiet") == 0
    code, data = gap(project)
    assert code == 4 and data["reasons"] == ["holdout_read_not_declared"]
    assert "(read 2 (another --command))" in data["sentence"]


def test_a_read_by_the_declared_command_is_taken_and_a_later_import_does_not_replace_it(project: Project) -> None:
    two_versions(project)
    assert read(project, "week 3", "--quiet") == 0  # system.command, as v1
    outputs = project.root / "made-elsewhere.jsonl"
    write_cases(outputs, [{"id": case["id"], "label": 1} for case in holdout_cases()])
    assert read(project, "week 4", "--outputs", str(outputs), "--version", "v1", "--quiet") == 0
    _, data = gap(project)
    assert data["reasons"] != ["holdout_read_not_declared"], data
    assert data["holdout"]["current"]["source"] == "read 2", data["holdout"]  # not the imported read 3


def test_a_read_by_a_command_declared_before_it_changed_is_not_taken(project: Project) -> None:
    two_versions(project)
    assert read(project, "week 3", "--quiet") == 0
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("timeout_s: 20", "timeout_s: 20\n  batch_size: 7").replace(
        str(ECHO) + '"]', str(ECHO) + '", "--unused"]'
    ))
    assert "--unused" in (project.root / "release.yaml").read_text()
    code, data = gap(project)
    assert code == 4 and data["reasons"] == ["holdout_read_not_declared"]
    assert "(read 2 (an earlier system.command))" in data["sentence"]


@pytest.fixture(autouse=True)
def _in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)


def test_outcome_records_say_what_made_each_read(project: Project) -> None:
    two_versions(project)
    [record] = sorted((project.root / ".oloproof" / "holdout").glob("read-*.json"))
    run = json.loads(Path(record).read_text())["run"]
    assert run["source"] == "system.command" and run["command_sha256"].startswith("sha256:")
