"""Options and helpers shared by subcommands."""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.inert import inert

if TYPE_CHECKING:
    from rich.console import Console

    from oloproof.config import Release


RELEASE_FILE = "release.yaml"


def add_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "-c",
        "--config",
        default=None,
        metavar="FILE",
        help="release.yaml to read (default: release.yaml here, or in the nearest folder above up to the "
        "repository's root)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", metavar="FILE", help="also write the result as JSON (documented, versioned schema)")


def add_quiet(parser: argparse.ArgumentParser, *, verbose: bool = False) -> None:
    """``-q`` (and, where a command has more to say, ``-v``)."""
    if not verbose:
        parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar, and no heartbeat in logs")
        return
    loud = parser.add_mutually_exclusive_group()
    loud.add_argument(
        "-q", "--quiet", action="store_true", help="say less: no table, only what is not a pass and the verdict"
    )
    loud.add_argument(
        "-v", "--verbose", action="store_true", help="say more: every rule's sentence and method, passes included"
    )


def load(args: argparse.Namespace) -> Release:
    from oloproof.config import load_release  # lazy: start-up
    from oloproof.errors import UsageError  # lazy: start-up

    if getattr(args, "config", None) is None:
        args.config = find_release(Path.cwd())
    path = Path(args.config)
    if not path.exists() and not path.is_symlink():
        raise UsageError(
            f"{inert(args.config)}: file not found; start a project with `oloproof init --kind "
            "classifier|prompt|regression DIR` (or copy one with `oloproof init --example NAME`), or name the config "
            "with -c FILE"
        )
    return load_release(args.config)


def find_release(start: Path) -> str:
    """The release.yaml a command reads when ``-c`` is not given: the one in ``start``, else the
    nearest one in a folder above it, up to the root of the git repository ``start`` is in (never
    beyond it, and not upward at all outside a repository: a release.yaml in someone's home folder
    is not this project's). Returned as typed from ``start`` (``../release.yaml``); when none is
    found, ``release.yaml``, which the loader then says is missing."""
    folders = [start, *start.parents]
    root = next((index for index, folder in enumerate(folders) if (folder / ".git").exists()), None)
    for folder in folders[: 1 if root is None else root + 1]:
        candidate = folder / RELEASE_FILE
        if candidate.is_file():
            return RELEASE_FILE if folder == start else os.path.relpath(candidate, start)
    return RELEASE_FILE


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
        return _Console(file=io.StringIO(), quiet=True, markup=False, emoji=False)
    # --color beats NO_COLOR and FORCE_COLOR, which rich reads itself under "auto".
    colour: dict[str, Any] = {}
    if _colour == "never":
        colour = {"no_color": True, "color_system": None}
    elif _colour == "always":
        colour = {"no_color": False, "force_terminal": True, "color_system": "standard"}
    # Logs and pipes get a wide, stable layout instead of rich's 80-column default, and lines are
    # never wrapped there: a wrap is a newline rich inserts, which would let text from a file (a case
    # id "::error::…") begin a line of a CI log, where a line that begins "::" is a workflow command.
    tty = stream.isatty()
    width = None if tty else int(os.environ.get("COLUMNS", "140") or 140)
    return _Console(stderr=stderr, highlight=False, soft_wrap=not tty, width=width, markup=False, emoji=False, **colour)


COLOURS = ("auto", "always", "never")
_colour = "auto"  # --color, for the command being run (set by cli.main, reset after it)


def set_colour(mode: str) -> str:
    """Set ``--color`` for this command; returns the previous mode (``cli.main`` restores it)."""
    global _colour
    previous, _colour = _colour, mode
    return previous


