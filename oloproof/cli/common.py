"""Options and helpers shared by subcommands."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

    from oloproof.config import Release


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c", "--config", default="release.yaml", metavar="FILE", help="release.yaml to read (default: %(default)s)"
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE", help="also write the result as JSON (documented, versioned schema)")


def add_quiet(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")


def load(args: argparse.Namespace) -> Release:
    from oloproof.config import load_release  # lazy: start-up

    return load_release(args.config)


def interactive() -> bool:
    """Progress bars only for a person at a terminal, never in CI logs."""
    return sys.stderr is not None and sys.stderr.isatty() and not os.environ.get("CI")


def console(stderr: bool = False) -> Console:
    """A console for people. Markup is off: rule ids, versions and paths are printed as
    written, never read as rich markup. A closed or broken stdout silences it instead of
    changing the command's exit code (the verdict is the exit code, whoever reads the text)."""

    from rich.console import Console  # lazy: start-up

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            silence_stdout()

    stream = sys.stderr if stderr else sys.stdout
    if stream is None:  # started with the stream closed
        return _Console(file=io.StringIO(), quiet=True, markup=False)
    # Logs and pipes get a wide, stable layout instead of rich's 80-column default, and lines are
    # never wrapped there: a wrap is a newline rich inserts, which would let text from a file (a case
    # id "::error::…") begin a line of a CI log, where a line that begins "::" is a workflow command.
    tty = stream.isatty()
    width = None if tty else int(os.environ.get("COLUMNS", "140") or 140)
    return _Console(stderr=stderr, highlight=False, soft_wrap=not tty, width=width, markup=False)


def silence_stdout() -> None:
    """Point stdout at /dev/null: a reader that went away must not turn into an error later."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def check_outputs(*paths: str | None, release: Release | None = None, inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse, before any work or read is spent, a report path that would replace an input of the
    command (everything ``release`` reads, and ``inputs``), is not a regular file (a directory, a
    FIFO, a device), is named twice, or cannot be created (``files.check_report_paths``)."""
    from oloproof.files import check_report_paths  # lazy: start-up

    protected = [] if release is None else release.input_files()
    protected += [Path(item) for item in inputs if item is not None]
    check_report_paths(paths, inputs=protected)


def write_file(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str, data: Any) -> None:
    from oloproof.jsonl import pretty  # lazy: start-up

    write_bytes(path, pretty(data) + b"\n")


def write_bytes(path: str, data: bytes) -> None:
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import atomic_write_bytes  # lazy: start-up

    try:
        atomic_write_bytes(Path(path), data)
    except OSError as exc:
        raise UsageError(f"{path}: cannot write it ({exc.strerror or exc})") from None


class BatchProgress:
    """A rich progress bar over cases, shown only when interactive and not quiet."""

    def __init__(self, label: str, *, enabled: bool) -> None:
        self.enabled = enabled
        self.label = label
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> BatchProgress:
        if self.enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )  # lazy: start-up

            self._progress = Progress(
                TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(self.label, total=None)
        return self

    def __call__(self, done: int, total: int) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
