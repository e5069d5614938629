"""``--engine spark``: the training data scanned by Spark executors (docs/leakage.md, "On a cluster").

The driver builds the plan from the test set exactly as the local engine does (the same normaliser,
the same hashed index) and broadcasts it. The executors read the training files (JSONL, CSV or
Parquet; a file, a directory or a glob; any URI Spark's Hadoop file system reads): JSONL lines as
raw bytes (Spark's text source), a CSV file whole (``binaryFiles``: a quoted field may span lines),
Parquet rows as typed values; they check every row with the local engine's own ``Matcher`` and send
back only ``ScanCounts``:
counts, case indices and line numbers of malformed rows. No training value reaches the driver, a
log or a file: the key order is settled on the first 1,000 rows *by an executor*, which returns the
order (key names spelled by the test set), never the rows.

PySpark is optional (``pip install 'oloproof[spark]'``) and imported only here, inside functions.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import io
import lzma
import os
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from oloproof.errors import DataError, UsageError
from oloproof.leakage.match import Matcher, ScanCounts
from oloproof.leakage.plan import MatchPlan, json_getters
from oloproof.leakage.readers import (
    CSV_FIELD_LIMIT,
    SAMPLE_ROWS,
    STREAM_ERRORS,
    Format,
    TrainingSource,
    csv_columns,
    csv_getters,
    csv_reader,
    csv_sample,
    first_places,
)
from oloproof.leakage.scan import FileDigest, ScanOutcome, json_key_sources, settle_order

INSTALL = "--engine spark needs pyspark and a Java runtime (17): pip install 'oloproof[spark]'"
SPLIT_BYTES = "spark.sql.files.maxPartitionBytes"
SAMPLE_SPLIT = 4 << 20  # the split the key order is sampled from
BLOCK_LINES = 4096  # JSONL lines checked together (the local engine's block path)
_FORMATS: dict[str, Format] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "csv"}
_FORMATS |= {".tab": "csv", ".parquet": "parquet", ".pq": "parquet"}
_CODECS = {".gz": "gzip", ".bz2": "bz2", ".deflate": "deflate", ".zst": "zstd", ".lz4": "lz4", ".snappy": "snappy"}
_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, slots=True, kw_only=True)
class SparkSource:
    """The training data as Spark lists it: never its content."""

    display: str  # as the user gave it
    name: str  # its last path segment
    format: Format
    compression: str | None
    size: int  # bytes as stored, over every file
    files: tuple[str, ...]  # URIs, in name order
    delimiter: str
    engine: dict[str, str]


def require_spark() -> Any:
    try:
        import pyspark  # lazy: optional
    except ImportError:
        raise UsageError(f"{INSTALL}; it is not installed") from None
    return pyspark


def session(master: str | None) -> Any:
    """The active Spark session, or a new one (quiet: no UI, no progress bar, no log)."""
    require_spark()
    from pyspark.sql import SparkSession  # lazy: optional

    # PySpark starts its Python workers with $PYSPARK_PYTHON (not spark.pyspark.python) when it makes
    # the context here: this interpreter, so that they import what it imports (a venv's packages).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("oloproof-leakage")
    if master is not None:
        builder = builder.master(master)
    builder = builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
    builder = builder.config("spark.pyspark.python", sys.executable).config(
        "spark.pyspark.driver.python", sys.executable
    )
    try:
        spark = builder.getOrCreate()
    except Exception as exc:  # no Java, a bad master URL: what Spark said is about the setup, not the data
        raise UsageError(f"--engine spark: cannot start Spark ({type(exc).__name__}: {str(exc)[:300]})") from None
    # No log at all: a task's error, which Spark logs before the driver sees it, may quote the data.
    spark.sparkContext.setLogLevel("OFF")
    return spark


def list_files(spark: Any, training: str) -> list[tuple[str, int]]:
    """(URI, size) of every file a path, directory or glob names, in name order (``_`` and ``.``
    files, Spark's and Hadoop's markers, are left out)."""
    jvm, conf = spark.sparkContext._jvm, spark.sparkContext._jsc.hadoopConfiguration()
    try:
        path = jvm.org.apache.hadoop.fs.Path(training)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path) or []
        found: list[tuple[str, int]] = []
        for status in statuses:
            children = fs.listStatus(status.getPath()) if status.isDirectory() else [status]
            for child in children:
                name = child.getPath().getName()
                if child.isFile() and not name.startswith(("_", ".")):
                    found.append((child.getPath().toString(), int(child.getLen())))
    except Exception as exc:  # py4j: a bad URI or scheme
        raise DataError(training, None, f"Spark cannot list the training data ({type(exc).__name__})") from None
    if not found:
        raise DataError(training, None, "no training file found (a file, a directory or a glob Spark can read)")
    return sorted(found)


def detect_spark(spark: Any, training: str, format: str | None) -> SparkSource:
    import pyspark  # lazy: optional

    files = list_files(spark, training)
    kinds: set[Format] = set()
    codecs: set[str | None] = set()
    for uri, _ in files:
        name = PurePosixPath(uri.split("?")[0]).name.lower()
        codec = next((codec for suffix, codec in _CODECS.items() if name.endswith(suffix)), None)
        codecs.add(codec)
        stem = name[: name.rfind(".")] if codec else name
        kind = _FORMATS.get(PurePosixPath(stem).suffix)
        if kind is not None:
            kinds.add(kind)
    chosen: Format | None = next((known for known in ("jsonl", "csv", "parquet") if known == format), None)
    if chosen is None:
        if len(kinds) != 1:
            raise UsageError(
                f"{training}: cannot tell the training data's format from its names; pass --format jsonl or csv"
            )
        chosen = kinds.pop()
    tab = all(PurePosixPath(uri).name.lower().split(".")[1:2] in (["tsv"], ["tab"]) for uri, _ in files)
    context = spark.sparkContext
    return SparkSource(
        display=training,
        name=PurePosixPath(training.rstrip("/")).name or training,
        format=chosen,
        compression=codecs.pop() if len(codecs) == 1 else "mixed",
        size=sum(size for _, size in files),
        files=tuple(uri for uri, _ in files),
        delimiter="\t" if tab and chosen == "csv" else ",",
        engine={"name": "spark", "version": pyspark.__version__, "master": str(context.master)},
    )


# --------------------------------------------------------------------------- on the executors


Segment = tuple[str, int]  # (file URI, byte offset of its split): lines numbered from 1 within it


@dataclass(frozen=True, slots=True)
class _Task:
    """What every task gets (pickled with it; the plan comes by broadcast)."""

    plan: Any  # Broadcast[MatchPlan]
    delimiter: str
    skip: bool

    def sample(self, rows: Iterable[Any]) -> Iterator[tuple[str, Any]]:
        """The key order, settled on the first 1,000 rows of the first split (JSONL), as the local
        engine settles it on the file's first 1,000; only key names (the test set's) go back."""
        import orjson  # lazy: start-up

        plan: MatchPlan = self.plan.value
        parsed: list[Any] = []
        for number, (value, _, start) in enumerate(rows):
            if start != 0:
                return  # not the first split: another task samples
            try:
                row = orjson.loads(bytes(value).removeprefix(_BOM) if number == 0 else bytes(value))
            except orjson.JSONDecodeError:
                continue
            if type(row) is dict:
                parsed.append(row)
                if len(parsed) >= SAMPLE_ROWS:
                    break
        try:
            settle_order(plan, parsed, json_getters(plan), "", sampled=True)
        except DataError as exc:
            yield "error", (exc.line, exc.message)
            return
        yield "ok", ([group.names for group in plan.groups], json_key_sources(plan, parsed))

    def scan_jsonl(self, rows: Iterable[Any]) -> Iterator[tuple[Segment, str, Any]]:
        """Rows of (line bytes, file, split offset): each split's lines are checked as a block of
        lines numbered from 1 (the driver adds the lines of the splits before it)."""
        plan: MatchPlan = self.plan.value
        getters = json_getters(plan)
        segment: Segment | None = None
        matcher: Matcher | None = None
        block: list[bytes] = []
        line = 1
        try:
            for value, path, start in rows:
                if (path, start) != segment:
                    if matcher is not None and segment is not None:
                        if block:
                            matcher.scan_json_lines(block, line)
                        yield segment, "ok", matcher.counts
                    segment, matcher, block, line = (
                        (path, start),
                        Matcher(plan, getters, display="", skip_malformed=self.skip),
                        [],
                        1,
                    )
                raw = value  # a bytearray: orjson reads it as it is, without a copy
                block.append(raw.removeprefix(_BOM) if start == 0 and line == 1 and not block else raw)
                if len(block) >= BLOCK_LINES:
                    matcher.scan_json_lines(block, line)  # type: ignore[union-attr]
                    line += len(block)
                    block = []
            if matcher is not None and segment is not None:
                if block:
                    matcher.scan_json_lines(block, line)
                yield segment, "ok", matcher.counts
        except DataError as exc:
            assert segment is not None
            yield segment, "error", (exc.line, exc.message)

    def scan_rows(self, rows: Iterable[Any]) -> Iterator[tuple[Segment, str, Any]]:
        """Parquet rows (Spark Rows, then the file and split offset): typed values, as pyarrow gives
        them to the local engine; a problem names the row, counted from 1 within the split."""
        plan: MatchPlan = self.plan.value
        getters = json_getters(plan)
        segment: Segment | None = None
        matcher: Matcher | None = None
        try:
            for row in rows:
                values, path, start = row[0], row[1], row[2]
                if (path, start) != segment:
                    if matcher is not None and segment is not None:
                        yield segment, "ok", _rows_counted(matcher)
                    segment, matcher = (path, start), Matcher(plan, getters, display="", skip_malformed=self.skip)
                matcher.check_rows([values.asDict(recursive=True)])  # type: ignore[union-attr]
            if matcher is not None and segment is not None:
                yield segment, "ok", _rows_counted(matcher)
        except DataError as exc:
            assert segment is not None
            yield segment, "error", (exc.line, exc.message)

    def scan_csv(self, files: Iterable[tuple[str, bytes]]) -> Iterator[tuple[Segment, str, Any]]:
        """Whole CSV files (a quoted field may span lines), read as the local engine reads one."""
        plan: MatchPlan = self.plan.value
        for path, content in files:
            try:
                yield (path, 0), "ok", self._csv(plan, content)
            except DataError as exc:
                yield (path, 0), "error", (exc.line, exc.message)

    def _csv(self, plan: MatchPlan, content: bytes) -> tuple[ScanCounts, dict[str, str]]:
        import csv  # lazy: start-up

        previous = csv.field_size_limit(CSV_FIELD_LIMIT)
        source = TrainingSource(
            path=Path(), display="", format="csv", compression=None, size=0, delimiter=self.delimiter
        )
        try:
            try:
                reader, header = csv_reader(source, decompressed(content))
                sample = csv_sample(reader, len(header), SAMPLE_ROWS) if header else []
                if not header:
                    return ScanCounts(), {}
                settle_order(plan, sample, csv_getters(plan, header, ""), "", sampled=False)
                matcher = Matcher(plan, csv_getters(plan, header, ""), display="", skip_malformed=self.skip)
                # Strict decoding without --skip-malformed (the first bad byte stops the scan), lenient
                # with it, as the local engine reads.
                reader, header = csv_reader(source, decompressed(content), lenient=self.skip)
                matcher.scan_csv(reader, len(header), check_utf8=self.skip)
            except UnicodeDecodeError:
                raise DataError(
                    "",
                    _first_bad_utf8_line(decompressed(content)),
                    "not valid UTF-8 (training row; pass --skip-malformed to skip and count such rows)",
                ) from None
            except STREAM_ERRORS as exc:
                raise DataError("", None, f"cannot read the csv stream ({type(exc).__name__})") from None
            return matcher.counts, csv_columns(plan, header)
        finally:
            csv.field_size_limit(previous)


def _rows_counted(matcher: Matcher) -> ScanCounts:
    """Parquet has no lines: rows (read or malformed) stand for them, to number a later split's."""
    counts = matcher.counts
    counts.lines = counts.rows + counts.malformed
    return counts


