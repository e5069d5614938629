"""The scan: a training file streamed past the plan, in one process or several.

``scan_training`` orders the plan's keys on a first sample of rows, then streams the file
(``leakage_io`` reads the formats) through a ``Matcher``. An uncompressed JSONL file of at
least ``PARALLEL_MIN_BYTES`` is split at line boundaries into one byte range per worker
process: parsing is the cost, and it parallelises perfectly. An uncompressed CSV file is split the
same way at record boundaries (``leakage.csv_ranges`` says how, and why a file with any malformed
row is read again by one process). Meanwhile a thread computes
the file's SHA-256 (a commitment for the record, never content).
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import os
import signal
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from oloproof.errors import DataError
from oloproof.leakage.csv_ranges import header_end, scan_csv_range, split_points
from oloproof.leakage.match import Matcher, ScanCounts
from oloproof.leakage.normalise import MISSING
from oloproof.leakage.plan import MatchPlan, json_getters, lookup_candidates, resolve
from oloproof.leakage.readers import (
    BLOCK_BYTES,
    CSV_FIELD_LIMIT,
    SAMPLE_ROWS,
    STREAM_ERRORS,
    Progress,
    TrainingSource,
    csv_columns,
    csv_getters,
    csv_reader,
    csv_sample,
    first_bad_utf8_line,
    open_stream,
    parquet_errors,
    parquet_file,
    parquet_places,
    read_error,
    sample_jsonl,
    scan_csv,
    scan_jsonl,
)

PARALLEL_MIN_BYTES = 64 << 20  # below this, starting workers costs more than it saves
WORKER_EXIT_S = 5.0  # how long a worker that has sent its result is given to exit before it is terminated


@dataclass(frozen=True, slots=True, kw_only=True)
class ScanOutcome:
    counts: ScanCounts
    sha256: str | None  # of the file's bytes as stored: a commitment, not content
    key_sources: dict[str, str]  # case key → the name it was found under, when another (from the test set)
    jobs: int


def scan_training(
    plan: MatchPlan,
    source: TrainingSource,
    *,
    skip_malformed: bool,
    jobs: int | None = None,
    progress: Progress | None = None,
    parallel_min_bytes: int = PARALLEL_MIN_BYTES,
) -> ScanOutcome:
    """Stream ``source`` past ``plan``; the plan's key order is set on a first sample of rows."""
    digest = FileDigest(source.path)
    try:
        if source.format == "csv":
            counts, sources, used = _run_csv(
                plan, source, skip_malformed, progress, jobs, parallel_min_bytes, _once(digest.start)
            )
        elif source.format == "parquet":
            digest.start()
            counts, sources = _run_parquet(plan, source, skip_malformed, progress)
            used = 1
        else:
            counts, sources, used = _run_jsonl(
                plan, source, skip_malformed, progress, jobs, parallel_min_bytes, digest.start
            )
    except BaseException:
        digest.stop.set()  # an error or Ctrl-C: do not finish hashing a large file first
        raise
    finally:
        if digest.is_alive():
            digest.join()
    return ScanOutcome(counts=counts, sha256=digest.hexdigest, key_sources=sources, jobs=used)


def _once(call: Callable[[], None]) -> Callable[[], None]:
    done: list[bool] = []

    def once() -> None:
        if not done:
            done.append(True)
            call()

    return once


def settle_order(
    plan: MatchPlan, rows: list[Any], getters: list[list[Callable[[Any], Any]]], display: str, *, sampled: bool
) -> None:
    """Settle the key order on sample rows, then build the index (before any worker is forked)."""
    present = plan.order_by_sample(rows, getters) if rows else {}
    for group in plan.groups:
        group.build_index()
    if sampled:
        absent = [name for name, seen in present.items() if seen == 0]
        if absent:
            looked = "; ".join(
                f"{name} (as {', '.join('.'.join(c) for c in lookup_candidates(name))})" for name in absent
            )
            raise DataError(
                display,
                None,
                f"none of the first {len(rows)} training rows has the case key(s) {looked}; "
                "a key no row has can never match: compare only keys the training data has, with --field",
            )


