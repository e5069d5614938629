"""The GitHub Action (SPEC §8): inputs in, the gate in-process, every report out.

``entrypoint.py`` calls ``main()`` inside the container. It validates the ``INPUT_*`` values,
runs the same gate as ``oloproof gate`` (so it holds the ``GateResult``), optionally reads the
holdout, and then writes: the log (the terminal report inside ``::stop-commands::``), the
JSON report, the job summary, annotations, a check run when the token allows, and the step
outputs. Files it leaves in the workspace are chowned to the workspace's owner.

Exit codes: 0 unless the verdict is in ``fail-on`` (then the verdict's own code: 1 FAIL,
3 BLOCKED, 4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW); 2 for an invalid input or a
configuration error (with an ``::error::`` line); 70 for an internal error; 130 when
cancelled. The ``exit-code`` output is the gate's code whatever ``fail-on`` says.

Nothing leaves ``main()`` as an exception: whatever escapes the reports (even the error reports)
becomes exit 70 with one short ``::error::`` line. The log never carries a workflow command the
action did not make: annotations are escaped and capped (``Session.annotate``), the terminal
report sits inside ``::stop-commands::``, and every other line that quotes config, case, system
or event text goes through ``Session.say``. The token is masked first and redacted from every
message; no exception text from sending a request (it can quote header values) reaches one.

Input names keep their hyphens (``fail-on`` arrives as ``INPUT_FAIL-ON``). Unknown ``INPUT_*``
names are errors: a misspelt ``fail_on:`` must not silently loosen the gate.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import sys
import time
import traceback
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from oloproof import __version__
from oloproof.errors import ConfigError, DataError, ExitCode, OloproofError, UsageError
from oloproof.github import (
    HOLDOUT_READ_EVENTS,
    ActionEnv,
    CheckRunRequest,
    ChecksClient,
    GitHubApiError,
    append_summary,
    publish_check_run,
    trust_workspace,
    write_outputs,
)
from oloproof.report import annotations as ann
from oloproof.verdicts import Verdict, worst

if TYPE_CHECKING:
    from oloproof.checks import CheckReport
    from oloproof.config import Release
    from oloproof.gate import GateResult

# The action's inputs and their defaults: action.yml declares the same (a test keeps them equal).
DEFAULT_FAIL_ON = "FAIL, BLOCKED, INSUFFICIENT_EVIDENCE, MANUAL_REVIEW"
INPUTS: dict[str, str] = {
    "config": "release.yaml",
    "working-directory": ".",
    "fail-on": DEFAULT_FAIL_ON,
    "read-holdout": "false",
    "holdout-reason": "",
    "github-token": "",  # action.yml: ${{ github.token }}
    "check-name": "oloproof",
    "json-report": "oloproof-report.json",
    "outputs": "",
}
ERROR_VERDICT = "ERROR"  # the `verdict` output when the gate could not run (exit-code 2 or 70)
CHECK_SUMMARY_LIMIT = 60_000  # bytes; the Checks API takes 65535 characters
MAX_REASON = 500
UNLIMITED = 1 << 62
MASK_MIN = 4  # shorter pieces of a malformed token are not masked: masking one letter garbles the whole log


class InputError(OloproofError):
    """One or more inputs are invalid: exits 2, one ``::error::`` line per problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("; ".join(problems))


