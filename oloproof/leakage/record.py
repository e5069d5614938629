"""The leakage check's result and its evidence record (the gate reads it in ``check``).

A record lives at ``.oloproof/evidence/leakage/<test-set digest hex>.<training key>.json`` (schema
``oloproof.leakage/1``, the same document ``--json`` writes), where the training key is the first
16 hex digits of SHA-256 over the training path as given (relative to release.yaml's directory).
It holds case ids, counts, the options used, the test-set digest and, for the training file, its
path as the user gave it, format, size and SHA-256 — a commitment that lets anyone holding the file
confirm which one was checked, and reveals nothing of its content. One record per (test-set digest,
training file): a check against another training file adds a record, never replaces one; a new
check of the same pair replaces it, and says so when the old one had found leaks. Records made
before (``<digest hex>.json``, one per test set) are still read.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.errors import DataError, StoreError, UsageError
from oloproof.files import atomic_write_bytes, read_evidence
from oloproof.identity import checker_identity
from oloproof.leakage.images import PIXELS
from oloproof.leakage.near import NearResult, near_workers
from oloproof.leakage.near_jobs import find_near
from oloproof.leakage.normalise import NEAR_DUPLICATES, NORMALISATION
from oloproof.leakage.plan import build_plan
from oloproof.leakage.readers import detect
from oloproof.leakage.scan import PARALLEL_MIN_BYTES, scan_training
from oloproof.runstore import RunStore
from oloproof.store import MAX_RECORD_BYTES, leakage_dir, short_digest, utc_stamp

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.leakage.readers import Progress
    from oloproof.leakage.spec import NearOptions
    from oloproof.testset import TestSet

LEAKAGE_SCHEMA = "oloproof.leakage/1"
NORMALISATION_TEXT = "strings NFKC-normalised, case-folded, format characters dropped, whitespace collapsed; 3 == 3.0"
SPARK_SHA256_NOTE = (
    "not computed: --engine spark hashes a single local file only (as the local engine does); this was a directory, "
    "a glob, a remote URI or a file that could not be read again"
)
SHOWN_IDS = 50  # leaked ids listed in terminal reports (all of them are in the JSON)


@dataclass(frozen=True, slots=True, kw_only=True)
class LeakageResult:
    """One leakage check. Holds no training value: ids, counts, options, names, digests."""

    testset_path: str
    testset_digest: str
    n_cases: int
    compared: tuple[str, ...]  # every compared case key, dotted
    fields: tuple[str, ...] | None  # --field, or None for every input key
    digits: int | None  # --round
    skip_malformed: bool
    training_name: str  # the file's name only
    training_format: str
    training_compression: str | None
    training_size: int  # bytes as stored
    training_sha256: str | None
    rows_scanned: int
    rows_matched: int  # training rows equal to at least one case
    rows_malformed: int  # skipped with --skip-malformed
    malformed_lines: tuple[int, ...]  # the first few of them
    leaked_ids: tuple[str, ...]  # in test-set order
    key_sources: dict[str, str] = field(default_factory=dict)  # case key → where it was found, when elsewhere
    jobs: int = 1
    duration_s: float = 0.0
    config_digest: str = ""
    system_version: str = ""
    checker: dict[str, str] = field(default_factory=dict)
    created_at: str = ""
    normalisation: str = NORMALISATION  # the version of the normaliser; "" in records made before it was recorded
    image_keys: tuple[str, ...] = ()  # compared by their pictures' pixels, not their paths
    images: str = PIXELS  # how pictures are compared; "" in records made before they were
    training_path: str = ""  # as given, relative to release.yaml's directory; "" outside it or in older records
    config: str = ""  # the release.yaml's file name; "" in records made before it was kept
    near: NearResult | None = None  # near-duplicates (--near); None when they were not looked for
    engine: dict[str, str] = field(default_factory=lambda: {"name": "local"})  # --engine: name (and version, master)
    sha256_note: str | None = None  # why training.sha256 is null (Spark: a directory, a glob or a remote URI)

    @property
    def training_shown(self) -> str:
        """The training file as the user gave it (its name alone outside the project or in older records)."""
        return self.training_path or self.training_name

    @property
    def clean(self) -> bool:
        return not self.leaked_ids

    def options_text(self) -> str:
        keys = "all input keys" if self.fields is None else "keys " + ", ".join(self.fields)
        numbers = (
            "numbers exact"
            if self.digits is None
            else f"numbers rounded to {self.digits} decimal{'' if self.digits == 1 else 's'}"
        )
        return f"{keys}; {numbers}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": LEAKAGE_SCHEMA,
            "clean": self.clean,
            "testset": {
                "set": "dev",
                "path": self.testset_path,
                "digest": self.testset_digest,
                "n_cases": self.n_cases,
            },
            "options": {
                "fields": None if self.fields is None else list(self.fields),
                "round": self.digits,
                "skip_malformed": self.skip_malformed,
                "normalisation": NORMALISATION_TEXT,
            },
            "normalisation": self.normalisation,
            "compared_keys": list(self.compared),
            "images": {"keys": list(self.image_keys), "compared_by": self.images},
            "key_sources": dict(self.key_sources),
            "config": self.config,
            "training": {
                "path": self.training_path,
                "name": self.training_name,
                "format": self.training_format,
                "compression": self.training_compression,
                "size_bytes": self.training_size,
                "sha256": self.training_sha256,
                **({} if self.sha256_note is None else {"sha256_note": self.sha256_note}),
            },
            "counts": {
                "cases_checked": self.n_cases,
                "cases_leaked": len(self.leaked_ids),
                "rows_scanned": self.rows_scanned,
                "rows_matched": self.rows_matched,
                "rows_malformed_skipped": self.rows_malformed,
            },
            "malformed_lines": list(self.malformed_lines),
            "leaked_ids": list(self.leaked_ids),
            "near_duplicates_checked": self.near is not None,
            "note": NEAR_DUPLICATES if self.near is None else near_note(self.near),
            **({} if self.near is None else {"near": self.near.to_json()}),
            "jobs": self.jobs,
            "engine": dict(self.engine),
            "duration_s": round(self.duration_s, 3),
            "config_digest": self.config_digest,
            "system_version": self.system_version,
            "checker": dict(self.checker),
            "created_at": self.created_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LeakageResult:
        if data.get("schema") != LEAKAGE_SCHEMA:
            raise ValueError(f"schema is {data.get('schema')!r}, expected {LEAKAGE_SCHEMA!r}")
        options, training, counts = data["options"], data["training"], data["counts"]
        fields = options["fields"]
        leaked = data["leaked_ids"]
        if not isinstance(leaked, list) or not all(isinstance(item, str) for item in leaked):
            raise ValueError("leaked_ids must be a list of case ids")
        return cls(
            testset_path=str(data["testset"]["path"]),
            testset_digest=str(data["testset"]["digest"]),
            n_cases=int(data["testset"]["n_cases"]),
            compared=tuple(data["compared_keys"]),
            fields=None if fields is None else tuple(fields),
            digits=options["round"],
            skip_malformed=bool(options["skip_malformed"]),
            training_name=str(training["name"]),
            training_format=str(training["format"]),
            training_compression=training["compression"],
            training_size=int(training["size_bytes"]),
            training_sha256=training["sha256"],
            rows_scanned=int(counts["rows_scanned"]),
            rows_matched=int(counts["rows_matched"]),
            rows_malformed=int(counts["rows_malformed_skipped"]),
            malformed_lines=tuple(data["malformed_lines"]),
            leaked_ids=tuple(leaked),
            key_sources=dict(data.get("key_sources", {})),
            jobs=int(data.get("jobs", 1)),
            engine=_engine(data.get("engine")),
            duration_s=float(data.get("duration_s", 0.0)),
            config_digest=str(data.get("config_digest", "")),
            system_version=str(data.get("system_version", "")),
            checker=dict(data["checker"]),
            created_at=str(data["created_at"]),
            normalisation=str(data.get("normalisation") or ""),
            image_keys=tuple((data.get("images") or {}).get("keys") or ()),
            images=str((data.get("images") or {}).get("compared_by") or ""),
            training_path=str(training.get("path") or ""),
            config=str(data.get("config") or ""),
            near=None if not isinstance(data.get("near"), dict) else NearResult.from_json(data["near"]),
            sha256_note=None if training.get("sha256_note") is None else str(training["sha256_note"]),
        )


def _engine(data: Any) -> dict[str, str]:
    """The record's engine (records made before engines were named: the local one)."""
    if data is None:
        return {"name": "local"}
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError("engine must be an object with a name")
    return {str(key): str(value) for key, value in data.items()}


