"""Normalisation: the matching rules of the leakage check (SPEC §4) in one place, shared by the
holdout guard (a dev set holding near copies of holdout cases is refused; ``near_copy_key``).
It sits in the base layer because two capabilities use it and neither may import the other.

The small side is hashed into memory and the large side streamed past it — the shape of
lm-evaluation-harness' decontamination, not Deepchecks' load-both-and-merge (which holds
the whole training set in memory and prints matched training rows; we never do either).

Matching, in one paragraph (docs/leakage.md has the full rules and examples):

- A case compares its input *leaves*: every key path down to a non-object value
  (``features.income``), or only the leaves under the ``--field`` paths. Keys a training
  row has beyond those are ignored (labels, ids, other columns).
- A leaf ``a.b.c`` is looked up in a training row as the nested path ``a → b → c``, then the
  flat key ``"a.b.c"``, then the same for the shorter suffixes ``b.c`` and ``c``: the first
  one the row has wins. So ``features.income`` meets a CSV column ``income`` (or
  ``features.income``). A row that has none of them cannot match that case.
- Values are normalised: strings NFKC-normalised, case-folded, format characters (Cf) dropped,
  whitespace runs collapsed to one space and trimmed (``normalise_string``, one function for
  every path; its version ``NORMALISATION`` is recorded); numbers compared by value
  (``3 == 3.0``), rounded to N decimals with ``--round``; booleans are not numbers. CSV cells
  carry no types, so there both sides are reduced to text and read the same way (``"3.0"`` is
  the number 3, ``"True"`` is true, empty is empty).
"""

from __future__ import annotations

import datetime
import decimal
import enum
import functools
import json
import math
import re
import sys
import unicodedata
from collections.abc import Hashable
from typing import Any, Literal

import orjson

Domain = Literal["typed", "text"]  # typed: JSON/Parquet values; text: CSV cells


class Token(enum.Enum):
    """Normalised values that must never equal a number or a string (``True == 1`` in Python)."""

    NULL = "null"
    TRUE = "true"
    FALSE = "false"


MISSING: Any = object()  # a compared key the row does not have (never pickled: each process has its own)

# --------------------------------------------------------------------------- normalisation

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?", re.ASCII)  # after lowercasing; no nan, inf or 1_000
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


NORMALISATION = "nfkc-casefold-cf-ws/1"  # recorded; a record made under another version is stale


