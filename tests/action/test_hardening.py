"""The action under hostile or broken surroundings: a broken API, a malformed token, config text
that looks like a workflow command, PR runs without a payload, events that may not read the
holdout, and more annotations than GitHub shows. Same fakes as test_entrypoint.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from tests.action.conftest import HEAD_SHA, REPOSITORY, SHA, TOKEN, ActionResult, ActionRun, FakeGitHub
from tests.action.test_entrypoint import with_holdout
from tests.conftest import labelled_cases


@pytest.fixture
def gh(action: ActionRun, fake_github: FakeGitHub) -> FakeGitHub:
    action.api_url = fake_github.url
    return fake_github


def unprotected(result: ActionResult) -> list[str]:
    return result.unprotected


def runner_commands(result: ActionResult) -> list[str]:
    """Lines the runner would take as commands: ``::`` after trimming, or ``##[`` anywhere."""
    return [line for line in unprotected(result) if line.strip().startswith("::") or "##[" in line]


def break_config(action: ActionRun) -> None:
    text = (action.workspace / "release.yaml").read_text()
    (action.workspace / "release.yaml").write_text(text.replace("testset:", "leakag: required\ntestset:"))


# ---------------------------------------------------------------- 1. a broken Checks API never crashes the gate

BROKEN_REPLIES = {
    "garbage status line": b"GARBAGE\r\n\r\n",
    "body shorter than Content-Length": b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"id\": 1",
    "error body shorter than Content-Length": b"HTTP/1.1 500 Oops\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{",
    "not UTF-8": b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 4\r\n\r\n\xff\xfe\xfd\xfc",
}


@pytest.mark.parametrize("reply", BROKEN_REPLIES.values(), ids=list(BROKEN_REPLIES))
def test_a_broken_http_reply_falls_back_to_summary_and_annotations(action: ActionRun, gh: FakeGitHub, reply: bytes) -> None:
    gh.raw_reply = reply
    result = action()
    assert result.code == 0, result.stdout
    assert {k: result.outputs[k] for k in ("verdict", "exit-code", "report")} == {"verdict": "PASS", "exit-code": "0", "report": "oloproof-report.json"}
    assert result.summary.startswith("## ✅ oloproof gate: PASS\n")  # the real summary, not an error one
    assert "> **Note:** no check run: the Checks API call failed (" in result.summary
    [notice] = result.annotations("notice")
    assert notice.startswith("::notice title=oloproof%3A check run::no check run: the Checks API call failed (")
    assert result.annotations("error") == []


@pytest.mark.parametrize("reply", BROKEN_REPLIES.values(), ids=list(BROKEN_REPLIES))
def test_a_broken_http_reply_during_a_config_error_keeps_the_config_error(action: ActionRun, gh: FakeGitHub, reply: bytes) -> None:
    gh.raw_reply = reply
    break_config(action)
    result = action()
    assert result.code == ExitCode.USAGE
    assert result.outputs == {"verdict": "ERROR", "exit-code": "2", "report": ""}
    [error] = result.annotations("error")
    assert "title=oloproof%3A cannot gate::" in error and "leakag" in error
    [notice] = result.annotations("notice")
    assert "no check run: the Checks API call failed (" in notice
    assert result.summary.startswith("## 🛑 oloproof gate: ERROR") and "internal error" not in result.summary


