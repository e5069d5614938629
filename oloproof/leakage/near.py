"""Near-duplicates (``oloproof leakage check --near``): test cases that are near copies of training
rows, as a finding separate from exact leaks. Text by n-gram overlap and MinHash + LSH Jaccard
(``near_text``), pictures by perceptual hashes (``near_image``), numbers within a declared tolerance
per key (here). A second streamed pass over the training file; it keeps case indices and counts,
never a training value. ``datasketch`` and ``imagehash`` are an optional extra (``oloproof[near]``).
"""

from __future__ import annotations

import csv
import importlib.util
import io
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.errors import DataError, UsageError
from oloproof.leakage.images import ImageProblem, image_path
from oloproof.leakage.near_image import ImageIndex, perceptual
from oloproof.leakage.near_table import NearTable
from oloproof.leakage.near_text import SHORT_MIN, TextHit, TextIndex, case_grams, tokens
from oloproof.leakage.plan import MatchPlan, case_leaves, lookup_candidates, resolve, select_fields
from oloproof.leakage.readers import CSV_FIELD_LIMIT, csv_reader, iter_line_blocks, open_stream, parquet_file
from oloproof.leakage.scan import usable_cpus
from oloproof.leakage.spec import NearOptions

if TYPE_CHECKING:
    from oloproof.leakage.readers import TrainingSource
    from oloproof.testset import TestSet

EXTRA = "pip install 'oloproof[near]'"
NEAR_PARALLEL_MIN_BYTES = 1 << 20
METHOD = "ngram-overlap+minhash-lsh-jaccard/1; phash+dhash/1; tolerance/1"


def require_extra() -> None:
    """Exit 2 (a usage error) naming the extra when datasketch or imagehash is not installed."""
    missing = [name for name in ("datasketch", "imagehash") if importlib.util.find_spec(name) is None]
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        raise UsageError(f"--near needs {' and '.join(missing)}, which {verb} not installed: {EXTRA}")


@dataclass(frozen=True, slots=True)
class NearCase:
    """One near copy: a case id, how it is near (text, image, tabular), how similar, in how many rows."""

    id: str
    kind: str
    similarity: float
    count: int
    detail: tuple[tuple[str, float], ...] = ()  # e.g. (("ngram", 0.62), ("jaccard", 0.81))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "similarity": self.similarity, "count": self.count} | dict(
            self.detail
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class NearResult:
    """The ``near`` section of a leakage record: thresholds and the near copies (exact leaks excluded)."""

    options: NearOptions
    cases: tuple[NearCase, ...]
    text_keys: tuple[str, ...] = ()
    image_keys: tuple[str, ...] = ()
    method: str = METHOD

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(case.id for case in self.cases))

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "thresholds": self.options.to_json(),
            "text_keys": list(self.text_keys),
            "image_keys": list(self.image_keys),
            "n_cases": len(self.ids),
            "cases": [case.to_json() for case in self.cases],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NearResult:
        thresholds = data["thresholds"]
        options = NearOptions(
            ngram=int(thresholds["ngram"]),
            ngram_threshold=float(thresholds["ngram_threshold"]),
            jaccard_threshold=float(thresholds["jaccard_threshold"]),
            hamming=int(thresholds["hamming"]),
            tolerance={str(k): float(v) for k, v in dict(thresholds.get("tolerance") or {}).items()},
        )
        cases = []
        for item in data["cases"]:
            if not isinstance(item, dict) or not isinstance(item.get("id"), str):
                raise ValueError("near.cases must be a list of objects with a case id")
            extra = tuple((k, float(v)) for k, v in item.items() if k not in ("id", "kind", "similarity", "count"))
            cases.append(
                NearCase(str(item["id"]), str(item["kind"]), float(item["similarity"]), int(item["count"]), extra)
            )
        return cls(
            options=options,
            cases=tuple(cases),
            text_keys=tuple(data.get("text_keys") or ()),
            image_keys=tuple(data.get("image_keys") or ()),
            method=str(data.get("method") or ""),
        )


def iter_rows(source: TrainingSource) -> Iterator[dict[str, Any]]:
    """Every training row that parses as an object (the exact pass has reported or counted the rest)."""
    if source.format == "parquet":
        handle = parquet_file(source)
        for batch in handle.iter_batches(batch_size=8192):
            yield from batch.to_pylist()
        return
    raw, stream = open_stream(source)
    with raw, stream:
        if source.format == "csv":
            yield from csv_rows(source, stream)
            return
        yield from json_rows(stream)


def json_rows(stream: io.BufferedIOBase, *, start: int = 0, end: int | None = None) -> Iterator[dict[str, Any]]:
    """The objects among the JSON lines of ``stream`` (of its byte range ``start``–``end``)."""
    for lines, _ in iter_line_blocks(stream, start=start, end=end):
        yield from json_objects(lines)


