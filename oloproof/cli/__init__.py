"""The command line: ``main(argv) -> int``, one module per subcommand.

One top-level handler maps every outcome to an exit code: the gate's verdicts (0, 1, 3, 4,
5), usage and configuration errors (2), internal errors (70) and Ctrl-C (130). Subcommand
modules import heavy libraries lazily so ``oloproof --help`` starts fast.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from oloproof import __version__
from oloproof.errors import ExitCode, OloproofError, Terminated


def _commands() -> list[ModuleType]:
    from oloproof.cli import gate, holdout, init, leakage, metamorphic, run, runs, schema, seeds

    return [gate, run, runs, leakage, metamorphic, seeds, holdout, init, schema]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="oloproof",
        description="A release gate for trained models and LLM prompts: verdicts from intervals, not point estimates.",
        epilog="Exit codes: 0 PASS, 1 FAIL, 3 BLOCKED, 4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW, "
        "2 usage or configuration error, 70 internal error, 130 interrupted, 143 terminated.",
    )
    parser.add_argument("--version", action="version", version=f"oloproof {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in _commands():
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code) if isinstance(exc.code, int) else int(ExitCode.USAGE)
    previous = _on_sigterm_raise()
    try:
        return int(args.handler(args))
    except OloproofError as exc:
        print(f"oloproof: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except Terminated:
        print("oloproof: terminated; nothing half-written was kept", file=sys.stderr)
        return int(ExitCode.TERMINATED)
    except KeyboardInterrupt:
        print("oloproof: interrupted; nothing half-written was kept", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        _silence_stdout()
        return int(ExitCode.PASS)
    except Exception as exc:  # the one place that turns bugs into exit 70
        return _internal_error(exc)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _on_sigterm_raise() -> Any:
    """Turn SIGTERM into an exception for the duration of a command (main thread only).
    Returns the previous handler, to restore."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated

    return signal.signal(signal.SIGTERM, raise_terminated)


def _internal_error(exc: BaseException) -> int:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else "?"
    print(
        f"oloproof: internal error (a bug in oloproof, not in your files): {type(exc).__name__}: {exc}\n"
        f"  at {where}; oloproof {__version__}, Python {sys.version.split()[0]}\n"
        "  set OLOPROOF_DEBUG=1 for the full traceback, and please report it",
        file=sys.stderr,
    )
    if os.environ.get("OLOPROOF_DEBUG"):
        traceback.print_exception(exc)
    return int(ExitCode.INTERNAL)


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
