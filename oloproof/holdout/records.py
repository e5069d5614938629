"""Outcome records of holdout reads: per-case pass/fail, and nothing that identifies a case.

Each read writes ``.oloproof/holdout/read-NNNN-<hash12>.json`` (schema
``oloproof.holdout-outcomes/1``, docs/holdout.md) beside the run store. A paired comparison of two
reads (week-0 against now, STATISTICS.md §4–5) needs the outcome of every case under both; the
record keeps exactly that and no more:

- ``outcomes``: one value per case, ordered by the SHA-256 (hex) of the case's canonical line (the
  testset canonical JSON the set digest is computed from) — 1/0 for pass/fail, a score in [0, 1]
  for graded criteria, ``null`` for a case without a usable output. Two reads of the same set
  digest hold the same canonical lines, so their vectors line up index by index; the order reveals
  nothing to someone who can guess case ids but does not hold the cases.
  Ids, inputs, expected values and outputs are not stored (``.oloproof/`` is committed).
- ``entry_hash``: the hash of the read's entry in READS.log. The records are also the log's
  witnesses: a record whose entry is missing from the log shows a deleted entry or a reset log,
  which a hash chain alone cannot see when the entry was the last one.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.config import resolve_path
from oloproof.errors import DataError, StoreError
from oloproof.files import atomic_write_bytes, read_evidence
from oloproof.holdout.log import ReadEntry, Witness
from oloproof.identity import checker_identity
from oloproof.jsonl import dumps_line, iter_objects
from oloproof.measures.registry import measure_of
from oloproof.store import MAX_RECORD_BYTES, holdout_records_dir, is_outcome_record_name, outcome_record_name
from oloproof.testset import canonical_digest

if TYPE_CHECKING:
    from oloproof.testset import TestSet

OUTCOMES_SCHEMA = "oloproof.holdout-outcomes/1"
OUTCOME_ORDER = "cases sorted by the SHA-256 (hex) of their canonical line (testset canonical JSON); ids are not stored"


@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomeRecord:
    """The per-case outcomes of one read. ``n`` counts the holdout's cases; ``outcomes[i]`` is the
    i-th case in the order of sha256(canonical line): 1.0/0.0, a score in [0, 1], or None (no output)."""

    path: Path
    log: str  # the log the read was appended to, as written in release.yaml
    seq: int
    entry_hash: str
    set_digest: str
    n: int
    criterion: str
    kind: str  # binary | score
    version: str
    outcomes: tuple[float | None, ...]
    strata: tuple[str | None, ...] | None  # each case's stratum, same order (None: not recorded)
    data: dict[str, Any]  # the whole record (run status, checker identity, config digest, …)
    groups: tuple[int, ...] | None = None  # each case's group as a number, same order (None: not recorded)


def command_digest(command: str | Sequence[str]) -> str:
    """The digest of a command line as declared (a string, or a list of arguments), as outcome
    records keep it: which command made a read, without storing the command's text."""
    value: str | list[str] = command if isinstance(command, str) else list(command)
    return "sha256:" + hashlib.sha256(orjson.dumps(value)).hexdigest()


def records_dir(base_dir: Path) -> Path:
    return holdout_records_dir(base_dir)


def relative(base_dir: Path, file: Path) -> str:
    try:
        return file.relative_to(base_dir).as_posix()
    except ValueError:
        return str(file)


def log_key(base_dir: Path, log: str) -> Path:
    """A log path as written in release.yaml (or a record), resolved against release.yaml's
    directory, so ``./evals/holdout/READS.log`` and ``evals/holdout/READS.log`` are one log."""

    return resolve_path(base_dir, log).resolve()


