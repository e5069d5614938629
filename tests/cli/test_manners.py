"""Issue 19, point 8: the CLI's manners, through the real command line.

``--color`` beside NO_COLOR/FORCE_COLOR; release.yaml found from a subdirectory (up to the
repository's root, never beyond it); ``-q`` says less and ``-v`` more; a table too wide for the
terminal becomes plain lines instead of cutting words; a heartbeat in logs while a system runs;
shell completion generated from the parser, run in real shells.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from tests.conftest import Project, labelled_cases

ROOT = Path(__file__).resolve().parent.parent.parent
ESC = "\x1b["


def oloproof(
    *argv: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The CLI as a subprocess (stdout a pipe, not a terminal), with this source tree first."""
    base = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS", "CI")}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT), base.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *argv],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def passing(project: Project) -> Project:
    return project.write(cases=labelled_cases(60, 60))


GREEN = ESC + "1;32m"  # PASS, bold green


@pytest.mark.parametrize(
    ("argv", "env", "shown"),
    [
        ((), {}, "plain"),  # a pipe: no escape at all
        ((), {"FORCE_COLOR": "1"}, "colour"),
        (("--color", "never"), {"FORCE_COLOR": "1"}, "plain"),  # the flag beats the environment
        (("--color", "always"), {"NO_COLOR": "1"}, "colour"),
        (("--color", "always"), {}, "colour"),
        ((), {"NO_COLOR": "1", "FORCE_COLOR": "1"}, "bold"),  # NO_COLOR: no colour; bold is not a colour
    ],
)
def test_color_flag_and_environment(passing: Project, argv: tuple[str, ...], env: dict[str, str], shown: str) -> None:
    before = oloproof(*argv, "gate", "-c", passing.config, cwd=passing.root, env=env)
    after = oloproof("gate", *argv, "-c", passing.config, cwd=passing.root, env=env)  # after the command, too
    for done in (before, after):
        assert done.returncode == ExitCode.PASS, done.stderr
        seen = "colour" if GREEN in done.stdout else "bold" if ESC in done.stdout else "plain"
        assert seen == shown, done.stdout[:300]