def test_a_bug_while_reporting_a_config_error_exits_70_not_1(action: ActionRun, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof.action.publish

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom in the report")

    monkeypatch.setattr(oloproof.action.publish, "publish_check_run", broken)
    break_config(action)
    result = action()
    assert result.code == ExitCode.INTERNAL
    [internal] = [line for line in result.annotations("error") if "internal error" in line]
    assert internal.startswith("::error title=oloproof%3A internal error::internal error (a bug in oloproof, not in your files): RuntimeError")
    assert "Traceback" in result.stdout and not any("Traceback" in line for line in unprotected(result))
    assert result.outputs["exit-code"] == "70"


@pytest.mark.parametrize("exc", [SystemExit(1), ValueError("x"), MemoryError()])
def test_nothing_escapes_main_even_before_the_session_exists(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, exc: BaseException
) -> None:
    from oloproof.action.github import ActionEnv

    def broken(environ: object) -> None:
        raise exc

    monkeypatch.setattr(ActionEnv, "from_environ", staticmethod(broken))
    result = action()
    assert result.code == ExitCode.INTERNAL
    [error] = result.annotations("error")
    assert error.startswith("::error title=oloproof%3A internal error::internal error")
    assert "Traceback" not in result.stdout


def test_an_error_inside_the_internal_error_report_still_exits_70(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof.action.publish

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError("summary file gone")

    monkeypatch.setattr(oloproof.action.publish, "append_summary", broken)
    result = action(**{"github-token": ""})
    assert result.code == ExitCode.INTERNAL
    assert result.annotations("error")[-1].startswith("::error title=oloproof%3A internal error::")


def test_the_checks_client_turns_every_transport_failure_into_its_api_error(fake_github: FakeGitHub) -> None:
    from oloproof.action.checks_api import ChecksClient
    from oloproof.action.github import GitHubApiError

    for reply in BROKEN_REPLIES.values():
        fake_github.raw_reply = reply
        with pytest.raises(GitHubApiError):
            ChecksClient(fake_github.url, TOKEN, REPOSITORY).create_check_run({"name": "x"})
    fake_github.raw_reply = None
    with pytest.raises(GitHubApiError) as caught:  # http.client refuses the header: its text would quote the token
        ChecksClient(fake_github.url, "ghs_one\nsecret_two", REPOSITORY).create_check_run({"name": "x"})
    assert "ghs_one" not in str(caught.value) and "secret_two" not in str(caught.value) and "Bearer" not in str(caught.value)


# ---------------------------------------------------------------- 2. a malformed token is never echoed


@pytest.mark.parametrize(
    "token", ["ghs_abcd1234\nsecret_tail", "ghs_abcd1234 secret_tail", "ghs_abcd1234\x01secret_tail", "ghs_abcd1234\u00e9secret_tail"]
)
def test_a_malformed_token_is_an_input_error_that_never_shows_it(action: ActionRun, gh: FakeGitHub, token: str) -> None:
    result = action(**{"github-token": token})
    assert result.code == ExitCode.USAGE
    assert result.outputs == {"verdict": "ERROR", "exit-code": "2", "report": ""}
    [error] = result.annotations("error")
    assert error.startswith("::error title=oloproof%3A invalid input::github-token: the value holds whitespace")
    assert "(the value is not shown)" in error
    assert gh.requests == []
    for piece in ("ghs_abcd1234", "secret_tail", "Bearer"):
        assert piece not in result.summary
        assert all(line.startswith("::add-mask::") for line in result.stdout.splitlines() if piece in line), piece


def test_the_token_is_masked_before_anything_else_is_printed(action: ActionRun, gh: FakeGitHub) -> None:
    result = action()
    assert result.stdout.splitlines()[0] == f"::add-mask::{TOKEN}"
    assert result.code == 0 and len(gh.requests) == 1


def test_an_outer_newline_around_the_token_is_trimmed_not_refused(action: ActionRun, gh: FakeGitHub) -> None:
    result = action(**{"github-token": f"{TOKEN}\n"})
    assert result.code == 0, result.stdout
    assert gh.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_an_internal_error_never_quotes_the_token(action: ActionRun, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof.action.main

    def leaky(*args: object, **kwargs: object) -> None:
        raise ValueError(f"Invalid header value b'Bearer {TOKEN}'")

    monkeypatch.setattr(oloproof.action.main, "run_gate", leaky)
    result = action()
    assert result.code == ExitCode.INTERNAL
    assert TOKEN not in result.summary
    assert [line for line in result.stdout.splitlines() if TOKEN in line] == [f"::add-mask::{TOKEN}"]


# ---------------------------------------------------------------- 3. config text never becomes a workflow command

HOSTILE_VERSIONS = {
    "newlines": '"v1\\n::add-mask::ver\\n::error::injected"',
    "legacy command": '"v1 ##[error]injected"',
    "carriage return": '"v1\\r::error::injected"',
}


@pytest.mark.parametrize("version", HOSTILE_VERSIONS.values(), ids=list(HOSTILE_VERSIONS))
def test_a_hostile_system_version_is_printed_but_never_acted_on(action: ActionRun, version: str) -> None:
    action.project.write(cases=labelled_cases(100, 100), rules="  - {id: accurate, criterion: correct, min: 0.9}", version=version)
    preds = action.workspace / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(100)))
    result = action(outputs="preds.jsonl", **{"github-token": ""})
    assert result.code == 0, result.stdout
    assert "imported 100/100 outputs from preds.jsonl as run" in result.stdout
    assert "injected" in result.stdout  # printed ...
    assert not any("injected" in line or "::add-mask::ver" in line for line in runner_commands(result))  # ... never acted on


def test_a_hostile_check_name_is_printed_but_never_acted_on(action: ActionRun, gh: FakeGitHub) -> None:
    result = action(**{"check-name": "gate ##[add-mask]abc"})
    assert result.code == 0 and gh.requests[0].body["name"] == "gate ##[add-mask]abc"
    assert "check run 'gate ##[add-mask]abc' created" in result.stdout
    assert not any("##[" in line for line in runner_commands(result))


def test_every_plain_line_the_action_prints_is_inert(action: ActionRun, gh: FakeGitHub) -> None:
    from oloproof.report.annotations import inert

    result = action()
    plain = [line for line in unprotected(result) if not line.startswith("::")]
    assert plain and all(inert(line) for line in plain)


# ---------------------------------------------------------------- 4. flip rates nobody reads are in the summary


def test_the_summary_reports_a_flip_rate_no_rule_reads(action: ActionRun) -> None:
    action.project.write(
        cases=labelled_cases(60, 60), rules="  - {id: accurate, criterion: correct, min: 0.9}",
        evaluators="  - {type: label_match, field: label}\n  - {type: metamorphic_relation, transform: noise, relation: same_label, field: label}",
        extra="metamorphic:\n  transforms:\n    - name: noise\n      field: answer\n      perturb: {kind: numeric_noise, scale: 0.6, seed: 7}\n"
        "    - name: quiet\n      field: answer\n      perturb: {kind: numeric_noise, scale: 0.1, seed: 1}\n",
    )
    result = action(**{"github-token": ""})
    assert result.code == 0, result.stdout
    info = json.loads((action.workspace / "oloproof-report.json").read_text())["criteria"]["flips_under_noise"]["details"]["metamorphic"]
    assert info["answered"] > 0
    assert "### Metamorphic flip rates" in result.summary
    row = (
        f"| <code>noise</code><br><sub>numeric&#95;noise on answer</sub> | <code>flips&#95;under&#95;noise</code> | "
        f"{info['flip_rate']:.3f} | {info['flips']}/{info['answered']} | {info['not_applicable']} | declared | none (reported only) |"
    )
    assert row in result.summary
    assert "| <code>quiet</code> | — | — | — | — | no metamorphic&#95;relation evaluator compares outputs under it | — |" in result.summary
    assert "| Metamorphic transforms | declared: noise, quiet; flip rates below | — |" in result.summary


def test_the_flip_rate_rows_name_each_label_state() -> None:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.report import markdown

    def outcome(criterion: str, transform: str, status: str, missing: int) -> CriterionOutcome:
        info = {"transform": transform, "kind": "blur", "input_field": "image", "flip_rate": 0.25, "flips": 3,
                "answered": 12, "missing": missing, "not_applicable": 2, "status": status}
        return CriterionOutcome(criterion=criterion, kind="binary", values=np.ones(12), details={"metamorphic": info})

    class Release:
        metamorphic = None
        evaluators = ()

    class Rule:
        criterion, rule_id = "flips_under_b", "robust"

    result = type("R", (), {})()
    result.release, result.rules = Release(), [Rule()]
    result.outcomes = {
        "flips_under_a": outcome("flips_under_a", "a", "changes_meaning", 0),
        "flips_under_b": outcome("flips_under_b", "b", "validated", 1),
        "flips_under_c": outcome("flips_under_c", "c", "unlabelled", 0),
    }
    text = markdown._metamorphic_block(result).full()
    assert "| 0.250 | 3/12 | 2 | changes meaning | none (reported only) |" in text
    assert "| 0.250 | 3/12 (1 missing) | 2 | validated | <code>robust</code> |" in text
    assert "| unlabelled |" in text


# ---------------------------------------------------------------- 5. a PR run without a payload posts no check run


@pytest.mark.parametrize(
    ("event_name", "event", "missing_file"),
    [
        ("pull_request", None, True),
        ("pull_request_target", {"number": 7}, False),
        ("pull_request_review", {"review": {"id": 1}}, False),
        ("issue_comment", {"issue": {"number": 7, "pull_request": {"url": "https://api.github.com/x"}}}, False),
    ],
)
def test_a_pull_request_run_without_the_head_sha_posts_no_check_run(
    action: ActionRun, gh: FakeGitHub, event_name: str, event: dict[str, object] | None, missing_file: bool
) -> None:
    action.event_name = event_name
    action.event = event or {}
    if missing_file:
        action.extra["GITHUB_EVENT_PATH"] = str(action.tmp / "no-such-event.json")
    result = action()
    assert result.code == 0, result.stdout
    assert gh.requests == []  # never on GITHUB_SHA, the merge commit
    [notice] = result.annotations("notice")
    assert notice.startswith(f"::notice title=oloproof%3A check run::no check run: this {event_name} run's event payload does not name")
    assert "no check run: this" in result.summary


def test_a_pull_request_review_posts_on_the_head_sha(action: ActionRun, gh: FakeGitHub) -> None:
    action.pull_request()
    action.event_name = "pull_request_review"
    assert action().code == 0
    assert gh.requests[0].body["head_sha"] == HEAD_SHA


def test_a_merge_group_posts_on_the_groups_head(action: ActionRun, gh: FakeGitHub) -> None:
    action.event_name, action.event = "merge_group", {"merge_group": {"head_sha": HEAD_SHA}}
    assert action().code == 0
    assert gh.requests[0].body["head_sha"] == HEAD_SHA


def test_an_issue_comment_outside_a_pull_request_posts_on_github_sha(action: ActionRun, gh: FakeGitHub) -> None:
    action.event_name, action.event = "issue_comment", {"issue": {"number": 3}}
    assert action().code == 0
    assert gh.requests[0].body["head_sha"] == SHA


def test_a_config_error_on_a_pr_run_without_payload_posts_no_check_run(action: ActionRun, gh: FakeGitHub) -> None:
    action.event_name, action.extra["GITHUB_EVENT_PATH"] = "pull_request", str(action.tmp / "none.json")
    break_config(action)
    result = action()
    assert result.code == ExitCode.USAGE and gh.requests == []


# ---------------------------------------------------------------- 6. holdout reads only on an allow-list of events

REFUSED_EVENTS = {
    "merge_group": {"merge_group": {"head_sha": HEAD_SHA}},
    "pull_request_review": {"pull_request": {"head": {"sha": HEAD_SHA, "repo": {"full_name": REPOSITORY}}}},
    "pull_request_review_comment": {"pull_request": {"head": {"sha": HEAD_SHA, "repo": {"full_name": REPOSITORY}}}},
    "issue_comment": {"issue": {"number": 7, "pull_request": {"url": "https://api.github.com/x"}}},
    "workflow_run": {},
    "": {},
}


@pytest.mark.parametrize(("event_name", "event"), REFUSED_EVENTS.items(), ids=[name or "no-event" for name in REFUSED_EVENTS])
def test_a_holdout_read_is_refused_outside_the_allowed_events(
    action: ActionRun, gh: FakeGitHub, event_name: str, event: dict[str, object]
) -> None:
    with_holdout(action)
    action.event_name, action.event = event_name, event
    result = action(**{"read-holdout": "true", "holdout-reason": "try it"})
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    assert "is refused: holdout reads run only on release, push, workflow_dispatch, schedule events" in error
    assert not (action.workspace / "evals/holdout/READS.log").exists()


def test_a_scheduled_holdout_read_with_a_reason_is_allowed(action: ActionRun) -> None:
    with_holdout(action)
    action.event_name, action.event = "schedule", {"schedule": "0 3 * * 1"}
    result = action(**{"read-holdout": "true", "holdout-reason": "weekly drift check", "github-token": ""})
    assert result.code == 0, result.stdout
    assert 'reason="weekly drift check"' in (action.workspace / "evals/holdout/READS.log").read_text()


# ---------------------------------------------------------------- 7. every annotation is capped


def test_input_errors_are_capped_and_all_listed_in_the_summary(action: ActionRun) -> None:
    for i in range(15):
        action.extra[f"INPUT_BOGUS{i:02d}"] = "x"
    result = action()
    assert result.code == ExitCode.USAGE
    assert len(result.annotations("error")) == 10
    [notice] = result.annotations("notice")
    assert notice.startswith("::notice title=oloproof%3A more findings::5 more finding(s) are not shown")
    assert all(f"unknown input &#39;bogus{i:02d}&#39;" in result.summary or f"unknown input 'bogus{i:02d}'" in result.summary for i in range(15))


def test_event_payload_warnings_share_the_cap_with_rule_warnings(action: ActionRun) -> None:
    rules = "\n".join(f"  - {{id: r{i:02d}, criterion: correct, min: 0.8}}" for i in range(12))
    action.project.write(cases=labelled_cases(100, 85), rules=rules)  # INSUFFICIENT_EVIDENCE: warnings outside fail-on
    action.extra["GITHUB_EVENT_PATH"] = str(action.tmp / "missing.json")
    result = action(**{"fail-on": "FAIL", "github-token": ""})
    assert result.code == 0
    warnings = result.annotations("warning")
    assert len(warnings) == 10
    assert warnings[0].startswith("::warning title=oloproof%3A event payload::GITHUB_EVENT_PATH")
    assert any("more finding(s) are not shown" in line for line in result.annotations("notice"))
    assert len(result.annotations("notice")) <= 10


def test_a_capped_call_respects_what_the_step_already_showed() -> None:
    from oloproof.report import annotations as ann

    items = [ann.Annotation(level="warning", title=f"w{i}", message="m") for i in range(5)]
    kept = ann.capped(items, used={"warning": 8})
    assert [a.title for a in kept if a.level == "warning"] == ["w0", "w1"]
    assert kept[-1].message.startswith("3 more finding(s)")
    assert ann.capped(items, used={"warning": 10, "notice": 10}) == []


def test_safe_line_protects_only_what_could_be_a_command() -> None:
    from oloproof.report.annotations import safe_line

    assert safe_line("verdict: PASS") == "verdict: PASS\n"
    for hostile in ("::error::x", "  ::error::x", "a ##[error]x", "a\n::error::x", "a\r::error::x", "a\u2028b", "a\x1bb"):
        assert safe_line(hostile).startswith("::stop-commands::"), hostile


def test_docs_name_the_holdout_allow_list() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "action.md").read_text()
    assert "release, push, workflow_dispatch, schedule" in docs