def load_outcome_records(base_dir: Path, *, log: str | None) -> tuple[list[OutcomeRecord], list[str]]:
    """Every record of reads appended to ``log`` (however its path is spelled; ``None``: every
    record, whatever log it names), oldest read first, and notes on unreadable files."""
    folder = records_dir(base_dir)
    records: list[OutcomeRecord] = []
    notes: list[str] = []
    if not folder.is_dir():
        return records, notes
    for file in sorted(item for item in folder.iterdir() if is_outcome_record_name(item.name)):
        try:
            raw = read_evidence(
                file, relative(base_dir, file), expected="a holdout outcome record", max_bytes=MAX_RECORD_BYTES
            )
            if raw is None:
                continue  # removed since the folder was listed
            data = orjson.loads(raw)
            if not isinstance(data, dict) or data.get("schema") != OUTCOMES_SCHEMA:
                raise ValueError(f"schema is not {OUTCOMES_SCHEMA}")
            record = OutcomeRecord(
                path=file,
                log=str(data["log"]),
                seq=int(data["read"]),
                entry_hash=str(data["entry_hash"]),
                set_digest=str(data["set"]["digest"]),
                n=int(data["set"]["n"]),
                criterion=str(data["criterion"]),
                kind=str(data["kind"]),
                version=str(data["version"]),
                outcomes=tuple(data["outcomes"]),
                strata=_strata(data),
                data=data,
                groups=_groups(data),
            )
        except (OSError, StoreError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            notes.append(f"outcome record {relative(base_dir, file)} is unreadable and was ignored ({exc})")
            continue
        if log is None or log_key(base_dir, record.log) == log_key(base_dir, log):
            records.append(record)
    records.sort(key=lambda record: (record.seq, record.entry_hash))
    return records, notes


def _strata(data: dict[str, Any]) -> tuple[str | None, ...] | None:
    raw = data.get("strata")
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != len(data["outcomes"]):
        raise ValueError("strata must be a list as long as outcomes")
    if any(value is not None and not isinstance(value, str) for value in raw):
        raise ValueError("strata must hold strings or null")
    return tuple(raw)


def _groups(data: dict[str, Any]) -> tuple[int, ...] | None:
    raw = data.get("groups")
    if raw is None:
        return None
    if not isinstance(raw, list) or len(raw) != len(data["outcomes"]):
        raise ValueError("groups must be a list as long as outcomes")
    if any(isinstance(value, bool) or not isinstance(value, int) for value in raw):
        raise ValueError("groups must hold integers")
    return tuple(raw)


def witnesses(base_dir: Path, *, log: str) -> list[Witness]:
    records, _ = load_outcome_records(base_dir, log=log)
    return [
        Witness(seq=record.seq, hash=record.entry_hash, source=relative(base_dir, record.path)) for record in records
    ]


def case_keys(file: Path, testset: TestSet) -> dict[str, str]:
    """Case id -> SHA-256 (hex) of the case's canonical line, read from the holdout file. Refuses
    (DataError) when the file no longer holds ``testset`` (changed since it was loaded)."""

    lines: list[bytes] = []
    keys: dict[str, str] = {}
    for _, obj in iter_objects(file, display=testset.path):
        line = dumps_line(obj)
        lines.append(line)
        keys[str(obj.get("id"))] = hashlib.sha256(line).hexdigest()
    if canonical_digest(lines) != testset.digest or len(keys) != len(testset.cases):
        raise DataError(testset.path, None, "the holdout file changed while it was being read; read again")
    return keys


def outcome_vector(testset: TestSet, values: Any, kind: str, keys: Mapping[str, str]) -> list[float | None]:
    """``values`` (aligned with ``testset.cases``, NaN = missing) in the order of the SHA-256 of each
    case's canonical line (``keys``, from :func:`case_keys`)."""
    order = sorted(range(len(testset.cases)), key=lambda i: keys[testset.cases[i].id])
    out: list[float | None] = []
    for index in order:
        value = float(values[index])
        out.append(None if math.isnan(value) else measure_of(kind).stored(value))
    return out


def strata_vector(testset: TestSet, keys: Mapping[str, str]) -> list[str | None] | None:
    """Each case's ``stratum`` in the order of :func:`outcome_vector` (None when no case declares
    one): what a composition check counts, and nothing that identifies a case."""
    if not any(case.stratum is not None for case in testset.cases):
        return None
    order = sorted(range(len(testset.cases)), key=lambda i: keys[testset.cases[i].id])
    return [testset.cases[index].stratum for index in order]


def groups_vector(testset: TestSet, keys: Mapping[str, str]) -> list[int] | None:
    """Each case's group in the order of :func:`outcome_vector`, as a number (groups numbered in
    that order of first appearance; a case without a group is a group of its own), or None when no
    case declares one. Which cases share a document is what a clustered interval needs; the
    group's name is not stored."""
    if not testset.has_groups:
        return None
    order = sorted(range(len(testset.cases)), key=lambda i: keys[testset.cases[i].id])
    numbers: dict[str, int] = {}
    out: list[int] = []
    for index in order:
        case = testset.cases[index]
        label = case.group if case.group is not None else f"\0{case.id}"
        out.append(numbers.setdefault(label, len(numbers)))
    return out


def write_outcome_record(
    base_dir: Path,
    *,
    log: str,
    entry: ReadEntry,
    testset: TestSet,
    values: Any,
    kind: str,
    run: dict[str, Any],
    config_digest: str,
    keys: Mapping[str, str],
) -> Path:
    data = {
        "schema": OUTCOMES_SCHEMA,
        "log": log,
        "read": entry.seq,
        "entry_hash": entry.hash,
        "when": entry.when,
        "set": {"kind": "holdout", "digest": testset.digest, "n": len(testset)},
        "version": entry.fields.version,
        "criterion": entry.fields.criterion,
        "kind": kind,
        "config_digest": config_digest,
        "checker": checker_identity().to_json(),
        "run": run,
        "order": OUTCOME_ORDER,
        "outcomes": outcome_vector(testset, values, kind, keys),
    }
    strata = strata_vector(testset, keys)
    if strata is not None:
        data["strata"] = strata
    groups = groups_vector(testset, keys)
    if groups is not None:
        data["groups"] = groups
    path = records_dir(base_dir) / outcome_record_name(entry.seq, entry.hash)
    atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_SORT_KEYS) + b"\n")
    return path