def test_color_is_refused_with_its_choices(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--color", "sometimes", "-c", passing.config]) == ExitCode.USAGE
    assert (
        "argument --color: invalid choice: 'sometimes' (choose from 'auto', 'always', 'never')"
        in capsys.readouterr().err
    )


def test_release_yaml_is_found_from_a_subdirectory_of_the_repository(passing: Project) -> None:
    (passing.root / ".git").mkdir()  # the repository's root
    deep = passing.root / "src" / "model"
    deep.mkdir(parents=True)
    done = oloproof("gate", cwd=deep)
    assert done.returncode == ExitCode.PASS, done.stderr
    assert done.stdout.startswith("oloproof gate ../../release.yaml  system v1")
    assert not (deep / ".oloproof").exists() and (passing.root / ".oloproof").is_dir()  # the store beside release.yaml


def test_no_search_beyond_the_repository_root_or_outside_a_repository(passing: Project) -> None:
    inner = passing.root / "inner"
    (inner / ".git").mkdir(parents=True)  # a repository inside the folder that holds release.yaml
    done = oloproof("gate", cwd=inner)
    assert done.returncode == ExitCode.USAGE
    assert "release.yaml: file not found" in done.stderr
    plain = passing.root / "not-a-repo"
    plain.mkdir()
    done = oloproof("gate", cwd=plain)  # no .git anywhere above: only the current folder is looked in
    if not any((parent / ".git").exists() for parent in plain.parents):
        assert done.returncode == ExitCode.USAGE and "release.yaml: file not found" in done.stderr


def test_an_explicit_config_is_never_searched_for(passing: Project) -> None:
    (passing.root / ".git").mkdir()
    sub = passing.root / "sub"
    sub.mkdir()
    done = oloproof("gate", "-c", "release.yaml", cwd=sub)
    assert done.returncode == ExitCode.USAGE and "release.yaml: file not found" in done.stderr


def mixed(project: Project) -> Project:
    cases = labelled_cases(60, 55)
    rules = "  - {id: easy, criterion: correct, min: 0.5}\n  - {id: hard, criterion: correct, min: 0.99}"
    return project.write(cases=cases, rules=rules)


def test_quiet_says_what_is_not_a_pass_and_verbose_says_everything(project: Project) -> None:
    mixed(project)
    quiet = oloproof("gate", "-q", "-c", project.config, cwd=project.root)
    assert quiet.returncode == ExitCode.FAIL
    lines = quiet.stdout.splitlines()
    assert lines[0].startswith("oloproof gate ") and lines[-1] == "verdict: FAIL  (exit 1; 1 of 2 rules pass)"
    assert any(line.startswith("FAIL hard: ") for line in lines)
    assert "easy" not in quiet.stdout and "┃" not in quiet.stdout and len(lines) == 3
    normal = oloproof("gate", "-c", project.config, cwd=project.root)
    assert "easy: " not in normal.stdout and "hard: " in normal.stdout  # a pass's sentence repeats its row
    verbose = oloproof("gate", "-v", "-c", project.config, cwd=project.root)
    assert "easy: correct is" in verbose.stdout and verbose.stdout.count("method: clopper-pearson (exact)") == 2
    both = oloproof("gate", "-q", "-v", "-c", project.config, cwd=project.root)
    assert both.returncode == ExitCode.USAGE and "not allowed with argument" in both.stderr


@pytest.mark.parametrize("columns", [60, 80, 100])
def test_a_narrow_terminal_gets_lines_not_words_cut_in_pieces(project: Project, columns: int) -> None:
    rules = "  - {id: a_rather_long_rule_identifier, criterion: correct, min: 0.99}"
    project.write(cases=labelled_cases(60, 59), rules=rules)
    done = oloproof("gate", "-c", project.config, cwd=project.root, env={"COLUMNS": str(columns)})
    assert done.returncode == ExitCode.INSUFFICIENT_EVIDENCE
    assert "INSUFFICIENT_EVIDENCE a_rather_long_rule_identifier; criterion correct; estimate 0.983;" in done.stdout
    assert "┃" not in done.stdout and "INSUFFICI\n" not in done.stdout
    wide = oloproof("gate", "-c", project.config, cwd=project.root, env={"COLUMNS": "160"})
    assert "┃ rule" in wide.stdout and "│ a_rather_long_rule_identifier │" in wide.stdout


def test_a_log_gets_a_heartbeat_while_the_system_runs(project: Project) -> None:
    slow = (
        "import json, sys, time\n"
        "rows = [json.loads(line) for line in sys.stdin]\n"
        "time.sleep(1.5)\n"
        "print(''.join(json.dumps({'id': row['id'], 'label': 1}) + '\\n' for row in rows), end='')\n"
    )
    (project.root / "slow.py").write_text(slow, encoding="utf-8")
    project.write(
        cases=labelled_cases(10, 10),
        command=json.dumps([sys.executable, str(project.root / "slow.py")]),
        rules="  - {id: some, criterion: correct, min: 0.5}",
    )
    done = oloproof("gate", "-c", project.config, cwd=project.root, env={"OLOPROOF_HEARTBEAT_S": "0.3", "CI": "true"})
    assert done.returncode == ExitCode.PASS, done.stderr
    beats = [line for line in done.stderr.splitlines() if line.startswith("running system: still working, ")]
    assert 2 <= len(beats) <= 10, done.stderr
    assert beats[0] == "running system: still working, 0m 00s"
    quiet = oloproof(
        "gate", "--rerun", "-q", "-c", project.config, cwd=project.root, env={"OLOPROOF_HEARTBEAT_S": "0.3"}
    )
    assert quiet.returncode == ExitCode.PASS and "still working" not in quiet.stderr


def script(shell: str) -> str:
    done = oloproof("completion", shell, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


BASH_PROBE = """
source "$1"
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _oloproof; echo "${COMPREPLY[*]}"; }
t oloproof ga
t oloproof gate --co
t oloproof gate --color ''
t oloproof holdout st
t oloproof holdout status --ps
t oloproof leakage check --engine ''
"""


def test_bash_completion_runs_in_bash(tmp_path: Path) -> None:
    (tmp_path / "oloproof.bash").write_text(script("bash"), encoding="utf-8")
    (tmp_path / "probe.sh").write_text(BASH_PROBE, encoding="utf-8")
    done = subprocess.run(
        ["bash", str(tmp_path / "probe.sh"), str(tmp_path / "oloproof.bash")],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "gate gap",
        "--config --color",
        "auto always never",
        "status",
        "--psi",
        "local spark",
    ]


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed (.ci/run installs it)")
def test_fish_completion_runs_in_fish(tmp_path: Path) -> None:
    (tmp_path / "oloproof.fish").write_text(script("fish"), encoding="utf-8")
    probe = (
        f"source {tmp_path / 'oloproof.fish'}; complete -C 'oloproof holdout st'; complete -C 'oloproof gate --color '"
    )
    done = subprocess.run(["fish", "--no-config", "-c", probe], capture_output=True, text=True, timeout=30, check=True)
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["status", "always", "auto", "never"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (.ci/run installs it)")
def test_zsh_completion_loads_in_zsh(tmp_path: Path) -> None:
    (tmp_path / "_oloproof").write_text(script("zsh"), encoding="utf-8")
    probe = f"autoload -U compinit && compinit -u -D; source {tmp_path / '_oloproof'}; print -r -- $_comps[oloproof]"
    done = subprocess.run(["zsh", "-f", "-c", probe], capture_output=True, text=True, timeout=30, check=True)
    assert done.stdout.strip() == "_bash_complete -o filenames -F _oloproof"


def test_quiet_marks_an_advisory_rule(project: Project) -> None:
    cases = labelled_cases(60, 55)
    rules = (
        "  - {id: easy, criterion: correct, min: 0.5}\n  - {id: hard, criterion: correct, min: 0.99, advisory: true}"
    )
    project.write(cases=cases, rules=rules)
    quiet = oloproof("gate", "-q", "-c", project.config, cwd=project.root)
    assert quiet.returncode == ExitCode.PASS, quiet.stdout
    assert any(line.startswith("FAIL (advisory) hard: ") for line in quiet.stdout.splitlines())
    assert quiet.stdout.splitlines()[-1] == "verdict: PASS  (exit 0; 1 of 2 rules pass, 1 advisory)"


def _on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Everything the CLI writes to stderr when stderr is a terminal (a pseudo-terminal here)."""
    import pty

    leader, follower = pty.openpty()
    base = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "FORCE_COLOR", "CI")}
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT), base.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, "-m", "oloproof", *argv],
        cwd=cwd,
        env={**base, **env},
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=60)
    return b"".join(chunks).decode("utf-8", "replace")


def test_color_never_keeps_the_progress_bar_plain_on_a_terminal(project: Project) -> None:
    slow = (
        "import json, sys, time\n"
        "rows = [json.loads(line) for line in sys.stdin]\n"
        "time.sleep(1.0)\n"
        "print(''.join(json.dumps({'id': row['id'], 'label': 1}) + '\\n' for row in rows), end='')\n"
    )
    (project.root / "slow.py").write_text(slow, encoding="utf-8")
    project.write(
        cases=labelled_cases(10, 10),
        command=json.dumps([sys.executable, str(project.root / "slow.py")]),
        rules="  - {id: some, criterion: correct, min: 0.5}",
    )
    coloured = _on_a_terminal(["--color", "always", "run", "-c", project.config], project.root, {})
    assert "running system" in coloured and _colours(coloured), coloured  # the bar, in colour
    plain = _on_a_terminal(["--color", "never", "run", "-c", project.config], project.root, {})
    assert "running system" in plain and not _colours(plain), plain


def _colours(text: str) -> list[str]:
    """The SGR sequences that set a colour or a style (not the reset ESC[0m / ESC[m)."""
    import re

    return [code for code in re.findall(r"\x1b\[([0-9;]*)m", text) if code not in ("", "0")]
