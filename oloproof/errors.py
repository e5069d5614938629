"""One exit-code enum and one exception hierarchy for the whole tool.

"The gate said no" (1, 3, 4, 5) and "the tool broke" (2, 70) never share an exit code.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    PASS = 0
    FAIL = 1
    USAGE = 2  # configuration or input error: the user must fix a file or an argument
    BLOCKED = 3
    INSUFFICIENT_EVIDENCE = 4
    MANUAL_REVIEW = 5
    INTERNAL = 70  # a bug in oloproof (EX_SOFTWARE)
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT)
    TERMINATED = 143  # SIGTERM: a cancelled CI job, `timeout`, `docker stop` (128 + SIGTERM)


class OloproofError(Exception):
    """Base of every error the tool reports to a person without a traceback."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(OloproofError):
    """A wrong argument or a missing file: exits 2."""


class ConfigError(OloproofError):
    """A configuration file is wrong. Renders as ``file:line: key.path: message``."""

    def __init__(self, path: str, line: int | None, key_path: str, message: str) -> None:
        self.path = path
        self.line = line
        self.key_path = key_path
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.key_path}: {self.message}" if self.key_path else f"{where}: {self.message}"


MAX_MESSAGE = 1_000  # characters of a data error's message: an id or value quoted from a file may be huge


def clipped(message: str, limit: int = MAX_MESSAGE) -> str:
    """``message`` cut in the middle to about ``limit`` characters (its advice, at the end, is kept)."""
    if len(message) <= limit:
        return message
    head, tail = message[: limit * 2 // 3], message[-(limit // 3) :]
    return f"{head} … ({len(message) - len(head) - len(tail)} characters left out) … {tail}"


class DataError(OloproofError):
    """A data file (JSONL, CSV) is malformed. Renders as ``file:line: message``; a message longer than
    ``MAX_MESSAGE`` characters (a 100,000-character id quoted from the file) is cut in the middle."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        message = clipped(message)
        self.path = path
        self.line = line
        self.message = message
        where = path if line is None else f"{path}:{line}"
        super().__init__(f"{where}: {message}")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised like Ctrl-C so the same clean-up runs (systems killed, no half-written files)."""


class StoreError(OloproofError):
    """The run store or an evidence record cannot be read or a ref does not resolve."""
