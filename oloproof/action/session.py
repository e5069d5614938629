"""One run of the action: where its output goes, and the discipline every line obeys.

The log never carries a workflow command the action did not make: annotations are escaped and
capped (``Session.annotate``), the terminal report sits inside ``::stop-commands::``, and every
other line that quotes config, case, system or event text goes through ``Session.say``. The token
is masked first and redacted from every message. Files the run leaves in the workspace are given
to the workspace's owner (``chown_written``): the container runs as root.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from oloproof.action.checks_api import PUBLISH_DEADLINE_S
from oloproof.action.github import ActionEnv
from oloproof.action.inputs import input_env_name
from oloproof.files import write_report
from oloproof.report import annotations as ann

MASK_MIN = 4  # shorter pieces of a malformed token are not masked: masking one letter garbles the whole log


@dataclass(slots=True)
class Session:
    """State of one action run: where things go, and what was written to the workspace."""

    env: ActionEnv
    out: TextIO
    environ: Mapping[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.time)
    # time.monotonic() by which every GitHub API call of this run must be done: set when publishing
    # starts (the gate itself may run for as long as the system takes)
    api_deadline: float | None = None
    written: list[Path] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # never shown: redacted from every message
    shown: dict[ann.Level, int] = field(default_factory=lambda: {"error": 0, "warning": 0, "notice": 0})

    def start_publishing(self) -> float:
        """The deadline of every API call from now on (the first call fixes it)."""
        if self.api_deadline is None:
            self.api_deadline = time.monotonic() + PUBLISH_DEADLINE_S
        return self.api_deadline

    def print(self, text: str = "") -> None:
        """Write text the action made itself (workflow commands, protected blocks) as it is."""
        self.out.write(text if text.endswith("\n") else text + "\n")
        self.out.flush()

    def say(self, text: str) -> None:
        """Write a line that may quote config, case, system or event text: never a workflow command."""
        self.print(ann.safe_line(self.redact(text)))

    def annotate(self, items: list[ann.Annotation], *, more_hint: str = "see the job summary") -> None:
        """Annotations for the log, capped as GitHub shows them (per level, per step, across calls)."""
        kept = ann.capped(
            [replace(item, title=self.redact(item.title), message=self.redact(item.message)) for item in items],
            more_hint=more_hint,
            used=self.shown,
        )
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
        for piece in sorted(
            pieces, key=lambda piece: (-len(piece), piece)
        ):  # longest first, so redact() replaces whole values
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
        write_report(path, text.encode("utf-8"))  # a symlink's target, never the link itself
        self.written.append(path)


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
