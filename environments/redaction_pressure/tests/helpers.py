"""Shared test helpers (standard library only: the suite runs under `python -m unittest`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

SECRET = "test-secret-0123456789-abcdefghijklmnop"  # 39 characters; never a real secret
OTHER_SECRET = "another-secret-9876543210-zyxwvutsrqpo"


def reply(*patterns: str, replacement: str = "[REDACTED]") -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": replacement} for p in patterns]})


def gold(ref: object, environ: object = None) -> str:
    """The task's gold reply (its grammar's oracle rules)."""
    from redaction_pressure.oracle import oracle_reply
    from redaction_pressure.splits import task_seed

    return oracle_reply(task_seed(ref, environ))  # type: ignore[arg-type]


def gold_patterns(ref: object) -> tuple[str, ...]:
    from redaction_pressure.corpus import grammar
    from redaction_pressure.oracle import oracle_patterns
    from redaction_pressure.splits import task_seed

    return oracle_patterns(grammar(task_seed(ref)))  # type: ignore[arg-type]
