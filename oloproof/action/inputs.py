"""The action's inputs (``INPUT_*``, hyphens kept): validated all at once, every problem named.

Unknown ``INPUT_*`` names are errors: a misspelt ``fail_on:`` must not silently loosen the gate.
Paths must stay inside the workspace; the token is checked without ever being echoed.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.action.github import HOLDOUT_READ_EVENTS, ActionEnv
from oloproof.errors import OloproofError, UsageError
from oloproof.schema import did_you_mean
from oloproof.verdicts import Verdict

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
    "reuse": "baseline-only",
    "mode": "gate",
    "comment": "false",
    "junit": "",
}
# ``reuse``: which stored runs may stand in for running a command. The released system is run
# fresh by default, so a model its fingerprint cannot see (one loaded from a default path) is
# never judged on an old run; ``all`` reuses its stored run too when the fingerprint matches.
REUSE = ("baseline-only", "all")
# ``mode``: ``gate`` runs the gate; ``publish`` (a ``workflow_run`` job of the fork-PR recipe) only
# publishes the JSON report an untrusted job uploaded, on ``workflow_run.head_sha`` (``publish_only``).
MODES = ("gate", "publish")
MAX_REASON = 500


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
    reuse: str = "baseline-only"  # one of REUSE
    mode: str = "gate"  # one of MODES
    comment: bool = False  # the sticky pull-request comment (prcomment)
    junit: Path | None = None  # JUnit XML for test-report actions; absolute, inside the workspace


COMPOSITE_INPUTS = "OLOPROOF_ACTION_INPUTS"  # python/action.yml: env OLOPROOF_ACTION_INPUTS: ${{ toJSON(inputs) }}
COMPOSITE_ONLY = ("python",)  # inputs of python/action.yml that its own steps use, not the gate


def expand_composite_inputs(environ: MutableMapping[str, str] | None = None) -> None:
    """The composite action's inputs, handed over as one JSON object (a composite action gets no
    ``INPUT_*`` variables), become ``INPUT_*`` variables, as the runner sets them for a Docker
    action; the JSON value (it holds the token) leaves the environment. Not JSON: left as it is, so
    the inputs check names the problem."""
    environ = os.environ if environ is None else environ
    raw = environ.pop(COMPOSITE_INPUTS, None)
    if raw is None:
        return
    try:
        values = json.loads(raw)
    except ValueError:
        values = None
    if not isinstance(values, dict):
        environ["INPUT_" + COMPOSITE_INPUTS] = "not a JSON object"  # reported as an unknown input, exit 2
        return
    for name, value in values.items():
        if name not in COMPOSITE_ONLY:
            environ[input_env_name(str(name))] = "" if value is None else str(value)


def input_env_name(name: str) -> str:
    """The environment variable the runner sets for input ``name`` (hyphens kept)."""
    return "INPUT_" + name.replace(" ", "_").upper()


def raw_inputs(environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """Input values (defaults filled in) and problems with unknown ``INPUT_*`` names."""
    known = {input_env_name(name): name for name in INPUTS}
    values = dict(INPUTS)
    problems: list[str] = []
    for key, value in environ.items():
        if not key.startswith("INPUT_"):
            continue
        name = known.get(key)
        if name is None:
            wanted = key[len("INPUT_") :].lower().replace("_", "-")
            problems.append(
                f"unknown input '{key[len('INPUT_') :].lower()}'{did_you_mean(wanted, INPUTS)}; inputs: "
                f"{', '.join(INPUTS)}"
            )
            continue
        values[name] = value
    return values, problems


def parse_fail_on(text: str) -> frozenset[Verdict]:
    """``fail-on``: verdict names separated by commas, spaces or newlines; ``none`` for report-only."""
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
            raise ValueError(
                f"fail-on: unknown verdict '{name}'{did_you_mean(upper, allowed)}; choose from {', '.join(allowed)} "
                f"(or 'none')"
            )
        chosen.add(Verdict(upper))
    return frozenset(chosen)


def parse_bool(name: str, text: str) -> bool:
    value = text.strip().lower()
    if value in ("true", "false"):
        return value == "true"
    raise ValueError(f"{name}: expected true or false, got '{text}'")


def parse_reuse(text: str) -> str:
    value = text.strip().lower()
    if value not in REUSE:
        raise ValueError(
            f"reuse: unknown value '{text.strip()}'{did_you_mean(value, REUSE)}; choose baseline-only (run the "
            "released system fresh, reuse only baseline and seed-checkpoint runs) or all (reuse any stored run "
            "whose fingerprint matches)"
        )
    return value


def parse_mode(text: str) -> str:
    value = text.strip().lower()
    if value not in MODES:
        raise ValueError(
            f"mode: unknown value '{text.strip()}'{did_you_mean(value, MODES)}; choose gate (run the gate) or publish "
            "(a workflow_run job that publishes the JSON report an earlier, untrusted job uploaded)"
        )
    return value


def _publish_problems(values: Mapping[str, str], env: ActionEnv) -> list[str]:
    """``mode: publish`` publishes a report and runs nothing: inputs that would run or read something are errors."""
    problems: list[str] = []
    if env.event_name != "workflow_run":
        problems.append(
            f"mode: publish runs only on workflow_run events (this is {env.event_name or 'an unknown event'}): it "
            "publishes the report of the run that triggered it, on that run's commit (workflow_run.head_sha)"
        )
    if not values["json-report"].strip():
        problems.append("mode: publish needs json-report: the path of the JSON report the gate job uploaded")
    for name in ("read-holdout", "outputs", "junit"):
        if values[name].strip() not in ("", INPUTS[name]):
            problems.append(f"{name}: not used with mode: publish, which runs no gate (remove it)")
    return problems


def _inside(workspace: Path, base: Path, relative: str, name: str, *, follow: bool = True) -> Path:
    """``relative`` (from ``base``) as an absolute path inside ``workspace``, symlinks resolved; with
    ``follow=False`` only ``..`` is (the path as written: what it names is the reader's to check)."""
    if not relative.strip():
        raise ValueError(f"{name} is empty")
    if "\0" in relative or "\n" in relative or "\r" in relative:
        raise ValueError(f"{name}: control characters are not allowed in a path")
    candidate = Path(relative)
    if candidate.is_absolute():
        raise ValueError(f"{name}: '{relative}' is absolute; give a path relative to the repository")
    resolved = (base / candidate).resolve() if follow else Path(os.path.normpath(base / relative.strip()))
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
    reuse = attempt(lambda: parse_reuse(values["reuse"]))
    mode = attempt(lambda: parse_mode(values["mode"]))
    comment = attempt(lambda: parse_bool("comment", values["comment"]))
    junit = None
    if values["junit"].strip():
        junit = attempt(lambda: _inside(workspace, base, values["junit"], "junit"))
        if junit is not None and junit.is_dir():
            problems.append(f"junit: '{values['junit']}' is a directory")
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
    if values["json-report"].strip() and mode == "publish":
        # The report to publish is the pull request's artifact, read as untrusted (report_check): the
        # path as written, so that a symlink on it (out of the workspace too) or a directory is the
        # artifact's fault, refused with a failure check run, not an input error that publishes none.
        json_report = attempt(lambda: _inside(workspace, base, values["json-report"], "json-report", follow=False))
    elif values["json-report"].strip():
        json_report = attempt(lambda: _inside(workspace, base, values["json-report"], "json-report"))
        if json_report is not None and json_report.is_dir():
            problems.append(f"json-report: '{values['json-report']}' is a directory")
    outputs = None
    if values["outputs"].strip():
        outputs = attempt(lambda: _inside(workspace, base, values["outputs"], "outputs"))
        if outputs is not None and not outputs.is_file():
            problems.append(f"outputs: '{values['outputs']}' is not a file in the workspace")
    if mode == "publish":
        problems.extend(_publish_problems(values, env))
    if problems:
        raise InputError(problems)
    assert workdir is not None and config is not None and fail_on is not None and read_holdout is not None
    assert reuse is not None and mode is not None and comment is not None
    return Inputs(
        config=os.path.relpath(config, workdir),
        working_directory=workdir,
        fail_on=fail_on,
        read_holdout=read_holdout,
        holdout_reason=reason,
        github_token=token,
        check_name=check_name,
        json_report=json_report,
        outputs=outputs,
        reuse=reuse,
        mode=mode,
        comment=comment,
        junit=junit,
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
        "read-holdout: true needs a reason: set holdout-reason, or run on a release (the reason becomes 'release "
        "<tag>'), "
        "a tag push, or a workflow_dispatch with a 'reason' input"
    )
