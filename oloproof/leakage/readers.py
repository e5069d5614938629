"""Reading training files for the leakage check: formats, compression, blocks of lines.

Nothing read here is kept beyond the row being checked: blocks of lines are parsed, checked
and dropped, so memory is bounded by the test set (and one block), never by the file. No
value from the file is returned, logged or put in an error message; errors name the file,
the line and what is wrong with it, never its content.

- JSONL (``.jsonl``, ``.ndjson``, ``.json``), CSV (``.csv``; ``.tsv`` is tab-separated) and,
  with pyarrow installed, Parquet (``.parquet``, ``.pq``); ``--format`` overrides the suffix.
- gzip, bzip2 and xz compression are recognised by their magic bytes, whatever the name.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Literal, cast

import orjson

from oloproof.errors import DataError, UsageError
from oloproof.leakage.match import Matcher
from oloproof.leakage.plan import MatchPlan, image_getter, lookup_candidates

Format = Literal["jsonl", "csv", "parquet"]
FORMATS: tuple[Format, ...] = ("jsonl", "csv", "parquet")
BLOCK_BYTES = 4 << 20  # JSONL is read in blocks of this size and split into lines
SAMPLE_ROWS = 1000  # rows read first to order the keys (and to catch keys no row has)
CSV_FIELD_LIMIT = 1 << 20  # a CSV field's size cap: an unbalanced quote must not swallow the rest of the file
# What a damaged or truncated file (or its decompressor) raises: a data error naming the file, never a crash.
STREAM_ERRORS: tuple[type[BaseException], ...] = (OSError, EOFError, lzma.LZMAError, zlib.error)
Progress = Callable[[int, int], None]  # (bytes read, rows scanned)

_SUFFIXES: dict[str, Format] = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".csv": "csv",
    ".tsv": "csv",
    ".tab": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
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
    if not stat.S_ISREG(os.stat(file).st_mode):
        # The check reads the file several times (format, sample, scan, digest): a pipe would
        # give each pass a different part of it, and a record built from part of the file.
        raise DataError(
            path,
            None,
            "not a regular file (a pipe or device cannot be read the several times a check needs); save it to a file "
            "first",
        )
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
        raise UsageError(
            f"{path}: cannot tell the training file's format from its name; pass --format jsonl, csv or parquet"
        )
    if chosen == "parquet" and compression is not None:
        raise UsageError(f"{path}: a Parquet file is compressed inside; pass it without {compression}")
    delimiter = "\t" if Path(name).suffix in (".tsv", ".tab") else ","
    return TrainingSource(
        path=file, display=path, format=chosen, compression=compression, size=file.stat().st_size, delimiter=delimiter
    )


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


def read_error(source: TrainingSource, exc: BaseException) -> DataError:
    # The type only: a decompressor's or a library's message is not ours to vet for content.
    return DataError(
        source.display, None, f"cannot read the {source.compression or source.format} stream ({type(exc).__name__})"
    )


# --------------------------------------------------------------------------- JSONL


def iter_line_blocks(
    stream: io.BufferedIOBase, *, start: int = 0, end: int | None = None
) -> Iterator[tuple[list[bytes], int]]:
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


def scan_jsonl(
    matcher: Matcher,
    stream: io.BufferedIOBase,
    raw: io.BufferedIOBase,
    progress: Progress | None,
    *,
    start: int = 0,
    end: int | None = None,
) -> None:
    line = 1
    for lines, _ in iter_line_blocks(stream, start=start, end=end):
        matcher.scan_json_lines(lines, line)
        line += len(lines)
        if progress is not None:
            progress(raw.tell() - start, matcher.counts.rows)


def sample_jsonl(source: TrainingSource, limit: int) -> list[Any]:
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


def csv_reader(source: TrainingSource, stream: io.BufferedIOBase, *, lenient: bool = True) -> tuple[Any, list[str]]:
    """A csv reader past the header, and the header. ``lenient``: bytes that are not UTF-8 are
    decoded with surrogateescape (to be found and skipped row by row); otherwise they raise
    UnicodeDecodeError (``first_bad_utf8_line`` then names the line)."""
    text = io.TextIOWrapper(
        cast(Any, stream), encoding="utf-8-sig", errors="surrogateescape" if lenient else "strict", newline=""
    )
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
                    display,
                    1,
                    f"no column for case key '{name}' (looked for: {looked}); compare only keys the training data "
                    f"has, with --field",
                )
            row_getters.append(image_getter(plan, name, itemgetter(index)))
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


def csv_sample(reader: Any, width: int, limit: int) -> list[list[str]]:
    """Up to ``limit`` well-formed rows (the scan reports the others, with their lines)."""
    rows: list[list[str]] = []
    while len(rows) < limit:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            continue
        if len(row) == width and not _SURROGATE.search("".join(row)):
            rows.append(row)
    return rows


def scan_csv(
    matcher: Matcher, reader: Any, width: int, raw: io.BufferedIOBase, progress: Progress | None, *, lenient: bool
) -> None:
    tick = None if progress is None else (lambda rows: progress(raw.tell(), rows))
    matcher.scan_csv(reader, width, check_utf8=lenient, tick=tick)
    if progress is not None:
        progress(raw.tell(), matcher.counts.rows)


def first_bad_utf8_line(source: TrainingSource) -> int | None:
    """The first line that is not UTF-8 (read again, only after a decoding error)."""
    raw, stream = open_stream(source)
    with raw, stream:
        for number, line in enumerate(stream, start=1):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return number
    return None


# --------------------------------------------------------------------------- Parquet


def parquet_file(source: TrainingSource) -> Any:
    try:
        import pyarrow.parquet as pq  # lazy: optional
    except ImportError:
        raise UsageError(f"{source.display}: reading Parquet needs pyarrow: pip install pyarrow") from None
    try:
        return pq.ParquetFile(source.path)
    except parquet_errors() as exc:
        raise read_error(source, exc) from None


def parquet_errors() -> tuple[type[Exception], ...]:
    """What pyarrow raises for a damaged or unreadable file (not for a bug of ours)."""
    import pyarrow as pa  # lazy: optional

    return (OSError, EOFError, pa.ArrowException)


def parquet_places(plan: MatchPlan, schema: Any, display: str) -> dict[str, tuple[str, ...]]:
    """Per compared key, the first of its places (``lookup_candidates``) the schema has."""
    import pyarrow as pa  # lazy: optional

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

    return first_places(plan, has, display)


def first_places(plan: MatchPlan, has: Callable[[tuple[str, ...]], bool], display: str) -> dict[str, tuple[str, ...]]:
    """Per compared key, the first of its places (``lookup_candidates``) for which ``has`` is true
    (a schema holds that column path); a key with none is an error naming where it looked."""
    places: dict[str, tuple[str, ...]] = {}
    for name in plan.compared:
        path = next((candidate for candidate in lookup_candidates(name) if has(candidate)), None)
        if path is None:
            looked = ", ".join(".".join(candidate) for candidate in lookup_candidates(name))
            raise DataError(
                display,
                None,
                f"no column for case key '{name}' (looked for: {looked}); compare only keys the training data has, "
                f"with --field",
            )
        places[name] = path
    return places
