"""Strict JSONL reading: every problem is named with its file and line.

orjson is used for speed; it rejects NaN/Infinity and invalid UTF-8 by itself, which is
exactly what a test set must not contain.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any

import orjson

from oloproof.errors import DataError
from oloproof.files import open_regular


class _NonFinite(Exception):
    pass


def _reject_constant(name: str) -> None:
    raise _NonFinite(name)


def _describe(exc: Exception, raw: bytes) -> str:
    """Why orjson refused a line, in words. Only called on the error path."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 (byte {err.start + 1} of the line)"
    try:
        # The standard parser accepts NaN/Infinity through parse_constant: if that is the only
        # thing wrong with the line, say so (and never for a word such as "banana").
        json.loads(text, parse_constant=_reject_constant)
    except _NonFinite:
        return "NaN and Infinity are not valid JSON numbers"
    except json.JSONDecodeError as err:
        return f"not valid JSON ({err.msg} at column {err.colno})"
    return f"not valid JSON ({str(exc).split(':', 1)[0]})"


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
    with open_regular(path, shown, expected="a JSONL file", data=True) as handle:
        for number, raw in enumerate(handle, start=1):
            stripped = raw.strip()
            if number == 1:
                stripped = stripped.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark, as some editors write
            if not stripped:
                continue
            yield number, parse_line(stripped, path=shown, line=number)


def dumps_line(obj: Any) -> bytes:
    """One canonical JSONL line: sorted keys, compact, UTF-8, newline-terminated."""
    return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE)
