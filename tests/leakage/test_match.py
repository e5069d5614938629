"""The pure part of the leakage check: normalisation, key paths, the plan and the matcher.

The fast paths (rounding buckets, the inline first key, worker processes) are checked
against a brute-force reference that normalises every value of every row.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.errors import DataError
from oloproof.leakage.match import Matcher
from oloproof.leakage.normalise import (
    MISSING,
    Token,
    normalise_case_value,
    normalise_string,
    normalise_text,
    normalise_value,
)
from oloproof.leakage.plan import build_plan, case_leaves, json_getters, lookup_candidates, resolve, rounding_buckets
from oloproof.leakage.readers import detect
from oloproof.leakage.scan import scan_training, split_ranges
from oloproof.testset import load_testset

# --------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("left", "right"),
    [("The  Quick\tFox\n", "the quick fox"), ("  ÉCOLE ", "école"), ("a\u00a0b", "a b"), ("", "   ")],
)
def test_strings_lowercased_and_whitespace_collapsed(left: str, right: str) -> None:
    assert normalise_value(left, None) == normalise_value(right, None)


@given(st.text())
def test_string_normalisation_is_idempotent(text: str) -> None:
    once = normalise_string(text)
    assert normalise_string(once) == once
    assert once == once.strip() and "  " not in once


def test_numbers_compare_by_value_and_bool_is_not_a_number() -> None:
    assert normalise_value(3, None) == normalise_value(3.0, None)
    assert normalise_value(-0.0, None) == normalise_value(0, None)
    assert normalise_value(True, None) != normalise_value(1, None)
    assert normalise_value(False, None) != normalise_value(0, None)
    assert normalise_value(None, None) is Token.NULL
    assert normalise_value(None, None) != normalise_value("", None)  # typed data keeps null and "" apart
    assert normalise_value(1.23456, 3) == normalise_value(1.2346, 3) == 1.235
    assert normalise_value(2, 3) == normalise_value(2.0004, 3)
    assert normalise_value(12345678901234567891, None) != normalise_value(12345678901234567890, None)  # no float detour
    assert normalise_value([1, "A "], None) == normalise_value([1.0, "a"], None)
    assert normalise_value({"k": "V"}, None) == normalise_value({"k": "v"}, None)


@pytest.mark.parametrize(
    ("cell", "value"),
    [
        ("3.0", 3), ("3", 3.0), (" 1e3 ", 1000), ("+.5", 0.5), ("007", 7), ("True", True), ("FALSE", False), ("", None), ("  ", ""),
        ("Hello  World", "hello world"),
    ],
)
def test_csv_cells_are_read_like_typed_values(cell: str, value: Any) -> None:
    assert normalise_text(cell, None) == normalise_case_value(value, None, "text")


@pytest.mark.parametrize("cell", ["nan", "inf", "1_000", "1e999", "0x10", "1,5", "3 apples"])
def test_csv_cells_that_are_not_numbers_stay_text(cell: str) -> None:
    assert isinstance(normalise_text(cell, None), str)


def test_rounding_in_csv_cells() -> None:
    assert normalise_text("77.7771", 3) == normalise_case_value(77.777, 3, "text")
    assert normalise_text("77.7771", 4) != normalise_case_value(77.777, 4, "text")


@settings(max_examples=400)
@given(st.floats(min_value=-1e9, max_value=1e9, allow_nan=False), st.floats(min_value=-1e9, max_value=1e9, allow_nan=False),
       st.integers(min_value=0, max_value=6))
def test_rounding_buckets_never_miss_an_equal_rounding(case: float, other: float, digits: int) -> None:
    """The cheap bucket test is a superset of the exact one: no leak can be missed by it."""
    near = round(case, digits) + (other % 1) * 10.0**-digits - 0.5 * 10.0**-digits  # in or at the edge of the rounding interval
    buckets = rounding_buckets(frozenset({round(case, digits)}), digits)
    for value in (case, other, near, round(case, digits), math.nextafter(near, math.inf)):
        if round(value, digits) == round(case, digits):
            assert math.floor(value * 10.0**digits) in buckets


# --------------------------------------------------------------------------- key paths


def test_lookup_candidates_order() -> None:
    assert lookup_candidates("a.b.c") == (("a", "b", "c"), ("a.b.c",), ("b", "c"), ("b.c",), ("c",))
    assert lookup_candidates("text") == (("text",),)


def test_resolve_first_place_wins_and_missing() -> None:
    candidates = lookup_candidates("features.income")
    assert resolve({"features": {"income": 1}, "income": 2}, candidates) == 1
    assert resolve({"features": {"age": 3}, "income": 2}, candidates) == 2
    assert resolve({"features.income": 4, "income": 2}, candidates) == 4
    assert resolve({"features": 5}, candidates) is MISSING
    assert resolve({"features": {"income": None}}, candidates) is None  # present, null: not missing


def test_case_leaves_walks_objects_and_rejects_a_key_given_twice() -> None:
    assert case_leaves({"f": {"a": 1, "b": {"c": [1, 2]}}, "t": "x", "e": {}}, case_id="c", path="p", line=1) == {
        "f.a": 1, "f.b.c": [1, 2], "t": "x", "e": {},
    }
    with pytest.raises(DataError, match=r"p:7: case 'c': key 'f\.a' is given both nested and as a dotted name"):
        case_leaves({"f": {"a": 1}, "f.a": 2}, case_id="c", path="p", line=7)


# --------------------------------------------------------------------------- the matcher against a reference


def _reference(cases: list[dict[str, Any]], rows: list[dict[str, Any]], digits: int | None) -> list[str]:
    """Normalise everything and compare every case with every row: slow and obviously right."""
    found = []
    for case in cases:
        leaves = case_leaves({k: v for k, v in case.items() if k not in ("id", "expected")}, case_id=case["id"], path="", line=1)
        for row in rows:
            values = [resolve(row, lookup_candidates(name)) for name in leaves]
            if all(v is not MISSING for v in values) and all(
                normalise_value(v, digits) == normalise_value(leaves[name], digits) for name, v in zip(leaves, values, strict=True)
            ):
                found.append(case["id"])
                break
    return found


VALUE = st.one_of(
    st.integers(min_value=-3, max_value=3), st.sampled_from([0.5, 1.0, 1.0004, 1.0006, 2.25, -0.0]),
    st.sampled_from(["a", "A ", " b", "B  c", "b c"]), st.booleans(), st.none(),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(VALUE, VALUE), min_size=1, max_size=6),
    st.lists(st.tuples(VALUE, VALUE, st.sampled_from(["nested", "flat", "no y"])), max_size=25),
    st.sampled_from([None, 0, 3]),
)
def test_matcher_agrees_with_the_reference(tmp_path_factory: pytest.TempPathFactory, cases_values: list, rows_values: list, digits: int | None) -> None:
    folder = tmp_path_factory.mktemp("m")
    cases = [{"id": f"c{i}", "f": {"x": x}, "y": y, "expected": {}} for i, (x, y) in enumerate(cases_values)]
    shapes = {"nested": lambda x, y: {"f": {"x": x}, "y": y}, "flat": lambda x, y: {"x": x, "y": y}, "no y": lambda x, y: {"f": {"x": x}}}
    rows = [shapes[shape](x, y) for x, y, shape in rows_values]
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    (folder / "rows.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows) or "\n")
    testset = load_testset(folder / "cases.jsonl")
    plan = build_plan(testset, fields=None, digits=digits, domain="typed")
    matcher = Matcher(plan, json_getters(plan), display="rows.jsonl", skip_malformed=False)
    matcher.scan_json_lines((folder / "rows.jsonl").read_bytes().split(b"\n"), 1)
    assert sorted(plan.case_ids[i] for i in matcher.counts.leaked) == sorted(_reference(cases, rows, digits))


CELLS = st.sampled_from(["1", "1.0", " 1.0004 ", "1.0006", "2.25", "-0", "007", "True", "false", "a", "A ", "b  c", "", "nan", "1_000"])
CASE_VALUES = st.one_of(
    st.sampled_from([1, 1.0, 1.0004, 2.25, 0, 7, True, False, None, "a", "b c", "", "007", "1_000", "true"]),
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(CASE_VALUES, CASE_VALUES), min_size=1, max_size=6),
    st.lists(st.tuples(CELLS, CELLS), max_size=25),
    st.sampled_from([None, 0, 3]),
)
def test_csv_matcher_agrees_with_the_reference(tmp_path_factory: pytest.TempPathFactory, cases_values: list, rows: list, digits: int | None) -> None:
    """CSV cells against typed case values: the fast paths (float(), plain strings) change nothing."""
    import csv as csv_module

    folder = tmp_path_factory.mktemp("c")
    cases = [{"id": f"c{i}", "f": {"x": x}, "y": y, "expected": {}} for i, (x, y) in enumerate(cases_values)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    with open(folder / "rows.csv", "w", newline="") as handle:
        writer = csv_module.writer(handle)
        writer.writerow(["x", "y"])
        writer.writerows(rows or [("unrelated", "row")])
    expected = sorted(
        case["id"] for case in cases
        if any(
            normalise_text(cx, digits) == normalise_case_value(case["f"]["x"], digits, "text")
            and normalise_text(cy, digits) == normalise_case_value(case["y"], digits, "text")
            for cx, cy in rows
        )
    )
    plan = build_plan(load_testset(folder / "cases.jsonl"), fields=None, digits=digits, domain="text")
    outcome = scan_training(plan, detect(str(folder / "rows.csv")), skip_malformed=False)
    assert sorted(plan.case_ids[i] for i in outcome.counts.leaked) == expected


# --------------------------------------------------------------------------- worker processes


def _many_rows(folder: Path, n: int, *, bad_line: int | None = None) -> tuple[Path, Path]:
    cases = [{"id": f"c{i}", "f": {"x": i * 1.5, "s": f"Text {i}"}, "expected": {}} for i in range(0, 400, 7)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    lines = [json.dumps({"f": {"x": i * 1.5, "s": f"TEXT  {i}" if i % 3 else f"other {i}"}, "n": i}) for i in range(n)]
    if bad_line is not None:
        lines[bad_line - 1] = '{"f": '
    (folder / "rows.jsonl").write_text("\n".join(lines) + "\n")
    return folder / "cases.jsonl", folder / "rows.jsonl"


def test_split_ranges_start_after_newlines(tmp_path: Path) -> None:
    _, rows = _many_rows(tmp_path, 1000)
    data = rows.read_bytes()
    ranges = split_ranges(rows, len(data), 3)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(data) and len(ranges) == 3
    for (_, end), (start, _) in itertools.pairwise(ranges):
        assert end == start and data[start - 1 : start] == b"\n"


def test_workers_find_what_one_process_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof.leakage.scan

    monkeypatch.setattr(oloproof.leakage.scan, "usable_cpus", lambda: 8)  # three ranges even on a small machine
    cases, rows = _many_rows(tmp_path, 3000)
    testset = load_testset(cases)
    results = []
    for jobs in (1, 2, 3):
        plan = build_plan(testset, fields=None, digits=None, domain="typed")
        outcome = scan_training(plan, detect(str(rows)), skip_malformed=False, jobs=jobs, parallel_min_bytes=0)
        assert outcome.jobs == jobs
        results.append((sorted(outcome.counts.leaked), outcome.counts.rows, outcome.counts.matched_rows, outcome.sha256))
    assert results[0] == results[1] == results[2]
    assert results[0][1] == 3000 and len(results[0][0]) > 10


def test_workers_report_the_files_line_number(tmp_path: Path) -> None:
    cases, rows = _many_rows(tmp_path, 3000, bad_line=2500)
    plan = build_plan(load_testset(cases), fields=None, digits=None, domain="typed")
    with pytest.raises(DataError, match=r"rows.jsonl:2500: not valid JSON"):
        scan_training(plan, detect(str(rows)), skip_malformed=False, jobs=2, parallel_min_bytes=0)
    plan = build_plan(load_testset(cases), fields=None, digits=None, domain="typed")
    outcome = scan_training(plan, detect(str(rows)), skip_malformed=True, jobs=2, parallel_min_bytes=0)
    assert outcome.counts.malformed_lines == [2500] and outcome.counts.rows == 2999


@pytest.mark.parametrize("jobs", [1, 2])
def test_progress_reports_bytes_read_and_rows(tmp_path: Path, jobs: int) -> None:
    cases, rows = _many_rows(tmp_path, 3000)
    plan = build_plan(load_testset(cases), fields=None, digits=None, domain="typed")
    calls: list[tuple[int, int]] = []
    scan_training(plan, detect(str(rows)), skip_malformed=False, jobs=jobs, parallel_min_bytes=0, progress=lambda done, n: calls.append((done, n)))
    assert calls and calls[-1] == (rows.stat().st_size, 3000)


def test_the_progress_bar_draws(capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof.cli.leakage import ScanProgress

    with ScanProgress(enabled=True, total=1000) as progress:
        assert progress is not None
        progress(500, 10)
        progress(1000, 20)
    with ScanProgress(enabled=False, total=1000) as progress:
        assert progress is None
