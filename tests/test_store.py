"""``oloproof.store``: the one owner of the ``.oloproof/`` layout, the one digest shortening and the
one UTC stamp; and one JSON shape for an interval (``oloproof.stats.interval.interval_json``)."""

from __future__ import annotations

import ast
from datetime import datetime, timezone
from pathlib import Path

from oloproof import store
from oloproof.stats.interval import Interval, interval_json

PACKAGE = Path(__file__).resolve().parent.parent / "oloproof"


def test_no_module_but_store_names_a_place_in_the_evidence_directory() -> None:
    """A string constant that is a layout name (``.oloproof``, ``holdouts.jsonl``, ``evidence``,
    ``.locks``) outside docstrings and messages means a path built by hand: it would not move with
    the layout, and a check looking there would pass silently."""
    layout = store.Layout()
    names = {layout.store, layout.register, layout.locks, layout.leakage, layout.leakage.split("/")[0]}
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "store.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}: {node.value!r}")
    assert found == []


def test_short_digest_is_one_spelling() -> None:
    digest = "sha256:" + "0123456789abcdef" * 4
    assert store.short_digest(digest) == "sha256:0123456789ab"
    assert store.short_digest(digest, ellipsis=True) == "sha256:0123456789ab…"
    assert store.short_digest("0123456789abcdef") == "0123456789ab"


def test_utc_stamp_styles() -> None:
    moment = datetime(2026, 12, 1, 21, 19, 18, 123456, tzinfo=timezone.utc)
    assert store.utc_stamp(now=moment) == "2026-12-01T21:19:18Z"
    assert store.utc_stamp("micro", now=moment) == "2026-12-01T21:19:18.123456Z"
    assert store.utc_stamp("compact", now=moment) == "20261201T211918Z"


def test_one_json_shape_for_an_interval() -> None:
    interval = Interval(estimate=0.5, low=0.4, high=0.6, level=0.95, method="wilson", approximate=True)
    assert interval_json(interval) == {
        "estimate": 0.5, "low": 0.4, "high": 0.6, "level": 0.95, "method": "wilson", "approximate": True, "seed": None,
    }
    assert interval_json(None) is None


def test_paths_follow_the_layout(monkeypatch: object) -> None:
    root = Path("/project")
    assert store.register_path(root) == root / ".oloproof" / "holdouts.jsonl"
    assert store.leakage_dir(root) == root / ".oloproof" / "evidence" / "leakage"
    assert store.shown("holdout_records") == ".oloproof/holdout"
