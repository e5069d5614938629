"""A failing case removed from the test set between gates is said (issue 16 §6): "1 case removed
since the last gate; it was a failure", and the same for a case relabelled under its id. "The last
gate" is this config's most recent gate that decided its rules, whatever the version. Through the
CLI, on real files."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from conftest import Project, labelled_cases, write_cases

REMOVED_FAILURE = "1 case removed since the last gate ("


def notes(project: Project, *extra: str) -> tuple[int, list[str]]:
    out = project.root / "gate.json"
    code = project.cli("gate", "--json", str(out), "-q", *extra)
    return code, json.loads(out.read_text())["run_notes"]


def cases_without(cases: list[dict[str, Any]], case_id: str) -> list[dict[str, Any]]:
    return [case for case in cases if case["id"] != case_id]


def test_removing_the_only_failing_case_is_said(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = labelled_cases(60, 59)  # c00059 fails
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.9}")
    _, first = notes(project)
    assert not [note for note in first if "since the last gate" in note]
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases, "c00059"))
    capsys.readouterr()
    assert project.cli("gate") in (0, 4)
    out = " ".join(capsys.readouterr().out.split())
    assert REMOVED_FAILURE in out and "); it was a failure" in out
    _, again = notes(project)  # said once: this gate is now the last
    assert not [note for note in again if "since the last gate" in note]


def test_a_removed_passing_case_and_several_removals_are_counted(project: Project) -> None:
    cases = labelled_cases(60, 57)  # c00057..c00059 fail
    project.write(cases=cases)
    notes(project)
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases, "c00001"))
    (note,) = [n for n in notes(project)[1] if "since the last gate" in n]
    assert note.startswith(REMOVED_FAILURE) and note.endswith("); it was not a failure")
    write_cases(
        project.root / "data" / "test.jsonl",
        [c for c in cases if c["id"] not in ("c00001", "c00002", "c00058", "c00059")],
    )
    (note,) = [n for n in notes(project)[1] if "since the last gate" in n]
    assert note.startswith("3 cases removed since the last gate (") and note.endswith("); 2 of them were failures")


def test_a_relabelled_failure_is_said(project: Project) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    cases[-1]["expected"] = {"label": 0}  # the model's wrong answer becomes the expected one
    write_cases(project.root / "data" / "test.jsonl", cases)
    (note,) = [n for n in notes(project)[1] if "since the last gate" in n]
    assert note.startswith("1 case changed (input or expected value) since the last gate (")
    assert note.endswith("); it was a failure")


def test_a_version_bump_with_the_removal_is_still_said(project: Project) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    project.write(cases=cases_without(cases, "c00059"), version="v2")
    assert any(n.startswith(REMOVED_FAILURE) and n.endswith("it was a failure") for n in notes(project)[1])


def test_a_blocked_gate_is_not_the_last_gate(project: Project) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    project.write(cases=cases_without(cases, "c00059"), extra="leakage: required\n")
    assert project.cli("gate", "-q") == 3  # blocked: decided nothing, recorded nothing
    project.write(cases=cases_without(cases, "c00059"))
    assert any(n.startswith(REMOVED_FAILURE) for n in notes(project)[1])


def test_each_config_has_its_own_last_gate(project: Project) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    other = project.root / "other.yaml"
    other.write_text((project.root / "release.yaml").read_text().replace("data/test.jsonl", "data/other.jsonl"))
    write_cases(project.root / "data" / "other.jsonl", cases_without(cases, "c00059"))
    from oloproof.cli.main import main

    out = project.root / "other.json"
    main(["gate", "-c", str(other), "--json", str(out), "-q"])
    assert not [n for n in json.loads(out.read_text())["run_notes"] if "since the last gate" in n]


@pytest.mark.parametrize("hostile", ["garbage", "symlink to /dev/zero", "directory", "huge ids"])
def test_a_damaged_last_gate_record_costs_the_note_only(project: Project, hostile: str) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    (path,) = (project.root / ".oloproof" / "gates").iterdir()
    path.unlink()
    if hostile == "garbage":
        path.write_bytes(b"\x00{not json")
    elif hostile == "symlink to /dev/zero":
        os.symlink("/dev/zero", path)
    elif hostile == "directory":
        path.mkdir()
    else:
        path.write_text(
            json.dumps(
                {
                    "schema": "oloproof.last-gate/1",
                    "testset_digest": "x",
                    "generated_at": "t",
                    "version": "v",
                    "run_id": "r",
                    "cases": {"\u202e::error::x": 1},
                    "failed": [],
                }
            )
        )
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases, "c00059"))
    code, found = notes(project)
    assert code in (0, 1, 4)
    assert not [n for n in found if "since the last gate" in n]


def test_a_note_written_before_the_two_line_format_is_read(project: Project) -> None:
    """A one-line ``oloproof.last-gate/1`` note (written before issue 20) still tells what left; the
    next gate writes ``/2``: a header line, then the cases' digests copied unparsed while the test
    set is unchanged."""
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    (path,) = (project.root / ".oloproof" / "gates").iterdir()
    header_line, cases_line = path.read_bytes().splitlines()
    header = json.loads(header_line)
    assert header["schema"] == "oloproof.last-gate/2" and header["failed"] == ["c00059"]
    old = {**header, "schema": "oloproof.last-gate/1", "cases": json.loads(cases_line)}
    path.write_text(json.dumps(old) + "\n")
    notes(project)  # the same test set: the /1 note's cases carried over
    header_line, again = path.read_bytes().splitlines()
    assert json.loads(header_line)["schema"] == "oloproof.last-gate/2" and json.loads(again) == json.loads(cases_line)
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases, "c00059"))
    assert any(n.startswith(REMOVED_FAILURE) and n.endswith("it was a failure") for n in notes(project)[1])


@pytest.mark.parametrize("damage", ["cases line cut", "three lines", "cases not an object"])
def test_a_damaged_cases_line_costs_the_note_only(project: Project, damage: str) -> None:
    cases = labelled_cases(60, 59)
    project.write(cases=cases)
    notes(project)
    (path,) = (project.root / ".oloproof" / "gates").iterdir()
    header_line, cases_line = path.read_bytes().splitlines()
    broken = {
        "cases line cut": header_line + b"\n" + cases_line[: len(cases_line) // 2] + b"}\n",
        "three lines": header_line + b"\n" + cases_line + b"\n{}\n",
        "cases not an object": header_line + b"\n[1, 2]\n",
    }[damage]
    path.write_bytes(broken)
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases, "c00059"))
    code, found = notes(project)
    assert code in (0, 1, 4) and not [n for n in found if "since the last gate" in n]
    write_cases(project.root / "data" / "test.jsonl", cases_without(cases_without(cases, "c00059"), "c00001"))
    assert any(n.startswith("1 case removed since the last gate (") for n in notes(project)[1])  # whole again
