"""The test-set loader on the gate's hot path (issue 20): the first problem in file order is the one
reported whatever its kind, and the digest and cases are what a plain reading gives."""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.errors import DataError
from oloproof.jsonl import kept_heap
from oloproof.testset import load_testset

A = b'{"id": "a", "expected": {"label": 1}}\n'
B = b'{"id": "b", "expected": {"label": 0}}\n'


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (A + A + b"not json\n", "cases.jsonl:2: duplicate case id 'a' (first on line 1)"),
        (A + b"not json\n" + A, "cases.jsonl:2: not valid JSON"),
        (A + B + b'{"id": "c", "expected": 3}\n' + B, "cases.jsonl:3: case 'c': 'expected' must be an object"),
        (A + B + B + b'{"id": "c", "expected": 3}\n', "cases.jsonl:3: duplicate case id 'b' (first on line 2)"),
        (A + B + b'{"id": "a", "expected": {}, "group": [1]}\n', "cases.jsonl:3: 'group' must be a string"),
        (B + A + b"\n" + A, "cases.jsonl:4: duplicate case id 'a' (first on line 2)"),
    ],
)
def test_the_first_problem_in_file_order_is_reported(tmp_path: Path, raw: bytes, message: str) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(raw)
    with pytest.raises(DataError) as caught:
        load_testset(path, display="cases.jsonl")
    assert str(caught.value).startswith(message)


LABELS = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y", "1"]), st.booleans(), st.none(), st.floats(-2, 2))
CASE = st.fixed_dictionaries(
    {"expected": st.dictionaries(st.sampled_from(["label", "score"]), LABELS, max_size=2)},
    optional={
        "text": st.text(max_size=8),
        "group": st.one_of(st.sampled_from(["g1", "g2"]), st.integers(0, 3), st.none()),
        "stratum": st.one_of(st.sampled_from(["s1", "s2"]), st.none()),
        "n": st.integers(-(2**70), 2**70),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(CASE, min_size=1, max_size=12), st.booleans())
def test_digest_and_cases_equal_a_plain_reading(bodies: list[dict[str, Any]], spaced: bool) -> None:
    import tempfile

    lines = []
    for number, body in enumerate(bodies):
        case = {"id": f"c{number}", **body}
        lines.append(json.dumps(case, separators=(", ", ": ") if spaced else (",", ":")).encode() + b"\n")
    canonical = sorted(
        json.dumps({"id": f"c{n}", **b}, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        for n, b in enumerate(bodies)
    )
    reference = "sha256:" + hashlib.sha256(b"".join(canonical)).hexdigest()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cases.jsonl"
        path.write_bytes(b"".join(lines))
        loaded = load_testset(path)
    assert loaded.digest == reference
    assert loaded.has_groups == any(body.get("group") is not None for body in bodies)
    for number, (case, body) in enumerate(zip(loaded.cases, bodies, strict=True)):
        assert case.id == f"c{number}" and case.line == number + 1 and case.expected == body["expected"]
        assert case.inputs == {k: v for k, v in body.items() if k not in ("expected", "group", "stratum")}
        group, stratum = body.get("group"), body.get("stratum")
        assert case.group == (None if group is None else str(group)) and case.stratum == stratum


def test_objects_read_in_a_kept_heap_return_to_the_collector(tmp_path: Path) -> None:
    """Inside a gate the loaded objects are frozen out of the collector's generations; when the gate
    ends they are handed back (nothing stays frozen), and the collector is on as before."""
    path = tmp_path / "cases.jsonl"
    path.write_bytes(A + B)
    assert gc.get_freeze_count() == 0
    with kept_heap():
        load_testset(path)
        assert gc.get_freeze_count() > 0 and gc.isenabled()
        with kept_heap():  # nested: only the outermost block hands them back
            load_testset(path)
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0 and gc.isenabled()
    load_testset(path)  # outside a gate nothing is frozen
    assert gc.get_freeze_count() == 0