def run_check(
    release: Release,
    testset: TestSet,
    training: str,
    *,
    fields: tuple[str, ...] | None = None,
    digits: int | None = None,
    skip_malformed: bool = False,
    format: str | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    parallel_min_bytes: int | None = None,
    image_root: Path | None = None,
    near: NearOptions | None = None,
    engine: str = "local",
    spark_master: str | None = None,
) -> LeakageResult:
    """Check every case of ``testset`` against the training file ``training``. Image paths in the test
    set are read relative to the directory of release.yaml; in the training file relative to
    ``image_root`` (default: the same directory)."""
    if digits is not None and not 0 <= digits <= 15:
        raise UsageError(f"--round: expected a number of decimals from 0 to 15, got {digits}")
    if engine == "spark":
        from oloproof.leakage.spark import detect_spark, scan_spark, session  # lazy: optional

        spark = session(spark_master)
        source: Any = detect_spark(spark, training, format)
    else:
        source = detect(training, format=format)
    plan = build_plan(
        testset,
        fields=fields,
        digits=digits,
        domain="text" if source.format == "csv" else "typed",
        case_root=release.base_dir,
        image_root=image_root,
    )
    started = time.perf_counter()
    if engine == "spark":
        outcome = scan_spark(plan, source, spark, skip_malformed=skip_malformed)
    else:
        outcome = scan_training(
            plan,
            source,
            skip_malformed=skip_malformed,
            jobs=jobs,
            progress=progress,
            parallel_min_bytes=PARALLEL_MIN_BYTES if parallel_min_bytes is None else parallel_min_bytes,
        )
    counts = outcome.counts
    if counts.rows == 0:
        skipped = f" ({counts.malformed} malformed rows were skipped)" if counts.malformed else ""
        raise DataError(
            source.display,
            None,
            f"the training file has no rows{skipped}: there is nothing to check the test set against, so no result "
            f"was recorded",
        )
    leaked = set(counts.leaked)
    near_result = None
    if near is not None and engine == "spark":
        from oloproof.leakage.spark_near import near_spark  # lazy: optional

        near_result = near_spark(testset, plan, source, near, spark, exact=leaked, skip_malformed=skip_malformed)
    elif near is not None:
        near_result = find_near(
            testset,
            plan,
            source,
            near,
            case_root=release.base_dir,
            exact=leaked,
            skip_malformed=skip_malformed,
            jobs=near_workers(jobs, source.size),
        )
    return LeakageResult(
        near=near_result,
        testset_path=testset.path,
        testset_digest=testset.digest,
        n_cases=len(testset),
        compared=plan.compared,
        fields=fields,
        digits=digits,
        skip_malformed=skip_malformed,
        training_name=source.name if engine == "spark" else source.path.name,
        training_path="" if "://" in training else given_path(release.base_dir, training),
        config=Path(release.path).name,
        training_format=source.format,
        training_compression=source.compression,
        training_size=source.size,
        training_sha256=outcome.sha256,
        rows_scanned=counts.rows,
        rows_matched=counts.matched_rows,
        rows_malformed=counts.malformed,
        malformed_lines=tuple(counts.malformed_lines),
        leaked_ids=tuple(plan.case_ids[i] for i in sorted(counts.leaked)),
        key_sources=outcome.key_sources,
        image_keys=tuple(sorted(plan.image_keys)),
        jobs=outcome.jobs,
        duration_s=time.perf_counter() - started,
        config_digest=release.digest,
        system_version=release.system.version,
        checker=checker_identity().to_json(),
        created_at=utc_stamp(),
        engine=source.engine if engine == "spark" else {"name": "local"},
        sha256_note=None if outcome.sha256 is not None or engine != "spark" else SPARK_SHA256_NOTE,
    )