def decompressed(content: bytes) -> io.BufferedIOBase:
    """The file's bytes, decompressed when its first bytes say gzip, bzip2 or xz (as the local engine)."""
    stream = io.BytesIO(content)
    if content.startswith(b"\x1f\x8b"):
        return gzip.GzipFile(fileobj=stream, mode="rb")
    if content.startswith(b"BZh"):
        return bz2.BZ2File(stream, mode="rb")
    if content.startswith(b"\xfd7zXZ\x00"):
        return lzma.LZMAFile(stream, mode="rb")
    return stream


def _first_bad_utf8_line(stream: io.BufferedIOBase) -> int | None:
    for number, line in enumerate(stream, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return number
    return None


# --------------------------------------------------------------------------- on the driver


def scan_spark(plan: MatchPlan, source: SparkSource, spark: Any, *, skip_malformed: bool) -> ScanOutcome:
    """Scan ``source`` on Spark's executors; only counts, case indices and line numbers come back.

    Whatever Spark raises (a damaged file, a lost executor) is named by its type only: its message
    may quote the data (a Parquet reader's names the bytes it found at the end of the file)."""
    local = Path(source.display)
    digest = FileDigest(local) if len(source.files) == 1 and local.is_file() else None  # as the local engine hashes
    try:
        if digest is not None:
            digest.start()
        outcome = _scan(plan, source, spark, skip_malformed=skip_malformed)
        if digest is not None:
            digest.join()
        return dataclasses.replace(outcome, sha256=None if digest is None else digest.hexdigest)
    except (DataError, UsageError):
        raise
    except Exception as exc:
        raise DataError(
            source.display,
            None,
            f"Spark could not scan the training data ({type(exc).__name__}; the executors' logs say why)",
        ) from None
    finally:
        if digest is not None and digest.is_alive():
            digest.stop.set()  # an error or Ctrl-C: do not finish hashing a large file first
            digest.join()


def _scan(plan: MatchPlan, source: SparkSource, spark: Any, *, skip_malformed: bool) -> ScanOutcome:
    if plan.image_keys:
        raise UsageError("--engine spark does not compare pictures (image keys); use the local engine")
    context = spark.sparkContext
    sources: dict[str, str] = {}
    if source.format == "jsonl":
        lines = line_rows(spark, list(source.files))
        sampler = _Task(context.broadcast(plan), source.delimiter, skip_malformed)
        sampled = _sample(spark, source.files[0], sampler)
        if sampled:
            status, payload = sampled[0]
            if status == "error":
                raise DataError(source.display, payload[0], payload[1])
            orders, sources = payload
            for group, names in zip(plan.groups, orders, strict=True):
                group.reorder([group.names.index(name) for name in names])
        for group in plan.groups:
            group.build_index()
        task = _Task(context.broadcast(plan), source.delimiter, skip_malformed)
        results = lines.rdd.mapPartitions(task.scan_jsonl).collect()
    elif source.format == "parquet":
        frame = spark.read.parquet(*source.files)
        places = _places(plan, frame.schema, source.display)
        sources = {name: ".".join(path) for name, path in places.items() if path != tuple(name.split("."))}
        for group in plan.groups:
            group.build_index()
        task = _Task(context.broadcast(plan), source.delimiter, skip_malformed)
        from pyspark.sql import functions  # lazy: optional

        columns = list(dict.fromkeys(path[0] for path in places.values()))
        rows = frame.select(
            functions.struct(*[functions.col(f"`{name}`") for name in columns]),
            functions.col("_metadata.file_path"),
            functions.col("_metadata.file_block_start"),
        )
        results = rows.rdd.mapPartitions(task.scan_rows).collect()
    else:
        for group in plan.groups:
            group.build_index()
        task = _Task(context.broadcast(plan), source.delimiter, skip_malformed)
        files = context.union([context.binaryFiles(uri, minPartitions=1) for uri in source.files])
        results = files.mapPartitions(task.scan_csv).collect()
    results.sort(key=lambda item: item[0])
    counts = _merge(source, results)
    for _, status, payload in results:  # CSV: the first file's header names (the local engine reads one file)
        if status == "ok" and isinstance(payload, tuple):
            sources = sources or payload[1]
    return ScanOutcome(counts=counts, sha256=None, key_sources=sources, jobs=len(results))


def _sample(spark: Any, first: str, sampler: _Task) -> list[Any]:
    """Run ``sampler.sample`` on the first split of the first file alone, made small (4 MiB) so that
    Spark does not send a whole large split to the task that needs its first 1,000 rows."""
    conf = spark.conf
    before = conf.get(SPLIT_BYTES, None)
    conf.set(SPLIT_BYTES, str(SAMPLE_SPLIT))
    try:
        rdd = line_rows(spark, [first]).rdd.mapPartitions(sampler.sample)
        return list(spark.sparkContext.runJob(rdd, lambda rows: rows, partitions=[0]))
    finally:
        if before is None:
            conf.unset(SPLIT_BYTES)
        else:
            conf.set(SPLIT_BYTES, before)


def _places(plan: MatchPlan, schema: Any, display: str) -> dict[str, tuple[str, ...]]:
    """Per compared key, the first of its places the Parquet schema has (``readers.parquet_places``)."""
    from pyspark.sql.types import StructType  # lazy: optional

    def has(path: tuple[str, ...]) -> bool:
        node: Any = schema
        for part in path:
            if not isinstance(node, StructType) or part not in node.names:
                return False
            node = node[part].dataType
        return True

    return first_places(plan, has, display)


def line_rows(spark: Any, files: list[str]) -> Any:
    """(line bytes, file, split offset) rows: the raw bytes (a row that is not UTF-8 must stay so),
    lines ended by \\n only, as the local engine splits them."""
    from pyspark.sql import functions  # lazy: optional

    frame = spark.read.option("lineSep", "\n").text(files)
    return frame.select(
        functions.col("value").cast("binary"),
        functions.col("_metadata.file_path"),
        functions.col("_metadata.file_block_start"),
    )


def _merge(source: SparkSource, results: list[tuple[Segment, str, Any]]) -> ScanCounts:
    """Splits' counts in file order; lines numbered within each file (the first error in file order
    is the one the local engine would have stopped at)."""
    total = ScanCounts()
    file, before = "", 0  # lines of this file's earlier splits
    for (path, _), status, payload in results:
        if path != file:
            file, before = path, 0
        if status == "error":
            line, message = payload
            shown = source.display if len(source.files) == 1 else f"{source.display} ({PurePosixPath(path).name})"
            raise DataError(shown, None if line is None else line + before, message)
        counts: ScanCounts = payload[0] if isinstance(payload, tuple) else payload
        total.merge(counts, line_offset=before)
        before += counts.lines
    return total
