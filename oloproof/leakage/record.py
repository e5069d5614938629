"""The leakage check's result, its evidence record, and what the gate reads from it.

A record lives at ``.oloproof/evidence/leakage/<test-set digest hex>.json`` (schema
``oloproof.leakage/1``, the same document ``--json`` writes). It holds case ids, counts, the
options used, the test-set digest and, for the training file, only its name (no
directories), format, size and SHA-256 — a commitment that lets anyone holding the file
confirm which one was checked, and reveals nothing of its content. One record per test-set
digest: a new check of the same test set replaces the old one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.checks import CheckReport
from oloproof.errors import DataError, StoreError, UsageError
from oloproof.leakage import NEAR_DUPLICATES, NORMALISATION, build_plan
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from collections.abc import Callable

    from oloproof.config import Release
    from oloproof.leakage_io import Progress
    from oloproof.testset import TestSet

LEAKAGE_SCHEMA = "oloproof.leakage/1"
EVIDENCE_DIR = Path(".oloproof") / "evidence" / "leakage"
NORMALISATION_TEXT = "strings NFKC-normalised, case-folded, format characters dropped, whitespace collapsed; 3 == 3.0"
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

    @property
    def clean(self) -> bool:
        return not self.leaked_ids

    def options_text(self) -> str:
        keys = "all input keys" if self.fields is None else "keys " + ", ".join(self.fields)
        numbers = "numbers exact" if self.digits is None else f"numbers rounded to {self.digits} decimal{'' if self.digits == 1 else 's'}"
        return f"{keys}; {numbers}"

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": LEAKAGE_SCHEMA,
            "clean": self.clean,
            "testset": {"set": "dev", "path": self.testset_path, "digest": self.testset_digest, "n_cases": self.n_cases},
            "options": {
                "fields": None if self.fields is None else list(self.fields), "round": self.digits,
                "skip_malformed": self.skip_malformed, "normalisation": NORMALISATION_TEXT,
            },
            "normalisation": self.normalisation,
            "compared_keys": list(self.compared),
            "key_sources": dict(self.key_sources),
            "training": {
                "name": self.training_name, "format": self.training_format, "compression": self.training_compression,
                "size_bytes": self.training_size, "sha256": self.training_sha256,
            },
            "counts": {
                "cases_checked": self.n_cases, "cases_leaked": len(self.leaked_ids), "rows_scanned": self.rows_scanned,
                "rows_matched": self.rows_matched, "rows_malformed_skipped": self.rows_malformed,
            },
            "malformed_lines": list(self.malformed_lines),
            "leaked_ids": list(self.leaked_ids),
            "near_duplicates_checked": False,
            "note": NEAR_DUPLICATES,
            "jobs": self.jobs,
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
            testset_path=str(data["testset"]["path"]), testset_digest=str(data["testset"]["digest"]),
            n_cases=int(data["testset"]["n_cases"]), compared=tuple(data["compared_keys"]),
            fields=None if fields is None else tuple(fields), digits=options["round"], skip_malformed=bool(options["skip_malformed"]),
            training_name=str(training["name"]), training_format=str(training["format"]), training_compression=training["compression"],
            training_size=int(training["size_bytes"]), training_sha256=training["sha256"],
            rows_scanned=int(counts["rows_scanned"]), rows_matched=int(counts["rows_matched"]),
            rows_malformed=int(counts["rows_malformed_skipped"]), malformed_lines=tuple(data["malformed_lines"]),
            leaked_ids=tuple(leaked), key_sources=dict(data.get("key_sources", {})), jobs=int(data.get("jobs", 1)),
            duration_s=float(data.get("duration_s", 0.0)), config_digest=str(data.get("config_digest", "")),
            system_version=str(data.get("system_version", "")), checker=dict(data["checker"]), created_at=str(data["created_at"]),
            normalisation=str(data.get("normalisation") or ""),
        )


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
) -> LeakageResult:
    """Check every case of ``testset`` against the training file ``training``."""
    from oloproof.identity import checker_identity
    from oloproof.leakage_io import detect
    from oloproof.leakage_scan import PARALLEL_MIN_BYTES, scan_training

    if digits is not None and not 0 <= digits <= 15:
        raise UsageError(f"--round: expected a number of decimals from 0 to 15, got {digits}")
    source = detect(training, format=format)
    plan = build_plan(testset, fields=fields, digits=digits, domain="text" if source.format == "csv" else "typed")
    started = time.perf_counter()
    outcome = scan_training(
        plan, source, skip_malformed=skip_malformed, jobs=jobs, progress=progress,
        parallel_min_bytes=PARALLEL_MIN_BYTES if parallel_min_bytes is None else parallel_min_bytes,
    )
    counts = outcome.counts
    if counts.rows == 0:
        skipped = f" ({counts.malformed} malformed rows were skipped)" if counts.malformed else ""
        raise DataError(
            source.display, None,
            f"the training file has no rows{skipped}: there is nothing to check the test set against, so no result was recorded",
        )
    return LeakageResult(
        testset_path=testset.path, testset_digest=testset.digest, n_cases=len(testset), compared=plan.compared,
        fields=fields, digits=digits, skip_malformed=skip_malformed,
        training_name=source.path.name, training_format=source.format, training_compression=source.compression,
        training_size=source.size, training_sha256=outcome.sha256,
        rows_scanned=counts.rows, rows_matched=counts.matched_rows, rows_malformed=counts.malformed,
        malformed_lines=tuple(counts.malformed_lines), leaked_ids=tuple(plan.case_ids[i] for i in sorted(counts.leaked)),
        key_sources=outcome.key_sources, jobs=outcome.jobs, duration_s=time.perf_counter() - started,
        config_digest=release.digest, system_version=release.system.version, checker=checker_identity().to_json(),
        created_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def describe(result: LeakageResult, *, shown_ids: int = SHOWN_IDS) -> list[str]:
    """The check's report as plain lines (the CLI styles them)."""
    rate = result.rows_scanned / result.duration_s if result.duration_s > 0 else 0.0
    compression = f", {result.training_compression}" if result.training_compression else ""
    lines = [
        f"test set {result.testset_path}: {result.n_cases} cases, {_short(result.testset_digest)}",
        f"training data {result.training_name} ({result.training_format}{compression}, {result.training_size:,} bytes)",
        f"compared: {result.options_text()}; {NORMALISATION_TEXT}",
        f"  {len(result.compared)} key(s): {', '.join(result.compared)}",
    ]
    if result.key_sources:
        found = ", ".join(f"{key} as {where}" for key, where in sorted(result.key_sources.items()))
        lines.append(f"  found in the training data under other names: {found}")
    lines.append(f"rows scanned: {result.rows_scanned:,} in {result.duration_s:.2f} s ({rate:,.0f} rows/s, {result.jobs} process(es))")
    if result.rows_malformed:
        more = ", …" if result.rows_malformed > len(result.malformed_lines) else ""
        lines.append(f"malformed rows skipped: {result.rows_malformed:,} (lines {', '.join(map(str, result.malformed_lines))}{more})")
    lines.append(f"cases checked: {result.n_cases}; found in the training data: {len(result.leaked_ids)}")
    if result.leaked_ids:
        lines.append("  " + _id_list(result.leaked_ids, shown_ids))
    lines.append(NEAR_DUPLICATES)
    return lines


