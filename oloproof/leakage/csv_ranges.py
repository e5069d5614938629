"""A CSV file split into byte ranges that worker processes scan, and one worker's range.

A quoted CSV field may hold newlines, so a range may not start at any newline. The split points
are newlines after which the number of quote characters since the start of the file is even: in
well-formed CSV (a quote opens or closes a quoted field, and a quote inside one is doubled) that
is a record boundary. A quote inside an unquoted field (``ab"c``, which the csv module reads
literally) breaks that rule, so nothing trusts it: each worker reads exactly its own bytes with a
strict reader, which raises at the end of a range that stops inside a quoted field, and a range
that begins inside one cannot be reached without the range before it ending inside it. Any row a
worker could not read cleanly — a parse error, a wrong field count, bytes that are not UTF-8, a
range that ended mid-field — makes the whole file be scanned again by one process, which then
reports (or skips and counts) every malformed row with its line exactly as before. The workers'
results are used only when every range was read cleanly: then the rows they saw are the rows one
reader sees.
"""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path
from typing import Any

from oloproof.errors import DataError
from oloproof.leakage.match import Matcher
from oloproof.leakage.plan import MatchPlan
from oloproof.leakage.readers import BLOCK_BYTES, csv_getters

QUOTE = b'"'
SEARCH_BYTES = 8 << 20  # how far past a target a split point is looked for before that split is given up


def header_end(path: Path, header: list[str], delimiter: str) -> int | None:
    """Where the first record starts, when the header is one physical line that reads as ``header``."""
    with open(path, "rb") as handle:
        first = handle.readline(1 << 20)
    if not first.endswith(b"\n") or first.count(QUOTE) % 2:
        return None
    try:
        parsed = next(csv.reader([first.decode("utf-8-sig")], delimiter=delimiter, strict=True))
    except (UnicodeDecodeError, csv.Error, StopIteration):
        return None
    return len(first) if parsed == header else None


def split_points(path: Path, size: int, first: int, parts: int) -> list[tuple[int, int]]:
    """Byte ranges from ``first`` to the end, each starting after a newline at even quote parity.

    A split point is looked for in the ``SEARCH_BYTES`` after each target; where none is found
    (a long quoted field, or a stray quote that left the parity odd) that split is dropped, so
    there may be fewer ranges than ``parts``.
    """
    bounds = [first]
    parity = 0
    position = 0
    with open(path, "rb") as handle:
        for part in range(1, parts):
            target = max(bounds[-1], first + (size - first) * part // parts)
            while position < target:  # the quotes before the target: one pass at memory speed
                block = handle.read(min(BLOCK_BYTES, target - position))
                if not block:
                    break
                parity ^= block.count(QUOTE) & 1
                position += len(block)
            window = handle.read(SEARCH_BYTES)
            found = _even_newline(window, parity)
            if found is not None and position + found < size:
                position += found
                bounds.append(position)
                parity = 0  # even there, by construction
                handle.seek(position)
            else:  # no split here: carry the parity over the window into the next target's count
                parity ^= window.count(QUOTE) & 1
                position += len(window)
    bounds.append(size)
    return [(start, end) for start, end in itertools.pairwise(bounds) if end > start]


def _even_newline(window: bytes, parity: int) -> int | None:
    """The offset just past the first newline in ``window`` after which the quote parity is even."""
    at = 0
    while True:
        newline = window.find(b"\n", at)
        if newline < 0:
            return None
        parity ^= window.count(QUOTE, at, newline) & 1
        if not parity:
            return newline + 1
        quote = window.find(QUOTE, newline + 1)  # the newlines before it are inside the quoted field
        if quote < 0:
            return None
        parity ^= 1
        at = quote + 1


class _Range(io.RawIOBase):
    """The bytes ``[start, end)`` of an open file, read forward only."""

    def __init__(self, handle: Any, start: int, end: int) -> None:
        super().__init__()
        handle.seek(start)
        self.handle, self.position, self.end = handle, start, end

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        wanted = min(len(buffer), self.end - self.position)
        if wanted <= 0:
            return 0
        got = int(self.handle.readinto(memoryview(buffer)[:wanted]) or 0)
        self.position += got
        return got


def scan_csv_range(
    plan: MatchPlan,
    path: str,
    display: str,
    skip: bool,
    start: int,
    end: int,
    shared: Any,
    slot: int,
    header: list[str],
    delimiter: str,
) -> tuple[str, Any]:
    """One worker's CSV range: ("ok", counts) when every row was read cleanly, else ("redo", why)."""
    matcher = Matcher(plan, csv_getters(plan, header, display), display=display, skip_malformed=True)
    with open(path, "rb", buffering=0) as handle:
        region = _Range(handle, start, end)

        def tick(rows: int) -> None:
            shared[2 * slot], shared[2 * slot + 1] = region.position - start, rows

        text = io.TextIOWrapper(
            io.BufferedReader(region, BLOCK_BYTES),
            encoding="utf-8",
            errors="surrogateescape" if skip else "strict",
            newline="",
        )
        try:
            matcher.scan_csv(
                csv.reader(text, delimiter=delimiter, strict=True), len(header), check_utf8=skip, tick=tick
            )
        except (UnicodeDecodeError, DataError):
            return "redo", "a row this range could not read cleanly"
        tick(matcher.counts.rows)
    if matcher.counts.malformed:
        return "redo", "a row this range could not read cleanly"
    return "ok", matcher.counts
