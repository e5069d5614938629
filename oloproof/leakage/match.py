"""The matcher: parsed training rows in, case indices and counts out (docs/leakage.md).

A ``Matcher`` holds a ``MatchPlan`` (the hashed test set) and checks rows one by one. Each
key of a group is first tested cheaply, in the plan's order, so most rows stop at the first
key; a row that passes every test is normalised exactly and looked up in the group's index.
It keeps no training value: only counts, line numbers of malformed rows and case indices.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from operator import length_hint
from typing import Any

import orjson

from oloproof.errors import DataError
from oloproof.jsonl import has_long_integers
from oloproof.jsonl import loads as exact_loads
from oloproof.leakage.images import ImageProblem
from oloproof.leakage.normalise import MISSING, normalise_string, normalise_text
from oloproof.leakage.plan import BUCKET_LIMIT, KeyGroup, MatchPlan, lookup_candidates

MAX_MALFORMED_LINES = 20  # line numbers kept for the report (the count is always exact)
TOO_DEEP = "a value is nested too deeply to compare"


@dataclass(slots=True)
class ScanCounts:
    """What one scan (or one worker's byte range) found. Never holds a training value."""

    rows: int = 0
    matched_rows: int = 0
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    lines: int = 0  # physical lines consumed (JSONL), to turn a worker's line numbers into the file's
    leaked: set[int] = field(default_factory=set)  # case indices

    def merge(self, other: ScanCounts, *, line_offset: int = 0) -> None:
        self.rows += other.rows
        self.matched_rows += other.matched_rows
        self.malformed += other.malformed
        room = MAX_MALFORMED_LINES - len(self.malformed_lines)
        self.malformed_lines.extend(line + line_offset for line in other.malformed_lines[:room])
        self.lines += other.lines
        self.leaked |= other.leaked


class Matcher:
    """Checks parsed training rows against a plan; counts, and remembers only case indices.

    Each key of a group is first tested cheaply (``MatchPlan.passes``) in the plan's order,
    so most rows stop at the first key; a row that passes every test has its values
    normalised exactly and looked up in the group's index.
    """

    def __init__(
        self, plan: MatchPlan, getters: list[list[Callable[[Any], Any]]], *, display: str, skip_malformed: bool
    ) -> None:
        self.plan = plan
        self.getters = getters
        self.display = display
        self.skip_malformed = skip_malformed
        self.counts = ScanCounts()
        self.normalise = plan.normaliser()
        self.digits = plan.digits
        self.scale = 10.0**plan.digits if plan.digits is not None else 1.0
        for group in plan.groups:
            if not group.index:
                group.build_index()

    def malformed(self, line: int, problem: str) -> None:
        """A row that cannot be read: an error naming file and line, or counted when skipping."""
        if not self.skip_malformed:
            raise DataError(
                self.display, line, f"{problem} (training row; pass --skip-malformed to skip and count such rows)"
            )
        counts = self.counts
        counts.malformed += 1
        if len(counts.malformed_lines) < MAX_MALFORMED_LINES:
            counts.malformed_lines.append(line)

    def check_row(self, row: Any) -> None:
        """Check one parsed row against every group (the general path)."""
        hit = False
        for group, getters in zip(self.plan.groups, self.getters, strict=True):
            hit = self.check_group(group, getters, row, 0) or hit
        if hit:
            self.counts.matched_rows += 1

    def check_group(self, group: KeyGroup, getters: list[Callable[[Any], Any]], row: Any, start: int) -> bool:
        """Test the row's keys from ``start`` on (earlier ones already passed), then match exactly.

        Records the cases the row equals and says whether there were any.
        """
        normalise, digits, scale, floor = self.normalise, self.digits, self.scale, math.floor
        values: list[Any] = []
        for position, getter in enumerate(getters):
            value = getter(row)
            if value is MISSING:
                return False
            if position >= start:
                buckets = group.buckets[position]
                kind = type(value)
                if (
                    buckets is not None
                    and (kind is float or kind is int)
                    and -BUCKET_LIMIT < value * scale < BUCKET_LIMIT
                ):
                    if floor(value * scale) not in buckets:
                        return False
                elif normalise(value, digits) not in group.value_sets[position]:
                    return False
            values.append(value)
        cases = group.index.get(tuple(normalise(value, digits) for value in values))
        if not cases:
            return False
        self.counts.leaked.update(cases)
        return True

    def check_rows(self, rows: Iterable[Any]) -> None:
        """Check rows that have no line numbers (Parquet): a problem names the row, counted from 1."""
        check = self.check_row
        count = 0
        for row in rows:
            try:
                check(row)
            except RecursionError:
                self.malformed(self.counts.rows + self.counts.malformed + count + 1, TOO_DEEP)
                continue
            except ImageProblem as exc:
                self.malformed(self.counts.rows + self.counts.malformed + count + 1, exc.message)
                continue
            count += 1
        self.counts.rows += count

    def scan_json_lines(self, lines: list[bytes], first_line: int) -> None:
        """Parse and check a block of JSONL lines; ``first_line`` is the number of ``lines[0]``.

        A value nested too deeply to normalise (RecursionError), or a picture that cannot be read
        at an image key (``ImageProblem``), is a malformed row: the block is then checked again row
        by row, on the general path, to find its line.
        """
        counts = self.counts
        before = (counts.rows, counts.matched_rows, counts.malformed, len(counts.malformed_lines), counts.lines)
        try:
            if has_long_integers(lines):
                # An integer orjson would round through a float (beyond 2**64): read the block
                # exactly, as the test set is, or a case holding 2**64 + 1 would meet neither its
                # own row nor be told apart from 2**64.
                self._scan_json_rows(lines, first_line)
            else:
                self._scan_json_block(lines, first_line)
        except (RecursionError, ImageProblem):
            counts.rows, counts.matched_rows, counts.malformed, kept, counts.lines = before
            del counts.malformed_lines[kept:]
            self._scan_json_rows(lines, first_line)

    def _scan_json_rows(self, lines: list[bytes], first_line: int) -> None:
        """The slow path of ``scan_json_lines``: one row at a time, each in its own ``try``."""
        bad = 0
        for line, raw in enumerate(lines, start=first_line):
            try:
                row = exact_loads(raw)
            except orjson.JSONDecodeError as exc:
                bad += self._bad_json(raw, exc, line)
                continue
            except ValueError as exc:  # read exactly: a number out of range, or nested too deeply
                why = "nested too deeply" if "nested" in str(exc) else "a number out of range"  # never the content
                self.malformed(line, f"not valid JSON ({why})")
                bad += 1
                continue
            if type(row) is not dict:
                bad += self._not_object(row, line)
                continue
            try:
                self.check_row(row)
            except RecursionError:
                self.malformed(line, TOO_DEEP)
                bad += 1
            except ImageProblem as exc:
                self.malformed(line, exc.message)
                bad += 1
        self.counts.rows += len(lines) - bad
        self.counts.lines += len(lines)

    def _scan_json_block(self, lines: list[bytes], first_line: int) -> None:
        fast = self._fast_path()
        if fast is not None:
            self._scan_fast(lines, first_line, *fast)
            return
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        check = self.check_row
        it = iter(lines)
        bad = 0
        for raw in it:
            try:
                row = loads(raw)
            except decode_error as exc:
                bad += self._bad_json(raw, exc, first_line + len(lines) - length_hint(it) - 1)
                continue
            if type(row) is not dict:
                bad += self._not_object(row, first_line + len(lines) - length_hint(it) - 1)
                continue
            check(row)
        self.counts.rows += len(lines) - bad
        self.counts.lines += len(lines)

    def _scan_fast(
        self,
        lines: list[bytes],
        first_line: int,
        first: str,
        second: str | None,
        exact: frozenset[Hashable],
        buckets: frozenset[int] | None,
        group: KeyGroup,
        getters: list[Callable[[Any], Any]],
    ) -> None:
        """The hot path, for one group whose first key is at most two levels deep.

        Most rows fail the first (most selective) key's cheap test, so that key is looked up
        and tested inline; only a row that passes goes on to ``check_group``. Every line costs
        this loop about 0.3 µs beyond orjson's parse (measured: 1.3-1.5x parse-only).
        """
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        floor, scale, limit = math.floor, self.scale, BUCKET_LIMIT
        normalise, digits = self.normalise, self.digits
        check, check_group = self.check_row, self.check_group
        it = iter(lines)
        bad = 0
        for raw in it:
            try:
                row = loads(raw)
                value = row.get(first, MISSING)
            except decode_error as exc:
                bad += self._bad_json(raw, exc, first_line + len(lines) - length_hint(it) - 1)
                continue
            except AttributeError:  # not an object
                bad += self._not_object(row, first_line + len(lines) - length_hint(it) - 1)
                continue
            if second is not None:
                value = value.get(second, MISSING) if type(value) is dict else MISSING
            if value is MISSING:
                check(row)  # the general path tries the other places the key may be
                continue
            kind = type(value)
            if kind is float or kind is int:
                if buckets is None:
                    if value not in exact:
                        continue
                else:
                    scaled = value * scale
                    if -limit < scaled < limit:
                        if floor(scaled) not in buckets:
                            continue
                    elif normalise(value, digits) not in exact:
                        continue
            elif kind is str:
                if normalise_string(value) not in exact:
                    continue
            elif normalise(value, digits) not in exact:
                continue
            if check_group(group, getters, row, 1):
                self.counts.matched_rows += 1
        self.counts.rows += len(lines) - bad
        self.counts.lines += len(lines)

    def _bad_json(self, raw: bytes, exc: orjson.JSONDecodeError, line: int) -> int:
        """A line that is not JSON: 1 (not a row). Blank lines are not rows and not errors."""
        if raw.strip():
            self.malformed(line, _json_problem(exc, raw))
        return 1

    def _not_object(self, row: Any, line: int) -> int:
        self.malformed(line, f"expected a JSON object, got {_kind(row)}")
        return 1

    def scan_csv(self, reader: Any, width: int, *, check_utf8: bool, tick: Callable[[int], None] | None = None) -> None:
        """Check CSV rows (lists of cells) from ``reader``; malformed ones go to ``malformed``.

        ``check_utf8``: the text was decoded with surrogateescape (to skip rows that are not
        UTF-8 one by one); without it a decoding error stops the scan, and the caller finds
        the line. ``tick(rows)`` is called every 16,384 rows (progress).
        """
        fast = self._text_fast_path()
        check, check_group, counts = self.check_row, self.check_group, self.counts
        search = _SURROGATE.search
        floor, scale, limit, digits = math.floor, self.scale, BUCKET_LIMIT, self.digits
        rows = 0
        runaway: tuple[int, int] | None = None  # (first line, lines) of the first malformed row over several lines
        while True:
            start = reader.line_num + 1  # where the next row begins (errors name it, not where it ended)
            try:
                row = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                problem = str(exc).split(":")[0]
                if problem.startswith("field larger than field limit"):
                    problem = f"a field longer than {field_limit_text()}"
                runaway = self._bad_csv(reader, start, f"not valid CSV ({problem})", runaway)
                continue
            if len(row) != width:
                if row:  # an empty list is a blank line
                    runaway = self._bad_csv(reader, start, f"has {len(row)} fields, the header has {width}", runaway)
                continue
            if check_utf8 and search("".join(row)):
                self.malformed(reader.line_num, "not valid UTF-8")
                continue
            rows += 1
            if tick is not None and not rows & 0x3FFF:
                tick(counts.rows + rows)
            if fast is None:
                try:
                    check(row)
                except ImageProblem as exc:
                    rows -= 1
                    self.malformed(start, exc.message)
                continue
            first, kind, exact, buckets, group, getters = fast
            cell = first(row)
            if kind == "numbers":  # every case value of this key is a number: float() is a cheap superset test
                try:
                    number = float(cell)
                except ValueError:
                    continue
                if not -limit < number < limit:  # nan, inf, or too large for the cheap test
                    if normalise_text(cell, digits) not in exact:
                        continue
                elif buckets is not None:
                    if floor(number * scale) not in buckets:
                        continue
                elif number not in exact:
                    continue
            elif kind == "strings":  # every case value is a plain string: no number or boolean to read
                if normalise_string(cell) not in exact:
                    continue
            elif normalise_text(cell, digits) not in exact:
                continue
            if check_group(group, getters, row, 1):
                counts.matched_rows += 1
        counts.rows += rows
        if runaway is not None:
            # The physical lines do not add up to rows + malformed rows: the lines a malformed row
            # ran over may have held rows, which were never checked. No result from part of a file.
            line, span = runaway
            raise DataError(
                self.display,
                line,
                f"a malformed row began here and ran over {span} lines (an unbalanced quote?); the {span - 1} lines "
                f"after it "
                "may hold rows that were not checked, so no result can be given: fix the file",
            )

    def _bad_csv(
        self, reader: Any, start: int, problem: str, runaway: tuple[int, int] | None
    ) -> tuple[int, int] | None:
        """A malformed CSV row that began on line ``start``; returns the first runaway row so far."""
        span = reader.line_num - start + 1
        if span > 1:
            problem += f"; the row began on this line and ran over {span} lines (an unbalanced quote?)"
        self.malformed(start, problem)
        return runaway if runaway is not None or span <= 1 else (start, span)

    def _text_fast_path(
        self,
    ) -> (
        tuple[
            Callable[[Any], Any], str, frozenset[Hashable], frozenset[int] | None, KeyGroup, list[Callable[[Any], Any]]
        ]
        | None
    ):
        if len(self.plan.groups) != 1 or self.plan.domain != "text" or self.plan.image_keys:
            return None
        group = self.plan.groups[0]
        values = group.value_sets[0]
        if all(type(value) in (int, float) for value in values):
            kind = "numbers"
        elif all(type(value) is str for value in values):
            kind = "strings"
        else:
            kind = "other"
        return self.getters[0][0], kind, values, group.buckets[0], group, self.getters[0]

    def _fast_path(
        self,
    ) -> (
        tuple[str, str | None, frozenset[Hashable], frozenset[int] | None, KeyGroup, list[Callable[[Any], Any]]] | None
    ):
        if len(self.plan.groups) != 1 or self.plan.domain != "typed" or self.plan.image_keys:
            return None
        group = self.plan.groups[0]
        primary = lookup_candidates(group.names[0])[0]
        if len(primary) > 2:
            return None
        return (
            primary[0],
            (primary[1] if len(primary) == 2 else None),
            group.value_sets[0],
            group.buckets[0],
            group,
            self.getters[0],
        )


_SURROGATE = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8, decoded with surrogateescape


def field_limit_text() -> str:
    limit = csv.field_size_limit()
    return f"{limit >> 20} MiB" if limit >= 1 << 20 and not limit % (1 << 20) else f"{limit:,} characters"


def _kind(value: Any) -> str:
    return "an array" if isinstance(value, list) else f"a {type(value).__name__}"


def _json_problem(exc: orjson.JSONDecodeError, raw: bytes) -> str:
    """Why a line is not JSON, without quoting any of it (training content is never shown)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 (byte {err.start + 1} of the line)"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"
