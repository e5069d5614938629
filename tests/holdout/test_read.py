"""`oloproof holdout run|status|repair` through the real CLI, on real projects on disk."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ECHO, Project, labelled_cases, write_cases

from oloproof.action.github import ActionEnv
from oloproof.action.main import read_holdout as action_read
from oloproof.action.session import Session
from oloproof.config import load_release
from oloproof.holdout.read import read_holdout
from oloproof.holdout.records import OUTCOME_ORDER, case_keys, load_outcome_records, outcome_vector
from oloproof.holdout.verify import verify

MARKER = "HOLDOUT-MARKER-7f3a"


def holdout_cases(n: int = 120, correct: int = 85, *, marker: bool = False) -> list[dict[str, Any]]:
    cases = [{**case, "source": "holdout"} for case in labelled_cases(n, correct, prefix="h")]  # no dev case
    if marker:
        for case in cases:
            case["id"] = f"{MARKER}-{case['id']}"
            case["text"] = f"confidential clause {MARKER}"
            case["expected"]["note"] = MARKER
    return cases


def setup(
    project: Project, *, budget: int | None = 20, cases_path: str = "evals/holdout/cases.jsonl", system_args: str = "",
    holdout: list[dict[str, Any]] | None = None, write_holdout: bool = True,
) -> Project:
    budget_line = f"  budget: {budget}\n" if budget is not None else ""
    project.write(
        cases=labelled_cases(50, 48), system_args=system_args,
        extra=f"holdout:\n  cases: {cases_path}\n{budget_line}  log: evals/holdout/READS.log\n",
    )
    if write_holdout:
        write_cases(project.root / "evals" / "holdout" / "cases.jsonl", holdout if holdout is not None else holdout_cases())
    return project


def log_path(project: Project) -> Path:
    return project.root / "evals" / "holdout" / "READS.log"


def state(project: Project) -> Any:
    return verify(log_path(project).read_bytes(), shown="READS.log")


def read(project: Project, reason: str = "week-0 baseline", *extra: str) -> int:
    return project.cli("holdout", "run", "--reason", reason, *extra)


# --------------------------------------------------------------------------- reads and the budget


def test_a_read_prints_score_interval_set_and_budget_then_logs_it(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "week-0 baseline", "--json", str(project.root / "read.json")) == 0
    out = capsys.readouterr().out
    first, second = out.strip().splitlines()
    assert re.fullmatch(
        r"holdout score: 0\.708 \(85/120\), 95% interval \[0\.618, 0\.788\] \(clopper-pearson, exact\) — holdout set sha256:[0-9a-f]{12}…", first
    ), first
    assert second == "appended to evals/holdout/READS.log (run 1 of 20 in budget)"
    entry = state(project).reads[0]
    assert entry.fields.reason == "week-0 baseline" and entry.fields.version == "v1" and entry.fields.n == 120
    report = json.loads((project.root / "read.json").read_text())
    assert report["schema"] == "oloproof.holdout-read/1" and report["read"] is True and report["exit_code"] == 0
    assert report["set"]["kind"] == "holdout" and report["set"]["digest"] == entry.fields.set_digest
    assert report["score"]["passes"] == 85 and report["score"]["interval"]["method"] == "clopper-pearson"
    assert report["budget"]["used"] == 1 and report["budget"]["left"] == 19
    assert report["entry"]["hash"] == entry.hash


def test_the_last_read_in_budget_is_allowed_and_the_next_refused_without_scoring(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    received = project.root / "received.jsonl"
    setup(project, budget=2, system_args=f"--record {received}")
    assert read(project, "first") == 0
    assert read(project, "second") == 0
    assert "(run 2 of 2 in budget; the budget is now spent)" in capsys.readouterr().out
    before_log, before_received = log_path(project).read_bytes(), received.read_bytes()
    assert read(project, "third", "--json", str(project.root / "refused.json")) == 3
    out = capsys.readouterr().out
    assert out.startswith("BLOCKED (holdout_budget_spent): Refused: the holdout's read budget is spent: 2 of 2 reads used")
    assert "No case was scored and the log is unchanged." in out
    assert log_path(project).read_bytes() == before_log
    assert received.read_bytes() == before_received  # the system never saw a case
    report = json.loads((project.root / "refused.json").read_text())
    assert report["verdict"] == "BLOCKED" and report["reasons"] == ["holdout_budget_spent"] and report["entry"] is None


def test_an_imported_outputs_file_can_be_scored_as_a_read(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    preds = project.root / "preds.jsonl"
    write_cases(preds, [{"id": case["id"], "label": 1} for case in holdout_cases()[:100]])
    assert read(project, "scored on the GPU job", "--outputs", str(preds), "--version", "v7") == 0
    out = capsys.readouterr().out
    assert "holdout score: 1.000 (100/100, 20 missing), 95% interval [0.754, 1.000]" in out
    assert "20 of 120 cases have no usable output" in out
    entry = state(project).reads[0]
    assert entry.fields.version == "v7" and entry.fields.missing == 20
    assert read(project, "no version", "--outputs", str(preds)) == 2


def test_a_baseline_command_is_read_as_its_own_version(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    command = f"{sys.executable} {ECHO}"
    assert read(project, "baseline re-measurement, overfitting investigation", "--command", command, "--version", "prompt-v0") == 0
    assert state(project).reads[0].fields.version == "prompt-v0"
    capsys.readouterr()
    assert read(project, "x", "--version", "v9") == 2
    assert "--version names imported outputs (--outputs) or a --command" in capsys.readouterr().err
    assert read(project, "x", "--command", command) == 2
    assert "--command needs --version NAME" in capsys.readouterr().err
    assert state(project).reads_used == 1


def test_with_no_budget_reads_are_logged_and_a_budget_is_suggested(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=None)
    assert read(project) == 0
    out = capsys.readouterr().out
    assert "appended to evals/holdout/READS.log (run 1; no budget declared (suggested: 9; see `oloproof holdout status`))" in out
    assert project.cli("holdout", "status", "--json", str(project.root / "status.json")) == 0
    out = capsys.readouterr().out
    assert "budget: 1 read(s) so far; no budget declared" in out
    assert "suggested budget: 9 reads for 120 cases (STATISTICS.md §6)" in out
    assert "B = floor(0.05 / (2 * Phi_bar(" in out and "paired minimum detectable difference" in out
    assert project.cli("holdout", "status", "--delta", "0.095", "--psi", "0.117") == 0
    assert "suggested budget: 21 reads for 120 cases" in capsys.readouterr().out  # the chapter's "20 in budget"
    suggested = json.loads((project.root / "status.json").read_text())["budget"]["suggested"]
    assert suggested["reads"] == 9 and suggested["n"] == 120


def test_status_shows_the_reads_table_and_what_is_left(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # one table row per read, for the assertions
    setup(project, budget=20)
    assert read(project, "week-0 baseline, both sets") == 0
    assert read(project, "week-3 check | not tuning") == 0
    capsys.readouterr()
    assert project.cli("holdout", "status", "--json", str(project.root / "status.json")) == 0
    out = capsys.readouterr().out
    assert re.search(r"holdout set evals/holdout/cases.jsonl: 120 cases, sha256:[0-9a-f]{12}…", out)
    assert "log evals/holdout/READS.log: intact, hash chain verified (2 read entries)" in out
    for column in ("read", "when", "who", "commit", "version", "reason", "holdout score", "set"):
        assert column in out
    assert "week-3 check | not tuning" in out and "0.708 (85/120)" in out
    assert "budget: 2 of 20 reads used, 18 left" in out
    status = json.loads((project.root / "status.json").read_text())
    assert status["schema"] == "oloproof.holdout-status/1" and status["intact"] is True
    assert [item["read"] for item in status["reads"]] == [1, 2]
    assert all(item["outcome_record"].startswith(".oloproof/holdout/read-000") for item in status["reads"])


def test_a_changed_set_is_named_in_the_read_and_in_status(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "one") == 0
    write_cases(project.root / "evals" / "holdout" / "cases.jsonl", holdout_cases(130, 90))
    capsys.readouterr()
    assert read(project, "two") == 0
    assert "note: the holdout set changed since read 1 (sha256:" in capsys.readouterr().out
    assert project.cli("holdout", "status") == 0
    out = capsys.readouterr().out
    assert re.search(r"┃\s*criterion\s*┃\s*set\s*┃", out)  # reads of two sets: each row names its set
    assert "budget: 2 of 20 reads used" in out


def test_status_before_any_read(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert project.cli("holdout", "status") == 0
    out = capsys.readouterr().out
    assert "log evals/holdout/READS.log: no reads yet" in out and "budget: 0 of 20 reads used, 20 left" in out


# --------------------------------------------------------------------------- bad input


def test_a_missing_or_empty_reason_is_a_usage_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert project.cli("holdout", "run") == 2
    assert "--reason" in capsys.readouterr().err
    assert read(project, "   ") == 2
    assert "--reason must not be empty" in capsys.readouterr().err
    assert not log_path(project).exists()


def test_the_holdout_path_may_come_from_the_environment(project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    secret_dir = project.root / "outside-the-repo"
    write_cases(secret_dir / "private.jsonl", holdout_cases())
    setup(project, cases_path="${HOLDOUT_DIR}/private.jsonl", write_holdout=False)
    monkeypatch.delenv("HOLDOUT_DIR", raising=False)
    assert read(project) == 2
    err = capsys.readouterr().err
    assert "release.yaml:14: holdout.cases: environment variable HOLDOUT_DIR is not set (holdout.cases is '${HOLDOUT_DIR}/private.jsonl')" in err
    assert project.cli("holdout", "status") == 0  # status reads the log without the set
    assert "not available here (environment variable HOLDOUT_DIR is not set" in capsys.readouterr().out
    monkeypatch.setenv("HOLDOUT_DIR", str(secret_dir))
    assert read(project) == 0
    out = capsys.readouterr().out
    assert "holdout score: 0.708 (85/120)" in out and str(secret_dir) not in out


def test_a_bare_dollar_in_the_holdout_path_is_rejected(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, cases_path="$HOLDOUT/cases.jsonl", write_holdout=False)
    assert read(project) == 2
    assert "holdout.cases: '$HOLDOUT/cases.jsonl': write environment variables as ${NAME}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "evals/holdout/cases.jsonl: the holdout set is empty: it needs at least one case"),
        ('{"id": "a", "expected": {"label": 1}}\n{"id": "b", "expected": \n', "evals/holdout/cases.jsonl:2: not valid JSON"),
        ('{"id": "a", "expected": {"label": 1}}\n[1, 2]\n', "evals/holdout/cases.jsonl:2: expected a JSON object, got an array"),
        (f'{{"id": "{MARKER}", "expected": {{"label": 1}}}}\n{{"id": "{MARKER}", "expected": {{"label": 1}}}}\n',
         "evals/holdout/cases.jsonl:2: duplicate case id <id withheld> (first on line 1)"),
        (f'{{"id": "{MARKER}", "expected": {{"other": 1}}}}\n', "evals/holdout/cases.jsonl:1: case <id withheld>: expected has no 'label'"),
    ],
)
def test_an_empty_or_malformed_holdout_file_is_a_usage_error(
    project: Project, capsys: pytest.CaptureFixture[str], content: str, message: str
) -> None:
    received = project.root / "received.jsonl"
    setup(project, write_holdout=False, system_args=f"--record {received}")
    path = project.root / "evals" / "holdout" / "cases.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content, encoding="utf-8")
    assert read(project) == 2
    err = capsys.readouterr().err
    assert message in err and MARKER not in err
    assert not log_path(project).exists() and not received.exists()


def test_no_holdout_declared_is_a_usage_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(20, 20))
    assert read(project) == 2
    assert "release.yaml: holdout: no holdout declared" in capsys.readouterr().err


# --------------------------------------------------------------------------- tampering and repair


def test_a_tampered_log_is_reported_refuses_reads_and_is_repaired_explicitly(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    received = project.root / "received.jsonl"
    setup(project, budget=20, system_args=f"--record {received}")
    for reason in ("one", "two", "three"):
        assert read(project, reason) == 0
    path = log_path(project)
    path.write_text(path.read_text().replace("score=0.708 (85/120)", "score=0.758 (91/120)", 1))
    capsys.readouterr()
    assert project.cli("holdout", "status", "--json", str(project.root / "status.json")) == 3
    out = capsys.readouterr().out
    assert "TAMPERED: 1 problem(s); holdout reads are refused (holdout_log_tampered)" in out
    assert "line 4: read 1 was edited after it was written" in out
    assert json.loads((project.root / "status.json").read_text())["reasons"] == ["holdout_log_tampered"]
    tampered, seen = path.read_bytes(), received.read_bytes()
    assert read(project, "four") == 3
    out = capsys.readouterr().out
    assert out.startswith("BLOCKED (holdout_log_tampered): Refused: evals/holdout/READS.log fails its hash-chain check")
    assert path.read_bytes() == tampered and received.read_bytes() == seen
    assert project.cli("holdout", "repair") == 2  # the reason is required here too
    capsys.readouterr()
    assert project.cli("holdout", "repair", "--reason", "someone 'fixed' read 1 by hand; restored in PR 7", "--json",
                       str(project.root / "repair.json")) == 0
    out = capsys.readouterr().out
    assert "appended a repair entry to evals/holdout/READS.log (line 7) acknowledging 1 problem(s)" in out
    assert json.loads((project.root / "repair.json").read_text())["repair"]["reads_used"] == 3
    assert project.cli("holdout", "status") == 0
    assert "repair at line 7" in capsys.readouterr().out
    assert read(project, "four") == 0
    assert "(run 4 of 20 in budget)" in capsys.readouterr().out
    release_yaml = project.root / "release.yaml"
    release_yaml.write_text(release_yaml.read_text().replace("budget: 20", "budget: 30"))
    assert project.cli("holdout", "status") == 0
    assert "note: the budget was 20 at read 4 and is 30 in release.yaml now" in capsys.readouterr().out
    assert project.cli("holdout", "repair", "--reason", "again") == 2
    assert "verifies (4 reads): there is nothing to repair" in capsys.readouterr().err


def test_resetting_the_log_to_undo_a_read_is_caught(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=20)
    assert read(project, "one") == 0
    kept = log_path(project).read_bytes()
    assert read(project, "a read I regret") == 0
    log_path(project).write_bytes(kept)  # as `git checkout -- READS.log` would
    capsys.readouterr()
    assert project.cli("holdout", "status") == 3
    out = capsys.readouterr().out
    assert "read 2 (hash " in out and "has an outcome record (.oloproof/holdout/read-0002-" in out
    assert read(project, "three") == 3
    assert project.cli("holdout", "repair", "--reason", "undone", "--reads-used", "1") == 2
    assert "--reads-used 1 is below the 2 reads the log shows" in capsys.readouterr().err
    assert project.cli("holdout", "repair", "--reason", "read 2 was undone by a checkout; it counts") == 0
    assert read(project, "three") == 0
    assert state(project).reads[-1].seq == 3


def test_status_since_a_git_ref_checks_the_log_only_grew(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=project.root, check=True)
    assert read(project, "one") == 0
    subprocess.run([*git, "add", "evals/holdout/READS.log"], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-qm", "read one"], cwd=project.root, check=True)
    assert read(project, "two") == 0
    capsys.readouterr()
    assert project.cli("holdout", "status", "--since", "HEAD") == 0
    assert "append-only since HEAD" in capsys.readouterr().out
    # Rewrite history so the chain verifies but read 1 is gone: only git can see it.
    log = log_path(project)
    log.unlink()
    for path in (project.root / ".oloproof" / "holdout").iterdir():
        path.unlink()
    assert read(project, "two, again") == 0
    assert project.cli("holdout", "status") == 0
    capsys.readouterr()
    assert project.cli("holdout", "status", "--since", "HEAD") == 3
    assert "the log at HEAD is not a prefix of the log now" in capsys.readouterr().out
    assert project.cli("holdout", "status", "--since", "no-such-ref") == 2


# --------------------------------------------------------------------------- the gate's view


def test_the_gate_reports_holdout_status_but_is_never_blocked_by_it(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=1)
    assert read(project) == 0
    log_path(project).write_text(log_path(project).read_text().replace("week-0", "week-1"))
    capsys.readouterr()
    report_path = project.root / "gate.json"
    assert project.cli("gate", "--json", str(report_path)) == 0  # 48/50 on the dev set passes min 0.8
    out = capsys.readouterr().out
    assert "holdout: 1 of 1 reads used, 0 left; log TAMPERED (1 problem(s))" in out
    check = next(item for item in json.loads(report_path.read_text())["checks"] if item["name"] == "holdout")
    assert check["blocks"] is False and check["verdict"] is None
    assert check["reasons"] == ["holdout_log_tampered", "holdout_budget_spent"]
    assert check["data"]["budget"]["used"] == 1 and check["data"]["intact"] is False


# --------------------------------------------------------------------------- no holdout content anywhere


def test_holdout_contents_never_appear_in_any_output_or_file(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    received = project.root / "system-side" / "received.jsonl"
    received.parent.mkdir()
    cases = holdout_cases(marker=True)
    setup(project, holdout=cases, system_args=f"--record {received} --crash-after 100")
    assert read(project, "baseline", "--json", str(project.root / "read.json")) == 4  # a failed system: no score
    assert project.cli("holdout", "status", "--json", str(project.root / "status.json")) == 0
    assert project.cli("gate", "--json", str(project.root / "gate.json"), "--junit", str(project.root / "gate.xml")) == 0
    log_path(project).write_text(log_path(project).read_text().replace("baseline", "baseline!"))
    assert project.cli("holdout", "status") == 3
    assert project.cli("holdout", "repair", "--reason", "test") == 0
    captured = capsys.readouterr()
    assert MARKER in received.read_text()  # the marker really went through the system
    assert MARKER not in captured.out and MARKER not in captured.err
    holdout_file = project.root / "evals" / "holdout" / "cases.jsonl"
    files = [path for path in project.root.rglob("*") if path.is_file() and path not in (holdout_file, received)]
    assert any(path.name == "READS.log" for path in files) and any(path.suffix == ".json" for path in files), files
    for path in files:
        assert MARKER.encode() not in path.read_bytes(), path
    assert "20 of 120 cases have no usable output" in captured.out
    assert "the system failed on the holdout (batch 1: system exited with status 3); the read still counts" in captured.out


def test_outcome_records_line_up_reads_of_the_same_set(project: Project) -> None:
    setup(project)
    assert read(project, "one") == 0
    assert read(project, "two") == 0
    release = load_release(project.config)
    records, notes = load_outcome_records(release.base_dir, log="evals/holdout/READS.log")
    assert notes == [] and [record.seq for record in records] == [1, 2]
    first = records[0]
    assert first.data["order"] == OUTCOME_ORDER and first.n == 120 and first.kind == "binary"
    assert sum(value for value in first.outcomes if value is not None) == 85
    assert first.outcomes == records[1].outcomes and first.set_digest == records[1].set_digest
    assert first.entry_hash == state(project).reads[0].hash
    # the order depends only on the canonical lines: shuffling the file changes neither digest nor vector
    import hashlib

    import numpy as np

    from oloproof.holdout.cases import cases_path, load_holdout

    testset = load_holdout(release)
    keys = case_keys(cases_path(release), testset)
    values = np.array([1.0 if case.inputs["answer"] == 1 else 0.0 for case in testset.cases])
    assert outcome_vector(testset, values, "binary", keys) == list(first.outcomes)
    # ...and not on the ids: someone who can guess the ids cannot line the outcomes up with them
    by_id = sorted(range(len(testset.cases)), key=lambda i: hashlib.sha256(testset.cases[i].id.encode()).hexdigest())
    assert [int(values[i]) for i in by_id] != list(first.outcomes)


def test_outputs_of_a_holdout_read_are_never_stored(project: Project) -> None:
    setup(project)
    assert read(project) == 0
    runs = project.root / ".oloproof" / "runs"
    assert not runs.exists() or not any(runs.iterdir())


def action_session(project: Project, actor: str = "octocat") -> Session:
    environ = {"GITHUB_ACTOR": actor, "GITHUB_SHA": "f" * 40, "GITHUB_WORKSPACE": str(project.root)}
    return Session(env=ActionEnv.from_environ(environ), out=io.StringIO(), environ=environ)


def test_read_function_for_the_action(project: Project) -> None:
    setup(project, budget=1)
    release = load_release(project.config)
    waited: list[bool] = []
    first = read_holdout(release, reason="from the action", on_wait=lambda: waited.append(True), who="ci-bot", commit="0123456789ab")
    assert first.verdict is None and first.exit_code == 0 and first.entry is not None and first.entry.seq == 1
    assert (first.entry.fields.who, first.entry.fields.commit) == ("ci-bot", "0123456789ab")
    second = read_holdout(release, reason="again", who="ci-bot", commit="0123456789ab")
    assert second.exit_code == 3 and second.reasons == ("holdout_budget_spent",)
    report = action_read(action_session(project), release, reason="from the action, again")
    assert report.name == "holdout-read" and report.verdict is not None and report.verdict.value == "BLOCKED"
    assert report.reasons == ("holdout_budget_spent",) and report.data["schema"] == "oloproof.holdout-read/1"


def test_the_actions_read_reports_the_score_with_its_set_and_the_runs_actor(project: Project) -> None:
    setup(project)
    report = action_read(action_session(project), load_release(project.config), reason="release v1.2")
    assert report.verdict is None and report.status.startswith("holdout score: 0.708 (85/120), 95% interval")
    assert "— holdout set sha256:" in report.status
    assert report.sentence == "Read for: release v1.2"
    assert report.lines[0] == "appended to evals/holdout/READS.log (run 1 of 20 in budget)"
    [entry] = state(project).reads
    assert entry.fields.who == "octocat"


# --------------------------------------------------------------------------- concurrency, for real


SLOW_SYSTEM = """
import runpy, sys, time
time.sleep(0.3)
sys.argv = [{echo!r}] + sys.argv[1:]
runpy.run_path({echo!r}, run_name="__main__")
"""


def test_ten_concurrent_reads_with_three_left_make_three_entries_and_seven_refusals(project: Project) -> None:
    received = project.root / "received.jsonl"
    setup(project, budget=5, system_args=f"--record {received}")
    assert read(project, "one") == 0
    assert read(project, "two") == 0
    slow = project.root / "slow_system.py"
    slow.write_text(SLOW_SYSTEM.format(echo=str(ECHO)))
    release_yaml = project.root / "release.yaml"
    release_yaml.write_text(release_yaml.read_text().replace(str(ECHO), str(slow)))
    before = received.read_text().count("\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "oloproof", "holdout", "run", "-c", str(release_yaml), "--reason", f"parallel {index}"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=project.root,
        )
        for index in range(10)
    ]
    results = [(proc.wait(timeout=120), *proc.communicate()) for proc in procs]
    codes = sorted(code for code, _, _ in results)
    assert codes == [0, 0, 0, 3, 3, 3, 3, 3, 3, 3], [(code, err.decode()) for code, _, err in results]
    for code, out, _ in results:
        if code == 3:
            assert b"BLOCKED (holdout_budget_spent)" in out
    final = state(project)
    assert final.intact and final.reads_used == 5 and [entry.seq for entry in final.reads] == [1, 2, 3, 4, 5]
    assert final.torn_bytes == 0 and log_path(project).read_bytes().endswith(b"\n")
    assert received.read_text().count("\n") - before == 3 * 120  # refused reads scored nothing
    assert len(list((project.root / ".oloproof" / "holdout").glob("read-*.json"))) == 5


def test_a_read_killed_mid_append_leaves_a_valid_log(project: Project) -> None:
    import signal
    import time

    setup(project, budget=5)
    assert read(project, "one") == 0
    before = log_path(project).read_bytes()
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    script = (
        f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from test_log import pause_mid_append\npause_mid_append()\n"
        "from oloproof.cli.main import main\nraise SystemExit(main(sys.argv[1:]))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, "holdout", "run", "-c", project.config, "--reason", "killed"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            data = log_path(project).read_bytes()
            if len(data) > len(before) and not data.endswith(b"\n"):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the read never started its append")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert project.cli("holdout", "status") == 0
    assert state(project).reads_used == 2  # the killed read had written its score: it counts
    assert read(project, "after the kill") == 0
    final = state(project)
    assert final.intact and [entry.seq for entry in final.reads] == [1, 3] and final.torn_bytes == 0 and final.reads_used == 3