def near_note(near: NearResult) -> str:
    """The sentence that replaces "near-duplicates are not checked" when they were."""
    keys = [*near.text_keys, *near.image_keys, *sorted(near.options.tolerance)]
    if not keys:
        return (
            "Near-duplicates: no compared key could be checked for near copies (they need a text of at least 5 words, "
            "an image key, or a number with --tolerance); only exact copies were looked for."
        )
    return (
        f"Near-duplicates checked on {', '.join(keys)} ({near.options.text()}): {len(near.ids)} case(s) are near "
        "copies of training rows (exact copies excluded). Copies edited more than these thresholds allow are not found."
    )


def id_list(ids: tuple[str, ...], shown: int) -> str:
    text = ", ".join(ids[:shown])
    return text + (f", … and {len(ids) - shown} more (all in the JSON report)" if len(ids) > shown else "")


def short(digest: str) -> str:
    return short_digest(digest)


# --------------------------------------------------------------------------- records


def given_path(base_dir: Path, training: str) -> str:
    """The training path as the user gave it, relative to release.yaml's directory (POSIX): the
    same file named two ways (``./a.jsonl``, ``a.jsonl``) is one training file. Symlinks are not
    resolved: the path is what the user names. A file outside that directory gets "" (the record
    keeps only its name: its directories may be private); it is told apart by ``training_key``."""
    absolute = os.path.normpath(os.path.abspath(training))
    relative = os.path.relpath(absolute, os.path.abspath(base_dir))
    return "" if relative.startswith("..") else Path(relative).as_posix()


