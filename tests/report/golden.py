"""Gold files for the renderers, and the one switch that regenerates them.

After an intended change to a renderer, regenerate and review the diff:

    OLOPROOF_REGOLD=1 python -m pytest tests/report

Volatile parts (checker digest, run id, times, paths of this machine) are fixed or scrubbed
before a rendering is compared, so a gold file holds only what the renderer decides.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

GOLD = Path(__file__).parent / "gold"
REGOLD = bool(os.environ.get("OLOPROOF_REGOLD"))
HOSTILE = "x|<script>alert(1)</script> *bold* [link](https://evil.example) `tick` \\ 100%\nnext::line,a:b"


def check_gold(name: str, text: str) -> None:
    path = GOLD / name
    if REGOLD:
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} missing: run with OLOPROOF_REGOLD=1 to create it"
    assert text == path.read_text(encoding="utf-8"), f"{name} differs from its gold file (OLOPROOF_REGOLD=1 regenerates it)"




def scrub(text: str, *paths: Path) -> str:
    """``text`` with each absolute path (and the repository's) replaced by a placeholder."""
    repo = Path(__file__).resolve().parents[2]
    text = text.replace(sys.executable, "<python>")
    for path, name in [*((p, f"<path{i}>") for i, p in enumerate(paths)), (repo, "<repo>")]:
        text = text.replace(str(path), name)
    return text