class CapabilityMissing(UsageError):
    """The workflow asked for something this oloproof cannot do (exits 2, never a silent skip)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Inputs:
    config: str
    working_directory: Path  # absolute, inside the workspace
    fail_on: frozenset[Verdict]
    read_holdout: bool
    holdout_reason: str
    github_token: str
    check_name: str
    json_report: Path | None  # absolute, inside the workspace
    outputs: Path | None


# ---------------------------------------------------------------- inputs


def input_env_name(name: str) -> str:
    """The environment variable the runner sets for input ``name`` (hyphens kept)."""
    return "INPUT_" + name.replace(" ", "_").upper()


def raw_inputs(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Input values (defaults filled in) and problems with unknown ``INPUT_*`` names."""
    from oloproof.schema import did_you_mean

    known = {input_env_name(name): name for name in INPUTS}
    values = dict(INPUTS)
    problems: list[str] = []
    for key, value in environ.items():
        if not key.startswith("INPUT_"):
            continue
        name = known.get(key)
        if name is None:
            wanted = key[len("INPUT_") :].lower().replace("_", "-")
            problems.append(f"unknown input '{key[len('INPUT_'):].lower()}'{did_you_mean(wanted, INPUTS)}; inputs: {', '.join(INPUTS)}")
            continue
        values[name] = value
    return values, problems


def parse_fail_on(text: str) -> frozenset[Verdict]:
    """``fail-on``: verdict names separated by commas, spaces or newlines; ``none`` for report-only."""
    from oloproof.schema import did_you_mean

    names = [part for part in re.split(r"[\s,]+", text.strip()) if part]
    if not names:
        raise ValueError("fail-on is empty: name the verdicts that fail the job, or 'none' to never fail it")
    if [name.lower() for name in names] == ["none"]:
        return frozenset()
    chosen: set[Verdict] = set()
    allowed = [verdict.value for verdict in Verdict if verdict is not Verdict.PASS]
    for name in names:
        upper = name.upper().replace("-", "_")
        if upper == "PASS":
            raise ValueError("fail-on: PASS cannot fail the job")
        if upper not in allowed:
            raise ValueError(f"fail-on: unknown verdict '{name}'{did_you_mean(upper, allowed)}; choose from {', '.join(allowed)} (or 'none')")
        chosen.add(Verdict(upper))
    return frozenset(chosen)


