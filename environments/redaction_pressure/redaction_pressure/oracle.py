"""The gold rules: written from the corpus grammar, they score exactly 1.0 on every task.

Used by the tests, by ``Task.validate`` (``vf-validate``'s gold check) and as a reference
writer for the gate (``--writer oracle``). They are not shown to any model.
"""

from __future__ import annotations

import json

ORACLE_PATTERNS = (
    r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9]{32,48}(?![A-Za-z0-9])",
    r"(?<![A-Za-z0-9_])ghp_[A-Za-z0-9]{36}(?![A-Za-z0-9])",
    r"(?<![A-Z0-9])(?:AKIA|ASIA)(?!IOSFODNN7EXAMPLE)[A-Z2-7]{16}(?![A-Za-z0-9*])",
    r"(?<![\w.+-])[a-z]+(?:\.[a-z]+|[0-9]+)?@[a-z]+\.(?:com|io|net|org|dev)(?![\w:.-])",
    r"(?<=(?<![A-Za-z0-9_])password=)[^\s\"&;,]+",
    r"(?<=\"password\": \")[^\"]+",
    r"(?<=(?<![A-Za-z0-9_])session(?:id)?=)[0-9a-f]{32}(?![0-9a-f])",
    r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
)


def oracle_reply() -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in ORACLE_PATTERNS]})
