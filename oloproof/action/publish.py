"""What the action publishes: the JSON report, the job summary (trimmed under GitHub's limit),
annotations, a check run when the token allows (a notice otherwise), the step outputs — and the
same for a gate that could not run (an error annotation at its line, exit 2 or 70)."""

from __future__ import annotations

import json
import re
import sys
import traceback
from pathlib import Path
from typing import Any

from oloproof import __version__
from oloproof.action import handoff, pages
from oloproof.action.checks_api import CheckRunRequest, ChecksClient, publish_check_run
from oloproof.action.github import GitHubApiError, append_summary, write_outputs
from oloproof.action.inputs import InputError, Inputs
from oloproof.action.session import Session
from oloproof.errors import ConfigError, DataError, ExitCode, OloproofError, UsageError
from oloproof.exits import where_raised
from oloproof.report import annotations as ann
from oloproof.report import jsonreport, junit, markdown, pr_evidence
from oloproof.result import GateResult
from oloproof.verdicts import Verdict

ERROR_VERDICT = "ERROR"  # the `verdict` output when the gate could not run (exit-code 2 or 70)
CHECK_SUMMARY_LIMIT = 60_000  # bytes; the Checks API takes 65535 characters
UNLIMITED = 1 << 62
SUMMARY_FILE = "oloproof-summary.md"  # the full summary's file when no JSON report is written
EVIDENCE_ELSEWHERE = "the job summary and the JSON report list every one"


def full_summary_path(inputs: Inputs) -> Path:
    """Where the full Markdown summary is kept: beside the JSON report (its ``.md``), else
    ``SUMMARY_FILE`` in the working directory."""
    report = inputs.json_report
    return report.with_suffix(".md") if report is not None else inputs.working_directory / SUMMARY_FILE


def check_summary_path(path: Path, shown: str) -> None:
    """Refuse, before any work, a full-summary path that holds a file oloproof did not write: the
    user named the JSON report, not its ``.md`` sibling (``json-report: README.json`` must not
    replace README.md). A summary of an earlier gate (its first line ``## … oloproof gate: …``) is
    replaced, as the report itself is."""
    try:
        with path.open("rb") as handle:
            first = handle.readline(512)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        first = b""
    except OSError as exc:
        raise UsageError(f"{shown}: cannot check it ({exc.strerror or exc})") from None
    if first.startswith(b"## ") and b" oloproof gate: " in first:
        return
    raise UsageError(
        f"{shown} exists and is not a summary oloproof wrote: the full Markdown summary is kept beside the JSON "
        "report (its .md), and a file the action did not write is never replaced; choose another json-report path"
    )


def conclusion_of(verdict: Verdict, fail_on: frozenset[Verdict]) -> str:
    """A check run's conclusion: success (PASS), failure (fails the job), neutral (reported only)."""
    if verdict is Verdict.PASS:
        return "success"
    return "failure" if verdict in fail_on else "neutral"


def publish(session: Session, inputs: Inputs, result: GateResult) -> int:
    env = session.env
    report_path = inputs.json_report
    report_text = jsonreport.render(result)
    if report_path is not None:
        session.write(report_path, report_text)
    if inputs.junit is not None:
        session.write(inputs.junit, junit.render(result))
    report = json.loads(report_text)
    found = ann.collect(result, fail_on=inputs.fail_on, path_of=session.repo_path)
    notices: list[str] = []

    check, check_url = check_run(session, inputs, result, found, report=report)
    if check is not None:
        notices.append(check)
    why_not = handoff.FORK_NO_COMMENT if env.is_fork_pr else None
    said = handoff.comment(session, inputs, report, number=env.pr_number, check_url=check_url, why_not=why_not)

    full = markdown.render(result, fail_on=inputs.fail_on, notes=notices, limit=UNLIMITED)
    # The full Markdown is always kept beside the JSON report (the `summary` output names it).
    full_path = full_summary_path(inputs)
    session.write(full_path, full)
    summary = full
    if len(full.encode("utf-8")) > markdown.SUMMARY_LIMIT:
        # Over GitHub's limit the summary would be dropped whole: publish a trimmed one that names the full file.
        summary = markdown.render(
            result,
            fail_on=inputs.fail_on,
            notes=notices,
            limit=markdown.SUMMARY_LIMIT,
            full_report=session.repo_path(full_path),
        )
    append_summary(env, session.redact(summary))
    written, skipped = pages.write_pages(session, result, str(inputs.working_directory))
    if written or skipped:  # named in the summary for upload as an artifact
        append_summary(env, session.redact(pages.pages_markdown(written, skipped)))

    extra = [ann.Annotation(level="notice", title="oloproof: check run", message=note) for note in notices]
    if said is not None:
        extra.append(ann.Annotation(level="notice", title="oloproof: comment", message=said))
    session.annotate([*found, *extra])

    gate_code = int(result.verdict.exit_code)
    write_outputs(
        env,
        {
            "verdict": result.verdict.value,
            "exit-code": str(gate_code),
            "report": (session.repo_path(report_path) or "") if report_path is not None else "",
            **handoff.report_outputs(report, check_url=check_url, summary=session.repo_path(full_path)),
            "pages": "\n".join(written),
        },
    )
    fails = result.verdict in inputs.fail_on
    session.say(
        f"verdict: {result.verdict.value} (exit {gate_code}); "
        + ("it is in fail-on, so the step fails" if fails else "not in fail-on, so the step passes")
    )
    return gate_code if fails else 0