def json_objects(lines: Iterable[bytes]) -> Iterator[dict[str, Any]]:
    for line in lines:
        if not line.strip():
            continue
        try:
            row = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if type(row) is dict:
            yield row


def csv_rows(source: TrainingSource, stream: io.BufferedIOBase) -> Iterator[dict[str, Any]]:
    """The CSV rows of the header's width, as dicts (the exact pass's field cap, so both read the same rows)."""
    previous = csv.field_size_limit(CSV_FIELD_LIMIT)
    try:
        reader, header = csv_reader(source, stream)
        width = len(header)
        while True:
            try:
                record = next(reader)
            except StopIteration:
                return
            except csv.Error:  # a malformed row: the exact pass reported or counted it
                continue
            if len(record) == width:
                yield dict(zip(header, record, strict=True))
    finally:
        csv.field_size_limit(previous)


@dataclass(frozen=True, slots=True, kw_only=True)
class NearPlan:
    """What the near pass compares, from the test set only (never a training value): it is pickled
    to forked workers' results' readers and broadcast to Spark's executors."""

    plan: MatchPlan
    options: NearOptions
    leaves_of: list[dict[str, Any]]
    texts: list[tuple[int, str, str]]  # (case, key, text) of texts long enough to be near-checked
    n_grams: dict[tuple[int, str], int]  # (case, key) → its number of distinct n-grams
    pictures: dict[str, list[tuple[int, tuple[int, int]]]]


def prepare(testset: TestSet, plan: MatchPlan, options: NearOptions, *, case_root: Path) -> NearPlan:
    """The test set's side of the near pass (errors in the test set or the options raise here)."""
    require_extra()
    leaves_of = [
        select_fields(
            case_leaves(case.inputs, case_id=case.id, path=testset.path, line=case.line),
            plan.fields,
            case_id=case.id,
            path=testset.path,
            line=case.line,
        )
        for case in testset.cases
    ]
    compared = set(plan.compared)
    unknown = sorted(set(options.tolerance) - compared)
    if unknown:
        raise UsageError(
            f"--tolerance: {', '.join(unknown)} is not a compared case key (compared: {', '.join(sorted(compared))})"
        )
    texts = []
    n_grams: dict[tuple[int, str], int] = {}
    pictures: dict[str, list[tuple[int, tuple[int, int]]]] = {}
    for index, leaves in enumerate(leaves_of):
        for key, value in leaves.items():
            if key in plan.image_keys and isinstance(value, str):
                given = testset.cases[index]
                try:
                    pictures.setdefault(key, []).append((index, perceptual(image_path(value, case_root))))
                except ImageProblem as exc:
                    raise DataError(
                        testset.path, given.line, f"case '{given.id}': {key}: image {value}: {exc.message}"
                    ) from None
            elif isinstance(value, str) and key not in options.tolerance:
                words = tokens(value)
                if len(words) >= SHORT_MIN:
                    texts.append((index, key, value))
                    n_grams[(index, key)] = len(case_grams(words, options.ngram))
    return NearPlan(plan=plan, options=options, leaves_of=leaves_of, texts=texts, n_grams=n_grams, pictures=pictures)


@dataclass(slots=True)
class NearCounts:
    """What a scan of some training rows found: case indices, similarity figures, row counts."""

    text: dict[tuple[int, str], tuple[frozenset[int], float, int]] = field(default_factory=dict)  # grams, J, rows
    image: dict[int, tuple[int, int]] = field(default_factory=dict)  # case → (best distance, rows)
    table: dict[int, tuple[float, int]] = field(default_factory=dict)  # case → (largest scaled difference, rows)
    rows: int = 0  # rows scanned (an image problem's row number counts across parts)

    def merge(self, other: NearCounts) -> None:
        """Add the counts of a disjoint part of the rows (a worker's range, a Spark split)."""
        for key, (grams, jaccard, rows) in other.text.items():
            mine = self.text.get(key)
            self.text[key] = (
                (grams, jaccard, rows) if mine is None else (mine[0] | grams, max(mine[1], jaccard), mine[2] + rows)
            )
        for case, (distance, rows) in other.image.items():
            best, seen = self.image.get(case, (64, 0))
            self.image[case] = (min(best, distance), seen + rows)
        for case, (difference, rows) in other.table.items():
            worst, seen = self.table.get(case, (0.0, 0))
            self.table[case] = (max(worst, difference), seen + rows)
        self.rows += other.rows


