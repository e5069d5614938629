"""A system for the built-in measures: it answers each case with the case's ``out`` object, so a
test sets every output key (latency_ms, score, value, label) case by case."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import Project

SYSTEM = """\
import json, sys
key = sys.argv[1] if len(sys.argv) > 1 else "out"
for line in sys.stdin.read().splitlines():
    case = json.loads(line)
    print(json.dumps({"id": case["id"], **case.get(key, {})}))
"""


def measured(
    project: Project,
    cases: list[dict[str, Any]],
    rules: str,
    *,
    key: str = "out",
    batch_size: int | None = None,
    **extra: str,
) -> Project:
    """The project with this system; ``key``: which object of each case it answers with."""
    script = project.root / "system.py"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(SYSTEM, encoding="utf-8")
    return project.write(
        cases=cases, rules=rules, command=json.dumps([sys.executable, str(script), key]) + (f"\n  batch_size: {batch_size}" if batch_size else ""),
        **extra,
    )


def latency_cases(latencies: list[float | None]) -> list[dict[str, Any]]:
    """One case per latency (None: the output has no latency_ms); every label right."""
    return [
        {
            "id": f"c{i:04d}",
            "out": {"label": 1, **({"latency_ms": ms} if ms is not None else {})},
            "expected": {"label": 1},
        }
        for i, ms in enumerate(latencies)
    ]


def read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
