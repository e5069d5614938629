"""The GitHub Action (SPEC §8): inputs in, the gate in-process, every report out.

``entrypoint.py`` calls ``main()`` inside the container. It validates the ``INPUT_*`` values
(``inputs``), runs the same gate as ``oloproof gate`` (so it holds the ``GateResult``), optionally
reads the holdout, and then writes (``publish``): the log (the terminal report inside
``::stop-commands::``), the JSON report, the job summary, annotations, a check run when the token
allows, and the step outputs. Files it leaves in the workspace are chowned to the workspace's
owner (``session``).

Exit codes: 0 unless the verdict is in ``fail-on`` (then the verdict's own code: 1 FAIL,
3 BLOCKED, 4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW); 2 for an invalid input or a
configuration error (with an ``::error::`` line); 70 for an internal error; 130 when
cancelled (SIGINT), 143 on SIGTERM — decided by ``oloproof.exits``, as for the CLI. The
``exit-code`` output is the gate's code whatever ``fail-on`` says.

Nothing leaves ``main()`` as an exception: whatever escapes the reports (even the error reports)
becomes exit 70 with one short ``::error::`` line. No exception text from sending a request (it
can quote header values) reaches a message.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
from collections.abc import MutableMapping
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from oloproof import __version__
from oloproof.action.github import TOKEN_KEPT, ActionEnv, checkout_keeps_token, trust_workspace
from oloproof.action.heartbeat import heartbeat
from oloproof.action.inputs import InputError, Inputs, holdout_reason, read_inputs
from oloproof.action.publish import (
    check_summary_path,
    full_summary_path,
    internal_error,
    publish,
    report_error,
    report_input_error,
)
from oloproof.action.publish_only import publish_report
from oloproof.action.session import Session, chown_written
from oloproof.action.trust import base_trust, pull_request_base, trust_report
from oloproof.checks import GateContext
from oloproof.config import Release, load_release
from oloproof.devset import load_dev_testset
from oloproof.errors import ConfigError, ExitCode, OloproofError, UsageError
from oloproof.exits import run_guarded
from oloproof.files import check_report_paths
from oloproof.gate import registry, run_gate
from oloproof.holdout.read import read_holdout as holdout_read
from oloproof.report import annotations as ann
from oloproof.report import terminal
from oloproof.report.holdout import appended_line, score_line
from oloproof.result import CheckReport, GateResult, gate_verdict
from oloproof.run import import_outputs
from oloproof.runstore import RunStore
from oloproof.vcs import head_commit, head_sha


def main(environ: MutableMapping[str, str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the action; returns the process exit code."""
    environ = os.environ if environ is None else environ
    stream = out or sys.stdout
    session: Session | None = None
    cwd: str | None = None
    try:
        cwd = os.getcwd()
        session = Session(env=ActionEnv.from_environ(environ), out=stream, environ=environ)
        session.mask_token(environ)
        presenter = _Presenter(session)
        return run_guarded(lambda: _run(session, environ, presenter), presenter)
    except BaseException as exc:  # a report that failed itself: nothing leaves with exit 1 or an unprotected traceback
        return _last_resort(session, stream, exc)
    finally:
        with contextlib.suppress(Exception):
            if cwd is not None:
                os.chdir(cwd)
        if session is not None:
            with contextlib.suppress(Exception):
                chown_written(session)


