"""Reading training files for the leakage check: formats, compression, streaming, workers.

Nothing read here is kept beyond the row being checked: blocks of lines are parsed, checked
and dropped, so memory is bounded by the test set (and one block), never by the file. No
value from the file is returned, logged or put in an error message; errors name the file,
the line and what is wrong with it, never its content.

- JSONL (``.jsonl``, ``.ndjson``, ``.json``), CSV (``.csv``; ``.tsv`` is tab-separated) and,
  with pyarrow installed, Parquet (``.parquet``, ``.pq``); ``--format`` overrides the suffix.
- gzip, bzip2 and xz compression are recognised by their magic bytes, whatever the name.
- An uncompressed JSONL file of at least ``PARALLEL_MIN_BYTES`` is split at line boundaries
  into one byte range per worker process (spawned, so nothing is inherited): parsing is the
  cost, and it parallelises perfectly. Everything else streams in this process.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import hashlib
import io
import itertools
import lzma
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Literal, cast

from oloproof.errors import DataError, UsageError
from oloproof.leakage import MISSING, Matcher, MatchPlan, ScanCounts, json_getters, lookup_candidates

Format = Literal["jsonl", "csv", "parquet"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "parquet")
BLOCK_BYTES = 4 << 20  # JSONL is read in blocks of this size and split into lines
PARALLEL_MIN_BYTES = 64 << 20  # below this, spawning workers costs more than it saves
SAMPLE_ROWS = 1000  # rows read first to order the keys (and to catch keys no row has)
Progress = Callable[[int, int], None]  # (bytes read, rows scanned)

_SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "csv", ".tab": "csv",
    ".parquet": "parquet", ".pq": "parquet",
}
_MAGIC = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"))
_COMPRESSED_SUFFIXES = (".gz", ".gzip", ".bz2", ".xz")
_SURROGATE = re.compile("[\udc80-\udcff]")  # bytes that were not UTF-8 (surrogateescape)


@dataclass(frozen=True, slots=True, kw_only=True)
class TrainingSource:
    """A training file as found on disk; ``display`` is the path as the user typed it."""

    path: Path
    display: str
    format: Format
    compression: str | None
    size: int
    delimiter: str = ","


def detect(path: str, *, format: str | None = None) -> TrainingSource:
    file = Path(path)
    if not file.exists():
        raise DataError(path, None, "training file not found")
    if file.is_dir():
        raise DataError(path, None, "is a directory, expected a training file (JSONL, CSV or Parquet)")
    with open(file, "rb") as handle:
        head = handle.read(6)
    compression = next((name for magic, name in _MAGIC if head.startswith(magic)), None)
    name = file.name.lower()
    for suffix in _COMPRESSED_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    chosen = next((known for known in FORMATS if known == format), None) or _SUFFIXES.get(Path(name).suffix)
    if chosen is None:
        raise UsageError(f"{path}: cannot tell the training file's format from its name; pass --format jsonl, csv or parquet")
    if chosen == "parquet" and compression is not None:
        raise UsageError(f"{path}: a Parquet file is compressed inside; pass it without {compression}")
    delimiter = "\t" if Path(name).suffix in (".tsv", ".tab") else ","
    return TrainingSource(path=file, display=path, format=chosen, compression=compression, size=file.stat().st_size, delimiter=delimiter)


def open_stream(source: TrainingSource) -> tuple[io.BufferedIOBase, io.BufferedIOBase]:
    """(raw file, decompressed stream); the raw file's position measures progress."""
    raw = open(source.path, "rb")
    if source.compression == "gzip":
        return raw, gzip.GzipFile(fileobj=raw, mode="rb")
    if source.compression == "bz2":
        return raw, bz2.BZ2File(raw, mode="rb")
    if source.compression == "xz":
        return raw, lzma.LZMAFile(raw, mode="rb")
    return raw, raw


def _read_error(source: TrainingSource, exc: Exception) -> DataError:
    # The type only: a decompressor's or a library's message is not ours to vet for content.
    return DataError(source.display, None, f"cannot read the {source.compression or source.format} stream ({type(exc).__name__})")


# --------------------------------------------------------------------------- JSONL


def iter_line_blocks(stream: io.BufferedIOBase, *, start: int = 0, end: int | None = None) -> Iterator[tuple[list[bytes], int]]:
    """Complete lines in blocks, with the bytes consumed so far; ``end`` bounds a byte range."""
    carry = b""
    remaining = None if end is None else end - start
    consumed = 0
    first = start == 0
    while True:
        want = BLOCK_BYTES if remaining is None else min(BLOCK_BYTES, remaining)
        block = stream.read(want) if want > 0 else b""
        if not block:
            break
        consumed += len(block)
        if remaining is not None:
            remaining -= len(block)
        if first:
            block = block.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
            first = False
        lines = (carry + block).split(b"\n") if carry else block.split(b"\n")
        carry = lines.pop()
        yield lines, consumed
    if carry:
        yield [carry], consumed


