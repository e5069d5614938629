"""Shared fixtures: small real projects on disk, driven through the real CLI in-process."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main

FIXTURES = Path(__file__).parent / "fixtures"
ECHO = FIXTURES / "echo_system.py"


def write_cases(path: Path, cases: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(case) + "\n" for case in cases), encoding="utf-8")


def labelled_cases(n: int, correct: int, *, prefix: str = "c") -> list[dict[str, Any]]:
    """n cases whose expected label is 1; the echo system answers 1 for the first `correct`."""
    return [
        {"id": f"{prefix}{i:05d}", "answer": 1 if i < correct else 0, "expected": {"label": 1}}
        for i in range(n)
    ]


def judge_label(case_id: str, grade: Any, output: dict[str, Any] | None = None) -> dict[str, Any]:
    """A human label bound to the output it graded (the echo system's ``{"id", "label": 1}`` by
    default): its ``output_sha256``, computed here independently of oloproof (sorted, compact JSON)."""
    graded = {"id": case_id, "label": 1} if output is None else output
    text = json.dumps(graded, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return {"id": case_id, "grade": grade, "output_sha256": "sha256:" + hashlib.sha256(text.encode()).hexdigest()}


class Project:
    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def config(self) -> str:
        return str(self.root / "release.yaml")

    def write(
        self,
        *,
        cases: list[dict[str, Any]] | None = None,
        rules: str = "  - {id: accurate, criterion: correct, min: 0.8}",
        system_args: str = "",
        extra: str = "",
        policy_extra: str = "",
        evaluators: str = "  - {type: label_match, field: label}",
        version: str = "v1",
        command: str | None = "",
    ) -> Project:
        """``command``: "" for the echo system (with ``system_args``), None for no command
        (imported outputs only), or the command line itself."""
        if cases is not None:
            write_cases(self.root / "data" / "test.jsonl", cases)
        if command == "":
            command = json.dumps([sys.executable, str(ECHO), *system_args.split()])
        command_line = f"  command: {command}\n" if command is not None else ""
        (self.root / "release.yaml").write_text(
            f"system:\n  version: {version}\n{command_line}  timeout_s: 20\n"
            f"testset:\n  cases: data/test.jsonl\n"
            f"evaluators:\n{evaluators}\n"
            f"policy:\n  confidence: 0.95\n{policy_extra}  rules:\n{rules}\n"
            f"{extra}",
            encoding="utf-8",
        )
        return self

    def cli(self, *argv: str) -> int:
        return main([argv[0], "-c", self.config, *argv[1:]])


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.fixture
def run_cli() -> Callable[..., int]:
    return lambda *argv: main(list(argv))


def report(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    """Run `oloproof gate --json` on the project; the exit code and the parsed report."""
    out = project.root / "report.json"
    code = project.cli("gate", "--json", str(out), *extra)
    return code, json.loads(out.read_text())


def config_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    """Run the gate from the project's directory (so paths show as written) and return stderr."""
    from oloproof.errors import ExitCode

    monkeypatch.chdir(project.root)
    capsys.readouterr()
    code = run_cli("gate", "-c", "release.yaml")
    assert code == ExitCode.USAGE
    return capsys.readouterr().err