class _Presenter:
    """How the action says what ended the gate (``oloproof.exits`` decides the exit code)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.inputs: Inputs | None = None  # known once they are valid

    def error(self, exc: OloproofError) -> None:
        if isinstance(exc, InputError):
            report_input_error(self.session, exc)
        else:
            report_error(self.session, self.inputs, exc)

    def stopped(self, code: ExitCode) -> None:
        word = "terminated (SIGTERM)" if code is ExitCode.TERMINATED else "cancelled"
        with contextlib.suppress(Exception):
            self.session.annotate(
                [ann.Annotation(level="error", title="oloproof: cancelled", message=f"the action was {word}")]
            )

    def internal(self, exc: BaseException) -> None:
        internal_error(self.session, exc)

    def broken_pipe(self) -> None:
        pass  # the log is gone: nothing can be said


def _last_resort(session: Session | None, stream: TextIO, exc: BaseException) -> int:
    """An error that escaped every report (even the error reports): exit 70 with one short line."""
    if session is not None:
        with contextlib.suppress(Exception):
            internal_error(session, exc)
            return int(ExitCode.INTERNAL)
    with contextlib.suppress(Exception):
        stream.write(
            f"::error title=oloproof%3A internal error::internal error (a bug in oloproof): {type(exc).__name__}\n"
        )
        stream.flush()
    return int(ExitCode.INTERNAL)


def _run(session: Session, environ: MutableMapping[str, str], presenter: _Presenter) -> int:
    env = session.env
    session.annotate(
        [ann.Annotation(level="warning", title="oloproof: event payload", message=problem) for problem in env.problems]
    )
    inputs = presenter.inputs = read_inputs(environ, env)
    if inputs.mode == "publish":  # a workflow_run job: publish the untrusted job's report, run nothing
        return publish_report(session, inputs)
    if not trust_workspace(env, environ) and env.in_actions and shutil.which("git", path=environ.get("PATH")):
        why = "could not add the workspace to git's safe.directory"
        session.annotate([ann.Annotation(level="warning", title="oloproof: git", message=why)])
    if checkout_keeps_token(env):
        session.annotate([ann.Annotation(level="warning", title="oloproof: token in the checkout", message=TOKEN_KEPT)])
    os.chdir(inputs.working_directory)
    result = _gate(session, inputs)
    return publish(session, inputs, result)


def _gate(session: Session, inputs: Inputs) -> GateResult:
    env = session.env
    where = session.repo_path(inputs.working_directory)
    session.say(f"oloproof {__version__}: gating {inputs.config} in {where} for {env.describe_trigger()}")
    reason = holdout_reason(inputs, env) if inputs.read_holdout else None  # refuse early, before any work
    _workflow_run_checkout(session, inputs)
    release = load_release(inputs.config)
    full = full_summary_path(inputs)
    check_summary_path(full, session.repo_path(full) or str(full))
    written = [] if inputs.json_report is None else [inputs.json_report, full]
    written += [] if inputs.junit is None else [inputs.junit]
    if written:  # never over an input: refused before any work (exit 2)
        protected = release.input_files(session.environ)
        check_report_paths(written, inputs=protected, within=session.env.workspace)
    if reason is not None and release.holdout is None:
        raise ConfigError(release.path, None, "holdout", "read-holdout: true, but release.yaml declares no holdout")
    store = RunStore(release.base_dir)
    before: tuple[CheckReport, ...] = ()
    previous_gate = None
    base_sha = pull_request_base(env)
    if base_sha is not None:  # a pull request: trust what its base branch holds, nothing it adds
        trust = base_trust(release, base_sha)
        store.pinned = trust.pinned_runs(release.base_dir)
        before = (trust_report(release, trust),)
        previous_gate = trust.base_bytes  # what left the test set is said against the base's last gate
    run_ref = None
    if inputs.outputs is not None:  # outputs made in this job: they decide, said so everywhere
        run_ref = _import_outputs(session, release, inputs.outputs, store)
    fresh = inputs.reuse == "baseline-only"  # the released system runs now; baselines and seeds may be reused
    with heartbeat(session) as on_batch:  # a line in the log every 30 s while the system runs
        result = run_gate(
            release,
            run_ref=run_ref,
            quiet=True,
            on_batch=on_batch,
            store=store,
            reports_before=before,
            fresh=fresh,
            previous_gate=previous_gate,
        )
    if reason is not None:
        result = _with_holdout_read(session, inputs, release, result, reason)
    # The terminal report quotes case ids and system errors: no workflow command may run from it.
    # Tables laid out for 140 columns; prose not hard-wrapped (the log viewer wraps it to its width).
    session.print(ann.stop_commands(session.redact(terminal.render(result, width=140, soft_wrap=True))))
    return result


def _workflow_run_checkout(session: Session, inputs: Inputs) -> None:
    """Under ``workflow_run`` the check run goes on ``workflow_run.head_sha``, while actions/checkout
    checks out ``GITHUB_SHA``, the default branch's head: a verdict on that code must never land on
    the triggering run's commit. So the gate runs only when the checked-out HEAD (of the repository
    holding the working directory) is that very commit, shown by git; when git cannot tell, refused."""
    env = session.env
    if env.event_name != "workflow_run":
        return
    wanted = env.head_sha  # empty unless the payload names a commit id
    head = head_sha(inputs.working_directory)
    if wanted and head == wanted:
        return
    if not wanted:
        found = "the event payload does not name the triggering run's commit (workflow_run.head_sha)"
    elif head is None:
        found = (
            f"the checked-out HEAD cannot be read in {session.repo_path(inputs.working_directory)} (neither git nor a "
            f".git there names a commit), so nothing shows it is workflow_run.head_sha {wanted}"
        )
    else:
        found = (
            f"the checked-out HEAD is {head}, not workflow_run.head_sha {wanted} (actions/checkout checks out "
            "GITHUB_SHA, which under workflow_run is the default branch's head)"
        )
    raise UsageError(
        f"mode: gate under a workflow_run event is refused: {found}. Its check run would put a verdict on one "
        "commit's code on another commit. Use mode: publish to publish the report the triggering run uploaded (the "
        "fork-PR recipe in the action's docs), or check out workflow_run.head_sha before this step (only for a run "
        "whose code you trust: a workflow_run job holds the base repository's token and secrets)"
    )


def _import_outputs(session: Session, release: Release, outputs: Path, store: RunStore) -> str:
    testset = load_dev_testset(release)
    shown = os.path.relpath(outputs)
    record, _ = import_outputs(release, testset, store, outputs, version=release.system.version, shown=shown)
    session.say(
        f"imported {record.n_outputs}/{record.n_cases} outputs from {shown} as run {record.run_id} of "
        f"{release.system.version}"
    )
    return record.run_id


def _with_holdout_read(
    session: Session, inputs: Inputs, release: Release, result: GateResult, reason: str
) -> GateResult:
    """Read the holdout once (appending to its log) and add what it says to the result.

    The read comes after the gate: a release that already fails on the dev set does not
    spend budget. A refused read (budget spent, log tampered) is BLOCKED and joins the verdict.
    """
    if result.verdict in inputs.fail_on:
        report = _holdout_not_read(result)
        checks = (*result.checks, report)
    else:
        report = read_holdout(session, release, reason=reason)
        checks = (*_refreshed_holdout_status(result), report)
    return replace(result, checks=checks, verdict=gate_verdict(result.rules, checks))  # advisory rules not counted


def _holdout_not_read(result: GateResult) -> CheckReport:
    return CheckReport(
        name="holdout-read",
        title="Holdout read",
        status=f"not read: the gate is {result.verdict.value} on the dev set",
        sentence="A read spends budget, so it is skipped while the dev-set verdict fails the job.",
    )


def _refreshed_holdout_status(result: GateResult) -> tuple[CheckReport, ...]:
    """The gate's holdout report, made again now that the read is in the log."""
    check = registry().get("holdout")
    if check is None:
        return result.checks
    ctx = GateContext(release=result.release, testset=result.testset, store=RunStore(result.release.base_dir))
    fresh = check.precheck(ctx)
    return tuple(fresh if report.name == "holdout" and fresh is not None else report for report in result.checks)


