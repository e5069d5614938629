"""Evidence is never silently replaced (issue 16 §6): one leakage record per (test-set digest,
training file); the gate reads every record of its test set and is invalid while any found leaks;
a check that replaces a record with leaks says so; the stale message names this config's own record
and a command that works as typed. Through the CLI, from the project's directory as a user types."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

from oloproof.cli.main import main

EVIDENCE = Path(".oloproof") / "evidence" / "leakage"


def cases(n: int = 40) -> list[dict[str, Any]]:
    return [{"id": f"c{i:03d}", "answer": 1, "text": f"Case number {i}", "expected": {"label": 1}} for i in range(n)]


def training(project: Project, name: str, texts: list[str]) -> str:
    path = project.root / "data" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text("".join(json.dumps({"answer": 1, "text": text, "label": 1}) + "\n" for text in texts))
    return f"data/{name}"


LEAKY = ["case number 3", "CASE  number 7", "case number 11", "unrelated"]
CLEAN = ["something else", "another row"]


@pytest.fixture
def here(project: Project, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(project.root)
    project.write(cases=cases(), extra="leakage: required\n")
    return project


def check(*argv: str) -> int:
    return main(["leakage", "check", *argv])


def gate(project: Project) -> tuple[int, dict[str, Any]]:
    code = main(["gate", "--json", "gate.json", "-q"])
    report = json.loads((project.root / "gate.json").read_text())
    return code, next(item for item in report["checks"] if item["name"] == "leakage")


def records(project: Project) -> list[Path]:
    return sorted((project.root / EVIDENCE).glob("*.json"))


def test_a_clean_check_of_another_training_file_does_not_hide_a_leaky_record(
    here: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert check("--training", training(here, "train-a.jsonl", LEAKY), "--record", "-q") == 4
    assert check("--training", training(here, "train-b.jsonl", CLEAN), "--record", "-q") == 0
    assert len(records(here)) == 2  # one per training file
    code, leakage = gate(here)
    assert code == 4
    assert leakage["data"]["status"] == "leaked" and leakage["invalidates"] == ["leaked_cases"]
    assert leakage["data"]["leaked_ids"] == ["c003", "c007", "c011"]
    assert "appear in the training data (data/train-a.jsonl)" in leakage["sentence"]
    assert sorted(item["training"]["path"] for item in leakage["data"]["records"]) == ["data/train-a.jsonl", "data/train-b.jsonl"]
    capsys.readouterr()
    assert main(["gate"]) == 4
    out = " ".join(capsys.readouterr().out.split())
    assert "leakage: 3 of 40 cases found in the training data: checked against " in out
    assert "2 rows of data/train-b.jsonl" in out and "4 rows of data/train-a.jsonl" in out
    assert "3 leaked case(s) in data/train-a.jsonl" in out and "0 leaked case(s) in data/train-b.jsonl" in out


def test_the_same_file_named_another_way_is_one_record(here: Project) -> None:
    given = training(here, "train-a.jsonl", CLEAN)
    for name in (given, f"./{given}", str(here.root / given), f"data/../{given}"):
        assert check("--training", name, "--record", "-q") == 0
    assert len(records(here)) == 1


def test_replacing_a_record_that_found_leaks_says_so(here: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = training(here, "train-a.jsonl", LEAKY)
    assert check("--training", path, "--record", "-q") == 4
    (old,) = records(here)
    training(here, "train-a.jsonl", CLEAN)  # retrained without the leaked cases
    capsys.readouterr()
    assert check("--training", path, "--record", "-q") == 0
    out = " ".join(capsys.readouterr().out.split())
    assert (
        f"replaced {old.relative_to(here.root).as_posix()}: it had found 3 leaked case(s) in data/train-a.jsonl ("
    ) in out
    assert re.search(r"\); this check finds none; the file has changed since \(sha256:[0-9a-f]{12}… then, sha256:[0-9a-f]{12}… now\)", out)
    assert records(here) == [old]
    assert gate(here)[0] == 0


def test_re_recording_the_same_leaky_file_says_it_is_the_same_file(
    here: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    path = training(here, "train-a.jsonl", LEAKY)
    assert check("--training", path, "--record", "-q") == 4
    capsys.readouterr()
    assert check("--training", path, "--field", "text", "--record", "-q") == 4
    out = " ".join(capsys.readouterr().out.split())
    assert "it had found 3 leaked case(s) in data/train-a.jsonl" in out and "this check finds 3; the same file" in out


def test_a_replaced_clean_record_is_not_announced(here: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = training(here, "train-a.jsonl", CLEAN)
    assert check("--training", path, "--record", "-q") == 0
    capsys.readouterr()
    assert check("--training", path, "--record", "-q") == 0
    assert "replaced" not in capsys.readouterr().out


def edit_testset(project: Project, *, config: str = "release.yaml", cases_path: str = "data/test.jsonl") -> None:
    lines = (project.root / cases_path).read_text().splitlines()
    (project.root / cases_path).write_text("\n".join(lines[:-1]) + "\n")  # one case fewer: another digest


def test_the_stale_message_names_this_configs_record_and_a_command_that_works(
    here: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert check("--training", training(here, "train-a.jsonl", CLEAN), "--record", "-q") == 0
    (mine,) = records(here)
    # Another config beside it, with its own test set, checked later against another file.
    other_cases = here.root / "data" / "other.jsonl"
    other_cases.write_text("".join(json.dumps(case) + "\n" for case in cases(5)[1:]))
    text = (here.root / "release.yaml").read_text().replace("data/test.jsonl", "data/other.jsonl")
    (here.root / "other.yaml").write_text(text)
    assert main(["leakage", "check", "-c", "other.yaml", "--training", training(here, "other-train.jsonl", CLEAN),
                 "--record", "-q"]) == 0
    edit_testset(here)
    monkeypatch.chdir(here.root / "data")  # somewhere else: the command must still work from here
    code = main(["gate", "-c", "../release.yaml", "--json", "gate.json", "-q"])
    leakage = next(c for c in json.loads((here.root / "data" / "gate.json").read_text())["checks"] if c["name"] == "leakage")
    assert code == 3 and leakage["reasons"] == ["leakage_stale"]
    sentence = leakage["sentence"]
    assert f"this config's last recorded check ({mine.relative_to(here.root).as_posix()}, " in sentence
    assert "against data/train-a.jsonl)" in sentence and "other" not in sentence
    command = sentence.split("run `", 1)[1].split("`", 1)[0]
    assert command == "oloproof leakage check -c ../release.yaml --training train-a.jsonl --record"
    assert main([*shlex.split(command)[1:], "-q"]) == 0  # it works, typed from here
    assert main(["gate", "-c", "../release.yaml", "-q"]) == 0


def test_a_training_file_not_rechecked_after_an_edit_keeps_the_gate_blocked(here: Project) -> None:
    a = training(here, "train-a.jsonl", CLEAN)
    b = training(here, "train-b.jsonl", ["case number 39"])
    assert check("--training", a, "--record", "-q") == 0
    assert check("--training", b, "--record", "-q") == 4
    edit_testset(here)  # drops c039, the leaked case... and the user re-checks only the clean file
    assert check("--training", a, "--record", "-q") == 0
    code, leakage = gate(here)
    assert code == 3 and leakage["reasons"] == ["leakage_stale"]
    assert "not re-checked since the test set changed against data/train-b.jsonl (.oloproof/evidence/leakage/" in leakage["sentence"]
    assert "run `oloproof leakage check --training data/train-b.jsonl --record`" in leakage["sentence"]
    assert check("--training", b, "--record", "-q") == 0
    assert gate(here)[0] == 0


def test_a_record_in_the_old_layout_is_still_read_and_replaced(here: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = training(here, "train-a.jsonl", LEAKY)
    assert check("--training", path, "--record", "-q") == 4
    (new,) = records(here)
    data = json.loads(new.read_text())
    del data["training"]["path"], data["config"]  # as an older oloproof wrote it
    legacy = new.parent / f"{new.name.split('.')[0]}.json"
    legacy.write_text(json.dumps(data))
    new.unlink()
    assert check("--training", training(here, "train-b.jsonl", CLEAN), "--record", "-q") == 0
    code, leakage = gate(here)
    assert code == 4 and leakage["data"]["n_leaked"] == 3  # the old record still counts
    training(here, "train-a.jsonl", CLEAN)
    capsys.readouterr()
    assert check("--training", path, "--record", "-q") == 0
    assert f"replaced {legacy.relative_to(here.root).as_posix()}: it had found 3" in " ".join(capsys.readouterr().out.split())
    assert not legacy.exists() and len(records(here)) == 2
    assert gate(here)[0] == 0


def test_a_record_renamed_to_this_test_set_is_refused(here: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert check("--training", training(here, "train-a.jsonl", CLEAN), "--record", "-q") == 0
    (record,) = records(here)
    edit_testset(here)
    code, _ = gate(here)
    assert code == 3
    digest = json.loads((here.root / "gate.json").read_text())["testset"]["digest"]
    record.rename(record.parent / f"{digest.split(':')[1]}.{record.name.split('.')[1]}.json")  # a hostile rename
    capsys.readouterr()
    assert main(["gate", "-q"]) != 0
    assert "holds a check of test set" in capsys.readouterr().err


def test_a_training_file_dropped_for_good_is_released_by_deleting_its_records(here: Project) -> None:
    a = training(here, "train-a.jsonl", CLEAN)
    b = training(here, "train-b.jsonl", CLEAN)
    assert check("--training", a, "--record", "-q") == 0
    assert check("--training", b, "--record", "-q") == 0
    for _ in range(2):  # two edits, each re-checked against both files
        edit_testset(here)
        assert check("--training", a, "--record", "-q") == 0
        assert check("--training", b, "--record", "-q") == 0
    edit_testset(here)
    assert check("--training", a, "--record", "-q") == 0  # b is no longer training data
    code, leakage = gate(here)
    assert code == 3
    pattern = leakage["sentence"].split("delete every record of it: ", 1)[1].rstrip(").")
    assert pattern.startswith(".oloproof/evidence/leakage/*.") and pattern.endswith(".json")
    dropped = list(here.root.glob(pattern))
    assert len(dropped) == 3
    for path in dropped:
        path.unlink()
    assert gate(here)[0] == 0


def test_leaked_cases_that_stay_when_the_test_set_changes_keep_the_evidence_invalid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Adding one unrelated case changes the test set's digest; the record that found leaks is now
    of an earlier version. Its leaked cases are still there (same ids): not unchecked, not clean."""
    from tests.conftest import labelled_cases, write_cases

    Project(tmp_path).write(cases=labelled_cases(40, 40))
    monkeypatch.chdir(tmp_path)
    write_cases(tmp_path / "train.jsonl", [{"answer": 1}])
    assert main(["leakage", "check", "--training", "train.jsonl", "--record", "--quiet"]) == 4
    assert main(["gate", "--quiet"]) == 4
    cases = tmp_path / "data" / "test.jsonl"
    cases.write_text(cases.read_text() + json.dumps({"id": "new", "answer": 1, "expected": {"label": 1}}) + "\n")
    capsys.readouterr()
    assert main(["gate", "--json", "r.json"]) == 4
    data = json.loads((tmp_path / "r.json").read_text())
    [check] = [item for item in data["checks"] if item["name"] == "leakage"]
    assert check["reasons"] == ["leaked_cases"]
    assert "40 test case(s) that the last check of train.jsonl found in the training data (on an earlier version" in check["sentence"]
    assert all("leaked_cases" in rule["reasons"] for rule in data["rules"])
