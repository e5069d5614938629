"""The action's entry point in-process: faked INPUT_* / GITHUB_*, a fake Checks API on 127.0.0.1.

Each test asserts the exit code, the step outputs, the job summary, the workflow commands
the runner would act on, and the exact requests sent to the API.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from tests.action.conftest import HEAD_SHA, REPOSITORY, SHA, TOKEN, ActionRun, FakeGitHub
from tests.conftest import labelled_cases

RUN_URL = f"https://github.com/{REPOSITORY}/actions/runs/99"


def rule_line(action: ActionRun, rule_id: str) -> int:
    lines = (action.workspace / "release.yaml").read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if f"id: {rule_id}," in line)


@pytest.fixture
def gh(action: ActionRun, fake_github: FakeGitHub) -> FakeGitHub:
    action.api_url = fake_github.url
    return fake_github


# ---------------------------------------------------------------- verdicts, outputs, exit codes


def test_pass_on_push_creates_a_successful_check_run(action: ActionRun, gh: FakeGitHub) -> None:
    result = action()
    assert result.code == 0
    assert result.outputs == {
        "verdict": "PASS", "exit-code": "0", "report": "oloproof-report.json",
        "rules-pass": "1", "rules-fail": "0", "rules-blocked": "0", "rules-insufficient-evidence": "0",
        "rules-manual-review": "0", "failing-rules": "[]", "check-url": f"https://github.com/{REPOSITORY}/runs/4242",
        "summary": "oloproof-report.md", "pages": "",
    }
    assert (action.workspace / "oloproof-report.md").read_text().startswith("## ✅ oloproof gate: PASS\n")
    assert result.summary.startswith("## ✅ oloproof gate: PASS\n")
    assert "This verdict does not fail the job" in result.summary
    assert result.annotations("error") == result.annotations("warning") == []
    report = json.loads((action.workspace / "oloproof-report.json").read_text())
    assert report["schema"] == "oloproof.gate/1" and report["verdict"] == "PASS"

    assert len(gh.requests) == 1
    request = gh.requests[0]
    assert (request.method, request.path) == ("POST", f"/repos/{REPOSITORY}/check-runs")
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.headers["accept"] == "application/vnd.github+json"
    assert request.headers["x-github-api-version"] == "2022-11-28"
    assert request.headers["content-type"] == "application/json; charset=utf-8"
    body = request.body
    summary = body["output"].pop("summary")
    assert body == {
        "name": "oloproof", "head_sha": SHA, "status": "completed", "conclusion": "success",
        "output": {"title": "PASS: 1 of 1 rules pass", "annotations": []}, "details_url": RUN_URL,
    }
    assert summary.startswith("## ✅ oloproof gate: PASS\n") and len(summary) <= 65535
    assert "check run 'oloproof' created on 111111111111: https://github.com/octo-org/loan-model/runs/4242" in result.stdout


def test_fail_on_a_pull_request_annotates_the_rule_line_and_uses_the_head_sha(action: ActionRun, gh: FakeGitHub) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    line = rule_line(action, "accurate")
    result = action.pull_request()(**{"check-name": "release gate"})
    assert result.code == ExitCode.FAIL
    assert result.outputs["verdict"] == "FAIL" and result.outputs["exit-code"] == "1"
    errors = result.annotations("error")
    assert len(errors) == 1
    assert errors[0].startswith(f"::error file=release.yaml,line={line},title=oloproof%3A rule accurate is FAIL::correct is 0.500 (50/100)")
    assert errors[0].endswith("%0Areasons: interval_misses_threshold")
    assert "**This verdict fails the job**" in result.summary

    [request] = gh.requests
    body = request.body
    assert body["name"] == "release gate"
    assert body["head_sha"] == HEAD_SHA  # the PR's head, never the merge commit in GITHUB_SHA
    assert body["conclusion"] == "failure"
    assert body["output"]["title"] == "FAIL: 0 of 1 rules pass"
    [annotation] = body["output"]["annotations"]
    message = annotation.pop("message")
    assert annotation == {
        "path": "release.yaml", "start_line": line, "end_line": line, "annotation_level": "failure",
        "title": "oloproof: rule accurate is FAIL",
    }
    assert message.startswith("correct is 0.500 (50/100)") and message.endswith("\nreasons: interval_misses_threshold")


def test_a_verdict_outside_fail_on_passes_the_step_but_keeps_its_exit_code_output(action: ActionRun, gh: FakeGitHub) -> None:
    action.project.write(cases=labelled_cases(100, 85), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    result = action(**{"fail-on": "FAIL, BLOCKED"})
    assert result.code == 0
    assert result.outputs["verdict"] == "INSUFFICIENT_EVIDENCE" and result.outputs["exit-code"] == "4"
    assert result.annotations("error") == []
    [warning] = result.annotations("warning")
    assert warning.startswith("::warning file=release.yaml,line=")
    assert gh.requests[0].body["conclusion"] == "neutral"
    assert "This verdict does not fail the job (fail-on: BLOCKED, FAIL)" in result.summary


@pytest.mark.parametrize(("correct", "code"), [(50, ExitCode.FAIL), (85, ExitCode.INSUFFICIENT_EVIDENCE)])
def test_default_fail_on_fails_the_step_with_the_verdicts_code(action: ActionRun, correct: int, code: ExitCode) -> None:
    action.inputs["github-token"] = ""
    action.project.write(cases=labelled_cases(100, correct), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    result = action()
    assert result.code == code and result.outputs["exit-code"] == str(int(code))


def test_fail_on_none_reports_without_failing(action: ActionRun, gh: FakeGitHub) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    result = action(**{"fail-on": "none"})
    assert result.code == 0 and result.outputs["verdict"] == "FAIL"
    assert result.annotations("error") == [] and len(result.annotations("warning")) == 1
    assert gh.requests[0].body["conclusion"] == "neutral"


# ---------------------------------------------------------------- check-run fallbacks


def test_fork_pull_request_falls_back_without_calling_the_api(action: ActionRun, gh: FakeGitHub) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    result = action.pull_request(fork=True)()
    assert gh.requests == []
    assert result.code == ExitCode.FAIL  # the verdict's code: never a failure *because of* the fork
    [notice] = result.annotations("notice")
    assert notice.startswith("::notice title=oloproof%3A check run::no check run: this pull request comes from a fork")
    assert len(result.annotations("error")) == 1
    assert "> **Note:** no check run: this pull request comes from a fork" in result.summary


def test_a_403_falls_back_to_summary_and_annotations_without_failing(action: ActionRun, gh: FakeGitHub) -> None:
    gh.fail_with = 403
    result = action()
    assert result.code == 0 and result.outputs["verdict"] == "PASS"
    assert len(gh.requests) == 1
    [notice] = result.annotations("notice")
    assert "no check run: the token may not create check runs (Resource not accessible by integration)" in notice
    assert "permissions: checks: write" in result.summary.replace("\\", "")


def test_an_unreachable_api_is_a_notice_not_a_failure(action: ActionRun) -> None:
    action.api_url = "http://127.0.0.1:9"  # nothing listens on the discard port
    result = action()
    assert result.code == 0
    [notice] = result.annotations("notice")
    assert "no check run: the Checks API call failed (cannot reach http://127.0.0.1:9" in notice


def test_no_token_means_no_check_run(action: ActionRun, gh: FakeGitHub) -> None:
    result = action(**{"github-token": ""})
    assert result.code == 0 and gh.requests == []
    assert "no check run: github-token is empty" in result.annotations("notice")[0]


def test_annotations_go_to_the_api_in_batches_of_50_and_the_log_is_capped(action: ActionRun, gh: FakeGitHub) -> None:
    rules = "\n".join(f"  - {{id: r{i:03d}, criterion: correct, min: 0.8}}" for i in range(120))
    action.project.write(cases=labelled_cases(100, 50), rules=rules)
    result = action()
    assert result.code == ExitCode.FAIL
    assert [(r.method, r.path) for r in gh.requests] == [
        ("POST", f"/repos/{REPOSITORY}/check-runs"),
        ("PATCH", f"/repos/{REPOSITORY}/check-runs/4242"),
        ("PATCH", f"/repos/{REPOSITORY}/check-runs/4242"),
    ]
    batches = [request.body["output"]["annotations"] for request in gh.requests]
    assert [len(batch) for batch in batches] == [50, 50, 20]
    assert [a["title"] for batch in batches for a in batch] == [f"oloproof: rule r{i:03d} is FAIL" for i in range(120)]
    for request in gh.requests[1:]:
        assert set(request.body) == {"output"}
        assert request.body["output"]["title"] == "FAIL: 0 of 120 rules pass"
    # The log: 10 errors (GitHub shows no more per step), then one notice for the rest.
    errors = result.annotations("error")
    assert len(errors) == 10 and "r000" in errors[0] and "r009" in errors[-1]
    assert result.annotations("notice") == [
        "::notice title=oloproof%3A more findings::110 more finding(s) are not shown as annotations "
        "(GitHub shows at most 10 per level per step): see the job summary."
    ]


def test_a_failure_after_the_check_run_exists_is_reported_as_incomplete(action: ActionRun, gh: FakeGitHub) -> None:
    gh.fail_with, gh.fail_after, gh.fail_message = 500, 1, "Server Error"
    rules = "\n".join(f"  - {{id: r{i:03d}, criterion: correct, min: 0.8}}" for i in range(60))
    action.project.write(cases=labelled_cases(100, 50), rules=rules)
    result = action()
    assert result.code == ExitCode.FAIL and len(gh.requests) == 2
    notices = result.annotations("notice")
    assert any("check run incomplete: the Checks API call failed (HTTP 500: Server Error)" in n for n in notices)


# ---------------------------------------------------------------- inputs


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        ({"fail-on": "FAIL, FAILL"}, "fail-on: unknown verdict 'FAILL' (did you mean 'FAIL'?)"),
        ({"fail-on": "PASS"}, "fail-on: PASS cannot fail the job"),
        ({"fail-on": " "}, "fail-on is empty: name the verdicts that fail the job, or 'none' to never fail it"),
        ({"read-holdout": "yes"}, "read-holdout: expected true or false, got 'yes'"),
        ({"config": "/etc/passwd"}, "config: '/etc/passwd' is absolute; give a path relative to the repository"),
        ({"config": "../../outside.yaml"}, "config: '../../outside.yaml' lies outside the workspace"),
        ({"working-directory": "nope"}, "working-directory: 'nope' is not a directory in the workspace"),
        ({"json-report": "data"}, "json-report: 'data' is a directory"),
        ({"check-name": ""}, "check-name is empty"),
        ({"outputs": "preds.jsonl"}, "outputs: 'preds.jsonl' is not a file in the workspace"),
    ],
)
def test_invalid_inputs_exit_2_with_an_error_line(action: ActionRun, gh: FakeGitHub, inputs: dict[str, str], message: str) -> None:
    result = action(**inputs)
    assert result.code == ExitCode.USAGE
    errors = result.annotations("error")
    assert len(errors) == 1
    assert errors[0].startswith("::error title=oloproof%3A invalid input::")
    assert message.replace("%", "%25") in errors[0]
    assert result.outputs == {"verdict": "ERROR", "exit-code": "2", "report": ""}
    assert gh.requests == []


def test_a_misspelt_input_name_is_an_error_not_a_looser_gate(action: ActionRun) -> None:
    action.extra["INPUT_FAIL_ON"] = "FAIL"  # `fail_on:` instead of `fail-on:`
    result = action()
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    assert "unknown input 'fail_on' (did you mean 'fail-on'?)" in error


def test_every_input_problem_is_reported_at_once(action: ActionRun) -> None:
    result = action(**{"fail-on": "nope", "read-holdout": "maybe"})
    assert result.code == ExitCode.USAGE and len(result.annotations("error")) == 2


def test_a_config_error_points_at_its_line_and_fails_the_check(action: ActionRun, gh: FakeGitHub) -> None:
    text = (action.workspace / "release.yaml").read_text()
    (action.workspace / "release.yaml").write_text(text.replace("testset:", "leakag: required\ntestset:"))
    line = (action.workspace / "release.yaml").read_text().splitlines().index("leakag: required") + 1
    result = action()
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    assert error.startswith(f"::error file=release.yaml,line={line},title=oloproof%3A cannot gate::release.yaml:{line}: leakag:")
    assert "did you mean 'leakage'" in error
    assert result.outputs == {"verdict": "ERROR", "exit-code": "2", "report": ""}
    assert result.summary.startswith("## 🛑 oloproof gate: ERROR")
    [request] = gh.requests
    assert request.body["conclusion"] == "failure" and request.body["output"]["title"] == "ERROR: the gate could not run"
    assert request.body["output"]["annotations"][0]["start_line"] == line


def test_action_yml_declares_exactly_the_inputs_the_entrypoint_reads() -> None:
    import yaml

    from oloproof.action.inputs import INPUTS

    meta = yaml.safe_load((Path(__file__).parents[2] / "action.yml").read_text())
    assert meta["runs"] == {"using": "docker", "image": "Dockerfile"}
    assert list(meta["inputs"]) == list(INPUTS)
    for name, default in INPUTS.items():
        expected = "${{ github.token }}" if name == "github-token" else default
        assert str(meta["inputs"][name]["default"]) == expected, name
        assert meta["inputs"][name]["description"]
    assert set(meta["outputs"]) == OUTPUTS
    assert meta["branding"]["icon"] and meta["branding"]["color"]
    # The composite variant declares the same inputs (and `python`) and the same outputs.
    composite = yaml.safe_load((Path(__file__).parents[2] / "python" / "action.yml").read_text())
    assert composite["runs"]["using"] == "composite"
    assert list(composite["inputs"]) == ["python", *INPUTS]
    for name in INPUTS:
        assert str(composite["inputs"][name]["default"]) == str(meta["inputs"][name]["default"]), name
    assert set(composite["outputs"]) == OUTPUTS
    assert all(out["value"] == f"${{{{ steps.gate.outputs.{name} }}}}" for name, out in composite["outputs"].items())


OUTPUTS = {
    "verdict", "exit-code", "report", "check-url", "failing-rules", "summary", "pages",
    "rules-pass", "rules-fail", "rules-blocked", "rules-insufficient-evidence", "rules-manual-review",
}


# ---------------------------------------------------------------- paths, files, the log


def test_working_directory_makes_paths_repo_relative(tmp_path: Path, fake_github: FakeGitHub) -> None:
    from tests.conftest import Project

    workspace = tmp_path / "workspace"
    project = Project(workspace / "models" / "loan")
    project.root.mkdir(parents=True)
    project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    run = ActionRun(tmp_path, project, api_url=fake_github.url)
    run.workspace = workspace
    result = run(**{"working-directory": "models/loan", "json-report": "out/gate.json"})
    assert result.code == ExitCode.FAIL
    assert result.outputs["report"] == "models/loan/out/gate.json"
    assert (workspace / "models/loan/out/gate.json").is_file()
    assert result.annotations("error")[0].startswith("::error file=models/loan/release.yaml,line=")
    assert fake_github.requests[0].body["output"]["annotations"][0]["path"] == "models/loan/release.yaml"


def test_output_text_is_wrapped_in_stop_commands(action: ActionRun) -> None:
    # A failed system's stderr is text the terminal report quotes line by line (a rule id can no
    # longer hold a command: RULE_ID_PATTERN, pinned in tests/cli/test_bad_input.py).
    crash = "import sys; sys.stderr.write('::add-mask::x\\n##[error]y\\n'); sys.exit(3)"
    action.project.write(cases=labelled_cases(100, 50), command=json.dumps([sys.executable, "-c", crash]))
    result = action(**{"github-token": ""})
    assert "\n  | \\x3a:add-mask::x\n  | #\\x23[error]y\n" in result.stdout  # printed, escaped ...
    assert any(line.startswith("::stop-commands::") for line in result.stdout.splitlines())
    assert not any(line.startswith(("::add-mask::", "::error::y")) for line in result.commands)  # ... never acted on


@pytest.mark.parametrize("rule_id", ["acc\u202eSSAP", "acc##[error]x", "ok\U0001f600", "a\u200bb", "::add-mask::x"])
def test_a_hostile_rule_id_is_refused_and_quoted_inert(action: ActionRun, rule_id: str) -> None:
    """Bidi controls, zero-width, emoji, ``##[`` or a leading ``::`` in a rule id: refused (exit 2)
    by RULE_ID_PATTERN, and the error that quotes it is escaped (oloproof.inert) in the annotation
    and the job summary."""
    action.project.write(cases=labelled_cases(100, 50), rules=f"  - {{id: {json.dumps(rule_id)}, criterion: correct, min: 0.8}}")
    result = action(**{"github-token": ""})
    assert result.code == ExitCode.USAGE and result.outputs["verdict"] == "ERROR"
    [error] = result.annotations("error")
    assert "policy.rules[0].id: '" in error and "' is not a valid rule id: 1 to 100 characters" in error
    raw = [ch for ch in "\u202e\u200b\U0001f600" if ch in rule_id]
    for text in (error, result.summary):
        assert not [ch for ch in raw if ch in text], text
        assert "##[" not in text
    assert not any(line.startswith("::add-mask::") for line in result.commands)


def test_imported_outputs_are_gated_instead_of_running_the_system(action: ActionRun) -> None:
    preds = action.workspace / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(100)))
    text = (action.workspace / "release.yaml").read_text()
    (action.workspace / "release.yaml").write_text(text.replace("  command:", "  # command:"))
    result = action(outputs="preds.jsonl", **{"github-token": ""})
    assert result.code == 0, result.stdout
    assert "imported 100/100 outputs from preds.jsonl as run" in result.stdout
    assert "imported from <code>preds.jsonl</code>" in result.summary


def test_an_oversized_summary_is_trimmed_and_the_full_one_kept(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    from oloproof.report import markdown

    monkeypatch.setattr(markdown, "SUMMARY_LIMIT", 3000)
    rules = "\n".join(f"  - {{id: r{i:03d}, criterion: correct, min: 0.8}}" for i in range(40))
    action.project.write(cases=labelled_cases(100, 50), rules=rules)
    result = action(**{"github-token": ""})
    assert len(result.summary.encode()) <= 3000
    assert "> **Trimmed:**" in result.summary and "<code>oloproof-report.md</code>" in result.summary
    full = (action.workspace / "oloproof-report.md").read_text()
    assert all(f"r{i:03d}" in full for i in range(40))


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root (the container runs as root)")
def test_files_written_to_the_workspace_are_given_to_its_owner(action: ActionRun) -> None:
    os.chown(action.workspace, 1001, 1001)
    for path in action.workspace.rglob("*"):
        os.chown(path, 1001, 1001)
    result = action(**{"github-token": ""})
    assert result.code == 0
    written = list(action.workspace.rglob("*"))
    assert any(path.name == "run.json" for path in written) and (action.workspace / "oloproof-report.json") in written
    assert {(path.stat().st_uid, path.stat().st_gid) for path in written} == {(1001, 1001)}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_the_workspace_is_trusted_by_git_before_any_git_call(action: ActionRun) -> None:
    env = {"HOME": str(action.tmp / "home"), "PATH": os.environ["PATH"]}
    action(**{"github-token": ""})  # the workspace is this user's (the composite action): git trusts it already
    listed = subprocess.run(["git", "config", "--global", "--get-all", "safe.directory"], env=env, capture_output=True, text=True)
    assert listed.stdout.splitlines() == []
    if os.geteuid() != 0:
        return
    os.chown(action.workspace, 1001, 1001)  # the Docker action: root in the container, the runner's uid outside
    action(**{"github-token": ""})
    listed = subprocess.run(["git", "config", "--global", "--get-all", "safe.directory"], env=env, capture_output=True, text=True)
    assert listed.stdout.splitlines() == [str(action.workspace)]
    action(**{"github-token": ""})  # idempotent: not added twice
    listed = subprocess.run(["git", "config", "--global", "--get-all", "safe.directory"], env=env, capture_output=True, text=True)
    assert listed.stdout.splitlines() == [str(action.workspace)]


# ---------------------------------------------------------------- holdout reads


def with_holdout(action: ActionRun, budget: int = 20) -> None:
    from tests.conftest import write_cases

    cases = [{**case, "source": "holdout"} for case in labelled_cases(60, 54, prefix="h")]  # no dev case in it
    write_cases(action.workspace / "evals/holdout/cases.jsonl", cases)
    text = (action.workspace / "release.yaml").read_text()
    (action.workspace / "release.yaml").write_text(text + f"holdout: {{cases: evals/holdout/cases.jsonl, budget: {budget}}}\n")


def test_a_holdout_read_on_a_pull_request_is_refused(action: ActionRun, gh: FakeGitHub) -> None:
    with_holdout(action)
    result = action.pull_request()(**{"read-holdout": "true", "holdout-reason": "try it"})
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    assert "read-holdout: true on a pull_request event is refused" in error


def test_a_holdout_read_without_a_reason_is_refused(action: ActionRun) -> None:
    with_holdout(action)
    result = action(**{"read-holdout": "true", "github-token": ""})
    assert result.code == ExitCode.USAGE
    assert "read-holdout: true needs a reason" in result.annotations("error")[0]


def test_a_holdout_read_needs_a_declared_holdout(action: ActionRun) -> None:
    result = action.release()(**{"read-holdout": "true", "github-token": ""})
    assert result.code == ExitCode.USAGE
    assert "read-holdout: true, but release.yaml declares no holdout" in result.annotations("error")[0]


def test_a_release_reads_the_holdout_once_with_the_tag_as_reason(action: ActionRun, gh: FakeGitHub) -> None:
    with_holdout(action)
    result = action.release("v2.0.1")(**{"read-holdout": "true"})
    assert result.code == 0, result.stdout
    log = (action.workspace / "evals/holdout/READS.log").read_text()
    [entry] = [line for line in log.splitlines() if line.startswith("read ")]
    assert 'reason="release v2.0.1"' in entry and "who=octocat" in entry and "commit=111111111111" in entry
    assert "score=0.900 (54/60)" in entry
    assert "| Holdout read | holdout score: 0.900 (54/60), 95% interval" in result.summary
    assert "appended to evals/holdout/READS.log (run 1 of 20 in budget)" in result.summary
    assert "| holdout | 1 of 20 reads used, 19 left; log intact" in result.summary  # refreshed after the read
    assert not any(f"h{i:05d}" in result.summary + result.stdout for i in range(60))  # no holdout case ids anywhere
    report = json.loads((action.workspace / "oloproof-report.json").read_text())
    [read] = [check for check in report["checks"] if check["name"] == "holdout-read"]
    assert read["data"]["read"] is True and read["data"]["budget"]["used"] == 1


def test_the_holdout_reason_input_wins_over_the_event(action: ActionRun) -> None:
    with_holdout(action)
    result = action.release("v2.0.1")(**{"read-holdout": "true", "holdout-reason": "weekly  check\nof drift", "github-token": ""})
    assert result.code == 0, result.stdout
    assert 'reason="weekly check of drift"' in (action.workspace / "evals/holdout/READS.log").read_text()


def test_a_workflow_dispatch_reason_is_used(action: ActionRun) -> None:
    with_holdout(action)
    action.event_name, action.event = "workflow_dispatch", {"inputs": {"reason": "baseline re-measurement"}}
    result = action(**{"read-holdout": "true", "github-token": ""})
    assert result.code == 0, result.stdout
    assert 'reason="baseline re-measurement"' in (action.workspace / "evals/holdout/READS.log").read_text()


def test_a_spent_budget_blocks_the_release(action: ActionRun, gh: FakeGitHub) -> None:
    with_holdout(action, budget=1)
    assert action.release("v1")(**{"read-holdout": "true"}).code == 0
    gh.requests.clear()
    result = action.release("v2")(**{"read-holdout": "true"})
    assert result.code == ExitCode.BLOCKED
    assert result.outputs["verdict"] == "BLOCKED" and result.outputs["exit-code"] == "3"
    [error] = result.annotations("error")
    assert error.startswith("::error file=release.yaml,line=") and "title=oloproof%3A Holdout read is BLOCKED" in error
    assert "holdout_budget_spent" in error
    log = (action.workspace / "evals/holdout/READS.log").read_text()
    assert sum(1 for line in log.splitlines() if line.startswith("read ")) == 1  # the refused read left no entry
    assert gh.requests[0].body["conclusion"] == "failure"


def test_a_failing_gate_does_not_spend_holdout_budget(action: ActionRun) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    with_holdout(action)
    result = action.release()(**{"read-holdout": "true", "github-token": ""})
    assert result.code == ExitCode.FAIL
    assert "| Holdout read | not read: the gate is FAIL on the dev set | — |" in result.summary
    assert not (action.workspace / "evals/holdout/READS.log").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown needs root (the container runs as root)")
def test_the_holdout_log_is_given_to_the_workspace_owner(action: ActionRun) -> None:
    with_holdout(action)
    for path in [action.workspace, *action.workspace.rglob("*")]:
        os.chown(path, 1001, 1001)
    assert action.release()(**{"read-holdout": "true", "github-token": ""}).code == 0
    written = list(action.workspace.rglob("*"))
    assert action.workspace / "evals/holdout/READS.log" in written
    assert {path.lstat().st_uid for path in written} == {1001}
