"""Every read of the holdout as the log and its outcome records tell it, for ``gap`` and ``holdout size``.

A reading joins a verified READS.log entry (who, when, version, reason, score) with its outcome
record (per-case outcomes and strata in the order of the cases' canonical hashes; no ids). Nothing
here reads a holdout case's content; the holdout file is opened only to recover strata for records
written before strata were recorded, and only when it still holds the set those reads measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from oloproof.holdout.cases import HoldoutUnavailable, cases_path, holdout_spec, load_holdout, open_log
from oloproof.holdout.log import LogState, ReadFields, Witness
from oloproof.holdout.records import (
    OutcomeRecord,
    case_keys,
    groups_vector,
    load_outcome_records,
    relative,
    strata_vector,
)
from oloproof.holdout.registry import load_register, register_shown, relative_to_root, repository_root
from oloproof.holdout.verify import verify
from oloproof.pairs import as_outcomes
from oloproof.store import shown as store_shown

if TYPE_CHECKING:
    from oloproof.config import Release


@dataclass(frozen=True, slots=True, kw_only=True)
class Reading:
    seq: int
    when: str
    who: str
    version: str
    reason: str
    criterion: str
    kind: str  # binary | score
    set_digest: str
    n: int
    passes: float
    answered: int
    estimate: float
    outcomes: tuple[bool | None, ...] | None  # None: no outcome record (or a graded criterion)
    strata: tuple[str | None, ...] | None  # None: not recorded and not recoverable here
    checker: Mapping[str, str] | None  # the identity that made the read (from its record)
    run_status: str | None  # of the system during the read (from its record)
    source: str | None = None  # what was scored: system.command | command | outputs (None: not recorded)
    command_sha256: str | None = None  # the digest of the command that made the read (records.command_digest)
    groups: tuple[int, ...] | None = None  # each case's group number, same order (None: the set has no groups)

    @property
    def scored(self) -> bool:
        return self.answered > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class History:
    log: str
    intact: bool
    problems: tuple[str, ...]
    readings: tuple[Reading, ...]
    notes: tuple[str, ...]

    def of(self, version: str, criterion: str) -> list[Reading]:
        return [r for r in self.readings if r.version == version and r.criterion == criterion]


def usable(readings: Sequence[Reading]) -> list[Reading]:
    """The reads that can be paired: scored, with an outcome record that stands."""
    return [reading for reading in readings if reading.outcomes is not None and reading.scored]


def holdout_history(release: Release, *, environ: Mapping[str, str] | None = None) -> History:
    spec = holdout_spec(release)
    data = open_log(release).read_bytes()
    records, notes = load_outcome_records(release.base_dir, log=spec.log)
    state = verify(
        data,
        shown=spec.log,
        witnesses=[Witness(seq=r.seq, hash=r.entry_hash, source=relative(release.base_dir, r.path)) for r in records],
    )
    by_hash: dict[str, OutcomeRecord] = {}
    doubled: dict[str, list[OutcomeRecord]] = {}
    for each in records:
        if each.entry_hash in by_hash:
            doubled.setdefault(each.entry_hash, [by_hash[each.entry_hash]]).append(each)
        by_hash[each.entry_hash] = each
    for entry_hash, copies in doubled.items():
        del by_hash[entry_hash]  # which one is the read's is not for a file name to decide
        names = ", ".join(relative(release.base_dir, copy.path) for copy in copies)
        notes.append(f"{len(copies)} outcome records name read {copies[0].seq} ({names}): none of them is used")
    # Groups are read from the holdout file whenever it is here: a record's group numbers (which a
    # pull request could edit into singletons, for a narrower interval) stand only without it.
    recovered, recovered_groups = _recover_strata(release, {r.set_digest for r in records}, environ)
    record: OutcomeRecord | None
    readings: list[Reading] = []
    unrecorded: list[int] = []
    unregistered = set(unregistered_reads(release, state))
    if unregistered:
        notes.append(
            f"read(s) {', '.join(map(str, sorted(unregistered)))} of {spec.log} are not in the holdout register "
            f"({register_shown()}), which `oloproof holdout run` writes before every read: they were not made by it "
            "here "
            "(or the register was not committed); their outcomes are not used"
        )
    for entry in state.reads:
        fields = entry.fields
        record = None if entry.seq in unregistered else by_hash.get(entry.hash)
        if record is None and entry.seq not in unregistered:
            unrecorded.append(entry.seq)
        problem = None if record is None else _disagreement(record, fields)
        if record is not None and problem is not None:
            notes.append(
                f"outcome record {relative(release.base_dir, record.path)} disagrees with read {entry.seq} of the log "
                f"({problem}): it is not used"
            )
            record = None
        usable = record is not None and record.kind == "binary" and record.n == len(record.outcomes)
        readings.append(
            Reading(
                seq=entry.seq,
                when=entry.when,
                who=fields.who,
                version=fields.version,
                reason=fields.reason,
                criterion=fields.criterion,
                kind=fields.kind,
                set_digest=fields.set_digest,
                n=fields.n,
                passes=fields.passes,
                answered=fields.answered,
                estimate=fields.estimate,
                outcomes=tuple(as_outcomes(record.outcomes)) if usable and record is not None else None,
                strata=None
                if record is None
                else (record.strata if record.strata is not None else recovered.get(record.set_digest)),
                checker=None if record is None else dict(record.data.get("checker") or {}),
                run_status=None if record is None else str((record.data.get("run") or {}).get("status")),
                source=None if record is None else _text((record.data.get("run") or {}).get("source")),
                command_sha256=None if record is None else _text((record.data.get("run") or {}).get("command_sha256")),
                # The holdout file's grouping where it was read (it still holds the set), else the record's.
                groups=None if record is None else recovered_groups.get(record.set_digest, record.groups),
            )
        )
    if unrecorded:
        notes.append(
            f"read(s) {', '.join(map(str, unrecorded))} have no outcome record under "
            f"{store_shown('holdout_records')}/: "
            f"they cannot be paired (commit {store_shown('holdout_records')}/ with the log)"
        )
    return History(
        log=spec.log,
        intact=state.intact,
        problems=tuple(str(problem) for problem in state.problems),
        readings=tuple(readings),
        notes=tuple(notes),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def unregistered_reads(release: Release, state: LogState) -> list[int]:
    """Reads of the log with no matching line (log, number, set, time) in the holdout register.
    Empty when the register holds no read of this log at all (a log older than the register, or a
    register kept elsewhere): there is nothing to hold it against."""
    root = repository_root(release.base_dir)
    register = load_register(root)
    spec = holdout_spec(release)
    log = relative_to_root(root, release.resolve(spec.log))
    known = {(read.seq): read for read in register.reads if read.log == log}
    if not known:
        return []
    return [
        entry.seq
        for entry in state.reads
        if (found := known.get(entry.seq)) is None
        or found.set_digest != entry.fields.set_digest
        or found.when != entry.when
    ]


def _disagreement(record: OutcomeRecord, fields: ReadFields) -> str | None:
    """What an outcome record says differently from the log entry it names (the log is the
    hash-chained account; a record edited after the read must not stand in for it)."""
    for what, ours, theirs in (
        ("version", record.version, fields.version),
        ("criterion", record.criterion, fields.criterion),
        ("set digest", record.set_digest, fields.set_digest),
        ("kind", record.kind, fields.kind),
        ("number of cases", record.n, fields.n),
    ):
        if ours != theirs:
            return f"{what} {ours!r} in the record, {theirs!r} in the log"
    if len(record.outcomes) != record.n:
        return f"{len(record.outcomes)} outcomes for {record.n} cases"
    if record.strata is not None and len(record.strata) != record.n:
        return f"{len(record.strata)} strata for {record.n} cases"
    missing = sum(1 for value in record.outcomes if value is None)
    if missing != fields.missing:
        return f"{missing} missing outcomes in the record, {fields.missing} in the log"
    total = sum(float(value) for value in record.outcomes if value is not None)
    if abs(total - fields.passes) > 1e-6 * max(1.0, fields.n):
        return f"the outcomes add up to {total:g}, the log says {fields.passes:g}"
    return None


def _recover_strata(
    release: Release, digests: set[str], environ: Mapping[str, str] | None
) -> tuple[dict[str, tuple[str | None, ...]], dict[str, tuple[int, ...]]]:
    """Strata and groups of the reads' sets, from the holdout file when it still holds that set
    (strata stand in only for records written without them)."""
    if not digests:
        return {}, {}
    try:
        testset = load_holdout(release, environ)
        path = cases_path(release, environ)
    except HoldoutUnavailable:
        return {}, {}
    if testset.digest not in digests:
        return {}, {}
    keys = case_keys(path, testset)
    strata, groups = strata_vector(testset, keys), groups_vector(testset, keys)
    return (
        {} if strata is None else {testset.digest: tuple(strata)},
        {} if groups is None else {testset.digest: tuple(groups)},
    )
