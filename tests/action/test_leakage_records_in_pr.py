"""A pull request cannot drop leakage evidence that found leaks (issue 16, points 4 and 6).

On the base branch a leakage check of the test set found leaked cases and its record is committed;
with ``leakage: required`` the gate is INSUFFICIENT_EVIDENCE (``leaked_cases``). A pull request that
deletes that record (or swaps it for a link to a clean one) would otherwise make the test set look
unchecked-but-clean to a gate that only reads what is there. Such a pull request is BLOCKED
(``leakage_record_removed``); removing a clean record is named for the reviewer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli.main import main as cli
from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import git, pull_request, report
from tests.conftest import labelled_cases, write_cases


def leaky_base(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    root = action.workspace
    write_cases(root / "data" / "test.jsonl", labelled_cases(100, 95))
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text + "leakage: required\n")
    write_cases(root / "train" / "clean.jsonl", [{"answer": 7}])
    write_cases(root / "train" / "leaky.jsonl", [{"answer": 0}])  # the five cases the system gets wrong
    monkeypatch.chdir(root)
    assert cli(["leakage", "check", "--training", "train/clean.jsonl", "--record", "--quiet"]) == 0
    assert cli(["leakage", "check", "--training", "train/leaky.jsonl", "--record", "--quiet"]) == 4
    folder = root / ".oloproof" / "evidence" / "leakage"
    records = {json.loads(path.read_text())["training"]["name"]: path for path in folder.glob("*.json")}
    assert set(records) == {"clean.jsonl", "leaky.jsonl"}, records
    assert cli(["run", "--quiet"]) == 0
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return git(root, "rev-parse", "HEAD"), records["leaky.jsonl"]


def pr_check(action: ActionRun, base: str) -> tuple[int, dict[str, object], str]:
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED, FAIL"})
    data = report(action)
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]  # type: ignore[union-attr]
    return result.code, check, result.summary


def test_the_base_gate_is_not_clean(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    leaky_base(action, monkeypatch)
    assert cli(["gate", "--quiet"]) == 4  # leaked_cases: the evidence is invalid


def test_deleting_a_record_that_found_leaks_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base, leaky = leaky_base(action, monkeypatch)
    leaky.unlink()
    code, check, summary = pr_check(action, base)
    assert code == 3, summary
    assert check["verdict"] == "BLOCKED" and check["reasons"] == ["leakage_record_removed"], check
    sentence = str(check["sentence"])
    assert (
        f"the leakage record .oloproof/evidence/leakage/{leaky.name}, which found 5 leaked case(s) in leaky.jsonl"
        in sentence
    )
    assert "is removed or replaced by this pull request" in sentence
    assert f"leakage/{leaky.name}, which found 5 leaked case(s)" in summary


@pytest.mark.parametrize("how", ["symlink to the clean record", "directory"])
def test_a_record_replaced_by_something_not_a_file_stops_the_gate(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """Evidence in a form that is not a regular file is never read (as for the holdout register):
    the gate stops with exit 2 naming it, so nothing is decided and the job fails."""
    base, leaky = leaky_base(action, monkeypatch)
    clean = next(path for path in leaky.parent.glob("*.json") if path != leaky)
    leaky.unlink()
    if how.startswith("symlink"):
        leaky.symlink_to(clean.name)
    else:
        leaky.mkdir()
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED, FAIL"})
    assert result.code == 2, result.stdout
    assert f".oloproof/evidence/leakage/{leaky.name}: is a " in result.summary
    assert "oloproof gate: ERROR" in result.summary


def test_removing_a_clean_record_is_named_not_blocked_by_the_pull_request_check(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, leaky = leaky_base(action, monkeypatch)
    clean = next(path for path in leaky.parent.glob("*.json") if path != leaky)
    clean.unlink()
    _code, check, _summary = pr_check(action, base)
    assert check["verdict"] != "BLOCKED", check
    assert (
        f"the leakage record .oloproof/evidence/leakage/{clean.name} (clean, clean.jsonl) is removed by this pull request"
        in check["lines"]
    )  # type: ignore[operator]
    assert report(action)["verdict"] == "INSUFFICIENT_EVIDENCE"  # the leaky record is still read: not clean


def test_rewriting_a_record_that_found_leaks_as_clean_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base, leaky = leaky_base(action, monkeypatch)
    data = json.loads(leaky.read_text())
    assert data["leaked_ids"]
    data["leaked_ids"] = []
    for key in ("rows_matched", "n_leaked"):
        if key in data:
            data[key] = 0
    leaky.write_text(json.dumps(data))
    code, check, summary = pr_check(action, base)
    assert code == 3, summary
    assert check["reasons"] == ["leakage_record_removed"], check
    assert f"{leaky.name}, which found 5 leaked case(s) in leaky.jsonl, is rewritten by this pull request" in str(
        check["sentence"]
    )


def test_emptying_the_near_copies_of_a_record_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 20: under `near: invalidate` near copies decide like leaks; a PR that empties a record's
    # near section would turn INSUFFICIENT_EVIDENCE into PASS without forging a run.
    pytest.importorskip("datasketch")
    root = action.workspace
    write_cases(root / "data" / "test.jsonl", labelled_cases(100, 95))
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text + "leakage: {required: true, near: invalidate, tolerance: {answer: 0.5}}\n")
    write_cases(root / "train" / "close.jsonl", [{"answer": 0.25}])  # near the five cases answered 0
    monkeypatch.chdir(root)
    assert cli(["leakage", "check", "--training", "train/close.jsonl", "--near", "--record", "--quiet"]) == 4
    [record] = (root / ".oloproof" / "evidence" / "leakage").glob("*.json")
    data = json.loads(record.read_text())
    assert data["leaked_ids"] == [] and data["near"]["n_cases"] == 5
    assert cli(["run", "--quiet"]) == 0
    assert cli(["gate", "--quiet"]) == 4  # near_duplicate_cases
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    data["near"]["cases"], data["near"]["n_cases"] = [], 0
    record.write_text(json.dumps(data))
    code, check, summary = pr_check(action, base)
    assert code == 3, summary
    assert check["reasons"] == ["leakage_record_removed"], check
    assert "which found 5 near copy(ies) in close.jsonl, is rewritten by this pull request" in str(check["sentence"])
