"""The fork-PR recipe end to end, with faked payloads: the untrusted ``pull_request`` job gates and
writes its JSON report (the artifact); a ``workflow_run`` job with ``mode: publish`` publishes it on
``workflow_run.head_sha`` without running the gate, and never lets the report claim more than it says."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.action.conftest import HEAD_SHA, RUN_HTML, SHA, ActionRun, FakeGitHub, hand_over, workflow_run_event
from tests.conftest import labelled_cases


def untrusted_report(action: ActionRun, fake_github: FakeGitHub) -> dict[str, Any]:
    """The first workflow: the fork's pull_request job gates and writes the JSON report."""
    action.api_url = fake_github.url
    action.pull_request(fork=True)
    fake_github.requests.clear()
    result = action()
    assert not any(r.path.endswith("/check-runs") for r in fake_github.requests)  # read-only token: not tried
    assert result.outputs["report"] == "oloproof-report.json"
    fake_github.requests.clear()
    report: dict[str, Any] = json.loads((action.workspace / "oloproof-report.json").read_text())
    return report


def test_the_report_is_published_on_the_prs_head_not_the_default_branch(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub
) -> None:
    report = untrusted_report(action, fake_github)
    assert report["verdict"] == "PASS"
    hand_over(publisher, report)
    result = publisher(comment="true")
    assert result.code == 0, result.stdout
    assert "gating" not in result.stdout  # no gate ran
    assert not (publisher.workspace / ".oloproof").exists()
    posts = [r for r in fake_github.requests if r.method == "POST" and r.path.endswith("/check-runs")]
    assert len(posts) == 1
    body = posts[0].body
    assert body["head_sha"] == HEAD_SHA and body["head_sha"] != SHA  # GITHUB_SHA is the default branch's head
    assert body["conclusion"] == "neutral"  # a PASS the publisher cannot vouch for is never "success"
    assert body["output"]["title"] == "PASS: reported by the pull request's own job, not verified"
    summary = body["output"]["summary"]
    assert "**Untrusted report.**" in summary and f"]({RUN_HTML})" in summary
    assert "may be forged" in summary and "A PASS is shown as neutral, never as success" in summary
    assert "someone/loan-model" in summary
    # The PR is found from the trusted payload (head owner:branch) and must have this head commit.
    assert any(r.method == "GET" and "/pulls?" in r.path and "head=someone%3Afeature" in r.path for r in fake_github.requests)
    comments = fake_github.comments_on(7)
    assert len(comments) == 1 and "**Untrusted report.**" in comments[0]["body"]
    assert result.outputs["verdict"] == "PASS" and result.outputs["check-url"].endswith("/runs/4242")
    assert result.outputs["rules-pass"] == "1" and result.outputs["failing-rules"] == "[]"
    assert "**Untrusted report.**" in result.summary


