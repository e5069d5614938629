"""Near-duplicates (``oloproof leakage check --near``): test cases that are near copies of training
rows, as a finding separate from exact leaks. Text by n-gram overlap and MinHash + LSH Jaccard
(``near_text``), pictures by perceptual hashes (``near_image``), numbers within a declared tolerance
per key (here). A second streamed pass over the training file; it keeps case indices and counts,
never a training value. ``datasketch`` and ``imagehash`` are an optional extra (``oloproof[near]``).
"""

from __future__ import annotations

import csv
import importlib.util
import math
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.errors import DataError, UsageError
from oloproof.leakage.images import ImageProblem, image_path
from oloproof.leakage.near_image import ImageIndex, perceptual
from oloproof.leakage.near_text import SHORT_MIN, TextHit, TextIndex, tokens
from oloproof.leakage.normalise import MISSING, normalise_case_value, normalise_text, normalise_value
from oloproof.leakage.plan import MatchPlan, case_leaves, lookup_candidates, resolve, select_fields
from oloproof.leakage.readers import CSV_FIELD_LIMIT, csv_reader, iter_line_blocks, open_stream, parquet_file
from oloproof.leakage.spec import NearOptions

if TYPE_CHECKING:
    from oloproof.leakage.readers import TrainingSource
    from oloproof.testset import TestSet

EXTRA = "pip install 'oloproof[near]'"
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
            previous = csv.field_size_limit(CSV_FIELD_LIMIT)  # the exact pass's cap, so both read the same rows
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
        for lines, _ in iter_line_blocks(stream):
            for line in lines:
                if not line.strip():
                    continue
                try:
                    row = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                if type(row) is dict:
                    yield row


def find_near(
    testset: TestSet,
    plan: MatchPlan,
    source: TrainingSource,
    options: NearOptions,
    *,
    case_root: Path,
    exact: set[int],
    skip_malformed: bool,
) -> NearResult:
    """Stream the training file once more and collect the cases that are near copies of rows."""
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
            elif isinstance(value, str) and key not in options.tolerance and len(tokens(value)) >= SHORT_MIN:
                texts.append((index, key, value))
    text_index = TextIndex(texts, ngram=options.ngram, jaccard_threshold=options.jaccard_threshold) if texts else None
    images = ImageIndex(pictures, hamming=options.hamming, root=plan.image_root)
    table = _Table(leaves_of, options.tolerance, plan)
    text_hits: dict[tuple[int, str], TextHit] = {}
    image_hits: dict[int, tuple[int, set[int]]] = {}  # case → (best distance, rows)
    table_hits: dict[int, tuple[float, set[int]]] = {}  # case → (largest scaled difference, rows)
    text_places = {key: lookup_candidates(key) for key in (text_index.keys if text_index else ())}
    image_places = {key: lookup_candidates(key) for key in pictures}
    for row_number, row in enumerate(iter_rows(source)):
        if text_index is not None:
            for key, places in text_places.items():
                value = resolve(row, places)
                if type(value) is str:
                    text_index.scan(key, value, row_number, text_hits)
        for key, places in image_places.items():
            try:
                near = images.scan(key, resolve(row, places))
            except ImageProblem:
                if not skip_malformed:
                    raise DataError(
                        source.display, None, f"row {row_number + 1}: a training picture cannot be read"
                    ) from None
                continue
            for case, distance in near:
                best, rows = image_hits.get(case, (64, set()))
                rows.add(row_number)
                image_hits[case] = (min(best, distance), rows)
        for case, difference in table.scan(row):
            worst, rows = table_hits.get(case, (0.0, set()))
            rows.add(row_number)
            table_hits[case] = (max(worst, difference), rows)
    found: list[NearCase] = []
    ids = plan.case_ids
    best_text: dict[int, NearCase] = {}
    for (case, key), hit in text_hits.items():
        assert text_index is not None
        score = text_index.score(case, key, hit)
        if case in exact or (score < options.ngram_threshold and hit.jaccard < options.jaccard_threshold):
            continue
        candidate = NearCase(
            ids[case],
            "text",
            round(max(score, hit.jaccard), 4),
            len(hit.rows),
            (("ngram", round(score, 4)), ("jaccard", round(hit.jaccard, 4))),
        )
        if case not in best_text or candidate.similarity > best_text[case].similarity:
            best_text[case] = candidate
    found.extend(best_text.values())
    for case, (distance, rows) in image_hits.items():
        if case not in exact:
            found.append(
                NearCase(ids[case], "image", round(1 - distance / 64, 4), len(rows), (("hamming", float(distance)),))
            )
    for case, (difference, rows) in table_hits.items():
        if case not in exact:
            found.append(NearCase(ids[case], "tabular", round(1 - difference, 4), len(rows)))
    found.sort(key=lambda item: (item.id not in ids, ids.index(item.id), item.kind))
    return NearResult(
        options=options,
        cases=tuple(found),
        text_keys=tuple(sorted(text_index.keys)) if text_index else (),
        image_keys=tuple(sorted(pictures)),
    )


