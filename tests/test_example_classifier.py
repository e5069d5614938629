"""The classifier example end to end (issue 18, point 9), as a user types it: every command of the
README's "Run it" section from a fresh directory, each through `python -m oloproof` in its own
process, and every figure the README pastes checked against what the commands print. The
commands and the pasted table are read from the README itself, so the page cannot drift."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "examples" / "classifier" / "README.md").read_text()


def readme_lines() -> list[str]:
    section = README.split("## Run it", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
        lines += [line.split(" #", 1)[0].strip() for line in block.splitlines() if line.strip()]
    return lines


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, int, str]]:
    cwd = tmp_path_factory.mktemp("fresh")
    env = {**os.environ, "CI": "1", "COLUMNS": "140"}
    done: list[tuple[str, int, str]] = []
    for line in readme_lines():
        for part in line.split("&&"):
            argv = shlex.split(part)
            if argv[0] == "cd":
                cwd = cwd / argv[1]
                continue
            assert argv[0] == "oloproof", argv
            proc = subprocess.run(
                [sys.executable, "-m", "oloproof", *argv[1:]],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            done.append((part.strip(), proc.returncode, proc.stdout + proc.stderr))
    return done


def test_every_command_exits_as_the_readme_says(transcript: list[tuple[str, int, str]]) -> None:
    codes = {command: code for command, code, _ in transcript}
    assert codes == {
        "oloproof init --example classifier demo": 0,
        "oloproof leakage check --training data/training.jsonl --record": 0,
        "oloproof gate": 0,
        "oloproof gate -v": 0,
    }, [(command, code, out[-2000:]) for command, code, out in transcript if code]


def pasted_rows(block_start: str) -> list[str]:
    block = README.split(block_start, 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.startswith("│") and "latency_ms" not in line]


def test_the_pasted_table_is_what_the_gate_prints(transcript: list[tuple[str, int, str]]) -> None:
    gate = next(out for command, _, out in transcript if command == "oloproof gate")
    rows = pasted_rows("## What the gate says\n\n```text\n")
    assert len(rows) == 7  # six rules (latency aside: its figures are this machine's) and one wrapped line
    for row in rows:
        assert row in gate, row
    latency = next(line for line in gate.splitlines() if line.startswith("│ p95_latency"))
    assert "│ <= 5      │ PASS" in latency


def test_the_pasted_rows_and_classification_report_are_what_gate_v_prints(
    transcript: list[tuple[str, int, str]],
) -> None:
    verbose = next(out for command, _, out in transcript if command == "oloproof gate -v")
    for block_start in (
        "  ```text\n  accurate_by_size",
        "`classification_report` on the same predictions, with intervals:\n\n```text\n",
    ):
        block = README.split(block_start, 1)[1].split("```", 1)[0]
        first = block_start.rsplit("\n", 1)[-1]
        for line in [first, *block.splitlines()] if first.strip() else block.splitlines():
            text = line[2:] if block_start.startswith("  ") else line
            if text.strip():
                assert text in verbose, text
    assert "if the true rate were 0.965, PASS would need 1626 cases or more" in verbose
