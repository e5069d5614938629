"""The command line: ``main(argv) -> int``, one module per subcommand.

One top-level handler (``oloproof.exits``, shared with the GitHub Action) maps every outcome to an
exit code: the gate's verdicts (0, 1, 3, 4, 5), usage and configuration errors (2), internal
errors (70), Ctrl-C (130) and SIGTERM (143). Subcommand
modules import heavy libraries lazily so ``oloproof --help`` starts fast.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType

from oloproof import __version__
from oloproof.cli.common import COLOURS, restore_stdout, set_colour, silence_stdout
from oloproof.errors import ExitCode, OloproofError
from oloproof.exits import run_guarded, where_raised
from oloproof.inert import SafeLines, inert

# Each subcommand's one-line help, in the order ``oloproof --help`` lists them. Only the module of the
# command being run is imported (start-up: the twelve modules cost more than the rest of the CLI);
# tests/cli/test_startup.py checks that these lines are the modules' own.
COMMANDS: dict[str, str] = {
    "gate": "decide every rule of the policy and exit with the verdict",
    "run": "run the system on the test set and record the run",
    "runs": "list recorded runs",
    "compare": "pair two runs of the dev set case by case (B minus A)",
    "gap": "the dev-to-holdout gap: real improvement and fit since the week-0 version",
    "leakage": "check the test set against the training data",
    "metamorphic": "inspect, label and run the declared metamorphic transforms",
    "seeds": "judge the training recipe across k seeds",
    "holdout": "read the reserved holdout set (with a reason, against a budget), show its log",
    "init": "start a project: a commented skeleton (--kind) or a worked example (--example)",
    "schema": "print the JSON Schema of release.yaml or policy.yaml",
    "completion": "print a shell completion script",
}


def _module(name: str) -> ModuleType:
    return importlib.import_module(f"oloproof.cli.{name}")


def chosen_command(argv: Sequence[str]) -> str | None:
    """The subcommand an argument list runs, as argparse will read it; None when it names none.

    Only ``--color X`` may come before the command; anything else there is --help, --version or a
    usage error, none of which needs a subcommand's own parser.
    """
    tokens = iter(argv)
    for token in tokens:
        name, equals, _ = token.partition("=")
        if len(name) >= 3 and "--color".startswith(name):  # argparse takes `--col` for `--color`
            if not equals:
                next(tokens, None)
        elif not token.startswith("-"):
            return token if token in COMMANDS else None
        else:
            return None
    return None


def build_parser(only: str | None = "") -> argparse.ArgumentParser:
    """The whole parser (``only=""``, the default), or one whose only full subcommand is ``only``.

    The other subcommands are listed with their help line, so ``oloproof --help`` and the usage error
    for a misspelt command read the same either way; ``only=None`` makes every one a listing.
    """
    parser = argparse.ArgumentParser(
        prog="oloproof",
        description="A release gate for trained models and LLM prompts: verdicts from intervals, not point estimates.",
        epilog="Exit codes: 0 PASS, 1 FAIL, 3 BLOCKED, 4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW, "
        "2 usage or configuration error, 70 internal error, 130 interrupted, 143 terminated.",
    )
    parser.add_argument("--version", action="version", version=f"oloproof {__version__}")
    _add_colour(parser, default="auto")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, line in COMMANDS.items():
        if only == "" or name == only:
            _module(name).register(sub)
        else:
            sub.add_parser(name, help=line)
    _colour_everywhere(sub)  # `oloproof gate --color never` as well as `oloproof --color never gate`
    parser.set_defaults(root_parser=parser)  # `oloproof completion` writes its script from this parser
    return parser


def _colour_everywhere(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for command in sub.choices.values():
        _add_colour(command, default=argparse.SUPPRESS)
        for action in command._actions:  # argparse has no public walk of nested subcommands
            if isinstance(action, argparse._SubParsersAction):
                _colour_everywhere(action)


def _add_colour(parser: argparse.ArgumentParser, *, default: str) -> None:
    parser.add_argument(
        "--color",
        choices=COLOURS,
        default=default,
        help="colour in what is printed for people: auto (a terminal, unless NO_COLOR is set or FORCE_COLOR "
        "asks for it), always, or never (default: auto)",
    )


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        command = chosen_command(argv)
        if command is None:  # --help, --version, a usage error, or a command line read otherwise by argparse
            command = getattr(build_parser(None).parse_known_args(argv)[0], "command", None)
        # `completion` walks every subcommand's options, so it gets the whole parser.
        args = build_parser("" if command == "completion" else command).parse_args(argv)
    except SystemExit as exc:  # argparse: --help/--version exit 0, usage errors exit 2
        return int(exc.code) if isinstance(exc.code, int) else int(ExitCode.USAGE)
    held = next((name for name, value in vars(args).items() if "\0" in str(value)), None)
    if held is not None:  # no shell can pass one; a script calling main() can
        print(f"oloproof: error: {held}: an argument cannot contain a NUL byte", file=sys.stderr)
        return int(ExitCode.USAGE)
    streams = sys.stdout, sys.stderr
    colour = set_colour(args.color)
    # Every line printed for people passes ``safe_line``: none can act as a workflow command in CI.
    sys.stdout, sys.stderr = (stream if stream is None else SafeLines(stream) for stream in streams)
    try:
        return run_guarded(lambda: int(args.handler(args)), _Stderr())
    finally:
        restore_stdout()  # a report sent to stdout moved people's output to stderr for this command
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                if stream is not None:
                    stream.flush()
        sys.stdout, sys.stderr = streams
        set_colour(colour)


class _Stderr:
    """How the CLI says what ended a command: one line on stderr (a traceback only on request)."""

    def error(self, exc: OloproofError) -> None:
        print(f"oloproof: error: {inert(exc)}", file=sys.stderr)

    def stopped(self, code: ExitCode) -> None:
        word = "terminated" if code is ExitCode.TERMINATED else "interrupted"
        print(
            f"oloproof: {word}; nothing half-written was kept (a holdout read that had begun still counts against its "
            "budget: `oloproof holdout status` says so)",
            file=sys.stderr,
        )

    def internal(self, exc: BaseException) -> None:
        print(
            f"oloproof: internal error (a bug in oloproof, not in your files): {type(exc).__name__}: {inert(exc)}\n"
            f"  at {where_raised(exc)}; oloproof {__version__}, Python {sys.version.split()[0]}\n"
            "  set OLOPROOF_DEBUG=1 for the full traceback, and please report it",
            file=sys.stderr,
        )
        if os.environ.get("OLOPROOF_DEBUG"):
            import traceback  # lazy: start-up

            traceback.print_exception(exc)

    def broken_pipe(self) -> None:
        silence_stdout()