@pytest.mark.parametrize("name", ["README", "docs/guide"])
def test_the_full_summary_never_replaces_a_file_the_action_did_not_write(action: ActionRun, name: str) -> None:
    # RT-M4: json-report: README.json wrote the full summary over README.md.
    readme = action.workspace / f"{name}.md"
    readme.parent.mkdir(parents=True, exist_ok=True)
    readme.write_text("# Loan model\n\nHow to use it.\n")
    result = action(**{"github-token": "", "json-report": f"{name}.json"})
    assert result.code == ExitCode.USAGE
    assert readme.read_text() == "# Loan model\n\nHow to use it.\n"
    assert not (action.workspace / f"{name}.json").exists()
    assert (
        f"{name}.md exists and is not a summary oloproof wrote: the full Markdown summary is kept beside the JSON "
        "report (its .md), and a file the action did not write is never replaced; choose another json-report path"
    ) in result.summary


def test_an_earlier_full_summary_is_replaced(action: ActionRun) -> None:
    assert action(**{"github-token": "", "json-report": "gate.json"}).code == ExitCode.PASS
    first = (action.workspace / "gate.md").read_text()
    assert first.startswith("## ✅ oloproof gate: PASS")
    assert action(**{"github-token": "", "json-report": "gate.json"}).code == ExitCode.PASS
    assert (action.workspace / "gate.md").read_text().startswith("## ✅ oloproof gate: PASS")


def test_a_slow_system_gets_heartbeat_lines_and_sentences_are_not_hard_wrapped(action: ActionRun) -> None:
    # 19-D10: the action ran the system quietly (no line for as long as it took) and wrapped the
    # report's prose at 140 columns in the log.
    action.project.write(cases=labelled_cases(100, 100), system_args="--sleep 1.2")
    action.extra["OLOPROOF_HEARTBEAT_S"] = "0.3"
    result = action(**{"github-token": ""})
    assert result.code == ExitCode.PASS
    beats = [line for line in result.stdout.splitlines() if "still working" in line]
    assert beats and beats[0].startswith("oloproof: running the gate: still working, "), result.stdout
    assert all(line.endswith("s") and "::" not in line for line in beats)
    [sentence] = [line for line in result.stdout.splitlines() if line.startswith("  - Files the system reads")]
    assert len(sentence) > 140 and sentence.endswith("the default `reuse: baseline-only`)."), sentence