def silence_stdout() -> None:
    """Point stdout at /dev/null: a reader that went away must not turn into an error later."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, (_reports_stdout or sys.stdout).fileno())
    except (OSError, ValueError, AttributeError):
        pass


STDOUT = "-"  # a report path meaning standard output, for every report flag
_reports_stdout: Any = None  # the real stdout while people's output is moved to stderr


def check_outputs(*paths: str | None, release: Release | None = None, inputs: Iterable[str | Path | None] = ()) -> None:
    """Refuse, before any work or read is spent, a report path that would replace an input of the
    command (everything ``release`` reads, and ``inputs``), is a directory, a block device or a
    socket, is named twice, or cannot be created (``files.check_report_paths``).

    A report sent to standard output (``-``, or a path that is this process's stdout, such as
    ``/dev/stdout``) gets stdout to itself: what the command says to people moves to stderr, so
    ``oloproof gate --json - | jq`` reads one JSON document.
    """
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import check_report_paths  # lazy: start-up

    protected = [] if release is None else release.input_files()
    protected += [Path(item) for item in inputs if item is not None]
    to_stdout = [path for path in paths if path is not None and _is_stdout(path)]
    if len(to_stdout) > 1:
        raise UsageError(
            f"{to_stdout[1]}: named for two reports ({to_stdout[0]} and {to_stdout[1]} are both standard output); "
            "give each its own file"
        )
    check_report_paths([path for path in paths if path != STDOUT], inputs=protected)
    if to_stdout:
        people_to_stderr()


def _is_stdout(path: str) -> bool:
    from oloproof.files import same_file_as_fd  # lazy: start-up

    if path == STDOUT:
        return True
    stream = _reports_stdout or sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return False
    return same_file_as_fd(path, fd)


def people_to_stderr() -> None:
    """Send what is printed for people to stderr until ``restore_stdout``; reports keep stdout."""
    global _reports_stdout
    if _reports_stdout is None:
        _reports_stdout = sys.stdout
        sys.stdout = sys.stderr


def restore_stdout() -> None:
    global _reports_stdout
    if _reports_stdout is not None:
        sys.stdout, _reports_stdout = _reports_stdout, None


def write_file(path: str, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


def write_json(path: str, data: Any) -> None:
    from oloproof.jsonl import pretty  # lazy: start-up

    write_bytes(path, pretty(data) + b"\n")


def write_bytes(path: str, data: bytes) -> None:
    """Write a report: ``-`` (or this process's own stdout) to standard output; anything else where
    it points (``files.write_report``): a symlink's target, a device or a pipe written into, a
    regular file replaced atomically, except GitHub's job summary, which is appended to."""
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import write_report  # lazy: start-up

    if _is_stdout(path):
        _to_stdout(data)
        return
    try:
        write_report(Path(path), data, append=_is_step_summary(path))
    except OSError as exc:
        raise UsageError(f"{path}: cannot write it ({exc.strerror or exc})") from None


def _inert_report(data: bytes) -> bytes:
    """A report for stdout, which may be a CI log: no ``##[`` anywhere and no line starting (after
    blanks) with ``::``, written with the format's own escapes so the document means the same.
    JSON (``{``, ``[``) can hold either only inside a string, where ``\\u0023`` is ``#``; XML, HTML
    and Markdown take ``&#35;`` and ``&#58;``."""
    json_like = data.lstrip()[:1] in (b"{", b"[")
    hash_sign, colon = (b"\\u0023", b"\\u003a") if json_like else (b"&#35;", b"&#58;")
    data = data.replace(b"##[", hash_sign + b"#[")
    lines = data.split(b"\n")
    for number, line in enumerate(lines):
        body = line.lstrip()
        if body.startswith(b"::"):
            lines[number] = line[: len(line) - len(body)] + colon + body[1:]
    return b"\n".join(lines)


def _to_stdout(data: bytes) -> None:
    stream = _reports_stdout or sys.stdout
    if stream is None:
        return
    data = _inert_report(data)
    try:
        stream.flush()
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            buffer.write(data)
            buffer.flush()
        else:
            stream.write(data.decode("utf-8"))
            stream.flush()
    except BrokenPipeError:  # the reader went away: the exit code still carries the verdict
        silence_stdout()


def _is_step_summary(path: str) -> bool:
    """Whether ``path`` is GitHub's job summary for this step, which is appended to (GitHub's
    contract: earlier content of the step's summary is kept). Any other file is replaced."""
    from oloproof.action.github import step_summary_file  # lazy: start-up
    from oloproof.files import same_file_as_path  # lazy: start-up

    summary = step_summary_file(os.environ)
    return summary is not None and same_file_as_path(path, summary)


HEARTBEAT_S = 30.0  # a line in a CI log this often while a system runs (OLOPROOF_HEARTBEAT_S)


class BatchProgress:
    """How a long run shows it is alive: a rich progress bar for a person at a terminal; in a log
    (CI, a pipe), a heartbeat line on stderr every ``HEARTBEAT_S`` seconds while the run lasts (a
    log with no line for ten minutes looks like a hang); nothing with ``quiet``."""

    def __init__(self, label: str, *, quiet: bool) -> None:
        self.label = label
        self.bar = not quiet and interactive()
        self.heartbeat = None if quiet or self.bar else _heartbeat_seconds()
        self._progress: Any = None
        self._task: Any = None
        self._done = self._total = 0
        self._stop: Any = None
        self._thread: Any = None

    def __enter__(self) -> BatchProgress:
        if self.bar:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )  # lazy: start-up

            self._progress = Progress(
                TextColumn(self.label),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console(stderr=True),  # --color never: no colour in the bar either
                transient=True,
            )
            self._progress.__enter__()
            self._task = self._progress.add_task(self.label, total=None)
        elif self.heartbeat is not None:
            import threading  # lazy: start-up
            import time  # lazy: start-up

            self._stop = threading.Event()
            started = time.monotonic()

            def beat() -> None:
                while not self._stop.wait(self.heartbeat):
                    print(self.beat_line(time.monotonic() - started), file=sys.stderr, flush=True)

            self._thread = threading.Thread(target=beat, name="oloproof-heartbeat", daemon=True)
            self._thread.start()
        return self

    def beat_line(self, elapsed: float) -> str:
        minutes, seconds = divmod(int(elapsed), 60)
        so_far = f"{self._done:,}/{self._total:,} cases answered, " if self._total else ""
        return f"{self.label}: still working, {so_far}{minutes}m {seconds:02d}s"

    def __call__(self, done: int, total: int) -> None:
        self._done, self._total = done, total
        if self._progress is not None:
            self._progress.update(self._task, completed=done, total=total)

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
        if self._thread is not None:
            self._stop.set()
            self._thread.join(timeout=5)


def _heartbeat_seconds() -> float:
    raw = os.environ.get("OLOPROOF_HEARTBEAT_S", "")
    try:
        value = float(raw) if raw else HEARTBEAT_S
    except ValueError:
        return HEARTBEAT_S
    return value if 0.05 <= value <= 3600 else HEARTBEAT_S