def parse_bool(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise ValueError(f"{name}: expected true or false, got '{text}'")


def _inside(workspace: Path, base: Path, relative: str, name: str) -> Path:
    if not relative.strip():
        raise ValueError(f"{name} is empty")
    if "\0" in relative or "\n" in relative or "\r" in relative:
        raise ValueError(f"{name}: control characters are not allowed in a path")
    candidate = Path(relative)
    if candidate.is_absolute():
        raise ValueError(f"{name}: '{relative}' is absolute; give a path relative to the repository")
    resolved = (base / candidate).resolve()
    if resolved != workspace and workspace not in resolved.parents:
        raise ValueError(f"{name}: '{relative}' lies outside the workspace ({workspace})")
    return resolved


def read_inputs(environ: Mapping[str, str], env: ActionEnv) -> Inputs:
    """Validate every input; all problems are reported at once."""
    values, problems = raw_inputs(environ)
    workspace = env.workspace

    def attempt(parse: Callable[[], Any]) -> Any:
        try:
            return parse()
        except ValueError as exc:
            problems.append(str(exc))
            return None

    workdir = attempt(lambda: _inside(workspace, workspace, values["working-directory"] or ".", "working-directory"))
    if workdir is not None and not workdir.is_dir():
        problems.append(f"working-directory: '{values['working-directory']}' is not a directory in the workspace")
        workdir = None
    base = workdir or workspace
    config = attempt(lambda: _inside(workspace, base, values["config"], "config"))
    fail_on = attempt(lambda: parse_fail_on(values["fail-on"]))
    read_holdout = attempt(lambda: parse_bool("read-holdout", values["read-holdout"]))
    reason = " ".join(values["holdout-reason"].split())
    if len(reason) > MAX_REASON:
        problems.append(f"holdout-reason: longer than {MAX_REASON} characters")
    token = values["github-token"].strip()
    if any(not "!" <= ch <= "~" for ch in token):  # never echo the value: it is a secret
        problems.append(
            "github-token: the value holds whitespace, a control character or a non-ASCII character, which no GitHub "
            "token has (the value is not shown); pass the token alone, e.g. ${{ github.token }} or ${{ secrets.NAME }}"
        )
    check_name = values["check-name"].strip()
    if not check_name:
        problems.append("check-name is empty")
    elif len(check_name) > 100 or any(ch in check_name for ch in "\r\n\0"):
        problems.append("check-name: at most 100 characters, on one line")
    json_report = None
    if values["json-report"].strip():
        json_report = attempt(lambda: _inside(workspace, base, values["json-report"], "json-report"))
        if json_report is not None and json_report.is_dir():
            problems.append(f"json-report: '{values['json-report']}' is a directory")
    outputs = None
    if values["outputs"].strip():
        outputs = attempt(lambda: _inside(workspace, base, values["outputs"], "outputs"))
        if outputs is not None and not outputs.is_file():
            problems.append(f"outputs: '{values['outputs']}' is not a file in the workspace")
    if problems:
        raise InputError(problems)
    assert workdir is not None and config is not None and fail_on is not None and read_holdout is not None
    return Inputs(
        config=os.path.relpath(config, workdir), working_directory=workdir, fail_on=fail_on, read_holdout=read_holdout,
        holdout_reason=reason, github_token=token, check_name=check_name,
        json_report=json_report, outputs=outputs,
    )


def holdout_reason(inputs: Inputs, env: ActionEnv) -> str:
    """Why this holdout read happens: the input, else the triggering event; refused without one."""
    if not env.may_read_holdout:
        event = f"a {env.event_name} event" if env.event_name else "an unknown event (GITHUB_EVENT_NAME is not set)"
        raise UsageError(
            f"read-holdout: true on {event} is refused: holdout reads run only on {', '.join(HOLDOUT_READ_EVENTS)} "
            "events, whose read log can be committed to the default branch. Elsewhere (pull requests, merge queues, "
            "reviews, comments) the read would spend budget without a record. Read the holdout on a release or a "
            "default-branch push."
        )
    if inputs.holdout_reason:
        return inputs.holdout_reason
    if env.release_tag:
        return f"release {env.release_tag}"
    if env.dispatch_reason:
        return env.dispatch_reason
    raise UsageError(
        "read-holdout: true needs a reason: set holdout-reason, or run on a release (the reason becomes 'release <tag>'), "
        "a tag push, or a workflow_dispatch with a 'reason' input"
    )


# ---------------------------------------------------------------- the run


@dataclass(slots=True)
class Session:
    """State of one action run: where things go, and what was written to the workspace."""

    env: ActionEnv
    out: TextIO
    environ: Mapping[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    written: list[Path] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # never shown: redacted from every message
    shown: dict[ann.Level, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "notice": 0})

    def print(self, text: str = "") -> None:
        """Write text the action made itself (workflow commands, protected blocks) as it is."""
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

    def say(self, text: str) -> None:
        """Write a line that may quote config, case, system or event text: never a workflow command."""
        self.print(ann.safe_line(self.redact(text)))

    def annotate(self, items: list[ann.Annotation], *, more_hint: str = "see the job summary") -> None:
        """Annotations for the log, capped as GitHub shows them (per level, per step, across calls)."""
        kept = ann.capped([replace(item, title=self.redact(item.title), message=self.redact(item.message)) for item in items],
                          more_hint=more_hint, used=self.shown)
        for item in kept:
            self.shown[item.level] += 1
            self.print(item.command())

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text

    def mask_token(self, environ: Mapping[str, str]) -> None:
        """``::add-mask::`` the token (each piece of a malformed one) before anything else is printed."""
        raw = environ.get(input_env_name("github-token"), "")
        pieces = [piece for piece in {raw.strip(), *raw.split()} if len(piece) >= MASK_MIN]
        for piece in sorted(pieces, key=lambda piece: (-len(piece), piece)):  # longest first, so redact() replaces whole values
            self.secrets.append(piece)
            self.print(f"::add-mask::{ann.escape_data(piece)}")

    def repo_path(self, path: str | os.PathLike[str]) -> str | None:
        """``path`` (relative to the current directory) relative to the repository root, or None outside it."""
        resolved = Path(os.path.abspath(path))
        workspace = self.env.workspace
        if resolved != workspace and workspace not in resolved.parents:
            return None
        return resolved.relative_to(workspace).as_posix() or "."

    def write(self, path: Path, text: str) -> None:
        from oloproof.atomic import atomic_write_text

        atomic_write_text(path, text)
        self.written.append(path)


def main(environ: MutableMapping[str, str] | None = None, *, out: TextIO | None = None) -> int:
    """Run the action; returns the process exit code."""
    environ = os.environ if environ is None else environ
    stream = out or sys.stdout
    session: Session | None = None
    cwd: str | None = None
    previous = _install_sigterm()
    try:
        cwd = os.getcwd()
        session = Session(env=ActionEnv.from_environ(environ), out=stream, environ=environ)
        session.mask_token(environ)
        return _run(session, environ)
    except KeyboardInterrupt:
        with contextlib.suppress(Exception):
            if session is not None:
                session.annotate([ann.Annotation(level="error", title="oloproof: cancelled", message="the action was cancelled")])
        return int(ExitCode.INTERRUPTED)
    except BaseException as exc:  # nothing leaves with exit 1 or an unprotected traceback
        return _last_resort(session, stream, exc)
    finally:
        with contextlib.suppress(Exception):
            if cwd is not None:
                os.chdir(cwd)
        _restore_sigterm(previous)
        if session is not None:
            with contextlib.suppress(Exception):
                chown_written(session)


def _last_resort(session: Session | None, stream: TextIO, exc: BaseException) -> int:
    """An error that escaped every report (even the error reports): exit 70 with one short line."""
    if session is not None:
        with contextlib.suppress(Exception):
            return _internal_error(session, exc)
    with contextlib.suppress(Exception):
        stream.write(f"::error title=oloproof%3A internal error::internal error (a bug in oloproof): {type(exc).__name__}\n")
        stream.flush()
    return int(ExitCode.INTERNAL)


def _run(session: Session, environ: MutableMapping[str, str]) -> int:
    env = session.env
    session.annotate([ann.Annotation(level="warning", title="oloproof: event payload", message=problem) for problem in env.problems])
    try:
        inputs = read_inputs(environ, env)
    except InputError as exc:
        session.annotate([ann.Annotation(level="error", title="oloproof: invalid input", message=problem) for problem in exc.problems])
        listed = "".join(f"- {_md(session.redact(problem))}\n" for problem in exc.problems)
        append_summary(env, f"## 🛑 oloproof gate: ERROR\n\nInvalid inputs, so the gate did not run:\n\n{listed}\n")
        _error_outputs(session, ExitCode.USAGE)
        return int(ExitCode.USAGE)
    try:
        if not trust_workspace(env, environ) and env.in_actions and shutil.which("git", path=environ.get("PATH")):
            why = "could not add the workspace to git's safe.directory"
            session.annotate([ann.Annotation(level="warning", title="oloproof: git", message=why)])
        os.chdir(inputs.working_directory)
        result = _gate(session, inputs)
    except OloproofError as exc:
        return _report_error(session, inputs, exc)
    except Exception as exc:  # the one place that turns bugs into exit 70
        return _internal_error(session, exc)
    try:
        return _publish(session, inputs, result)
    except OloproofError as exc:
        return _report_error(session, inputs, exc)
    except Exception as exc:
        return _internal_error(session, exc)


def _gate(session: Session, inputs: Inputs) -> GateResult:
    from oloproof.config import load_release
    from oloproof.gate import run_gate
    from oloproof.report import terminal

    env = session.env
    where = session.repo_path(inputs.working_directory)
    session.say(f"oloproof {__version__}: gating {inputs.config} in {where} for {env.describe_trigger()}")
    reason = holdout_reason(inputs, env) if inputs.read_holdout else None  # refuse early, before any work
    release = load_release(inputs.config)
    if reason is not None and release.holdout is None:
        raise ConfigError(release.path, None, "holdout", "read-holdout: true, but release.yaml declares no holdout")
    run_ref = None
    if inputs.outputs is not None:
        run_ref = _import_outputs(session, release, inputs.outputs)
    result = run_gate(release, run_ref=run_ref, quiet=True)
    if reason is not None:
        result = _with_holdout_read(session, inputs, release, result, reason)
    # The terminal report quotes case ids and system errors: no workflow command may run from it.
    session.print(ann.stop_commands(session.redact(terminal.render(result, width=140))))
    return result


def _import_outputs(session: Session, release: Release, outputs: Path) -> str:
    from oloproof.gate import load_dev_testset
    from oloproof.run import import_outputs
    from oloproof.runstore import RunStore

    testset = load_dev_testset(release)
    shown = os.path.relpath(outputs)
    record, _ = import_outputs(release, testset, RunStore(release.base_dir), outputs, version=release.system.version, shown=shown)
    session.say(f"imported {record.n_outputs}/{record.n_cases} outputs from {shown} as run {record.run_id} of {release.system.version}")
    return record.run_id


def _with_holdout_read(session: Session, inputs: Inputs, release: Release, result: GateResult, reason: str) -> GateResult:
    """Read the holdout once (appending to its log) and add what it says to the result.

    The read comes after the gate: a release that already fails on the dev set does not
    spend budget. A refused read (budget spent, log tampered) is BLOCKED and joins the verdict.
    """
    if result.verdict in inputs.fail_on:
        report = _holdout_not_read(result)
        checks = (*result.checks, report)
    else:
        report = read_holdout(release, reason=reason, environ=session.environ)
        checks = (*_refreshed_holdout_status(result), report)
    verdicts = [rule.verdict for rule in result.rules] + [r.verdict for r in checks if r.verdict is not None]
    return replace(result, checks=checks, verdict=worst(verdicts))


def _holdout_not_read(result: GateResult) -> CheckReport:
    from oloproof.checks import CheckReport

    return CheckReport(
        name="holdout-read", title="Holdout read", status=f"not read: the gate is {result.verdict.value} on the dev set",
        sentence="A read spends budget, so it is skipped while the dev-set verdict fails the job.",
    )


def _refreshed_holdout_status(result: GateResult) -> tuple[CheckReport, ...]:
    """The gate's holdout report, made again now that the read is in the log."""
    from oloproof.checks import GateContext, registry
    from oloproof.runstore import RunStore

    check = registry().get("holdout")
    if check is None:
        return result.checks
    ctx = GateContext(release=result.release, testset=result.testset, store=RunStore(result.release.base_dir))
    fresh = check.precheck(ctx)
    return tuple(fresh if report.name == "holdout" and fresh is not None else report for report in result.checks)


def read_holdout(release: Release, *, reason: str, environ: Mapping[str, str]) -> CheckReport:
    """One holdout read through ``oloproof.holdout``, as a check report for every renderer.

    The read itself (budget, scoring, the append-only log) belongs to ``oloproof.holdout``. The
    report names the holdout set in every score and holds no case id or content.
    """
    import importlib

    from oloproof.checks import CheckReport

    try:
        holdout = importlib.import_module("oloproof.holdout")
    except ModuleNotFoundError:
        raise CapabilityMissing(
            f"read-holdout: true, but holdout reads need oloproof.holdout, which oloproof {__version__} does not have"
        ) from None
    read = holdout.read_holdout(release, reason=reason, environ=environ)
    line = release.holdout.line if release.holdout is not None else None
    if read.verdict is not None:  # refused: nothing was scored, the log is unchanged
        return CheckReport(
            name="holdout-read", title="Holdout read", status=f"refused ({', '.join(read.reasons)}); {read.budget.text()}",
            verdict=read.verdict, reasons=read.reasons, sentence=read.sentence, data=read.to_json(),
            source=release.path, line=line,
        )
    return CheckReport(
        name="holdout-read", title="Holdout read", status=holdout.score_line(read),
        sentence=f"Read for: {reason}", lines=(holdout.appended_line(read), *read.notes), data=read.to_json(),
        source=release.path, line=line,
    )


# ---------------------------------------------------------------- publishing


def conclusion_of(verdict: Verdict, fail_on: frozenset[Verdict]) -> str:
    """A check run's conclusion: success (PASS), failure (fails the job), neutral (reported only)."""
    if verdict is Verdict.PASS:
        return "success"
    return "failure" if verdict in fail_on else "neutral"


def _publish(session: Session, inputs: Inputs, result: GateResult) -> int:
    from oloproof.report import jsonreport, markdown

    env = session.env
    report_path = inputs.json_report
    if report_path is not None:
        session.write(report_path, jsonreport.render(result))
    found = ann.collect(result, fail_on=inputs.fail_on, path_of=session.repo_path)
    notices: list[str] = []

    check = _check_run(session, inputs, result, found)
    if check is not None:
        notices.append(check)

    full = markdown.render(result, fail_on=inputs.fail_on, notes=notices, limit=UNLIMITED)
    summary = full
    if len(full.encode("utf-8")) > markdown.SUMMARY_LIMIT:
        # Over GitHub's limit the summary would be dropped whole: keep the full text in a file
        # beside the JSON report and publish a trimmed summary that names it.
        full_path = report_path.with_suffix(".md") if report_path is not None else inputs.working_directory / "oloproof-summary.md"
        session.write(full_path, full)
        summary = markdown.render(
            result, fail_on=inputs.fail_on, notes=notices, limit=markdown.SUMMARY_LIMIT, full_report=session.repo_path(full_path)
        )
    append_summary(env, session.redact(summary))

    extra = [ann.Annotation(level="notice", title="oloproof: check run", message=note) for note in notices]
    session.annotate([*found, *extra])

    gate_code = int(result.verdict.exit_code)
    write_outputs(env, {
        "verdict": result.verdict.value,
        "exit-code": str(gate_code),
        "report": (session.repo_path(report_path) or "") if report_path is not None else "",
    })
    fails = result.verdict in inputs.fail_on
    session.say(
        f"verdict: {result.verdict.value} (exit {gate_code}); "
        + ("it is in fail-on, so the step fails" if fails else "not in fail-on, so the step passes")
    )
    return gate_code if fails else 0


def _check_run(session: Session, inputs: Inputs, result: GateResult, found: list[ann.Annotation]) -> str | None:
    """Create the check run; returns a notice sentence when none (or only part of one) was made."""
    from oloproof.report import markdown

    env = session.env
    blocked = _no_check_run(session, inputs)
    if blocked is not None:
        return blocked or None
    passing = sum(1 for rule in result.rules if rule.verdict is Verdict.PASS)
    request = CheckRunRequest(
        name=inputs.check_name, head_sha=env.head_sha, conclusion=conclusion_of(result.verdict, inputs.fail_on),
        title=f"{result.verdict.value}: {passing} of {len(result.rules)} rules pass",
        summary=markdown.render(result, fail_on=inputs.fail_on, limit=CHECK_SUMMARY_LIMIT, full_report=None),
        annotations=[annotation.api() for annotation in found if annotation.file is not None],
        details_url=env.run_url,
    )
    try:
        client = ChecksClient(env.api_url, inputs.github_token, env.repository)
    except GitHubApiError as exc:
        return f"no check run: {exc.message}"
    outcome = publish_check_run(client, request)
    if outcome.skipped is not None:
        return ("check run incomplete: " if outcome.created else "no check run: ") + outcome.skipped
    session.say(f"check run '{inputs.check_name}' created on {env.head_sha[:12]}" + (f": {outcome.html_url}" if outcome.html_url else ""))
    return None


def _no_check_run(session: Session, inputs: Inputs) -> str | None:
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


def _error_outputs(session: Session, code: ExitCode) -> None:
    write_outputs(session.env, {"verdict": ERROR_VERDICT, "exit-code": str(int(code)), "report": ""})


def _report_error(session: Session, inputs: Inputs, exc: OloproofError) -> int:
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
        f"> {_md(message)}\n\nFix the file or the input named above; `oloproof gate` reproduces this locally.\n",
    )
    code = exc.exit_code
    _error_outputs(session, code)
    blocked = _no_check_run(session, inputs)
    note = blocked or None
    if blocked is None:
        try:
            client = ChecksClient(session.env.api_url, inputs.github_token, session.env.repository)
        except GitHubApiError as api_error:
            note = f"no check run: {api_error.message}"
        else:
            outcome = publish_check_run(client, CheckRunRequest(
                name=inputs.check_name, head_sha=session.env.head_sha, conclusion="failure",
                title="ERROR: the gate could not run", summary=f"The gate could not run:\n\n> {_md(message)}\n",
                annotations=[error.api()] if file else [], details_url=session.env.run_url,
            ))
            if outcome.skipped is not None:
                note = ("check run incomplete: " if outcome.created else "no check run: ") + outcome.skipped
    if note:
        session.annotate([ann.Annotation(level="notice", title="oloproof: check run", message=note)])
    return int(code)


