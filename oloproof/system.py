"""The ``system:`` section of release.yaml: the system under test, as declared.

Running it is ``oloproof.run`` (with ``oloproof.process`` underneath); this module only says what
the section may hold and turns it into a typed record.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.fingerprint import artifact_paths
from oloproof.schema import AnyOf, Obj, Prop, Scalar, Seq

SYSTEM = Obj(
    {
        "version": Prop(
            Scalar("str", nonempty=True), required=True, doc="Name recorded with every run of this system."
        ),
        "command": Prop(
            AnyOf((Scalar("str", nonempty=True), Seq(Scalar("str"), min_items=1))),
            doc="Command that reads cases as JSONL on stdin and writes outputs as JSONL on stdout. "
            "Split like a shell would, but never run through one. Omit it to gate imported outputs only.",
        ),
        "timeout_s": Prop(Scalar("number", exclusive_minimum=0.0), default=600.0, doc="Time allowed for one batch."),
        "batch_size": Prop(Scalar("int", minimum=1), default=1000, doc="Cases per call of the command."),
        "artifacts": Prop(
            Seq(Scalar("str", nonempty=True)),
            doc="Files, directories and globs (`envs/**/*.py`) the system runs with (weights, prompts, code, an "
            "environment package), besides those its command names: part of every run's fingerprint, so a run is "
            "never reused after one of them changed. Symbolic links are followed.",
        ),
    },
    doc="The system under test.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemSpec:
    version: str
    command: str | tuple[str, ...] | None
    timeout_s: float
    batch_size: int
    line: int | None
    artifacts: tuple[str, ...] = ()  # as written, relative to release.yaml

    @property
    def command_text(self) -> str | None:
        if self.command is None or isinstance(self.command, str):
            return self.command
        return " ".join(self.command)

    def files(self, base_dir: Path, command: str | Sequence[str] | None = None) -> tuple[Path, ...]:
        """What the system's fingerprint covers: the declared artifacts (a glob by what it matches
        now), and every existing file or directory that the command line (``command``, else
        ``system.command``) names — as an argument or as the value of ``--option=value`` —
        relative to release.yaml or absolute.
        The project directory itself and the directories above it are never included (they hold
        the run store, which changes with every run)."""
        found: dict[Path, None] = {}
        for artifact in self.artifacts:
            found.update(dict.fromkeys(artifact_paths(base_dir, artifact)))
        line = self.command if command is None else command
        if line is not None:
            try:
                tokens = shlex.split(line) if isinstance(line, str) else list(line)
            except ValueError:
                tokens = []
            project = base_dir.resolve()
            for token in tokens:
                for candidate in (token, token.partition("=")[2]):
                    if not candidate or "\0" in candidate:
                        continue
                    path = _resolve(base_dir, candidate)
                    try:
                        exists = path.is_file() or path.is_dir()
                        real = path.resolve()
                    except (OSError, ValueError):
                        continue
                    if exists and real != project and real not in project.parents:
                        found[path] = None
        return tuple(found)


def build_system(values: dict[str, Any], *, line: int | None, error: Callable[[str], Exception]) -> SystemSpec:
    """The typed section from its validated values; ``error`` makes a config error at system.command."""
    command = values["command"]
    if isinstance(command, str):
        check_command(command, error)
    return SystemSpec(
        version=values["version"],
        command=command if command is None or isinstance(command, str) else tuple(command),
        timeout_s=float(values["timeout_s"]),
        batch_size=int(values["batch_size"]),
        line=line,
        artifacts=tuple(values["artifacts"] or ()),
    )


def check_command(command: str, error: Callable[[str], Exception]) -> None:
    """Split a command string now, so a quoting mistake is a config error, not a crash later."""
    try:
        if not shlex.split(command):
            raise error("the command is empty")
    except ValueError as exc:
        raise error(f"cannot split the command: {exc}") from None


def _resolve(base_dir: Path, value: str) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base_dir / path