def json_key_sources(plan: MatchPlan, rows: list[Any]) -> dict[str, str]:
    """Case keys that the first sample row having them holds under another name."""
    found: dict[str, str] = {}
    for name in plan.compared:
        hit = next(
            (path for row in rows for path in lookup_candidates(name) if resolve(row, (path,)) is not MISSING), None
        )
        if hit is not None and hit != tuple(name.split(".")):
            found[name] = ".".join(hit) + (" (one flat key)" if len(hit) == 1 and "." in hit[0] else "")
    return found


def _run_jsonl(
    plan: MatchPlan,
    source: TrainingSource,
    skip: bool,
    progress: Progress | None,
    jobs: int | None,
    parallel_min_bytes: int,
    started: Callable[[], None],
) -> tuple[ScanCounts, dict[str, str], int]:
    try:
        sample = sample_jsonl(source, SAMPLE_ROWS)
    except STREAM_ERRORS as exc:
        raise read_error(source, exc) from None
    settle_order(plan, sample, json_getters(plan), source.display, sampled=True)
    sources = json_key_sources(plan, sample)
    workers = _workers(jobs)
    if workers > 1 and source.compression is None and source.size >= parallel_min_bytes and parallel_available():
        ranges = split_ranges(source.path, source.size, workers)
        if len(ranges) > 1:
            counts = _run_parallel(plan, source, skip, progress, ranges, started)
            assert counts is not None  # a JSONL range never asks for a rescan
            return counts, sources, len(ranges)
    started()
    matcher = Matcher(plan, json_getters(plan), display=source.display, skip_malformed=skip)
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            scan_jsonl(matcher, stream, raw, progress)
        except STREAM_ERRORS as exc:
            raise read_error(source, exc) from None
    return matcher.counts, sources, 1


def _run_csv(
    plan: MatchPlan,
    source: TrainingSource,
    skip: bool,
    progress: Progress | None,
    jobs: int | None,
    parallel_min_bytes: int,
    started: Callable[[], None],
) -> tuple[ScanCounts, dict[str, str], int]:
    # A training text may exceed the csv module's default 128 KiB field limit, but a field is
    # capped (1 MiB): an unbalanced quote would otherwise swallow the rest of the file into one
    # field (a global: restored afterwards).
    previous = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        return _run_csv_unlimited(plan, source, skip, progress, _workers(jobs), parallel_min_bytes, started)
    finally:
        csv.field_size_limit(previous)


def _run_csv_unlimited(
    plan: MatchPlan,
    source: TrainingSource,
    skip: bool,
    progress: Progress | None,
    workers: int,
    parallel_min_bytes: int,
    started: Callable[[], None],
) -> tuple[ScanCounts, dict[str, str], int]:
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            reader, header = csv_reader(source, stream)
            sample = csv_sample(reader, len(header), SAMPLE_ROWS) if header else []
        except STREAM_ERRORS as exc:
            raise read_error(source, exc) from None
    if not header:
        started()
        return ScanCounts(), {}, 1
    settle_order(plan, sample, csv_getters(plan, header, source.display), source.display, sampled=False)
    if workers > 1 and source.compression is None and source.size >= parallel_min_bytes and parallel_available():
        first = header_end(source.path, header, source.delimiter)
        ranges = [] if first is None else split_points(source.path, source.size, first, workers)
        if len(ranges) > 1:
            counts = _run_parallel(plan, source, skip, progress, ranges, started, csv=(header, source.delimiter))
            if counts is not None:
                return counts, csv_columns(plan, header), len(ranges)
            # A range could not be read cleanly: one process reads the file and names each problem.
    started()
    matcher = Matcher(plan, csv_getters(plan, header, source.display), display=source.display, skip_malformed=skip)
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            # Without --skip-malformed the text is decoded strictly (the first bad byte stops the
            # scan); with it, leniently, so each row that is not UTF-8 is found and skipped.
            reader, header = csv_reader(source, stream, lenient=skip)
            scan_csv(matcher, reader, len(header), raw, progress, lenient=skip)
        except UnicodeDecodeError:
            line = first_bad_utf8_line(source)
            raise DataError(
                source.display,
                line,
                "not valid UTF-8 (training row; pass --skip-malformed to skip and count such rows)",
            ) from None
        except STREAM_ERRORS as exc:
            raise read_error(source, exc) from None
    return matcher.counts, csv_columns(plan, header), 1