def _internal_error(session: Session, exc: BaseException) -> int:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else "?"
    text = " ".join(session.redact(str(exc)).split())
    text = text if len(text) <= 300 else text[:300] + "…"
    message = (
        f"internal error (a bug in oloproof, not in your files): {type(exc).__name__}{': ' + text if text else ''} at {where}; "
        f"oloproof {__version__}, Python {sys.version.split()[0]}; please report it with the log"
    )
    session.annotate([ann.Annotation(level="error", title="oloproof: internal error", message=message)])
    session.print("::group::traceback")
    session.print(ann.stop_commands(session.redact("".join(traceback.format_exception(exc)))))
    session.print("::endgroup::")
    append_summary(session.env, f"## 🛑 oloproof gate: ERROR\n\n> {_md(message)}\n")
    _error_outputs(session, ExitCode.INTERNAL)
    return int(ExitCode.INTERNAL)


def _md(text: str) -> str:
    from oloproof.report.markdown import esc

    return esc(text)


# ---------------------------------------------------------------- ownership and signals


def chown_written(session: Session) -> None:
    """Give what this run wrote in the workspace to the workspace's owner.

    The container runs as root; root-owned files left in the checkout break later steps
    that run as the runner's user (self-hosted runners keep the checkout between jobs). Two
    passes: the paths written on purpose (reports, the holdout log, parent directories made
    for them), and every root-owned entry created or changed since the run started (runs
    under ``.oloproof/``, anything the system under test wrote).
    """
    workspace = session.env.workspace
    try:
        owner = os.stat(workspace)
    except OSError:
        return
    me = os.geteuid()
    if me != 0 or owner.st_uid == me:
        return
    uid, gid = owner.st_uid, owner.st_gid

    def give(path: Path) -> None:
        with contextlib.suppress(OSError):
            stat = os.lstat(path)
            if stat.st_uid == me:
                os.lchown(path, uid, gid)

    for path in session.written:
        for parent in [path, *path.parents]:
            if parent == workspace or workspace not in parent.parents:
                break
            give(parent)
    since = session.started - 2  # ctime granularity and clock skew
    for root, dirs, files in os.walk(workspace):
        for name in (*dirs, *files):
            path = Path(root) / name
            with contextlib.suppress(OSError):
                stat = os.lstat(path)
                if stat.st_uid == me and stat.st_ctime >= since:
                    os.lchown(path, uid, gid)


def _install_sigterm() -> Any:
    """Cancelling a job stops the container with SIGTERM: clean up as for Ctrl-C."""

    def handler(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError):  # not the main thread (e.g. some test runners)
        return signal.signal(signal.SIGTERM, handler)
    return None


def _restore_sigterm(previous: Any) -> None:
    if previous is not None:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)