class NearScanner:
    """The near pass over rows: indexes the test set once, then marks what each row is near."""

    def __init__(self, near: NearPlan) -> None:
        plan, options = near.plan, near.options
        self.text_index = (
            TextIndex(near.texts, ngram=options.ngram, jaccard_threshold=options.jaccard_threshold)
            if near.texts
            else None
        )
        self.images = ImageIndex(near.pictures, hamming=options.hamming, root=plan.image_root)
        self.table = NearTable(near.leaves_of, options.tolerance, plan)
        self.text_places = {key: lookup_candidates(key) for key in (self.text_index.keys if self.text_index else ())}
        self.image_places = {key: lookup_candidates(key) for key in near.pictures}
        self.text_hits: dict[tuple[int, str], TextHit] = {}
        self.image_hits: dict[int, tuple[int, set[int]]] = {}
        self.table_hits: dict[int, tuple[float, set[int]]] = {}
        self.rows = 0

    def reset(self) -> None:
        """Forget the hits (the index stays): a new part of the rows."""
        self.text_hits, self.image_hits, self.table_hits, self.rows = {}, {}, {}, 0

    def scan(self, row: dict[str, Any], *, skip_malformed: bool = False) -> None:
        """Mark one row (raises ``ImageProblem`` when a training picture cannot be read, unless
        ``skip_malformed``: then that key of the row is skipped)."""
        row_number = self.rows
        self.rows += 1
        if self.text_index is not None:
            for key, places in self.text_places.items():
                value = resolve(row, places)
                if type(value) is str:
                    self.text_index.scan(key, value, row_number, self.text_hits)
        for key, places in self.image_places.items():
            try:
                near = self.images.scan(key, resolve(row, places))
            except ImageProblem:
                if not skip_malformed:
                    raise
                continue
            for case, distance in near:
                best, rows = self.image_hits.get(case, (64, set()))
                rows.add(row_number)
                self.image_hits[case] = (min(best, distance), rows)
        for case, difference in self.table.scan(row):
            worst, rows = self.table_hits.get(case, (0.0, set()))
            rows.add(row_number)
            self.table_hits[case] = (max(worst, difference), rows)

    def scan_all(self, rows: Iterable[dict[str, Any]], *, skip_malformed: bool) -> tuple[int, ...]:
        """Scan ``rows``; () or (row number,) of the first picture that cannot be read (without
        --skip-malformed, it stops the scan)."""
        try:
            for row in rows:
                self.scan(row, skip_malformed=skip_malformed)
        except ImageProblem:
            return (self.rows,)
        return ()

    def counts(self) -> NearCounts:
        return NearCounts(
            text={key: (frozenset(hit.grams_found), hit.jaccard, len(hit.rows)) for key, hit in self.text_hits.items()},
            image={case: (best, len(rows)) for case, (best, rows) in self.image_hits.items()},
            table={case: (worst, len(rows)) for case, (worst, rows) in self.table_hits.items()},
            rows=self.rows,
        )


def near_workers(jobs: int | None, size: int) -> int:
    """Workers for the near pass (JSONL): ``--jobs`` as given, clamped to the usable CPUs; without it
    up to 4 from ``NEAR_PARALLEL_MIN_BYTES`` on (the near pass costs ~30 times the exact one per row,
    so a fork pays on far smaller files)."""
    import multiprocessing  # lazy: start-up

    if "fork" not in multiprocessing.get_all_start_methods() or (jobs is None and size < NEAR_PARALLEL_MIN_BYTES):
        return 1
    return max(1, min(jobs if jobs is not None else 4, usable_cpus()))


def picture_error(source_display: str, row: int) -> DataError:
    return DataError(source_display, None, f"row {row}: a training picture cannot be read")


def finish(near: NearPlan, counts: NearCounts, exact: set[int]) -> NearResult:
    """The near copies (exact leaks excluded), by case in test-set order."""
    options, ids = near.options, near.plan.case_ids
    found: list[NearCase] = []
    best_text: dict[int, NearCase] = {}
    for (case, key), (grams, jaccard, rows) in counts.text.items():
        total = near.n_grams.get((case, key), 0)
        score = len(grams) / total if total else 0.0
        if case in exact or (score < options.ngram_threshold and jaccard < options.jaccard_threshold):
            continue
        candidate = NearCase(
            ids[case],
            "text",
            round(max(score, jaccard), 4),
            rows,
            (("ngram", round(score, 4)), ("jaccard", round(jaccard, 4))),
        )
        if case not in best_text or candidate.similarity > best_text[case].similarity:
            best_text[case] = candidate
    found.extend(best_text.values())
    for case, (distance, rows) in counts.image.items():
        if case not in exact:
            found.append(
                NearCase(ids[case], "image", round(1 - distance / 64, 4), rows, (("hamming", float(distance)),))
            )
    for case, (difference, rows) in counts.table.items():
        if case not in exact:
            found.append(NearCase(ids[case], "tabular", round(1 - difference, 4), rows))
    order: dict[str, int] = {}
    for index, case_id in enumerate(ids):
        order.setdefault(case_id, index)
    found.sort(key=lambda item: (order.get(item.id, len(order)), item.kind))
    return NearResult(
        options=options,
        cases=tuple(found),
        text_keys=tuple(sorted({key for _, key, _ in near.texts})),
        image_keys=tuple(sorted(near.pictures)),
    )