def _run_parquet(
    plan: MatchPlan, source: TrainingSource, skip: bool, progress: Progress | None
) -> tuple[ScanCounts, dict[str, str]]:
    parquet = parquet_file(source)
    places = parquet_places(plan, parquet.schema_arrow, source.display)
    try:
        # Only the top-level columns that hold compared keys are read. Rows are checked with
        # the JSON getters: the places before the chosen one are absent from the schema.
        batches = parquet.iter_batches(
            batch_size=65536, columns=list(dict.fromkeys(path[0] for path in places.values()))
        )
        first = next(batches, None)
        sample = first.slice(0, SAMPLE_ROWS).to_pylist() if first is not None else []
        settle_order(plan, sample, json_getters(plan), source.display, sampled=False)
        matcher = Matcher(plan, json_getters(plan), display=source.display, skip_malformed=skip)
        total = max(1, parquet.metadata.num_rows)
        for batch in itertools.chain([first] if first is not None else [], batches):
            matcher.check_rows(batch.to_pylist())
            if progress is not None:
                progress(source.size * matcher.counts.rows // total, matcher.counts.rows)
    except parquet_errors() as exc:
        raise read_error(source, exc) from None
    return matcher.counts, {name: ".".join(path) for name, path in places.items() if path != tuple(name.split("."))}


# --------------------------------------------------------------------------- worker processes


def usable_cpus() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _workers(jobs: int | None) -> int:
    """--jobs, clamped to the CPUs this process may use (more workers than CPUs only contend)."""
    available = usable_cpus()
    if jobs is not None:
        return max(1, min(jobs, available))
    return max(1, min(available, 4))


def split_ranges(path: Path, size: int, parts: int) -> list[tuple[int, int]]:
    """Byte ranges that start right after a newline (a JSON line never contains one)."""
    bounds = [0]
    with open(path, "rb") as handle:
        for part in range(1, parts):
            handle.seek(max(bounds[-1], size * part // parts))
            handle.readline()
            position = handle.tell()
            if position >= size:
                break
            if position > bounds[-1]:
                bounds.append(position)
    bounds.append(size)
    return list(itertools.pairwise(bounds))


def count_lines(path: Path, end: int) -> int:
    """Newlines in the first ``end`` bytes (to turn a worker's line number into the file's)."""
    count = 0
    with open(path, "rb") as handle:
        while end > 0:
            block = handle.read(min(BLOCK_BYTES, end))
            if not block:
                break
            count += block.count(b"\n")
            end -= len(block)
    return count


def _scan_range(
    plan: MatchPlan,
    path: str,
    display: str,
    skip: bool,
    start: int,
    end: int,
    shared: Any,
    slot: int,
    csv_layout: tuple[list[str], str] | None,
) -> tuple[str, Any]:
    """One worker's byte range. Errors come back as data: our exceptions do not pickle."""
    if csv_layout is not None:
        return scan_csv_range(plan, path, display, skip, start, end, shared, slot, *csv_layout)
    matcher = Matcher(plan, json_getters(plan), display=display, skip_malformed=skip)

    def progress(done: int, rows: int) -> None:
        shared[2 * slot], shared[2 * slot + 1] = done, rows

    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            scan_jsonl(matcher, handle, handle, progress, start=start, end=end)
    except DataError as exc:
        return "error", (exc.line, exc.message)
    except OSError as exc:
        return "oserror", type(exc).__name__
    return "ok", matcher.counts


def _worker_main(connection: Any, *args: Any) -> None:
    # A forked worker inherits the CLI's handlers (SIGTERM raises Terminated): back to the
    # defaults, so a worker ended by terminate() or Ctrl-C dies quietly, without a traceback.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        result = _scan_range(*args)
    except KeyboardInterrupt:
        return
    except BaseException as exc:
        result = ("crash", f"{type(exc).__name__}: {exc}")
    connection.send(result)
    connection.close()


def parallel_available() -> bool:
    import multiprocessing  # lazy: start-up

    return "fork" in multiprocessing.get_all_start_methods()


def _run_parallel(
    plan: MatchPlan,
    source: TrainingSource,
    skip: bool,
    progress: Progress | None,
    ranges: list[tuple[int, int]],
    started: Callable[[], None],
    *,
    csv: tuple[list[str], str] | None = None,
) -> ScanCounts | None:
    """Fork one worker per byte range; they inherit the plan (nothing is pickled but results).

    JSONL ranges, or CSV ranges (``csv``: the header and delimiter); None when a CSV range could
    not be read cleanly (``leakage.csv_ranges``: the caller then scans the file in one process).

    Workers are forked before this process starts any thread of its own (the digest thread
    starts after them, ``started``), so no lock can be inherited held.
    """
    import multiprocessing  # lazy: start-up
    from multiprocessing.connection import Connection, wait  # lazy: start-up

    context = multiprocessing.get_context("fork")
    shared = context.Array("q", 2 * len(ranges), lock=False)
    processes: list[Any] = []
    pending: dict[Connection, int] = {}
    finished = False
    try:
        for slot, (start, end) in enumerate(ranges):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(
                target=_worker_main,
                args=(sender, plan, str(source.path), source.display, skip, start, end, shared, slot, csv),
                daemon=True,
                name=f"oloproof-leakage-{slot}",
            )
            process.start()
            sender.close()
            processes.append(process)
            pending[receiver] = slot
        started()
        results: list[ScanCounts | None] = [None] * len(ranges)
        while pending:
            for ready in wait(list(pending), timeout=0.1):
                receiver = cast(Connection, ready)
                slot = pending.pop(receiver)
                try:
                    status, payload = receiver.recv()
                except EOFError:
                    raise RuntimeError(f"leakage worker {slot} died (exit code {processes[slot].exitcode})") from None
                if status == "error":
                    line, message = payload
                    raise DataError(
                        source.display,
                        None if line is None else line + count_lines(source.path, ranges[slot][0]),
                        message,
                    )
                if status == "oserror":
                    raise DataError(source.display, None, f"cannot read the file ({payload})")
                if status == "crash":
                    raise RuntimeError(f"leakage worker {slot} failed: {payload}")
                if status == "redo":
                    return None  # the other workers are stopped below: their ranges are read again
                results[slot] = payload
            if progress is not None:
                progress(sum(shared[0::2]), sum(shared[1::2]))
        finished = True
    finally:
        for process in processes:
            if finished:
                process.join(WORKER_EXIT_S)  # every result is in: let the worker exit on its own
            if process.is_alive():
                process.terminate()  # an error or Ctrl-C: do not wait for the rest of its range
            process.join()
    total = ScanCounts()
    lines_before = 0
    for counts in results:
        assert counts is not None
        total.merge(counts, line_offset=lines_before)
        lines_before += counts.lines
    return total


# --------------------------------------------------------------------------- the file's digest


class FileDigest(threading.Thread):
    """SHA-256 of the file as stored, on another thread: hashlib releases the GIL, so on two
    cores this costs no wall time next to the parse."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True, name="oloproof-training-sha256")
        self.path = path
        self.hexdigest: str | None = None
        self.stop = threading.Event()

    def run(self) -> None:
        hasher = hashlib.sha256()
        try:
            with open(self.path, "rb") as handle:
                while block := handle.read(1 << 20):
                    if self.stop.is_set():
                        return
                    hasher.update(block)
        except OSError:
            return
        self.hexdigest = "sha256:" + hasher.hexdigest()
