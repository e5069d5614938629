"""In a pull request, trust comes from the protected branch (docs/action.md, "What a pull request
can and cannot forge"): the action, run on a real git checkout whose base commit holds the
evidence, uses only the runs the base holds unchanged, and refuses a rewritten holdout log."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from oloproof.action import session as action_session
from oloproof.cli.main import main as cli
from oloproof.files import seal
from tests.action.conftest import ActionRun, FakeGitHub
from tests.conftest import labelled_cases, write_cases

GIT = ["git", "-c", "user.name=base", "-c", "user.email=base@example.invalid", "-c", "commit.gpgsign=false"]


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def base_branch(action: ActionRun, monkeypatch: pytest.MonkeyPatch, *, holdout: bool = False) -> str:
    """Commit the project as the protected branch holds it: a run of the declared system (85 of
    100 right: FAIL against min 0.9), and optionally a holdout with two reads. Returns its sha."""
    root = action.workspace
    write_cases(root / "data" / "test.jsonl", labelled_cases(100, 85))
    if holdout:
        cases = [{**case, "source": "holdout"} for case in labelled_cases(60, 54, prefix="h")]
        write_cases(root / "evals/holdout/cases.jsonl", cases)
        text = (root / "release.yaml").read_text()
        (root / "release.yaml").write_text(text + "holdout: {cases: evals/holdout/cases.jsonl, budget: 20}\n")
    monkeypatch.chdir(root)
    assert cli(["run", "--quiet"]) == 0
    if holdout:
        for reason in ("week 0", "week 3"):
            assert cli(["holdout", "run", "--reason", reason, "--quiet"]) == 0
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return git(root, "rev-parse", "HEAD")


def pull_request(action: ActionRun, base: str) -> ActionRun:
    action.pull_request()
    action.event["pull_request"]["base"] = {"sha": base, "ref": "main"}
    return action


def run_dir(root: Path) -> Path:
    [found] = [path for path in (root / ".oloproof" / "runs").iterdir() if not path.name.startswith(".")]
    return found


def forge(run: Path, *, run_id: str, status: str | None = None, all_correct: bool = False) -> Path:
    """What a pull request author can do: copy a run, change it, and seal it again (a seal is a
    digest anyone can recompute)."""
    target = run.parent / run_id
    shutil.copytree(run, target)
    meta = json.loads((target / "run.json").read_text())
    if all_correct:
        lines = [json.loads(line) for line in (target / "outputs.jsonl").read_text().splitlines()]
        data = "".join(json.dumps({**line, "label": 1}, sort_keys=True, separators=(",", ":")) + "\n" for line in lines)
        (target / "outputs.jsonl").write_text(data)
        import hashlib

        meta["outputs_sha256"] = "sha256:" + hashlib.sha256(data.encode()).hexdigest()
    if status is not None:
        meta["status"], meta["failure"] = status, None
    meta["run_id"] = run_id
    meta["created_ns"] = int(meta["created_ns"]) + 10**9
    meta.pop("digest", None)
    (target / "run.json").write_text(json.dumps(seal(meta)))
    return target


def report(action: ActionRun) -> dict[str, Any]:
    return json.loads((action.workspace / "oloproof-report.json").read_text())


def test_a_run_the_base_branch_holds_is_reused_in_a_pull_request(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch)
    stored = run_dir(action.workspace).name
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "none", "reuse": "all"})
    assert result.code == 0, result.stdout
    data = report(action)
    assert data["run"]["run_id"] == stored and data["run"]["reused"] is True
    assert data["rules"][0]["estimate"] == 0.85  # the base's run: 85 of 100


def test_a_forged_run_added_by_a_pull_request_is_never_reused(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch)
    forged = forge(run_dir(action.workspace), run_id="29990101T000000Z-f0f0f0", all_correct=True)
    # Outside a pull request the forged run is newer, sealed and made with the same files: it
    # would decide (which is why a pull request must not be trusted with .oloproof/).
    assert cli(["gate", "--json", str(action.tmp / "local.json")]) == 0
    assert json.loads((action.tmp / "local.json").read_text())["run"]["run_id"] == forged.name
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "none", "reuse": "all"})
    data = report(action)
    assert result.code == 0 and data["rules"][0]["estimate"] == 0.85, result.stdout  # not the forged 100 of 100
    assert data["run"]["run_id"] != forged.name
    assert any(f"run {forged.name} is not used: added by this pull request" in note for note in data["run_notes"])
    assert f"run {forged.name} is not used: added by this pull request" in result.summary


def test_a_failed_run_edited_to_ok_in_a_pull_request_is_not_reused(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch)
    original = run_dir(action.workspace)
    meta = json.loads((original / "run.json").read_text())
    meta.pop("digest", None)
    meta["status"], meta["failure"] = "failed", "batch 1: system exited with status 3"
    (original / "run.json").write_text(json.dumps(seal(meta)))
    git(action.workspace, "commit", "-qam", "a failed run on the base branch")
    base = git(action.workspace, "rev-parse", "HEAD")
    meta.pop("digest", None)
    meta["status"], meta["failure"] = "ok", None  # the pull request "repairs" it
    (original / "run.json").write_text(json.dumps(seal(meta)))
    pull_request(action, base)(**{"github-token": "", "fail-on": "none", "reuse": "all"})
    data = report(action)
    assert data["run"]["run_id"] != original.name and data["run"]["reused"] is False
    # the base branch's copy (failed) is what counts, so it is not reused either
    assert f"run {original.name} is changed by this pull request: the copy on the base branch ({base[:12]}) is used" in (
        data["run_notes"]
    )


def test_a_shortened_holdout_log_in_a_pull_request_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    log = action.workspace / "evals/holdout/READS.log"
    lines = log.read_text().splitlines(keepends=True)
    log.write_text("".join(lines[:-1]))  # the week-3 read removed
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3, result.stdout
    data = report(action)
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]
    assert check["verdict"] == "BLOCKED" and check["reasons"] == ["holdout_log_tampered"]
    assert "evals/holdout/READS.log is not an extension of its version on the base branch" in check["sentence"]
    assert {rule["verdict"] for rule in data["rules"]} == {"BLOCKED"}


def test_a_rewritten_holdout_register_is_blocked_and_an_appended_log_is_not(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    assert cli(["holdout", "run", "--reason", "week 6", "--quiet"]) == 0  # an append: fine
    assert pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"}).code == 0
    register = action.workspace / ".oloproof" / "holdouts.jsonl"
    register.write_text("".join(register.read_text().splitlines(keepends=True)[:2]))  # reads dropped
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3
    assert ".oloproof/holdouts.jsonl is not an extension of its version on the base branch" in result.summary


def test_reads_a_pull_request_adds_are_named_and_a_changed_outcome_record_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    assert cli(["holdout", "run", "--reason", "week 6", "--quiet"]) == 0  # made outside the release workflow
    assert pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"}).code == 0
    [check] = [item for item in report(action)["checks"] if item["name"] == "pull-request"]
    assert any("gains 1 read(s) in this pull request (read 3)" in line for line in check["lines"])
    [record] = sorted((action.workspace / ".oloproof" / "holdout").glob("read-0001-*.json"))
    data = json.loads(record.read_text())
    data["outcomes"] = sorted(data["outcomes"], key=lambda value: value is None or -value)  # same counts, other cases
    record.write_text(json.dumps(data))
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3
    assert f"the holdout outcome record .oloproof/holdout/{record.name} is changed by this pull request" in result.summary
    record.unlink()
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3 and f".oloproof/holdout/{record.name} is removed by this pull request" in result.summary


def test_without_its_base_commit_a_pull_request_trusts_no_stored_run(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base_branch(action, monkeypatch)
    stored = run_dir(action.workspace).name
    result = pull_request(action, "0" * 40)(**{"github-token": "", "fail-on": "none", "reuse": "all"})
    data = report(action)
    # Nothing stored is used, and nothing the base holds can be shown to be kept: BLOCKED (a pull
    # request that deleted evidence would otherwise look like a project that never had any).
    assert data["run"] is None or (data["run"]["run_id"] != stored and data["run"]["reused"] is False)
    assert data["verdict"] == "BLOCKED"
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]
    assert check["verdict"] == "BLOCKED" and check["reasons"] == ["pull_request_base_unreadable"]
    assert "use actions/checkout with fetch-depth: 0" in check["sentence"]
    assert "the base commit cannot be read" in result.summary


def test_a_check_run_api_that_drips_is_abandoned_and_the_summary_still_written(
    action: ActionRun, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_github.drip_s = 0.5
    monkeypatch.setattr(action_session, "PUBLISH_DEADLINE_S", 2.0)
    action.api_url = fake_github.url
    started = time.monotonic()
    result = action()
    took = time.monotonic() - started
    assert took < 15, took
    assert result.code == 0, result.stdout
    assert result.summary.startswith("## ✅ oloproof gate: PASS")
    assert result.outputs["verdict"] == "PASS"
    [notice] = [line for line in result.annotations("notice") if "check run" in line]
    assert "no complete answer within 2 s (abandoned)" in notice
