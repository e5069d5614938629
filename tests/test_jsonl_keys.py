"""The duplicate-key check's key count (on the hot path of every case and output line) agrees with
a plain reference walk of the tokens, on JSON texts of any shape, and finds every key given twice."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.jsonl import _keys_written, has_duplicate_keys

TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"\s*(:)?|[^"]+')


def reference(raw: bytes) -> int:
    return sum(1 for match in TOKEN.finditer(raw) if match.group(1))


keys = st.text(alphabet='ab":\\ {}[],\u00e9', max_size=4)
values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(alphabet='ab":\\ {}[],', max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(values, st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]))
def test_the_key_count_equals_the_reference_walk(value: object, separators: tuple[str, str]) -> None:
    raw = json.dumps(value, separators=separators, ensure_ascii=False).encode()
    assert _keys_written(raw) == reference(raw)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(keys, values, min_size=1, max_size=4), st.data())
def test_a_key_written_twice_is_found(obj: dict[str, object], data: st.DataObject) -> None:
    raw = json.dumps(obj, ensure_ascii=False).encode()
    assert has_duplicate_keys(raw, json.loads(raw)) is None
    key = data.draw(st.sampled_from(sorted(obj)))
    twice = raw[:-1] + b", " + json.dumps(key, ensure_ascii=False).encode() + b": 0}"
    assert has_duplicate_keys(twice, json.loads(twice)) == key


# The fast path of parse_line proves a line clean by comparing it with orjson's writing of what it
# parsed to. Whatever the line (any spacing, escapes, duplicates, huge integers, odd floats), it must
# answer exactly what the full checks answer: the same object, or the same error.
numbers = st.integers(min_value=-(2**70), max_value=2**70) | st.floats(allow_nan=False, allow_infinity=False)
leaves = st.none() | st.booleans() | numbers | st.text(alphabet='ab":\\ ,{}\u00e9\u2028', max_size=6)
nested = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3), max_leaves=10
)


def _outcome(parse: object, raw: bytes) -> object:
    from oloproof.errors import DataError

    try:
        return ("ok", json.dumps(parse(raw, path="f.jsonl", line=3), sort_keys=True))  # type: ignore[operator]
    except DataError as exc:
        return ("error", str(exc))


@settings(max_examples=400, deadline=None)
@given(
    st.dictionaries(keys, nested, min_size=1, max_size=4),
    st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]),
    st.booleans(),
    st.booleans(),
    st.data(),
)
def test_the_fast_path_answers_what_the_full_checks_answer(
    obj: dict[str, object], separators: tuple[str, str], ascii_only: bool, twice: bool, data: st.DataObject
) -> None:
    from oloproof.jsonl import parse_line, parse_line_checked

    raw = json.dumps(obj, separators=separators, ensure_ascii=ascii_only).encode()
    if twice:
        key = data.draw(st.sampled_from(sorted(obj)))
        value = data.draw(nested)
        raw = raw[:-1] + separators[0].encode() + json.dumps(key, ensure_ascii=ascii_only).encode()
        raw += separators[1].encode() + json.dumps(value, separators=separators).encode() + b"}"
    assert _outcome(parse_line, raw) == _outcome(parse_line_checked, raw)


def test_the_fast_path_never_hides_a_duplicate_or_rounds_an_integer() -> None:
    # "\u0022:" in a string is a quote and a colon once parsed: orjson writes it as \": , which a
    # byte count of '":' would take for a key. The comparison is of whole texts, so it is caught.
    import pytest

    from oloproof.errors import DataError
    from oloproof.jsonl import parse_line

    for raw in (b'{"a":"\\u0022:","a":"\\u0022:"}', b'{"a": 1, "a": 1}', b'{"a":1,"a":1}', b'{"a":{"b":1},"a":{"b":1}}'):
        with pytest.raises(DataError, match='the key "a" is given twice in one object'):
            parse_line(raw, path="f.jsonl", line=1)
    # orjson reads 2**64 as the float 1.8446744073709552e19; the label must stay the exact integer.
    for big in (2**64, 2**64 + 1, -(2**63) - 1, 10**30):
        value = parse_line(b'{"id":"c","n":%d}' % big, path="f.jsonl", line=1)
        assert value["n"] == big and isinstance(value["n"], int)


def test_bulk_reading_restores_the_collector_even_on_an_error(tmp_path: object) -> None:
    import gc
    from pathlib import Path

    import pytest

    from oloproof.errors import DataError
    from oloproof.testset import load_testset

    bad = Path(str(tmp_path)) / "cases.jsonl"
    bad.write_bytes(b'{"id": "a", "expected": {}}\n{"id": "a", "expected": {}}\n')
    assert gc.isenabled()
    with pytest.raises(DataError, match="duplicate case id 'a'"):
        load_testset(bad)
    assert gc.isenabled()
    gc.disable()
    try:
        bad.write_bytes(b'{"id": "a", "expected": {}}\n')
        load_testset(bad)
        assert not gc.isenabled()  # a caller that paused it keeps it paused
    finally:
        gc.enable()
