"""Start-up: only the module of the command being run is imported, and nothing a user sees changes."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from oloproof.cli.main import COMMANDS, build_parser, chosen_command, main


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_listed_help_lines_are_the_modules_own() -> None:
    full = {action.dest: action.help for action in _subcommands(build_parser())._choices_actions}
    assert full == COMMANDS
    assert list(full) == list(COMMANDS)  # the order --help lists them in


@pytest.mark.parametrize("only", [None, "gate", "holdout"])
def test_the_top_level_help_and_usage_are_the_same_with_one_command_built(only: str | None) -> None:
    assert build_parser(only).format_help() == build_parser().format_help()
    assert build_parser(only).format_usage() == build_parser().format_usage()


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["gate"], "gate"),
        (["--color", "never", "runs", "--json", "x"], "runs"),
        (["--color=always", "seeds", "judge"], "seeds"),
        (["--col", "never", "gate"], "gate"),
        (["--co=never", "gap"], "gap"),
        (["--c", "never", "gate"], "gate"),
        (["--", "gate"], None),
        (["--color"], None),
        (["--version"], None),
        (["-h", "gate"], None),
        ([], None),
        (["gaet"], None),
        (["--json", "gate"], None),
    ],
)
def test_the_chosen_command_is_read_as_argparse_reads_it(argv: list[str], command: str | None) -> None:
    assert chosen_command(argv) == command


def _modules_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\nfrom oloproof.cli.main import main\n"
        f"main({argv!r})\n"
        "print(' '.join(m for m in sys.modules if m.startswith('oloproof.cli.')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    return set(done.stdout.split()[-20:]) & {f"oloproof.cli.{name}" for name in COMMANDS}


def test_version_and_help_import_no_command_module() -> None:
    assert _modules_after(["--version"]) == set()
    assert _modules_after(["--help"]) == set()
    assert _modules_after(["gaet"]) == set()


def test_a_command_imports_only_its_own_module() -> None:
    assert _modules_after(["runs", "--help"]) == {"oloproof.cli.runs"}
    assert _modules_after(["--color", "never", "schema", "--help"]) == {"oloproof.cli.schema"}


def test_a_command_line_read_differently_still_runs_its_command(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Should chosen_command ever miss a command argparse finds, the whole parser is built after all.
    monkeypatch.setattr("oloproof.cli.main.chosen_command", lambda argv: None)
    assert main(["schema", "release"]) == 0
    assert '"$schema"' in capsys.readouterr().out


def test_completion_still_sees_every_option_of_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "--junit" in script  # gate's
    assert "--reason" in script  # holdout read's
    assert "--spark-master" in script  # leakage check's
