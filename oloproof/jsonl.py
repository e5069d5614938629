"""Strict JSONL reading: every problem is named with its file and line.

orjson is used for speed; it rejects NaN/Infinity and invalid UTF-8 by itself, which is
exactly what a test set must not contain.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from oloproof.errors import DataError


def _describe(exc: Exception, raw: bytes) -> str:
    text = str(exc)
    lowered = raw.lower()
    if b"nan" in lowered or b"infinity" in lowered:
        return "NaN and Infinity are not valid JSON numbers"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 (byte {err.start + 1} of the line)"
    return f"not valid JSON ({text.split(':', 1)[0]})"


def parse_line(raw: bytes, *, path: str, line: int) -> dict[str, Any]:
    """Parse one JSONL line that must hold a JSON object."""
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DataError(path, line, _describe(exc, raw)) from None
    if not isinstance(value, dict):
        kind = "an array" if isinstance(value, list) else f"a {type(value).__name__}"
        raise DataError(path, line, f"expected a JSON object, got {kind}")
    return value


def iter_objects(path: str | os.PathLike[str], *, display: str | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line of a JSONL file."""
    shown = display or str(path)
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise DataError(shown, None, "file not found") from None
    except IsADirectoryError:
        raise DataError(shown, None, "is a directory, expected a JSONL file") from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            stripped = raw.strip()
            if not stripped:
                continue
            yield number, parse_line(stripped, path=shown, line=number)


def dumps_line(obj: Any) -> bytes:
    """One canonical JSONL line: sorted keys, compact, UTF-8, newline-terminated."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)


def read_objects(path: Path, *, display: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    return list(iter_objects(path, display=display))