def check_run(
    session: Session, inputs: Inputs, result: GateResult, found: list[ann.Annotation], *, report: dict[str, Any]
) -> tuple[str | None, str | None]:
    """Create the check run: a notice sentence when none (or only part of one) was made, and its URL.
    Its text is the pull request's evidence (what it changed under .oloproof/ and in the gate's
    inputs), rendered as in the summary and the comment: the summary may be trimmed, the text not."""
    env = session.env
    blocked = no_check_run(session, inputs)
    if blocked is not None:
        return blocked or None, None
    passing = sum(1 for rule in result.rules if rule.verdict is Verdict.PASS)
    request = CheckRunRequest(
        name=inputs.check_name,
        head_sha=env.head_sha,
        conclusion=conclusion_of(result.verdict, inputs.fail_on),
        title=f"{result.verdict.value}: {passing} of {len(result.rules)} rules pass",
        summary=markdown.render(result, fail_on=inputs.fail_on, limit=CHECK_SUMMARY_LIMIT, full_report=None),
        text=pr_evidence.section(report, budget=CHECK_SUMMARY_LIMIT, where=EVIDENCE_ELSEWHERE),
        annotations=[annotation.api() for annotation in found if annotation.file is not None],
        details_url=env.run_url,
    )
    try:
        client = ChecksClient(env.api_url, inputs.github_token, env.repository, deadline=session.start_publishing())
    except GitHubApiError as exc:
        return f"no check run: {exc.message}", None
    outcome = publish_check_run(client, request)
    if outcome.skipped is not None:
        return ("check run incomplete: " if outcome.created else "no check run: ") + outcome.skipped, outcome.html_url
    session.say(
        f"check run '{inputs.check_name}' created on {env.head_sha[:12]}"
        + (f": {outcome.html_url}" if outcome.html_url else "")
    )
    return None, outcome.html_url


def no_check_run(session: Session, inputs: Inputs) -> str | None:
    """Why no check run can be made: a notice sentence, "" when there is nowhere to post, None when it can."""
    env = session.env
    if not env.in_actions or not env.repository:
        return ""  # not in GitHub Actions: nothing to post to
    if not inputs.github_token:
        return "no check run: github-token is empty; the job summary and annotations hold the result"
    if env.is_fork_pr:
        return (
            "no check run: this pull request comes from a fork, whose token is read-only; "
            "the job's own status, this summary and the annotations hold the result"
        )
    why = env.no_check_sha()
    if why is not None:
        return f"no check run: {why}; the job's own status, this summary and the annotations hold the result"
    return None


def error_outputs(session: Session, code: ExitCode) -> None:
    write_outputs(session.env, {"verdict": ERROR_VERDICT, "exit-code": str(int(code)), "report": ""})


def report_input_error(session: Session, exc: InputError) -> None:
    """Invalid inputs: one error annotation per problem, a summary listing them, exit 2."""
    session.annotate(
        [ann.Annotation(level="error", title="oloproof: invalid input", message=problem) for problem in exc.problems]
    )
    listed = "".join(f"- {md(session.redact(problem))}\n" for problem in exc.problems)
    append_summary(session.env, f"## 🛑 oloproof gate: ERROR\n\nInvalid inputs, so the gate did not run:\n\n{listed}\n")
    error_outputs(session, ExitCode.USAGE)