class _Table:
    """Cases with a number at a key that has a tolerance: the other keys equal after normalisation
    (and --round), every toleranced number within its tolerance."""

    def __init__(self, leaves_of: list[dict[str, Any]], tolerance: dict[str, float], plan: MatchPlan) -> None:
        self.tolerance = tolerance
        self.plan = plan
        self.groups: dict[
            tuple[tuple[str, ...], tuple[str, ...]], dict[tuple[Any, ...], list[tuple[int, tuple[float, ...]]]]
        ] = {}
        for index, leaves in enumerate(leaves_of):
            near = tuple(
                sorted(key for key, value in leaves.items() if key in tolerance and _number(value) is not None)
            )
            if not near:
                continue
            others = tuple(sorted(key for key in leaves if key not in near))
            if any(key in plan.image_keys for key in others):
                continue
            exact = tuple(normalise_case_value(leaves[key], plan.digits, plan.domain) for key in others)
            values = tuple(float(leaves[key]) for key in near)
            bucket = self._bucket(values[0], tolerance[near[0]])
            self.groups.setdefault((others, near), {}).setdefault((*exact, bucket), []).append((index, values))
        self.places = {name: lookup_candidates(name) for others, near in self.groups for name in (*others, *near)}

    @staticmethod
    def _bucket(value: float, tol: float) -> Hashable:
        return value if tol == 0 else math.floor(value / tol)

    def scan(self, row: dict[str, Any]) -> list[tuple[int, float]]:
        found: list[tuple[int, float]] = []
        normalise = normalise_text if self.plan.domain == "text" else normalise_value
        for (others, near), index in self.groups.items():
            exact = []
            for name in others:
                value = resolve(row, self.places[name])
                if value is MISSING:
                    break
                exact.append(normalise(value, self.plan.digits))
            else:
                values = [_number(resolve(row, self.places[name])) for name in near]
                if any(value is None for value in values):
                    continue
                first, tol0 = values[0], self.tolerance[near[0]]
                assert first is not None
                buckets = [first] if tol0 == 0 else [math.floor(first / tol0) + step for step in (-1, 0, 1)]
                for bucket in buckets:
                    for case, theirs in index.get((*exact, bucket), ()):
                        worst = 0.0
                        for name, mine, their in zip(near, values, theirs, strict=True):
                            tol = self.tolerance[name]
                            assert mine is not None
                            gap = abs(mine - their)
                            if gap > tol * (1 + 1e-12):
                                break
                            worst = max(worst, gap / tol if tol else 0.0)
                        else:
                            found.append((case, worst))
        return found


def _number(value: Any) -> float | None:
    """A finite number (a CSV cell holding one too); booleans are not numbers."""
    if type(value) is bool or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None