def _id_list(ids: tuple[str, ...], shown: int) -> str:
    text = ", ".join(ids[:shown])
    return text + (f", … and {len(ids) - shown} more (all in the JSON report)" if len(ids) > shown else "")


def _short(digest: str) -> str:
    algo, _, hexpart = digest.partition(":")
    return f"{algo}:{hexpart[:12]}"


# --------------------------------------------------------------------------- records


def record_path(root: Path, digest: str) -> Path:
    return root / EVIDENCE_DIR / f"{digest.partition(':')[2] or digest}.json"


def write_record(root: Path, result: LeakageResult) -> Path:
    """Write (or replace) the record for the result's test-set digest, atomically."""
    from oloproof.atomic import atomic_write_bytes
    from oloproof.runstore import RunStore

    path = record_path(root, result.testset_digest)
    payload = orjson.dumps(result.to_json(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    with RunStore(root).lock("leakage-evidence"):  # under .oloproof/.locks/, git-ignored: a lock is not evidence
        atomic_write_bytes(path, payload)
    return path


def _load(path: Path, shown: str) -> LeakageResult:
    try:
        data = orjson.loads(path.read_bytes())
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        return LeakageResult.from_json(data)
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError) as exc:
        raise StoreError(
            f"{shown}: not a valid leakage record ({type(exc).__name__}: {exc}); delete it and re-run `oloproof leakage check --record`"
        ) from None


def read_record(root: Path, digest: str) -> LeakageResult | None:
    path = record_path(root, digest)
    if not path.is_file():
        return None
    record = _load(path, str(path.relative_to(root)))
    if record.testset_digest != digest:
        raise StoreError(f"{path.relative_to(root)}: holds a check of test set {record.testset_digest}, not {digest}; delete it and re-run the check")
    return record


def other_records(root: Path, digest: str) -> list[LeakageResult]:
    """Records of other test-set digests (stale for this one), newest first."""
    folder = root / EVIDENCE_DIR
    if not folder.is_dir():
        return []
    keep = record_path(root, digest).name
    found = [
        _load(path, str(path.relative_to(root)))
        for path in sorted(folder.glob("*.json"))
        if path.name != keep and not path.name.startswith(".")
    ]
    return sorted(found, key=lambda record: record.created_at, reverse=True)


# --------------------------------------------------------------------------- the gate


def gate_report(release: Release, testset: TestSet, root: Path) -> CheckReport:
    """The leakage line of the gate: status always; BLOCKED or invalidating when it must."""
    required = release.leakage == "required"
    line = release.document.line("leakage") if release.leakage else None

    def report(status: str, data: dict[str, Any], **more: Any) -> CheckReport:
        base = {"declared": release.leakage, "required": required, "testset_digest": testset.digest}
        return CheckReport(name="leakage", title="leakage", status=status, data=base | data, source=release.path, line=line, **more)

    record = read_record(root, testset.digest)
    if record is not None and record.normalisation != NORMALISATION:
        return _outdated(record, report, required=required)
    if record is not None:
        data = _record_data(record, root)
        against = f"{record.rows_scanned:,} rows of {record.training_name} ({record.options_text()}), {record.created_at}"
        changed = ""
        if record.checker and record.checker.get("source_digest") != _checker_digest():
            data["checker_changed"] = True
            changed = "; the checker has changed since"
        if record.clean:
            return report(f"clean: {record.n_cases} cases checked against {against}{changed}", data | {"status": "clean"}, lines=(NEAR_DUPLICATES,))
        ids = record.leaked_ids
        return report(
            f"{len(ids)} of {record.n_cases} cases found in the training data: checked against {against}{changed}",
            data | {"status": "leaked"},
            verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=("leaked_cases",), invalidates=("leaked_cases",),
            sentence=(
                f"{len(ids)} test case(s) appear in the training data ({record.training_name}), so every rule's evidence is invalid "
                "(this is not a FAIL of the model): remove them from the test set, or retrain without them, and check again."
            ),
            lines=(f"leaked case ids ({len(ids)}): {_id_list(ids, SHOWN_IDS)}", NEAR_DUPLICATES),
        )
    stale = other_records(root, testset.digest)
    rerun = f"`oloproof leakage check --training {stale[0].training_name if stale else 'FILE'} --record`"
    if stale:
        last = stale[0]
        data = {"status": "stale", "stale_record": {
            "testset_digest": last.testset_digest, "created_at": last.created_at, "training": last.training_name,
            "clean": last.clean, "record": str(record_path(root, last.testset_digest).relative_to(root)),
        }}
        what = (
            f"the last recorded check ({last.created_at}, against {last.training_name}) was made on test set "
            f"{_short(last.testset_digest)}, but {testset.path} is now {_short(testset.digest)}"
        )
        if required:
            return report(
                "stale: no check of this version of the test set is recorded", data,
                verdict=Verdict.BLOCKED, reasons=("leakage_stale",), blocks=True, sentence=f"leakage: required, and {what}: run {rerun}.",
            )
        return report(f"not checked for this version of the test set: {what}", data)
    if required:
        return report(
            "not checked", {"status": "unchecked"}, verdict=Verdict.BLOCKED, reasons=("leakage_unchecked",), blocks=True,
            sentence=f"leakage: required, and no leakage check of {testset.path} ({_short(testset.digest)}) is recorded: run {rerun}.",
        )
    why = "leakage: optional in release.yaml" if release.leakage == "optional" else "release.yaml does not declare leakage"
    return report(f"not checked: nobody has recorded whether these test cases appear in the training data ({why})", {"status": "unchecked"})


def _outdated(record: LeakageResult, report: Callable[..., CheckReport], *, required: bool) -> CheckReport:
    """A record of this test set made with another string normalisation: stale, like an edit."""
    data = {"status": "stale", "stale_record": {
        "testset_digest": record.testset_digest, "created_at": record.created_at, "training": record.training_name,
        "clean": record.clean, "normalisation": record.normalisation or None, "expected_normalisation": NORMALISATION,
    }}
    what = (
        f"the recorded check ({record.created_at}, against {record.training_name}) compared strings with "
        f"{'an older normalisation' if not record.normalisation else 'normalisation ' + record.normalisation}, "
        f"not {NORMALISATION} (which also meets NFC/NFD, fullwidth, case-folded and zero-width variants)"
    )
    rerun = f"`oloproof leakage check --training {record.training_name} --record`"
    if required:
        return report(
            "stale: the recorded check used another string normalisation", data,
            verdict=Verdict.BLOCKED, reasons=("leakage_stale",), blocks=True, sentence=f"leakage: required, and {what}: run {rerun}.",
        )
    return report(f"not checked with the current normalisation: {what}", data)


def _record_data(record: LeakageResult, root: Path) -> dict[str, Any]:
    return {
        "record": str(record_path(root, record.testset_digest).relative_to(root)),
        "checked_at": record.created_at,
        "cases_checked": record.n_cases,
        "n_leaked": len(record.leaked_ids),
        "leaked_ids": list(record.leaked_ids),
        "rows_scanned": record.rows_scanned,
        "options": {"fields": None if record.fields is None else list(record.fields), "round": record.digits},
        "training": {"name": record.training_name, "format": record.training_format, "size_bytes": record.training_size,
                     "sha256": record.training_sha256},
        "checker": dict(record.checker),
        "near_duplicates_checked": False,
    }


def _checker_digest() -> str:
    from oloproof.identity import checker_identity

    return checker_identity().source_digest
