"""A CSV training file split across worker processes finds exactly what one process finds."""

from __future__ import annotations

import csv
import io
import itertools
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import oloproof.leakage.scan
from oloproof.errors import DataError
from oloproof.leakage.csv_ranges import header_end, split_points
from oloproof.leakage.plan import build_plan
from oloproof.leakage.readers import detect
from oloproof.leakage.scan import scan_training
from oloproof.testset import load_testset


def _record_ends(data: bytes) -> set[int]:
    """The byte offsets where one csv reader finishes a record (the true split points)."""
    ends: set[int] = set()
    consumed = 0

    def lines():  # type: ignore[no-untyped-def]
        nonlocal consumed
        for line in io.BytesIO(data):
            consumed += len(line)
            yield line.decode("utf-8")

    reader = csv.reader(lines(), strict=True)
    for _ in reader:
        ends.add(consumed)
    return ends


CELL = st.one_of(
    st.text(alphabet='ab ,\n"', max_size=8).map(lambda t: '"' + t.replace('"', '""') + '"'),  # quoted, maybe multi-line
    st.text(alphabet="ab x", max_size=6),  # plain
)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(CELL, CELL), min_size=1, max_size=60), parts=st.integers(2, 6))
def test_every_split_point_of_well_formed_csv_is_a_record_boundary(tmp_path_factory: pytest.TempPathFactory, rows: list[tuple[str, str]], parts: int) -> None:
    data = ("a,b\n" + "".join(f"{x},{y}\n" for x, y in rows)).encode()
    path = tmp_path_factory.mktemp("csv") / "rows.csv"
    path.write_bytes(data)
    first = header_end(path, ["a", "b"], ",")
    assert first == 4
    ranges = split_points(path, len(data), first, parts)
    assert ranges[0][0] == 4 and ranges[-1][1] == len(data)
    assert all(end == start for (_, end), (start, _) in itertools.pairwise(ranges))
    assert {start for start, _ in ranges[1:]} <= _record_ends(data)


def test_a_header_that_is_not_one_plain_line_is_not_split(tmp_path: Path) -> None:
    path = tmp_path / "rows.csv"
    path.write_bytes(b'"a\nb",c\n1,2\n')
    assert header_end(path, ["a\nb", "c"], ",") is None
    path.write_bytes(b"\xef\xbb\xbfa,c\n1,2\n")  # a byte-order mark is read as csv_reader reads it
    assert header_end(path, ["a", "c"], ",") == 7
    path.write_bytes(b"a,c\r1,2\r")  # old Mac line ends: one "line" that is not the header
    assert header_end(path, ["a", "c"], ",") is None


def _project(folder: Path, n: int, *, body: list[str] | None = None) -> tuple[Path, Path]:
    cases = [{"id": f"c{i}", "prompt": f"Question {i}\nsecond line, with a comma", "expected": {}} for i in range(0, n, 37)]
    (folder / "cases.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["prompt", "n"])
    for i in range(n):
        text = f"Question {i}\nsecond line, with a comma" if i % 3 == 0 else f'other "{i}"\n\nmore'
        writer.writerow([text, i])
    lines = out.getvalue().splitlines(keepends=True)
    if body is not None:
        lines[1:1] = body
    (folder / "rows.csv").write_text("".join(lines))
    return folder / "cases.jsonl", folder / "rows.csv"


def _scan(cases: Path, rows: Path, jobs: int, *, skip: bool = False):  # type: ignore[no-untyped-def]
    plan = build_plan(load_testset(cases), fields=["prompt"], digits=None, domain="typed")
    outcome = scan_training(plan, detect(str(rows)), skip_malformed=skip, jobs=jobs, parallel_min_bytes=0)
    return outcome, sorted(plan.case_ids[i] for i in outcome.counts.leaked)


@pytest.fixture(autouse=True)
def _many_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(oloproof.leakage.scan, "usable_cpus", lambda: 8)  # three ranges even on a small machine


def test_workers_find_what_one_process_finds_in_csv_with_quoted_newlines(tmp_path: Path) -> None:
    cases, rows = _project(tmp_path, 6000)
    found = {}
    for jobs in (1, 2, 3):
        outcome, leaked = _scan(cases, rows, jobs)
        assert outcome.jobs == jobs
        found[jobs] = (leaked, outcome.counts.rows, outcome.counts.matched_rows, outcome.counts.malformed, outcome.sha256)
    assert found[1] == found[2] == found[3]
    assert found[1][1] == 6000 and len(found[1][0]) == len(range(0, 6000, 111))  # the cases whose i % 3 == 0


def test_a_stray_quote_in_an_unquoted_field_changes_nothing(tmp_path: Path) -> None:
    cases, rows = _project(tmp_path, 6000, body=['ab"c,1\n'])  # read literally by csv; breaks the quote parity
    one, leaked_one = _scan(cases, rows, 1)
    three, leaked_three = _scan(cases, rows, 3)
    assert (leaked_one, one.counts.rows) == (leaked_three, three.counts.rows) and one.counts.rows == 6001


def test_a_malformed_row_is_named_by_one_process_exactly_as_before(tmp_path: Path) -> None:
    cases, rows = _project(tmp_path, 6000)
    text = rows.read_text().splitlines(keepends=True)
    text[-3000] = "only,three,fields\n"
    rows.write_text("".join(text))
    messages = []
    for jobs in (1, 3):
        with pytest.raises(DataError) as raised:
            _scan(cases, rows, jobs)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] and "has 3 fields, the header has 2" in messages[0]
    skipped = [_scan(cases, rows, jobs, skip=True) for jobs in (1, 3)]
    assert [(o.counts.malformed_lines, o.counts.rows, leaked, o.jobs) for o, leaked in skipped] == [
        (skipped[0][0].counts.malformed_lines, 5999, skipped[0][1], 1)
    ] * 2  # the rescan is one process, and says so


def test_a_range_that_ends_inside_a_quoted_field_is_read_again_by_one_process(tmp_path: Path) -> None:
    cases, rows = _project(tmp_path, 3000)
    data = rows.read_bytes()
    inside = data.index(b"Question 1500\n") + len(b"Question 1500\n")  # a newline inside a quoted field
    plan = build_plan(load_testset(cases), fields=["prompt"], digits=None, domain="typed")
    source = detect(str(rows))
    first = header_end(rows, ["prompt", "n"], ",")
    assert first is not None
    counts = oloproof.leakage.scan._run_parallel(
        plan, source, False, None, [(first, inside), (inside, len(data))], lambda: None, csv=(["prompt", "n"], ",")
    )
    assert counts is None