def report_error(session: Session, inputs: Inputs | None, exc: OloproofError) -> None:
    """A configuration or data error: an annotation at its line, a short summary, exit 2."""
    file = line = None
    if isinstance(exc, (ConfigError, DataError)):
        file = session.repo_path(exc.path)
        line = exc.line
    message = session.redact(str(exc))
    error = ann.Annotation(level="error", title="oloproof: cannot gate", message=message, file=file, line=line)
    session.annotate([error])
    append_summary(
        session.env,
        "## 🛑 oloproof gate: ERROR\n\nThe gate could not run, so nothing was decided:\n\n"
        f"> {md(message)}\n\n{markdown.prose(ci_hint(session, exc))}\n",
    )
    error_outputs(session, exc.exit_code)
    blocked = "" if inputs is None else no_check_run(session, inputs)
    note = blocked or None
    if blocked is None and inputs is not None:
        try:
            client = ChecksClient(
                session.env.api_url, inputs.github_token, session.env.repository, deadline=session.start_publishing()
            )
        except GitHubApiError as api_error:
            note = f"no check run: {api_error.message}"
        else:
            outcome = publish_check_run(
                client,
                CheckRunRequest(
                    name=inputs.check_name,
                    head_sha=session.env.head_sha,
                    conclusion="failure",
                    title="ERROR: the gate could not run",
                    summary=f"The gate could not run:\n\n> {md(message)}\n",
                    annotations=[error.api()] if file else [],
                    details_url=session.env.run_url,
                ),
            )
            if outcome.skipped is not None:
                note = ("check run incomplete: " if outcome.created else "no check run: ") + outcome.skipped
    if note:
        session.annotate([ann.Annotation(level="notice", title="oloproof: check run", message=note)])


REF_MISSING = re.compile(r"ref '(?P<ref>[^']*)': (no run|there are no|only \d+)")


def ci_hint(session: Session, exc: OloproofError) -> str:
    """What to do next, in the words of where the gate ran: a ref that names no stored run, on a CI
    checkout, means a run that was never committed (or is not on the base branch of a pull request)."""
    match = REF_MISSING.search(str(exc))
    if not session.env.in_actions or match is None:
        return "Fix the file or the input named above; `oloproof gate` reproduces this locally."
    ref = match["ref"]
    on_pr = session.env.pull_request is not None
    where = "the pull request's base commit" if on_pr else f"this checkout ({session.env.sha[:12] or 'its commit'})"
    return (
        f"The run that '{ref}' names is not in .oloproof/runs/ of {where}. A CI job sees only the runs committed to "
        "the repository: a run made on a laptop or in another job is missing until it is committed. Commit it where it "
        "was made (`git add .oloproof/runs/ && git commit`; docs/action.md says what of .oloproof/ to commit), or "
        "make it in this workflow (an earlier step's outputs through the `outputs` input, or "
        "`oloproof run --outputs FILE --version NAME`)"
        + (". On a pull request only runs on the base branch count: merge the run first." if on_pr else ".")
    )


def internal_error(session: Session, exc: BaseException) -> None:
    """A bug: one error annotation, the traceback in a folded group (protected), exit 70."""
    where = where_raised(exc)
    text = " ".join(session.redact(str(exc)).split())
    text = text if len(text) <= 300 else text[:300] + "…"
    message = (
        f"internal error (a bug in oloproof, not in your files): {type(exc).__name__}{': ' + text if text else ''} at "
        f"{where}; "
        f"oloproof {__version__}, Python {sys.version.split()[0]}; please report it with the log"
    )
    session.annotate([ann.Annotation(level="error", title="oloproof: internal error", message=message)])
    session.print("::group::traceback")
    session.print(ann.stop_commands(session.redact("".join(traceback.format_exception(exc)))))
    session.print("::endgroup::")
    append_summary(session.env, f"## 🛑 oloproof gate: ERROR\n\n> {md(message)}\n")
    error_outputs(session, ExitCode.INTERNAL)


def md(text: str) -> str:
    return markdown.esc(text)
