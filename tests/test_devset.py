"""The commands that need only the dev test set (with its holdout and transform guards) load it
from ``oloproof.devset``, not from the gate's orchestration (issue 18, "make room")."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


@pytest.mark.parametrize("command", ["run", "runs", "compare", "gap", "metamorphic"])
def test_dev_set_commands_do_not_import_the_gate(command: str) -> None:
    names = imported(ROOT / "oloproof" / "cli" / f"{command}.py")
    assert "oloproof.gate" not in names
    assert "oloproof.devset" in names


def test_the_gate_loads_the_same_dev_set() -> None:
    from oloproof import devset, gate

    assert gate.load_dev_testset is devset.load_dev_testset
