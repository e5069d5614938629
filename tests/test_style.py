"""The code stays in one style and type-checks: ruff (lint and format, line length 120) and
mypy --strict (pyproject.toml), as a developer runs them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE = ["oloproof", "tests", "benchmarks", "examples", "entrypoint.py"]


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_ruff_lint_and_format() -> None:
    beside = Path(sys.executable).parent / "ruff"  # the venv's own ruff (a dev dependency), else PATH's
    ruff = str(beside) if beside.exists() else shutil.which("ruff")
    assert ruff is not None, "ruff is a dev dependency: pip install -e '.[dev]'"
    lint = run(ruff, "check", *CODE)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    formatted = run(ruff, "format", "--check", "oloproof", "benchmarks", "entrypoint.py")
    assert formatted.returncode == 0, "run `ruff format oloproof benchmarks entrypoint.py`:\n" + formatted.stdout


def test_mypy_strict() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Success" in result.stdout
