"""Strict JSONL reading: every problem is named with its file and line.

orjson is used for speed; it rejects NaN/Infinity and invalid UTF-8 by itself, which is
exactly what a test set must not contain.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import re
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
    except RecursionError:  # deeper than the standard parser goes: orjson's own words say it
        pass
    return f"not valid JSON ({str(exc).split(':', 1)[0]})"


# A JSON string, or a run of anything else: matching these in turn partitions a valid JSON text
# exactly, so the strings followed by ":" are its object keys (a key inside a string never counts).
# The string alternative is written "unrolled" (runs of plain characters, then one escape at a time):
# the same matches as ``"(?:[^"\\]|\\.)*"``, about 1.7x faster on ordinary lines.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"\s*(:)?|[^"]+')


def _keys_written(raw: bytes) -> int:
    # findall returns each match's group in C (b":" after a key, b"" otherwise): about 1.8x faster
    # than walking match objects in Python, on the hot path of every case and output line.
    return _TOKEN.findall(raw).count(b":")


def _keys_parsed(value: Any) -> int:
    count = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            count += len(node)
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return count


def duplicate_key(raw: bytes) -> str | None:
    """The first key a JSON object of ``raw`` holds twice (orjson, like most parsers, silently keeps
    the last one), or None. Only called when the line has more keys than its parsed value."""

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, item in items:
            if key in seen:
                raise _Duplicate(key)
            seen[key] = item
        return seen

    try:
        json.loads(raw, object_pairs_hook=pairs)
    except _Duplicate as exc:
        return exc.key
    except (ValueError, RecursionError):  # deeper than the standard parser goes: no key can be named
        return None
    return None


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def has_duplicate_keys(raw: bytes, value: Any) -> str | None:
    """A key written twice in one object of ``raw`` (parsed as ``value``), or None. Cheap when there
    is none: the keys written are counted and compared with the keys parsed."""
    if _keys_written(raw) == _keys_parsed(value):
        return None
    return duplicate_key(raw)


# orjson reads an integer exactly only within [-2**63, 2**64): beyond, it silently returns the
# nearest float (2**64 and 2**64 + 1 both become 1.8446744073709552e19) or fails ("number is
# infinity"). A label must compare exactly, so a line holding an integer literal of 19 or more
# digits (every integer outside that range is one; the digits of a float, 0.000123…, are not) is
# read by the standard parser, which keeps integers of any size. Lines without one never pay for it.
_LONG_DIGITS = re.compile(rb"(?<![0-9.])[0-9]{19,}(?![0-9.eE])")
# The regex alone scans a 137 MB training file in seconds; with every digit written as 0 first,
# a 19-digit run is a plain substring search (memchr speed), and the regex runs only on the few
# lines that have one.
_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_RUN = b"0" * 19


def _has_long_integer(raw: bytes) -> bool:
    """Whether ``raw`` holds a run of 19 or more digits that is an integer literal (not the digits
    of a float such as 0.000123…): each run is found by a substring search, then its two ends
    are looked at. The same answer as ``_LONG_DIGITS.search(raw)``, at memchr speed."""
    zeros = raw.translate(_AS_ZERO)
    start = zeros.find(_RUN)
    while start >= 0:
        end = start + len(_RUN)
        while end < len(zeros) and zeros[end] == 0x30:
            end += 1
        if (start == 0 or raw[start - 1] != 0x2E) and (end == len(raw) or raw[end] not in b".eE"):
            return True
        start = zeros.find(_RUN, end)
    return False


class _NotFinite(Exception):
    pass


def _finite_float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _NotFinite(text)
    return value


def has_long_integers(lines: list[bytes]) -> bool:
    """Whether a block of lines may hold an integer orjson cannot read exactly (a cheap scan of
    the joined bytes; a run of digits inside a string is a harmless false alarm)."""
    return _has_long_integer(b"".join(lines))


def loads(raw: bytes) -> Any:
    """One JSON text, as orjson reads it but with integers of any size kept exact. Raises
    ``orjson.JSONDecodeError`` (a ``ValueError``) for what orjson refuses, and ``ValueError`` for a
    number out of range (a float beyond 1.8e308, an integer of more than 4300 digits)."""
    if not _has_long_integer(raw):
        return orjson.loads(raw)
    try:
        orjson.loads(raw)  # the line's validity is orjson's call (UTF-8, NaN, surrogates...)
    except orjson.JSONDecodeError as exc:
        if "number" not in str(exc):  # not the out-of-range integer the standard parser reads
            raise
    try:
        return json.loads(raw, parse_float=_finite_float, parse_constant=_reject_constant)
    except (_NotFinite, _NonFinite) as exc:
        raise ValueError(f"the number {exc} is out of range") from None
    except RecursionError:  # orjson reads 1024 levels, the standard parser about 1000
        raise ValueError("nested too deeply") from None
    except ValueError as exc:  # an integer of more than 4300 digits (sys.set_int_max_str_digits)
        raise ValueError(str(exc).split(";")[0]) from None


MAX_DEPTH = 255  # orjson writes no deeper (a stored run, a digest); nothing real nests further


def too_deep(raw: bytes) -> bool:
    """Whether a JSON text nests arrays and objects more than ``MAX_DEPTH`` levels (brackets inside
    strings do not count). Cheap for ordinary lines: only one with that many brackets is walked."""
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return False
    depth = 0
    for match in _TOKEN.finditer(raw):
        piece = match.group()
        if piece.startswith(b'"'):
            continue
        for byte in piece:
            if byte in (0x5B, 0x7B):  # [ {
                depth += 1
                if depth > MAX_DEPTH:
                    return True
            elif byte in (0x5D, 0x7D):  # ] }
                depth -= 1
    return False


def parse_line(raw: bytes, *, path: str, line: int) -> dict[str, Any]:
    """Parse one JSONL line that must hold a JSON object (a key given twice is an error: which
    value would count is a guess no gate should make).

    Fast path: a line that is exactly orjson's own compact writing of what it parsed to (as
    written by orjson, pandas' ``to_json(lines=True)`` and most JSONL writers without spaces) is
    proven clean by one comparison: its keys are the parsed keys (no key given twice), its depth is
    one orjson writes (at most 255), and every integer came back as the same digits (an integer
    orjson reads only approximately returns as a float, which writes differently). The same holds
    for Python's ``json.dumps`` spacing with ASCII text. Any other line takes the checks below,
    which give the same answers.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        value = None  # the checks below name what is wrong
    if isinstance(value, dict):
        try:
            written = orjson.dumps(value)
        except orjson.JSONEncodeError:
            written = b""
        # Python's json.dumps writes ", " and ": ": without those spaces the line is orjson's
        # writing. Taking them out of strings too can only make a comparison fail, never succeed
        # wrongly: a space is neither a quote nor a backslash, so the line keeps its structure.
        if written == raw or (written and written == raw.replace(b", ", b",").replace(b": ", b":")):
            return value
    return parse_line_checked(raw, path=path, line=line)