def record_key(base_dir: Path, training: str) -> str:
    """What tells training files apart: the path as given inside the project, else the absolute
    path (hashed into the record's file name, never stored)."""
    return given_path(base_dir, training) or os.path.normpath(os.path.abspath(training))


def _hex(digest: str) -> str:
    return digest.partition(":")[2] or digest


def training_key(training_path: str) -> str:
    return hashlib.sha256(training_path.encode("utf-8")).hexdigest()[:16]


def record_path(root: Path, digest: str, key: str) -> Path:
    """The record of a check of test set ``digest`` against the training file ``key`` (``record_key``)."""
    return leakage_dir(root) / f"{_hex(digest)}.{training_key(key)}.json"


def legacy_record_path(root: Path, digest: str) -> Path:
    """Where one record per test set was kept before records were per training file."""
    return leakage_dir(root) / f"{_hex(digest)}.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredRecord:
    """A record and where it lies (relative to the store root, POSIX)."""

    path: str
    record: LeakageResult


def write_record(root: Path, result: LeakageResult, training: str) -> tuple[Path, list[StoredRecord]]:
    """Write the record of (test-set digest, training file), atomically; return its path and the
    records it replaced (the same pair's, and a record of this test set made before records were
    per training file that names a training file of the same name)."""
    path = record_path(root, result.testset_digest, record_key(root, training))
    payload = orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    replaced: list[StoredRecord] = []
    with RunStore(root).lock("leakage-evidence"):  # under .oloproof/.locks/, git-ignored: a lock is not evidence
        legacy = legacy_record_path(root, result.testset_digest)
        for old in (path, legacy):
            if old.is_file():
                try:
                    stored = StoredRecord(path=old.relative_to(root).as_posix(), record=_load(old, old.name))
                except StoreError:
                    stored = None
                if old == legacy and (stored is None or stored.record.training_name != result.training_name):
                    continue
                if stored is not None:
                    replaced.append(stored)
        atomic_write_bytes(path, payload)
        if any(stored.path == legacy.relative_to(root).as_posix() for stored in replaced):
            legacy.unlink()
    return path, replaced


def _load(path: Path, shown: str) -> LeakageResult:
    # Evidence: a regular file read with a cap, never through a symlink (a PR could point a record
    # at a rewritten copy, or at /dev/zero).
    raw = read_evidence(path, shown, expected="a leakage record", max_bytes=MAX_RECORD_BYTES)
    if raw is None:
        raise StoreError(f"{shown}: the leakage record disappeared while it was read; run the command again")
    try:
        data = orjson.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return LeakageResult.from_json(data)
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(
            f"{shown}: not a valid leakage record ({type(exc).__name__}: {exc}); delete it and re-run `oloproof "
            f"leakage check --record`"
        ) from None


def all_records(root: Path) -> list[StoredRecord]:
    """Every record under the evidence folder, newest first."""
    folder = leakage_dir(root)
    if not folder.is_dir():
        return []
    found: list[StoredRecord] = []
    for path in sorted(folder.glob("*.json")):
        if path.name.startswith("."):
            continue
        shown = path.relative_to(root).as_posix()
        found.append(StoredRecord(path=shown, record=_load(path, shown)))
    return sorted(found, key=lambda stored: (stored.record.created_at, stored.path), reverse=True)


def records_of(root: Path, digest: str, found: list[StoredRecord] | None = None) -> list[StoredRecord]:
    """Every record of test set ``digest`` (one per training file), newest first. A record whose
    name and content disagree about the test set is an error (it was renamed or edited)."""
    mine: list[StoredRecord] = []
    for stored in all_records(root) if found is None else found:
        named = stored.path.rsplit("/", 1)[-1].split(".", 1)[0] == _hex(digest)
        holds = stored.record.testset_digest == digest
        if named != holds:
            raise StoreError(
                f"{stored.path}: holds a check of test set {stored.record.testset_digest}, but its name says "
                f"{'this one' if named else 'another'} ({short(digest)}); delete it and re-run the check"
            )
        if holds:
            mine.append(stored)
    return mine


def replaced_leaky(old: StoredRecord, new: LeakageResult) -> str:
    """What the CLI says when a new check replaces a record that had found leaks."""
    record = old.record
    same = record.training_sha256 is not None and record.training_sha256 == new.training_sha256
    file_note = (
        "the same file (same SHA-256)"
        if same
        else f"the file has changed since ({short(str(record.training_sha256))}… then, "
        f"{short(str(new.training_sha256))}… now)"
    )
    now = "finds none" if new.clean else f"finds {len(new.leaked_ids)}"
    return (
        f"replaced {old.path}: it had found {len(record.leaked_ids)} leaked case(s) in {record.training_shown} "
        f"({record.created_at}); this check {now}; {file_note}"
    )
