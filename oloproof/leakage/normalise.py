"""Normalisation, and the matching rules of the leakage check (SPEC §4) in one place.

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
NEAR_DUPLICATES = "Near-duplicates are not checked: only cases equal to a training row after normalisation are found."


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