@functools.cache
def _format_characters() -> dict[int, None]:
    """Unicode format characters (category Cf: zero-width space, soft hyphen, BOM, …), to delete."""
    return {code: None for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"}


def normalise_string(text: str) -> str:
    """THE string normaliser (every path uses it): NFKC, case-folded, Unicode format characters
    (Cf) dropped, every run of whitespace collapsed to one space, trimmed.

    ASCII text (nearly all of it) takes the fast path: for ASCII, NFKC and Cf removal change
    nothing and casefold is lower.
    """
    if text.isascii():
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", text.translate(_format_characters()))
    folded = text.casefold()
    if folded != text:
        folded = unicodedata.normalize("NFKC", folded)  # casefold can leave a string that is not NFKC
    return " ".join(folded.split())


def _number(value: float, digits: int | None) -> Hashable:
    return value if digits is None else round(value, digits)


def normalise_value(value: Any, digits: int | None) -> Hashable:
    """A typed value (JSON, Parquet) in the form that is compared. Equal forms match.

    Python's ``==`` between int and float is exact, so ``3`` and ``3.0`` meet without any
    conversion (and a 19-digit integer is not silently rounded through a float).
    """
    kind = type(value)
    if kind is str:
        return normalise_string(value)
    if kind is bool:
        return Token.TRUE if value else Token.FALSE
    if kind is int or kind is float:
        return value if digits is None else round(value, digits)  # type: ignore[no-any-return]  # int or float
    if value is None:
        return Token.NULL
    if kind is list or kind is tuple:
        return tuple(normalise_value(item, digits) for item in value)
    if kind is dict:
        return frozenset((key, normalise_value(item, digits)) for key, item in value.items())
    return _normalise_other(value, digits)


def _normalise_other(value: Any, digits: int | None) -> Hashable:
    """Types only Parquet produces (or subclasses): decimals, dates, bytes, numpy scalars."""

    if isinstance(value, bool):
        return Token.TRUE if value else Token.FALSE
    if isinstance(value, (int, float)):
        return (
            _number(value, digits)
            if isinstance(value, float)
            else (int(value) if digits is None else round(int(value), digits))
        )
    if isinstance(value, decimal.Decimal):
        return _number(float(value), digits) if value.is_finite() else str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return normalise_string(value.isoformat())
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return normalise_string(value)
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return normalise_value(item(), digits)
    return normalise_string(str(value))


def normalise_text(text: str, digits: int | None) -> Hashable:
    """A CSV cell (untyped text) in the form that is compared.

    Read the way pandas would: a numeric literal is a number, ``true``/``false`` (any case)
    a boolean, anything else a normalised string. An empty cell is the empty string.
    """
    norm = normalise_string(text)
    if not norm:
        return norm
    head = norm[0]
    if head in "0123456789+-." and _NUMBER.fullmatch(norm):
        if _INTEGER.fullmatch(norm):
            return _number(int(norm), digits)
        number = float(norm)
        return _number(number, digits) if math.isfinite(number) else norm
    if norm == "true":
        return Token.TRUE
    if norm == "false":
        return Token.FALSE
    return norm


def value_as_text(value: Any) -> str:
    """How a case value would be written in a CSV cell (null as an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value)
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:  # an integer beyond 2**64 inside: written exactly
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def normalise_case_value(value: Any, digits: int | None, domain: Domain) -> Hashable:
    return normalise_text(value_as_text(value), digits) if domain == "text" else normalise_value(value, digits)


# --------------------------------------------------------------------------- near copies (the holdout guard)

NEAR_COPY = "leakage normalisation, edge punctuation and quotes dropped; number forms by value"

# Quote pairs dropped when they enclose a whole value (after NFKC, which leaves curly quotes alone).
_QUOTE_PAIRS = {
    '"': '"',
    "'": "'",
    "`": "`",
    "\u201c": "\u201d",
    "\u2018": "\u2019",
    "\u00ab": "\u00bb",
    "\u201e": "\u201c",
}
# Marks an edit leaves at the end of a value: sentence-final ones (NFKC has already made ！ ？ ‼ …
# into ASCII ones), and a trailing comma, semicolon, colon or dash.
_TRAILING = ".!?\u2026\u3002,;:-\u2013\u2014"
_LEADING = "\u00a1\u00bf"  # ¡ ¿


def fold_edges(text: str) -> str:
    """``text`` (already ``normalise_string``-ed) without what an edit at its edges adds: a run of
    sentence-final marks (``. ! ? …``), commas, semicolons, colons or dashes at the end,
    ``¡``/``¿`` at the start, and a pair of quotes
    around the whole of it, repeated until nothing changes. Nothing inside the text is touched
    (``"let's eat, grandma"`` stays apart from ``"let's eat grandma"``), and a value made only of
    such marks keeps them (``"?"`` stays apart from ``"!"``)."""
    if not text or (text[-1] not in _TRAILING and text[0] not in _LEADING and text[0] not in _QUOTE_PAIRS):
        return text  # nearly every value: nothing at its edges
    current = text
    while True:
        folded = current.rstrip(_TRAILING).lstrip(_LEADING).strip()
        if len(folded) >= 2 and _QUOTE_PAIRS.get(folded[0]) == folded[-1]:
            folded = folded[1:-1].strip()
        if not folded or folded == current:  # nothing left but marks: keep them
            return current
        current = folded


def _near_text(text: str) -> Hashable:
    """A string as ``normalise_text`` reads a CSV cell, after ``fold_edges``: ``"3."`` is 3."""
    norm = fold_edges(normalise_string(text))
    if not norm:
        return norm
    if norm[0] in "0123456789+-." and _NUMBER.fullmatch(norm):
        if _INTEGER.fullmatch(norm):
            return int(norm)
        number = float(norm)
        return number if math.isfinite(number) else norm
    if norm == "true":
        return Token.TRUE
    if norm == "false":
        return Token.FALSE
    return norm


def _near_leaf(value: Any) -> Hashable:
    kind = type(value)
    if kind is str:
        return _near_text(value)
    if kind is int:
        return value  # type: ignore[no-any-return]  # an int
    if kind is float:
        return value if math.isfinite(value) else _near_text(repr(value))
    if isinstance(value, dict):
        return frozenset(near_copy_fields(value).items())
    if isinstance(value, (list, tuple)):
        return tuple(_near_leaf(item) for item in value)
    # As a CSV cell is read (3 == 3.0 == "3"; "true" is true; null is empty), edges folded.
    return _near_text(value_as_text(value))


def near_copy_fields(inputs: dict[str, Any]) -> dict[str, Hashable]:
    """A case's input, field by field, in the form the holdout guard compares: every leaf by its
    dotted key path (nested ``{"a": {"b": 1}}`` and flat ``{"a.b": 1}`` are the same field), each
    value through the leakage check's normaliser (NFKC, case-folded, format characters dropped,
    whitespace collapsed), then with edge punctuation and enclosing quotes dropped (``fold_edges``)
    and read as a number or a boolean where it is one. Two inputs whose fields are equal in this
    form are near copies."""
    fields: dict[str, Hashable] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if isinstance(value, dict) and value:
                walk(value, name)
            else:
                fields[name] = _near_leaf(value)

    walk(inputs, "")
    return fields


DISTINCTIVE_CHARS = 20  # a string leaf this long (near-copy form) can identify a case on its own


def near_copy_texts(inputs: dict[str, Any]) -> set[str]:
    """The case's string values of at least ``DISTINCTIVE_CHARS`` characters in near-copy form,
    wherever they sit (any key, any depth, in lists too): what stays of a case when its keys are
    renamed, nested elsewhere, dropped or added to."""
    found: set[str] = set()
    stack: list[Any] = [inputs]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)
        elif isinstance(node, str) and len(node) >= DISTINCTIVE_CHARS:
            value = _near_text(node)
            if isinstance(value, str) and len(value) >= DISTINCTIVE_CHARS:
                found.add(value)
    return found


def _canonical(value: Hashable) -> Any:
    """A near-copy value as plain JSON, the same for equal values (3 and 3.0 alike)."""
    if isinstance(value, Token):
        return {"token": value.value}
    if isinstance(value, bool):  # not produced by _near_leaf, but never a number
        return {"token": "true" if value else "false"}
    if isinstance(value, float):
        return int(value) if value.is_integer() else {"float": repr(value)}
    if isinstance(value, (int, str)):
        return value
    if isinstance(value, tuple):
        return [_canonical(item) for item in value]
    if isinstance(value, frozenset):
        return {"fields": sorted(orjson.dumps([key, _canonical(item)]).decode() for key, item in value)}
    return {"other": repr(value)}


def near_copy_bytes(fields: dict[str, Hashable]) -> bytes:
    """``near_copy_fields`` (or a projection of them) as canonical bytes, for a salted commitment:
    equal in this form exactly when the fields are equal."""
    return orjson.dumps([[key, _canonical(fields[key])] for key in sorted(fields)])
