"""Issue 16, point 12: one owner for ``.oloproof/``. Every path under the evidence directory comes
from ``oloproof.store``, the pull-request trust check included: moved to another layout, the whole
flow (runs, holdout reads, leakage records) writes there, and the trust check still finds what a
pull request removed, rewrote or added. A path built by hand anywhere would make this test fail."""

from __future__ import annotations

import json
import shutil

import pytest

from oloproof import store
from oloproof.cli.main import main as cli
from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import base_branch, pull_request, report
from tests.conftest import write_cases

MOVED = store.Layout(
    store=".evidence",
    runs="stored-runs",
    holdout_records="holdout-reads",
    register="registry/holdout-sets.jsonl",
    leakage="attested/leakage",
    metamorphic="transformed",
    locks=".lockfiles",
    gitignore=".gitignore",
)


@pytest.fixture
def moved(monkeypatch: pytest.MonkeyPatch) -> store.Layout:
    monkeypatch.setattr(store, "LAYOUT", MOVED)
    return MOVED


def test_the_moved_layout_is_where_everything_is_written(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, moved: store.Layout
) -> None:
    base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    assert not (root / ".oloproof").exists()
    assert (root / ".evidence" / "registry" / "holdout-sets.jsonl").is_file()
    assert len(list((root / ".evidence" / "holdout-reads").glob("read-*.json"))) == 2
    assert len([p for p in (root / ".evidence" / "stored-runs").iterdir() if not p.name.startswith(".")]) == 1


def test_with_the_layout_moved_the_trust_check_still_blocks_and_still_names_leakage_records(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, moved: store.Layout
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    # reuse: all, so the base's run (found in the moved store) stands in for the system.
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED", "reuse": "all"})
    assert result.code == 0, result.stdout
    assert report(action)["run"]["reused"] is True

    # a leakage record the pull request adds is named as its author's word
    write_cases(root / "train.jsonl", [{"answer": 7}])
    assert cli(["leakage", "check", "--training", "train.jsonl", "--record", "-q"]) == 0
    [record] = (root / ".evidence" / "attested" / "leakage").glob("*.json")
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert f"the leakage record .evidence/attested/leakage/{record.name} is added by this pull request" in result.summary

    # the register shortened, an outcome record removed: BLOCKED, named at their moved paths
    register = root / ".evidence" / "registry" / "holdout-sets.jsonl"
    register.write_text(register.read_text().splitlines(keepends=True)[0])
    [first, _] = sorted((root / ".evidence" / "holdout-reads").glob("read-*.json"))
    first.unlink()
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3, result.stdout
    [check] = [item for item in report(action)["checks"] if item["name"] == "pull-request"]
    assert check["verdict"] == "BLOCKED"
    assert ".evidence/registry/holdout-sets.jsonl is not an extension of its version on the base branch" in check["sentence"]
    assert f"the holdout outcome record .evidence/holdout-reads/{first.name} is removed" in check["sentence"]


def test_with_the_layout_moved_a_removed_register_and_records_folder_are_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, moved: store.Layout
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    shutil.rmtree(root / ".evidence" / "registry")
    shutil.rmtree(root / ".evidence" / "holdout-reads")
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3, result.stdout
    sentence = json.dumps(report(action)["checks"])
    assert "the holdout register .evidence/registry/holdout-sets.jsonl is removed by this pull request" in sentence
