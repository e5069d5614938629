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