def _scan_jsonl(
    matcher: Matcher, stream: io.BufferedIOBase, raw: io.BufferedIOBase, progress: Progress | None, *, start: int = 0, end: int | None = None,
) -> None:
    line = 1
    for lines, _ in iter_line_blocks(stream, start=start, end=end):
        matcher.scan_json_lines(lines, line)
        line += len(lines)
        if progress is not None:
            progress(raw.tell() - start, matcher.counts.rows)


def _sample_jsonl(source: TrainingSource, limit: int) -> list[Any]:
    import orjson

    rows: list[Any] = []
    raw, stream = open_stream(source)
    with raw, stream:
        for lines, _ in iter_line_blocks(stream):
            for line in lines:
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue  # the scan reports it, with its line
                if type(row) is dict:
                    rows.append(row)
                    if len(rows) >= limit:
                        return rows
            if len(rows) >= limit:
                break
    return rows


# --------------------------------------------------------------------------- CSV


def _csv_reader(source: TrainingSource, stream: io.BufferedIOBase) -> tuple[Any, list[str]]:
    text = io.TextIOWrapper(cast(Any, stream), encoding="utf-8-sig", errors="surrogateescape", newline="")
    reader = csv.reader(text, delimiter=source.delimiter, strict=True)
    try:
        header = next(reader)
    except StopIteration:
        return reader, []
    except csv.Error:
        raise DataError(source.display, 1, "the header row is not valid CSV") from None
    return reader, header


def csv_getters(plan: MatchPlan, header: list[str], display: str) -> list[list[Callable[[Any], Any]]]:
    """Per group and key, the column it is compared with (the first candidate name the header has)."""
    columns = {name: index for index, name in reversed(list(enumerate(header)))}  # first of duplicates wins
    getters: list[list[Callable[[Any], Any]]] = []
    for group in plan.groups:
        row_getters: list[Callable[[Any], Any]] = []
        for name in group.names:
            names = [".".join(path) for path in lookup_candidates(name)]
            index = next((columns[candidate] for candidate in dict.fromkeys(names) if candidate in columns), None)
            if index is None:
                looked = ", ".join(dict.fromkeys(names))
                raise DataError(
                    display, 1,
                    f"no column for case key '{name}' (looked for: {looked}); compare only keys the training data has, with --field",
                )
            row_getters.append(itemgetter(index))
        getters.append(row_getters)
    return getters


def csv_columns(plan: MatchPlan, header: list[str]) -> dict[str, str]:
    """Case keys that meet a column of another name (both names come from the test set)."""
    found: dict[str, str] = {}
    present = set(header)
    for name in plan.compared:
        for candidate in dict.fromkeys(".".join(path) for path in lookup_candidates(name)):
            if candidate in present:
                if candidate != name:
                    found[name] = candidate
                break
    return found


def _csv_rows(source: TrainingSource, reader: Any, width: int, matcher: Matcher) -> Iterator[list[str]]:
    """Well-formed data rows; a malformed one goes to ``matcher.malformed`` (error or count)."""
    search = _SURROGATE.search
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            matcher.malformed(reader.line_num, f"not valid CSV ({str(exc).split(':')[0]})")
            continue
        if len(row) != width:
            if not row:
                continue  # a blank line
            matcher.malformed(reader.line_num, f"has {len(row)} fields, the header has {width}")
            continue
        if search("".join(row)):
            matcher.malformed(reader.line_num, "not valid UTF-8")
            continue
        yield row


def _scan_csv(matcher: Matcher, source: TrainingSource, reader: Any, width: int, raw: io.BufferedIOBase, progress: Progress | None) -> None:
    check = matcher.check_row
    counts = matcher.counts
    for row in _csv_rows(source, reader, width, matcher):
        check(row)
        counts.rows += 1
        if progress is not None and not counts.rows & 0x3FFF:
            progress(raw.tell(), counts.rows)


# --------------------------------------------------------------------------- Parquet