def test_a_failing_report_fails_the_check_run(action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    report = untrusted_report(action, fake_github)
    hand_over(publisher, report)
    result = publisher()
    assert result.code == 1
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["conclusion"] == "failure" and body["output"]["title"].startswith("FAIL: reported by")
    assert result.outputs["failing-rules"] == '["accurate"]' and result.outputs["rules-fail"] == "1"


def forged(report: dict[str, Any], **change: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(report))
    copy.update(change)
    return copy


def forged_rule(report: dict[str, Any], verdict: str | None = None, **change: Any) -> dict[str, Any]:
    """``report`` with its first rule changed (and its verdict, when given)."""
    copy = forged(report, **({} if verdict is None else {"verdict": verdict, "exit_code": 0 if verdict == "PASS" else 1}))
    copy["rules"][0].update(change)
    return copy


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda r: forged(r, verdict="PASS", exit_code=0), "the report says PASS, but its rules and checks make it FAIL"),
        # Red team RT-M5: no rule that decides, a verdict harsher than the rules make, a blocking check ignored.
        (lambda r: forged(r, verdict="PASS", exit_code=0, rules=[]), "$.rules: the report lists no rule; the gate"),
        (
            lambda r: forged_rule(r, "PASS", advisory=True),
            "$.rules: the report lists only advisory rules; the gate always decides at least one rule",
        ),
        (
            lambda r: forged(r, verdict="BLOCKED", exit_code=3),
            "$.verdict: the report says BLOCKED, but its rules and checks make it FAIL (the worst verdict of its rules "
            "that are not advisory and of its checks, BLOCKED where a check blocks the gate)",
        ),
        (
            lambda r: forged(r, checks=[{**r["checks"][0], "blocks": True}]),
            "the report says FAIL, but its rules and checks make it BLOCKED",
        ),
        (lambda r: forged(r, exit_code=0), "$.exit_code: 0 is not the exit code of FAIL"),
        (lambda r: forged(r, schema="oloproof.gate/9"), '$.schema: must be "oloproof.gate/1"'),
        (lambda r: forged(r, verdict="GREEN"), "$.verdict: must be one of BLOCKED, FAIL, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW, PASS"),
        (lambda r: forged(r, rules="all good"), "$.rules: must be array"),
        (lambda r: {k: v for k, v in r.items() if k != "rules"}, "$: 'rules' is missing"),
        (lambda r: "{not json", "not UTF-8 JSON"),
        (lambda r: "[]", "$: must be object"),
        (lambda r: forged_rule(r, "PASS", advisory="true"), "$.rules[0].advisory: must be boolean"),
        (lambda r: forged_rule(r, accepted="me"), "$.rules[0].accepted: must be object or null"),
    ],
)
def test_a_forged_or_broken_report_is_never_published_as_a_verdict(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub, make: Any, said: str
) -> None:
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    report = untrusted_report(action, fake_github)
    hand_over(publisher, make(report))
    result = publisher(comment="true")
    assert result.code == 2
    assert result.outputs["verdict"] == "ERROR"
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["conclusion"] == "failure" and body["head_sha"] == HEAD_SHA
    assert body["output"]["title"] == "ERROR: the gate job's report is missing or invalid"
    assert said in result.summary.replace("&#58;", ":").replace("&quot;", '"') or said in "".join(result.annotations("error"))
    assert fake_github.comments == {}