def read_holdout(session: Session, release: Release, *, reason: str) -> CheckReport:
    """One holdout read through ``oloproof.holdout``, as a check report for every renderer.

    The read itself (budget, scoring, the append-only log) belongs to ``oloproof.holdout``; who
    reads is the run's actor, at the checked-out commit (GITHUB_SHA when git cannot tell). The
    report names the holdout set in every score and holds no case id or content.
    """
    env = session.env
    commit = head_commit(release.base_dir) or env.sha[:12] or "unknown"
    read = holdout_read(release, reason=reason, environ=session.environ, who=env.actor or "unknown", commit=commit)
    line = release.holdout.line if release.holdout is not None else None
    if read.verdict is not None:  # refused: nothing was scored, the log is unchanged
        return CheckReport(
            name="holdout-read",
            title="Holdout read",
            status=f"refused ({', '.join(read.reasons)}); {read.budget.text()}",
            verdict=read.verdict,
            reasons=read.reasons,
            sentence=read.sentence,
            data=read.to_json(),
            source=release.path,
            line=line,
        )
    return CheckReport(
        name="holdout-read",
        title="Holdout read",
        status=score_line(read),
        sentence=f"Read for: {reason}",
        lines=(appended_line(read), *read.notes),
        data=read.to_json(),
        source=release.path,
        line=line,
    )
