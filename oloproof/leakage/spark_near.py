"""``--engine spark --near``: the near-duplicate pass on Spark's executors (docs/leakage.md).

The driver prepares the test set's side exactly as the local engine does (``near.prepare``: the
case texts, their n-gram counts, the tolerance table) and broadcasts it. Each executor builds the
same index from it (once per Python worker: the n-gram table is keyed by Python's string hash, and
Spark's workers run with their own hash seed, so the index is built where it is used), reads the
training rows as the local engine's near pass reads them (JSONL objects, CSV rows of the header's
width, Parquet rows) and sends back only ``NearCounts``: case indices, similarity figures and row
counts. No training value reaches the driver, a log or a file. Splits are disjoint, so their counts
add up to the one-process pass's exactly. Pictures are not compared on Spark (the exact pass refuses
image keys first).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.errors import DataError, UsageError
from oloproof.leakage.near import NearCounts, NearPlan, NearResult, NearScanner, csv_rows, finish, json_objects, prepare
from oloproof.leakage.readers import TrainingSource
from oloproof.leakage.spark import SparkSource, decompressed, line_rows

if TYPE_CHECKING:
    from oloproof.leakage.plan import MatchPlan
    from oloproof.leakage.spec import NearOptions
    from oloproof.testset import TestSet

_BOM = b"\xef\xbb\xbf"
_SCANNERS: dict[str, NearScanner] = {}  # per Python worker: the index built from one broadcast


@dataclass(frozen=True, slots=True)
class _NearTask:
    near: Any  # Broadcast[NearPlan]
    token: str  # names this check's index in a reused Python worker
    delimiter: str

    def _scanner(self) -> NearScanner:
        scanner = _SCANNERS.get(self.token)
        if scanner is None:
            _SCANNERS.clear()  # an earlier check's index
            scanner = _SCANNERS[self.token] = NearScanner(self.near.value)
        scanner.reset()
        return scanner

    def jsonl(self, rows: Iterable[Any]) -> Iterator[NearCounts]:
        scanner = self._scanner()

        def lines() -> Iterator[bytes]:
            segment = None  # a partition may hold splits of several (small) files
            for value, path, start in rows:
                first = (path, start) != segment
                segment = (path, start)
                yield value.removeprefix(_BOM) if first and start == 0 else value

        scanner.scan_all(json_objects(lines()), skip_malformed=True)
        yield scanner.counts()

    def parquet(self, rows: Iterable[Any]) -> Iterator[NearCounts]:
        scanner = self._scanner()
        scanner.scan_all((row.asDict(recursive=True) for row in rows), skip_malformed=True)
        yield scanner.counts()

    def csv(self, files: Iterable[tuple[str, bytes]]) -> Iterator[NearCounts]:
        scanner = self._scanner()
        source = TrainingSource(
            path=Path(), display="", format="csv", compression=None, size=0, delimiter=self.delimiter
        )
        for _, content in files:
            scanner.scan_all(csv_rows(source, decompressed(content)), skip_malformed=True)
        yield scanner.counts()


def near_spark(
    testset: TestSet,
    plan: MatchPlan,
    source: SparkSource,
    options: NearOptions,
    spark: Any,
    *,
    exact: set[int],
    skip_malformed: bool,
) -> NearResult:
    """The near pass on Spark; whatever Spark raises is named by its type only (its message may
    quote the data)."""
    del skip_malformed  # no picture is read on Spark; malformed rows were settled by the exact pass
    if plan.image_keys:
        raise UsageError("--engine spark does not compare pictures (image keys); use the local engine")
    near = prepare(testset, plan, options, case_root=Path("."))
    try:
        return finish(near, _scan(near, source, spark), exact)
    except (DataError, UsageError):
        raise
    except Exception as exc:
        raise DataError(
            source.display,
            None,
            f"Spark could not run the near-duplicate pass ({type(exc).__name__}; the executors' logs say why)",
        ) from None


def _scan(near: NearPlan, source: SparkSource, spark: Any) -> NearCounts:
    context = spark.sparkContext
    task = _NearTask(context.broadcast(near), uuid.uuid4().hex, source.delimiter)
    if source.format == "jsonl":
        results = line_rows(spark, list(source.files)).rdd.mapPartitions(task.jsonl).collect()
    elif source.format == "parquet":
        results = spark.read.parquet(*source.files).rdd.mapPartitions(task.parquet).collect()
    else:
        files = context.union([context.binaryFiles(uri, minPartitions=1) for uri in source.files])
        results = files.mapPartitions(task.csv).collect()
    total = NearCounts()
    for counts in results:
        total.merge(counts)
    return total