def test_a_symlinked_or_missing_report_is_refused(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    result = publisher()
    assert result.code == 2 and "no such file" in result.summary
    secret = publisher.workspace / "elsewhere.json"  # inside the workspace: outside it is an input error
    secret.write_text(json.dumps(untrusted_report(action, fake_github)))
    artifact = publisher.workspace / "artifact" / "oloproof-report.json"
    artifact.parent.mkdir(exist_ok=True)
    os.symlink(secret, artifact)
    result = publisher()
    assert result.code == 2 and "not a regular file" in result.summary
    os.unlink(artifact)
    artifact.parent.rmdir()
    real = publisher.workspace / "real"
    real.mkdir()
    (real / "oloproof-report.json").write_text(secret.read_text())
    os.symlink(real, artifact.parent)
    result = publisher()
    assert result.code == 2 and "a directory on its path is a symlink" in result.summary


def refusal(result: Any, fake_github: FakeGitHub) -> str:
    """The failure check run a refused report gets (exit 2, verdict ERROR): its summary."""
    assert result.code == 2 and result.outputs["verdict"] == "ERROR", result.stdout
    posts = [r for r in fake_github.requests if r.method == "POST" and r.path.endswith("/check-runs")]
    assert len(posts) == 1, result.stdout
    body = posts[0].body
    assert body["conclusion"] == "failure" and body["head_sha"] == HEAD_SHA
    assert body["output"]["title"] == "ERROR: the gate job's report is missing or invalid"
    summary: str = body["output"]["summary"]
    return summary.replace("&#58;", ":")


@pytest.mark.parametrize(
    ("target", "said"),
    [
        ("/etc/passwd", "not a regular file (a symlink or a special file is never read)"),
        ("{outside}/report.json", "not a regular file (a symlink or a special file is never read)"),
        ("{outside}", "not a regular file (a symlink or a special file is never read)"),
        ("{workspace}", "not a regular file (a symlink or a special file is never read)"),
        ("{workspace}/gone.json", "not a regular file (a symlink or a special file is never read)"),
    ],
)
def test_a_report_symlinked_anywhere_gets_a_failure_check_run(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub, tmp_path: Path, target: str, said: str
) -> None:
    """Red team 19-D9: the report path a symlink out of the workspace (to /etc/passwd, to a file or a
    directory elsewhere), or to a directory: never read (good), but refused as an input error, so
    the pull request got no check run at all. A refused report always gets its failure check run."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "report.json").write_text(json.dumps(untrusted_report(action, fake_github)))
    artifact = publisher.workspace / "artifact" / "oloproof-report.json"
    artifact.parent.mkdir()
    os.symlink(target.format(outside=outside, workspace=publisher.workspace), artifact)
    summary = refusal(publisher(), fake_github)
    assert f"artifact/oloproof-report.json: {said}" in summary
    assert "root:" not in summary + publisher.files.joinpath("step_summary").read_text()  # /etc/passwd unread


def test_a_symlinked_directory_out_of_the_workspace_gets_a_failure_check_run(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "oloproof-report.json").write_text(json.dumps(untrusted_report(action, fake_github)))
    os.symlink(outside, publisher.workspace / "artifact")
    summary = refusal(publisher(), fake_github)
    assert "artifact/oloproof-report.json: a directory on its path is a symlink (never followed)" in summary


def test_a_refusal_the_api_does_not_take_says_there_is_no_check_run(publisher: ActionRun, fake_github: FakeGitHub) -> None:
    fake_github.fail_with = 403
    result = publisher()
    assert result.code == 2 and "no such file" in result.summary
    notes = "".join(result.annotations("notice"))
    assert "no check run: the token may not create check runs" in notes
    assert "no check run&#58; the token may not create check runs" in result.summary


def test_a_report_path_out_of_the_workspace_is_still_the_workflows_input_error(publisher: ActionRun) -> None:
    """``json-report: ../x.json`` is the trusted workflow's own mistake, not the artifact's: exit 2 as an
    input error, as before."""
    result = publisher(json_report="../x.json")
    assert result.code == 2 and "json-report: '../x.json' lies outside the workspace" in result.stdout


def test_a_valid_forged_pass_is_shown_as_what_it_is(action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub) -> None:
    """A consistent forged PASS (every listed rule edited to PASS, its numbers with it) cannot be
    told apart: it is published as a neutral claim of the untrusted job, with the trust limits,
    never as success. (Edited to PASS alone, the interval still misses the threshold: refused.)"""
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    report = untrusted_report(action, fake_github)
    for rule in report["rules"]:
        rule["verdict"] = "PASS"
    hand_over(publisher, forged(report, verdict="PASS", exit_code=0))
    result = publisher()
    assert result.code == 2 and "PASS, but its lower bound" in result.summary
    fake_github.requests.clear()
    for rule in report["rules"]:
        rule["interval"].update(low=0.95, high=0.99)
        rule["estimate"] = rule["interval"]["estimate"] = 0.97
    hand_over(publisher, forged(report, verdict="PASS", exit_code=0))
    result = publisher()
    assert result.code == 0
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["conclusion"] == "neutral" and "not verified" in body["output"]["title"]
    assert "which ended success)" in body["output"]["summary"]


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        ({"mode": "publsh"}, "mode: unknown value 'publsh'"),
        ({"json-report": ""}, "mode: publish needs json-report"),
        ({"outputs": "x.jsonl"}, "outputs: not used with mode: publish"),
    ],
)
def test_publish_inputs_are_validated(publisher: ActionRun, inputs: dict[str, str], said: str) -> None:
    result = publisher(**{k.replace("-", "_"): v for k, v in inputs.items()})
    assert result.code == 2 and said in result.stdout


def test_publish_mode_refuses_other_events(publisher: ActionRun) -> None:
    publisher.event_name, publisher.event = "pull_request", {"pull_request": {"number": 7}}
    result = publisher()
    assert result.code == 2 and "mode: publish runs only on workflow_run events (this is pull_request)" in result.stdout


def test_same_repo_pr_found_from_the_payload(action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub) -> None:
    report = untrusted_report(action, fake_github)
    hand_over(publisher, report)
    publisher.event = workflow_run_event(pull_requests=[{"number": 9, "head": {"sha": HEAD_SHA}}])
    fake_github.pulls = []
    result = publisher(comment="true")
    assert result.code == 0 and len(fake_github.comments_on(9)) == 1


def test_no_pr_with_that_head_means_no_comment(action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub) -> None:
    """The head branch moved on (or the PR closed): a comment is never put on a PR whose head is another commit."""
    report = untrusted_report(action, fake_github)
    hand_over(publisher, report)
    fake_github.pulls = [{"number": 7, "head": {"sha": "3" * 40, "label": "someone:feature"}}]
    result = publisher(comment="true")
    assert result.code == 0 and fake_github.comments == {}
    assert any("belongs to no pull request" in line for line in result.annotations("notice"))


@pytest.mark.parametrize(
    "rule_id", ["x\n::set-output name=verdict::PASS", "trailing-newline\n", "x%0A::error::y", "`id`", "a<img>", "cc @octo-org/team", "x" * 101]
)
def test_a_report_whose_rule_id_the_policy_would_refuse_is_never_published(
    action: ActionRun, publisher: ActionRun, fake_github: FakeGitHub, rule_id: str
) -> None:
    """Red team RT-H5: the uploaded report is the fork's text. A rule id the policy would refuse
    (RULE_ID_PATTERN) is refused here too, and never quoted: it would reach the step outputs, the
    check run, the comment and the summary. "trailing-newline\\n" checks that $ means the end of the string."""
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    report = untrusted_report(action, fake_github)
    report["rules"][0]["id"] = rule_id
    hand_over(publisher, report)
    result = publisher(comment="true")
    assert result.code == 2 and result.outputs["verdict"] == "ERROR"
    said = "$.rules[0].id: does not match ^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$"
    assert said in result.summary.replace("&#58;", ":").replace("&#36;", "$") or said in "".join(result.annotations("error"))
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["output"]["title"] == "ERROR: the gate job's report is missing or invalid"
    published = json.dumps(body) + result.summary + json.dumps(result.outputs) + result.stdout
    assert rule_id.strip() not in published and fake_github.comments == {}


def test_failing_rules_never_carries_an_id_outside_the_pattern() -> None:
    """Defence in depth: whatever a report holds, ``failing-rules`` gives only ids the policy accepts."""
    from oloproof.action.handoff import report_outputs

    rules = [
        {"id": "accurate", "verdict": "FAIL"},
        {"id": "x\n::set-output name=verdict::PASS", "verdict": "FAIL"},
        {"id": "fine", "verdict": "PASS"},
        {"id": 7, "verdict": "BLOCKED"},
        {"verdict": "MANUAL_REVIEW"},
    ]
    outputs = report_outputs({"rules": rules}, check_url=None, summary=None)
    assert json.loads(outputs["failing-rules"]) == ["accurate", "invalid-rule-id-1", "invalid-rule-id-3", "invalid-rule-id-4"]


def test_the_schema_accepts_every_report_the_gate_writes() -> None:
    from oloproof.action.report_check import REPORT_SCHEMA, consistency, validate

    gold = json.loads((Path(__file__).parents[1] / "report" / "gold" / "report.json").read_text())
    assert validate(gold, REPORT_SCHEMA) == [] and consistency(gold) == []


def test_a_deeply_nested_or_huge_report_is_refused_without_crashing(publisher: ActionRun) -> None:
    hand_over(publisher, "[" * 100_000 + "]" * 100_000)
    result = publisher()
    assert result.code == 2 and "not UTF-8 JSON" in result.summary
    artifact = publisher.workspace / "artifact" / "oloproof-report.json"
    with artifact.open("wb") as handle:
        handle.truncate(21 * 1024 * 1024)
    result = publisher()
    assert result.code == 2 and "larger than 20 MiB" in result.summary
