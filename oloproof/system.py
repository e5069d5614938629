"""The ``system:`` section of release.yaml: the system under test, as declared.

Running it is ``oloproof.run`` (with ``oloproof.process`` underneath); this module only says what
the section may hold and turns it into a typed record.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

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

    @property
    def command_text(self) -> str | None:
        if self.command is None or isinstance(self.command, str):
            return self.command
        return " ".join(self.command)


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
    )


def check_command(command: str, error: Callable[[str], Exception]) -> None:
    """Split a command string now, so a quoting mistake is a config error, not a crash later."""
    try:
        if not shlex.split(command):
            raise error("the command is empty")
    except ValueError as exc:
        raise error(f"cannot split the command: {exc}") from None