def parse_line_checked(raw: bytes, *, path: str, line: int) -> dict[str, Any]:
    """``parse_line`` without its fast path: every check made on the line itself."""
    try:
        value = loads(raw)
    except orjson.JSONDecodeError as exc:
        raise DataError(path, line, _describe(exc, raw)) from None
    except ValueError as exc:
        raise DataError(path, line, f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        kind = "an array" if isinstance(value, list) else f"a {type(value).__name__}"
        raise DataError(path, line, f"expected a JSON object, got {kind}")
    if too_deep(raw):
        raise DataError(path, line, f"not valid here: arrays and objects nested more than {MAX_DEPTH} levels deep")
    twice = has_duplicate_keys(raw, value)
    if twice is not None:
        raise DataError(path, line, f"the key {json.dumps(twice, ensure_ascii=True)} is given twice in one object")
    return value


@contextlib.contextmanager
def bulk() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a file's objects are built.

    Reading 100k cases makes about a million small containers, and each allocation burst starts a
    collection that walks all of them again (30% of the gate's time at 100k cases, measured). Parsed
    JSON holds no reference cycles, so reference counting frees everything as before; the collector
    runs again, in its previous state, as soon as the block ends (also on an error).

    Inside ``kept_heap()`` the objects built are also moved out of the collector's generations when
    the block ends (``gc.freeze``): otherwise the first collections after it walk every one of them
    again, up to three times as they age (about 0.45 µs per case of a gate at 100k cases, measured).
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if _kept_heaps:
                gc.freeze()
            gc.enable()


_kept_heaps: list[None] = []  # open kept_heap() blocks (a list: no global statement)


@contextlib.contextmanager
def kept_heap() -> Iterator[None]:
    """A block (one gate) whose bulk-read objects live until it ends: the collector leaves them
    alone meanwhile, and takes them back, without walking them, when the outermost block ends
    (``gc.unfreeze`` puts them in the oldest generation). Objects that die inside it are freed by
    reference counting as ever; only a reference cycle made garbage inside it waits for its end."""
    _kept_heaps.append(None)
    try:
        yield
    finally:
        _kept_heaps.pop()
        if not _kept_heaps:
            gc.unfreeze()


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
    return canonical(obj) + b"\n"


def pretty(data: Any) -> bytes:
    """An indented JSON document (numpy values allowed), exact for integers of any size (a number
    of cases needed may exceed 2**64)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY)
    except orjson.JSONEncodeError:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=_plain)
        return text.encode("utf-8")


def _plain(value: Any) -> Any:
    """A numpy scalar or array as plain Python (for the standard encoder)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def canonical(obj: Any) -> bytes:
    """Canonical JSON bytes (sorted keys, compact, UTF-8) for digests and stored lines. orjson
    writes integers only within [-2**63, 2**64); an object holding a larger one (a label, a YAML
    value) is written by the standard encoder instead, exactly, rather than failing."""
    try:
        return orjson.dumps(obj, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        try:
            text = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            raise  # not a big integer: orjson's own error is the one to see
        return text.encode("utf-8")
