"""Test sets: one JSONL case per line, with an id, an ``expected`` object and input keys.

A test set's identity is the SHA-256 of its canonical content, independent of line order
and of JSON formatting, so re-serialising a file does not invalidate evidence but any
change to a case does.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, NewType

from oloproof.errors import DataError
from oloproof.jsonl import bulk, dumps_line, iter_objects
from oloproof.schema import Obj, Prop, Scalar

# The ``testset:`` section of release.yaml.
TESTSET = Obj({"cases": Prop(Scalar("str", nonempty=True), required=True, doc="JSONL test set (the dev set).")})

CaseId = NewType("CaseId", str)

# Keys of a case that the gate reads and never shows to the system.
RESERVED_KEYS = frozenset({"id", "expected", "group", "stratum"})


class Case(NamedTuple):
    """One test case. A NamedTuple rather than a frozen dataclass: it is built once per line of
    sets with 10^5 cases, and a frozen dataclass's __init__ costs three times as much."""

    id: CaseId
    inputs: dict[str, Any]  # what the system receives (besides the id)
    expected: dict[str, Any]
    group: str | None
    stratum: str | None
    line: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TestSet:
    path: str  # as shown to people (relative to the working directory when possible)
    cases: tuple[Case, ...]
    digest: str  # "sha256:<hex>"
    has_groups: bool  # some case declares a `group`

    def __len__(self) -> int:
        return len(self.cases)


def _optional_label(obj: dict[str, Any], key: str, *, path: str, line: int) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(path, line, f"'{key}' must be a string or an integer, got {type(value).__name__}")
    return str(value)


def load_testset(file: Path, *, display: str | None = None, kind: str = "test set") -> TestSet:
    """Read and validate a test set; every problem names the file and line."""
    shown = display or str(file)
    cases: list[Case] = []
    first_line: dict[str, int] = {}
    hasher_lines: list[bytes] = []
    has_groups = False
    with bulk():
        for line, obj in iter_objects(file, display=shown):
            case_id = obj.get("id")
            if not isinstance(case_id, str) or not case_id:
                got = "no 'id'" if case_id is None else f"id {case_id!r}"
                raise DataError(shown, line, f"each case needs a non-empty string 'id', got {got}")
            if case_id in first_line:
                raise DataError(shown, line, f"duplicate case id '{case_id}' (first on line {first_line[case_id]})")
            first_line[case_id] = line
            expected = obj.get("expected")
            if not isinstance(expected, dict):
                got = "none" if expected is None else type(expected).__name__
                raise DataError(shown, line, f"case '{case_id}': 'expected' must be an object, got {got}")
            group = _optional_label(obj, "group", path=shown, line=line) if "group" in obj else None
            stratum = _optional_label(obj, "stratum", path=shown, line=line) if "stratum" in obj else None
            has_groups = has_groups or group is not None
            hasher_lines.append(dumps_line(obj))
            # The parsed object is this loop's own: without the reserved keys it is the case's input.
            del obj["id"], obj["expected"]
            if group is not None or "group" in obj:
                del obj["group"]
            if stratum is not None or "stratum" in obj:
                del obj["stratum"]
            cases.append(Case(CaseId(case_id), obj, expected, group, stratum, line))
    if not cases:
        fill = '; fill in your test set, one JSON object per line: {"id": ..., your input keys, "expected": {...}}'
        raise DataError(
            shown, None, f"the {kind} is empty: it needs at least one case" + (fill if kind == "test set" else "")
        )
    return TestSet(path=shown, cases=tuple(cases), digest=canonical_digest(hasher_lines), has_groups=has_groups)


def canonical_digest(canonical_lines: list[bytes]) -> str:
    """SHA-256 over canonical case lines in sorted order (line order does not matter)."""
    hasher = hashlib.sha256()
    for raw in sorted(canonical_lines):
        hasher.update(raw)
    return "sha256:" + hasher.hexdigest()
