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
    """Read and validate a test set; every problem names the file and line (the first problem in
    file order, whatever its kind)."""
    shown = display or str(file)
    cases: list[Case] = []
    ids: list[str] = []
    canonical_lines: list[bytes] = []
    has_groups = False
    make = tuple.__new__  # Case's own __new__ is a Python function: one frame per case saved
    try:
        with bulk():
            for line, obj in iter_objects(file, display=shown):
                case_id = obj.get("id")
                if type(case_id) is not str or not case_id:
                    got = "no 'id'" if case_id is None else f"id {case_id!r}"
                    raise DataError(shown, line, f"each case needs a non-empty string 'id', got {got}")
                expected = obj.get("expected")
                if type(expected) is not dict:
                    got = "none" if expected is None else type(expected).__name__
                    raise DataError(shown, line, f"case '{case_id}': 'expected' must be an object, got {got}")
                group = _optional_label(obj, "group", path=shown, line=line) if "group" in obj else None
                stratum = _optional_label(obj, "stratum", path=shown, line=line) if "stratum" in obj else None
                canonical_lines.append(dumps_line(obj))  # the whole parsed case: the digest's unit
                # The parsed object is this loop's own: without the reserved keys it is the case's input.
                del obj["id"], obj["expected"]
                if "group" in obj:
                    has_groups = has_groups or group is not None
                    del obj["group"]
                if "stratum" in obj:
                    del obj["stratum"]
                ids.append(case_id)
                cases.append(make(Case, (case_id, obj, expected, group, stratum, line)))
    except DataError as later:
        _raise_duplicate(ids, cases, shown, before=later.line or 0)  # a duplicate on an earlier line comes first
        raise
    if len(set(ids)) != len(ids):  # one pass in C; the lines are found only when there is a duplicate
        _raise_duplicate(ids, cases, shown, before=None)
    if not cases:
        fill = '; fill in your test set, one JSON object per line: {"id": ..., your input keys, "expected": {...}}'
        raise DataError(
            shown, None, f"the {kind} is empty: it needs at least one case" + (fill if kind == "test set" else "")
        )
    return TestSet(path=shown, cases=tuple(cases), digest=canonical_digest(canonical_lines), has_groups=has_groups)


def _raise_duplicate(ids: list[str], cases: list[Case], shown: str, *, before: int | None) -> None:
    """Raise the first duplicate id (by line), if one lies before line ``before`` (any, if None)."""
    first_line: dict[str, int] = {}
    for case_id, case in zip(ids, cases, strict=True):
        if before is not None and case.line >= before:
            return
        if case_id in first_line:
            raise DataError(shown, case.line, f"duplicate case id '{case_id}' (first on line {first_line[case_id]})")
        first_line[case_id] = case.line


def canonical_digest(canonical_lines: list[bytes]) -> str:
    """SHA-256 over canonical case lines in sorted order (line order does not matter)."""
    return "sha256:" + hashlib.sha256(b"".join(sorted(canonical_lines))).hexdigest()  # one update: no call per line
