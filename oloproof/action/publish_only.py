"""``mode: publish``: the second half of the fork-PR recipe (a ``workflow_run`` job).

The gate ran in the pull request's own job (``pull_request`` event, read-only token) and uploaded
its JSON report as an artifact. This mode runs in a ``workflow_run`` job, which has the base
repository's token, and publishes that report: a check run on the triggering run's commit
(``workflow_run.head_sha``, from the event payload; never ``GITHUB_SHA``, which is the default
branch's head), the sticky comment, the job summary and the step outputs. It runs no gate and no
code of the pull request.

What it can honestly claim: only that the pull request's job uploaded a well-formed report saying
X. That job ran the pull request's code under a workflow the pull request may have edited, so the
report may be forged. Hence:

- the report is read as hostile input (``report_check``): schema, size, no symlink, and consistency
  (a rule that decides, and the verdict its rules and checks make); an invalid or missing report is
  published as a failure that says so, never as a verdict;
- a reported PASS is never published as ``success``: the conclusion is ``neutral`` (a claim, not a
  check), a verdict in ``fail-on`` is ``failure`` (a forged failure harms only its forger);
- every surface (check run title and summary, comment, job summary) says that the report was
  produced by the pull request's untrusted job, names that run, and states these limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from oloproof.action import handoff
from oloproof.action.checks_api import CheckRunRequest, ChecksClient, publish_check_run
from oloproof.action.github import GitHubApiError, append_summary, write_outputs
from oloproof.action.inputs import Inputs
from oloproof.action.prcomment import checks_lines, pr_for_workflow_run, rules_table, safe, verdict_line
from oloproof.action.report_check import read_untrusted_report
from oloproof.action.session import Session
from oloproof.errors import ExitCode, UsageError
from oloproof.report import annotations as ann
from oloproof.report import pr_evidence
from oloproof.verdicts import Verdict

CHECK_LIMIT = 60_000  # characters of a check run's summary (the API takes 65535)
UNTRUSTED_TITLE = "reported by the pull request's own job, not verified"


def banner(run: Mapping[str, Any], head_sha: str) -> str:
    """Who produced the report and what publishing it does not prove (trusted payload fields only)."""
    url = run.get("html_url")
    name = run.get("name")
    head_repo = run.get("head_repository")
    repo = head_repo.get("full_name") if isinstance(head_repo, dict) else None
    conclusion = run.get("conclusion")
    link = (
        f"[{safe(name or 'the triggering run', 80)}]({url})"
        if isinstance(url, str) and url.startswith("https://")
        else safe(name or "the triggering run", 80)
    )
    return (
        f"> **Untrusted report.** Produced by {link} (a {safe(run.get('event') or '?', 40)} run of "
        f"{safe(repo or 'an unknown repository', 100)} on `{head_sha[:12]}`, "
        f"which ended {safe(conclusion or '?', 20)}) "
        "and published here without running the gate. That job ran the pull request's code, under a workflow the "
        "pull request can edit, so this report may be forged: it was checked to be well-formed and consistent, "
        "not re-computed. A PASS is shown as neutral, never as success. The authoritative verdict is the gate "
        "run on trusted code (after merge, or a maintainer-approved run)."
    )


def publish_report(session: Session, inputs: Inputs) -> int:
    env = session.env
    run = env.workflow_run or {}
    head_sha = env.head_sha
    if not head_sha:
        raise UsageError(f"mode: publish: {env.no_check_sha()}")
    assert inputs.json_report is not None  # inputs refuse mode: publish without it
    shown = session.repo_path(inputs.json_report) or str(inputs.json_report)
    report, problems = read_untrusted_report(inputs.json_report, shown, within=env.workspace)
    session.say(f"oloproof: publishing the report {shown} of workflow run {run.get('id', '?')} on {head_sha[:12]}")
    said = banner(run, head_sha)
    if report is None:
        return _refused(session, inputs, head_sha, said, problems)
    verdict = Verdict(report["verdict"])
    fails = verdict in inputs.fail_on
    body = "\n\n".join(
        [
            verdict_line(report, head_sha=head_sha),
            said,
            rules_table(report, budget=CHECK_LIMIT - 4_000),
            "\n".join(checks_lines(report)),
        ]
    )
    notices: list[str] = []
    check_url = None
    if not inputs.github_token:
        notices.append("no check run: github-token is empty")
    else:
        try:
            client = ChecksClient(env.api_url, inputs.github_token, env.repository, deadline=session.start_publishing())
        except GitHubApiError as exc:
            notices.append(f"no check run: {exc.message}")
        else:
            outcome = publish_check_run(
                client,
                CheckRunRequest(
                    name=inputs.check_name,
                    head_sha=head_sha,
                    conclusion="failure" if fails else "neutral",
                    title=f"{verdict.value}: {UNTRUSTED_TITLE}",
                    summary=body,
                    text=pr_evidence.section(
                        report, budget=CHECK_LIMIT - 4_000, where="the gate job's summary lists every one"
                    ),
                    details_url=run.get("html_url") if isinstance(run.get("html_url"), str) else env.run_url,
                ),
            )
            check_url = outcome.html_url
            if outcome.skipped is not None:
                notices.append("no check run: " + outcome.skipped)
            else:
                session.say(
                    f"check run '{inputs.check_name}' created on {head_sha[:12]}"
                    + (f": {check_url}" if check_url else "")
                )
            number = pr_for_workflow_run(client, run, head_sha) if inputs.comment else None
            note = handoff.comment(session, inputs, report, number=number, check_url=check_url, banner=said)
            if note is not None:
                notices.append(note)
    append_summary(env, f"## oloproof: published report\n\n{body}\n" + "".join(f"\n- {safe(n, 400)}" for n in notices))
    session.annotate([ann.Annotation(level="notice", title="oloproof: publish", message=note) for note in notices])
    write_outputs(
        env,
        {
            "verdict": verdict.value,
            "exit-code": str(int(verdict.exit_code)),
            "report": shown,
            **handoff.report_outputs(report, check_url=check_url, summary=None),
        },
    )
    return int(verdict.exit_code) if fails else 0


def _refused(session: Session, inputs: Inputs, head_sha: str, said: str, problems: list[str]) -> int:
    """No valid report: a failure check run saying why (never a verdict), exit 2."""
    env = session.env
    listed = "\n".join(f"- {safe(problem, 400)}" for problem in problems)
    text = f"### 🛑 No verdict: the gate job's report cannot be published\n\n{said}\n\n{listed}\n"
    session.annotate(
        [ann.Annotation(level="error", title="oloproof: untrusted report refused", message=p) for p in problems]
    )
    notice = "no check run: github-token is empty"
    if inputs.github_token:
        try:
            client = ChecksClient(env.api_url, inputs.github_token, env.repository, deadline=session.start_publishing())
            outcome = publish_check_run(
                client,
                CheckRunRequest(
                    name=inputs.check_name,
                    head_sha=head_sha,
                    conclusion="failure",
                    title="ERROR: the gate job's report is missing or invalid",
                    summary=text,
                ),
            )
        except GitHubApiError as exc:
            notice = f"no check run: {exc.message}"
        else:
            skipped = outcome.skipped
            notice = "" if skipped is None else f"no check run: {skipped}"
    if notice:  # the pull request then has no failure check: the job's own status is all it shows
        session.annotate([ann.Annotation(level="notice", title="oloproof: publish", message=notice)])
        text += f"\n- {safe(notice, 400)}\n"
    append_summary(env, text)
    write_outputs(env, {"verdict": "ERROR", "exit-code": str(int(ExitCode.USAGE)), "report": ""})
    return int(ExitCode.USAGE)