def _parquet_file(source: TrainingSource) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError(f"{source.display}: reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        return pq.ParquetFile(source.path)
    except Exception as exc:
        raise _read_error(source, exc) from None


def parquet_columns(plan: MatchPlan, schema: Any, display: str) -> list[str]:
    """Top-level columns to read: the first place each compared key exists in the schema."""
    import pyarrow as pa

    def has(path: tuple[str, ...]) -> bool:
        fields: Any = schema  # a Schema, then StructTypes: both have get_field_index and field
        for index, part in enumerate(path):
            position = fields.get_field_index(part)
            if position < 0:
                return False
            kind = fields.field(position).type
            if index + 1 < len(path):
                if not pa.types.is_struct(kind):
                    return False
                fields = kind
        return True

    needed: dict[str, None] = {}
    for name in plan.compared:
        path = next((candidate for candidate in lookup_candidates(name) if has(candidate)), None)
        if path is None:
            looked = ", ".join(".".join(candidate) for candidate in lookup_candidates(name))
            raise DataError(
                display, None, f"no column for case key '{name}' (looked for: {looked}); compare only keys the training data has, with --field",
            )
        needed[path[0]] = None
    return list(needed)


# --------------------------------------------------------------------------- the scan


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
    digest = _Digest(source.path)
    try:
        if source.format == "csv":
            digest.start()
            counts, sources = _run_csv(plan, source, skip_malformed, progress)
            used = 1
        elif source.format == "parquet":
            digest.start()
            counts, sources = _run_parquet(plan, source, skip_malformed, progress)
            used = 1
        else:
            counts, sources, used = _run_jsonl(plan, source, skip_malformed, progress, jobs, parallel_min_bytes, digest.start)
    except BaseException:
        digest.stop.set()  # an error or Ctrl-C: do not finish hashing a large file first
        raise
    finally:
        if digest.is_alive():
            digest.join()
    return ScanOutcome(counts=counts, sha256=digest.hexdigest, key_sources=sources, jobs=used)


def _order(plan: MatchPlan, rows: list[Any], getters: list[list[Callable[[Any], Any]]], display: str, *, sampled: bool) -> None:
    if not rows:
        return  # an empty file: reported by the caller once the scan has counted no rows
    present = plan.order_by_sample(rows, getters)
    if sampled:
        absent = [name for name, seen in present.items() if seen == 0]
        if absent:
            looked = "; ".join(f"{name} (as {', '.join('.'.join(c) for c in lookup_candidates(name))})" for name in absent)
            raise DataError(
                display, None,
                f"none of the first {len(rows)} training rows has the case key(s) {looked}; "
                "a key no row has can never match: compare only keys the training data has, with --field",
            )


def _json_key_sources(plan: MatchPlan, rows: list[Any]) -> dict[str, str]:
    """Case keys that the first sample row having them holds under another name."""
    found: dict[str, str] = {}
    for name in plan.compared:
        hit = next((path for row in rows for path in lookup_candidates(name) if resolve_one(row, path) is not MISSING), None)
        if hit is not None and hit != tuple(name.split(".")):
            found[name] = ".".join(hit) + (" (one flat key)" if len(hit) == 1 and "." in hit[0] else "")
    return found


def resolve_one(row: Any, path: tuple[str, ...]) -> Any:
    node = row
    for part in path:
        if type(node) is not dict:
            return MISSING
        node = node.get(part, MISSING)
        if node is MISSING:
            return MISSING
    return node


def _run_jsonl(
    plan: MatchPlan, source: TrainingSource, skip: bool, progress: Progress | None, jobs: int | None, parallel_min_bytes: int,
    started: Callable[[], None],
) -> tuple[ScanCounts, dict[str, str], int]:
    sample = _sample_jsonl(source, SAMPLE_ROWS)
    _order(plan, sample, json_getters(plan), source.display, sampled=True)
    sources = _json_key_sources(plan, sample)
    workers = _workers(jobs)
    if workers > 1 and source.compression is None and source.size >= parallel_min_bytes and parallel_available():
        ranges = len(split_ranges(source.path, source.size, workers))
        if ranges > 1:
            return _run_parallel(plan, source, skip, progress, workers, started), sources, ranges
    started()
    matcher = Matcher(plan, json_getters(plan), display=source.display, skip_malformed=skip)
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            _scan_jsonl(matcher, stream, raw, progress)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise _read_error(source, exc) from None
    return matcher.counts, sources, 1


def _run_csv(plan: MatchPlan, source: TrainingSource, skip: bool, progress: Progress | None) -> tuple[ScanCounts, dict[str, str]]:
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            reader, header = _csv_reader(source, stream)
            if not header:
                return ScanCounts(), {}
            probe = Matcher(plan, csv_getters(plan, header, source.display), display=source.display, skip_malformed=True)
            sample = [row for _, row in zip(range(SAMPLE_ROWS), _csv_rows(source, reader, len(header), probe), strict=False)]
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise _read_error(source, exc) from None
    _order(plan, sample, csv_getters(plan, header, source.display), source.display, sampled=False)
    matcher = Matcher(plan, csv_getters(plan, header, source.display), display=source.display, skip_malformed=skip)
    raw, stream = open_stream(source)
    with raw, stream:
        try:
            reader, header = _csv_reader(source, stream)
            _scan_csv(matcher, source, reader, len(header), raw, progress)
        except (OSError, EOFError, lzma.LZMAError) as exc:
            raise _read_error(source, exc) from None
    return matcher.counts, csv_columns(plan, header)


def _run_parquet(plan: MatchPlan, source: TrainingSource, skip: bool, progress: Progress | None) -> tuple[ScanCounts, dict[str, str]]:
    parquet = _parquet_file(source)
    columns = parquet_columns(plan, parquet.schema_arrow, source.display)
    try:
        batches = parquet.iter_batches(batch_size=65536, columns=columns)
        first = next(batches, None)
        sample = first.slice(0, SAMPLE_ROWS).to_pylist() if first is not None else []
        _order(plan, sample, json_getters(plan), source.display, sampled=False)
        matcher = Matcher(plan, json_getters(plan), display=source.display, skip_malformed=skip)
        total = max(1, parquet.metadata.num_rows)
        for batch in itertools.chain([first] if first is not None else [], batches):
            matcher.check_rows(batch.to_pylist())
            if progress is not None:
                progress(source.size * matcher.counts.rows // total, matcher.counts.rows)
    except DataError:
        raise
    except Exception as exc:
        raise _read_error(source, exc) from None
    sources = {name: ".".join(path) for name in plan.compared
               for path in [next(c for c in lookup_candidates(name) if c[0] in columns)] if ".".join(path) != name}
    return matcher.counts, sources


# --------------------------------------------------------------------------- worker processes


def _workers(jobs: int | None) -> int:
    if jobs is not None:
        return max(1, jobs)
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        available = os.cpu_count() or 1
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


def _scan_range(plan: MatchPlan, path: str, display: str, skip: bool, start: int, end: int, shared: Any, slot: int) -> tuple[str, Any]:
    """One worker's byte range. Errors come back as data: our exceptions do not pickle."""
    matcher = Matcher(plan, json_getters(plan), display=display, skip_malformed=skip)

    def progress(done: int, rows: int) -> None:
        shared[2 * slot], shared[2 * slot + 1] = done, rows

    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            _scan_jsonl(matcher, handle, handle, progress, start=start, end=end)
    except DataError as exc:
        return "error", (exc.line, exc.message)
    except OSError as exc:
        return "oserror", type(exc).__name__
    return "ok", matcher.counts


def _worker_main(connection: Any, *args: Any) -> None:
    try:
        result = _scan_range(*args)
    except KeyboardInterrupt:
        return
    except BaseException as exc:
        result = ("crash", f"{type(exc).__name__}: {exc}")
    connection.send(result)
    connection.close()


def parallel_available() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


def _run_parallel(
    plan: MatchPlan, source: TrainingSource, skip: bool, progress: Progress | None, workers: int, started: Callable[[], None]
) -> ScanCounts:
    """Fork one worker per byte range; they inherit the plan (nothing is pickled but results).

    Workers are forked before this process starts any thread of its own (the digest thread
    starts after them, ``started``), so no lock can be inherited held.
    """
    import multiprocessing
    from multiprocessing.connection import Connection, wait

    ranges = split_ranges(source.path, source.size, workers)
    context = multiprocessing.get_context("fork")
    shared = context.Array("q", 2 * len(ranges), lock=False)
    processes: list[Any] = []
    pending: dict[Connection, int] = {}
    try:
        for slot, (start, end) in enumerate(ranges):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(
                target=_worker_main, args=(sender, plan, str(source.path), source.display, skip, start, end, shared, slot),
                daemon=True, name=f"oloproof-leakage-{slot}",
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
                    raise DataError(source.display, None if line is None else line + count_lines(source.path, ranges[slot][0]), message)
                if status == "oserror":
                    raise DataError(source.display, None, f"cannot read the file ({payload})")
                if status == "crash":
                    raise RuntimeError(f"leakage worker {slot} failed: {payload}")
                results[slot] = payload
            if progress is not None:
                progress(sum(shared[0::2]), sum(shared[1::2]))
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()
    total = ScanCounts()
    lines_before = 0
    for counts in results:
        assert counts is not None
        total.merge(counts, line_offset=lines_before)
        lines_before += counts.lines
    return total


# --------------------------------------------------------------------------- the file's digest


class _Digest(threading.Thread):
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
