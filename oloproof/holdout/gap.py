"""``oloproof gap``: how much of a dev-set gain is real, and how much is fit (STATISTICS.md §5).

The baseline is the week-0 version, read on both sets before any tuning; the current version is
the one to release. Each set gives a paired movement, current minus baseline on the same cases:
the dev set from the two versions' stored runs, the holdout from the baseline's **first** read and
the current version's **latest** read (matched by version, of the holdout's criterion, on one set
digest). Fit = Δdev − Δholdout with its MOVER interval; the real improvement is the holdout's
paired difference (exact, with Tango's beside it). Around those: the composition check (strata
counts, scores reweighted under one shared set of weights), the drift check (the baseline measured
again against its first reading, on both sets, and whether the checker changed), the trajectory
of reads, and the holdout's resolution. No holdout case id or content is ever at hand here: reads
carry outcomes and strata in hash order only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.holdout.composition import Composition, composition
from oloproof.holdout.grouping import grouping_notes, read_pairing
from oloproof.holdout.history import History, Reading, holdout_history, usable
from oloproof.holdout.records import command_digest
from oloproof.identity import checker_identity
from oloproof.pairs import JUDGE_PAIRED_CAVEAT, Pairing, case_groups, judge_graded, pair, paired_criterion, run_outcomes
from oloproof.runstore import RefScope, resolve_ref
from oloproof.stats.gap import mover_difference
from oloproof.stats.interval import interval_json
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

GAP_SCHEMA = "oloproof.gap/1"

# A dev run's outcomes under the gap's criterion, and the reasons of its evaluation (by run, ref).
Scorer = Callable[["RunRecord", str], tuple[list[bool | None], tuple[str, ...]]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """One version's reading of one set: a dev run or a holdout read."""

    version: str
    source: str  # "run <id>" or "read <seq>"
    when: str
    passes: int
    n: int
    checker: Mapping[str, str] | None

    @property
    def score(self) -> float:
        return self.passes / self.n

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "source": self.source,
            "when": self.when,
            "passes": self.passes,
            "n": self.n,
            "score": self.score,
            "checker": None if self.checker is None else dict(self.checker),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Movement:
    set: str  # dev | holdout
    old: Side
    new: Side
    pairing: Pairing

    def to_json(self) -> dict[str, Any]:
        return {
            "set": self.set,
            "baseline": self.old.to_json(),
            "current": self.new.to_json(),
            **self.pairing.to_json(),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Drift:
    """The baseline measured again on one set, against its first reading."""

    set: str
    first: Side
    again: Side | None  # None: never re-measured
    pairing: Pairing | None
    checker_changed: bool | None

    def to_json(self) -> dict[str, Any]:
        return {
            "set": self.set,
            "first": self.first.to_json(),
            "again": None if self.again is None else self.again.to_json(),
            "paired": None if self.pairing is None else self.pairing.to_json(),
            "checker_changed": self.checker_changed,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class TrajectoryRow:
    seq: int
    when: str
    who: str
    version: str
    reason: str
    criterion: str
    passes: float
    answered: int
    n: int
    versions_before: int  # distinct versions run on the dev set up to this read
    dev_score: float | None  # the same version's latest dev-set score, when it has a run on this dev set

    def to_json(self) -> dict[str, Any]:
        return {
            "read": self.seq,
            "when": self.when,
            "who": self.who,
            "version": self.version,
            "reason": self.reason,
            "criterion": self.criterion,
            "holdout_score": None if self.answered == 0 else self.passes / self.n,
            "passes": self.passes,
            "n": self.n,
            "versions_run_before": self.versions_before,
            "dev_score": self.dev_score,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Gap:
    config: str
    criterion: str
    confidence: float
    baseline_ref: str
    current_ref: str
    dev_path: str
    dev_digest: str
    holdout_log: str
    dev: Movement
    holdout: Movement | None
    fit: Interval | None
    composition: Composition
    drift: tuple[Drift, ...]
    trajectory: tuple[TrajectoryRow, ...]
    verdict: Verdict | None  # None: every figure computed; else why not (BLOCKED, INSUFFICIENT_EVIDENCE)
    reasons: tuple[str, ...]
    sentence: str  # what is missing, when something is
    notes: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict is None else int(self.verdict.exit_code)

    def to_json(self) -> dict[str, Any]:
        holdout = self.holdout
        return {
            "schema": GAP_SCHEMA,
            "exit_code": self.exit_code,
            "complete": self.verdict is None,
            "verdict": None if self.verdict is None else self.verdict.value,
            "reasons": list(self.reasons),
            "sentence": self.sentence,
            "config": self.config,
            "criterion": self.criterion,
            "confidence": self.confidence,
            "baseline": self.baseline_ref,
            "current": self.current_ref,
            "dev_set": {"path": self.dev_path, "digest": self.dev_digest},
            "holdout_log": self.holdout_log,
            "dev": self.dev.to_json(),
            "holdout": None if holdout is None else holdout.to_json(),
            "fit": None if self.fit is None else interval_json(self.fit),
            "real_improvement": None if holdout is None else holdout.pairing.intervals_json(),
            "dev_gain": self.dev.pairing.estimate,
            "holdout_resolution": None if holdout is None else holdout.pairing.resolution,
            "composition": self.composition.to_json(),
            "drift": [drift.to_json() for drift in self.drift],
            "trajectory": [row.to_json() for row in self.trajectory],
            "notes": list(self.notes),
            "checker": checker_identity().to_json(),
        }


def run_side(record: RunRecord, values: Sequence[bool | None]) -> Side:
    return Side(
        version=record.version,
        source=f"run {record.run_id}",
        when=record.started_at[:19] + "Z",
        passes=sum(1 for value in values if value),
        n=len(values),
        checker=record.checker,
    )


def read_side(reading: Reading) -> Side:
    assert reading.outcomes is not None
    return Side(
        version=reading.version,
        source=f"read {reading.seq}",
        when=reading.when,
        passes=sum(1 for value in reading.outcomes if value),
        n=len(reading.outcomes),
        checker=reading.checker,
    )


def gap(
    release: Release,
    testset: TestSet,
    store: RunStore,
    baseline_ref: str,
    current_ref: str | None = None,
    *,
    weights: Mapping[str, float] | None = None,
    weights_source: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Gap:
    """The gap between ``baseline_ref`` (a ref to the week-0 version's dev run) and ``current_ref``
    (default ``version:<system.version>``) on ``testset`` (the dev set) and the declared holdout."""
    history = holdout_history(release, environ=environ)
    spec = release.holdout
    assert spec is not None  # holdout_history refused a release without one
    criterion = paired_criterion(release, spec.criterion, what="gap")
    current_ref = current_ref or f"version:{release.system.version}"
    dev_runs = [record for record in store.records() if record.kind == "system"]  # one scan of the store
    scope = RefScope.of(testset)  # refs count the runs on this dev set
    baseline, current = (
        resolve_ref(ref, dev_runs, refused=store.refused, scope=scope) for ref in (baseline_ref, current_ref)
    )
    if baseline.version == current.version:
        raise UsageError(
            f"'{baseline_ref}' and '{current_ref}' are both version {baseline.version}: the gap compares the week-0 "
            "version with a later one (give --current, or name the week-0 version as --baseline)"
        )
    confidence, judged = release.policy.confidence, judge_graded(release, criterion)
    scored: dict[str, tuple[list[bool | None], tuple[str, ...]]] = {}

    def score(record: RunRecord, ref: str) -> tuple[list[bool | None], tuple[str, ...]]:
        """A dev run's outcomes, evaluated once however many figures read it (a judge may be costly)."""
        if record.run_id not in scored:
            scored[record.run_id] = run_outcomes(release, testset, store, record, criterion, ref=ref)
        return scored[record.run_id]

    old_dev, old_reasons = score(baseline, baseline_ref)
    new_dev, new_reasons = score(current, current_ref)
    dev_groups = case_groups(testset)
    dev = Movement(
        set="dev",
        old=run_side(baseline, old_dev),
        new=run_side(current, new_dev),
        pairing=pair(old_dev, new_dev, confidence=confidence, groups=dev_groups, judged=judged),
    )
    notes = [*history.notes, *([JUDGE_PAIRED_CAVEAT] if judged else [])]  # a judge's verdicts decide nothing
    notes.extend(
        f"the {which} dev run is not clean ({', '.join(codes)})"
        for which, codes in (("baseline", old_reasons), ("current", new_reasons))
        if codes
    )
    declared = _declared_command(release, current.version)
    verdict, reasons, sentence, reads = _holdout_reads(
        history, baseline.version, current.version, criterion, declared=declared
    )
    holdout = None
    if reads is not None:
        old_read, new_read = reads
        holdout = Movement(
            set="holdout",
            old=read_side(old_read),
            new=read_side(new_read),
            pairing=read_pairing(old_read, new_read, confidence=confidence, judged=judged),
        )
    # MOVER over the two movements, each clustered where its set declares groups (§5).
    fit = (
        mover_difference(dev.pairing.approximate, holdout.pairing.approximate, confidence=confidence)
        if holdout
        else None
    )
    for movement in (dev, holdout):
        if movement is not None and movement.old.checker != movement.new.checker:
            notes.append(
                f"the checker changed between the two {movement.set} readings compared ({movement.old.source} and "
                f"{movement.new.source}): part of the {movement.set} movement may be the measuring apparatus"
            )
    notes.extend(grouping_notes(dev_grouped=dev_groups is not None, holdout=None if reads is None else reads[0]))
    base_reads = history.of(baseline.version, criterion)
    return Gap(
        config=release.path,
        criterion=criterion,
        confidence=confidence,
        baseline_ref=baseline_ref,
        current_ref=current_ref,
        dev_path=testset.path,
        dev_digest=testset.digest,
        holdout_log=history.log,
        dev=dev,
        holdout=holdout,
        fit=fit,
        composition=composition(
            testset,
            old_dev,
            new_dev,
            holdout_reads=reads,
            weights=weights,
            weights_source=weights_source,
            confidence=confidence,
        ),
        drift=_drift(testset, baseline, dev_runs, base_reads, score, confidence),
        trajectory=_trajectory(history, dev_runs, testset, score),
        verdict=verdict,
        reasons=reasons,
        sentence=sentence,
        notes=tuple(notes),
    )


def _declared_command(release: Release, version: str) -> Callable[[Reading], bool]:
    """Whether a read is the current version's own reading: made by system.command (not imported
    outputs, not another ``--command``), and, for system.version, by the command declared now."""
    declared = release.system.command
    digest = None if declared is None or version != release.system.version else command_digest(declared)

    def made_by_it(reading: Reading) -> bool:
        if reading.source != "system.command":
            return False
        return digest is None or reading.command_sha256 == digest

    return made_by_it


def _holdout_reads(
    history: History,
    old_version: str,
    new_version: str,
    criterion: str,
    *,
    declared: Callable[[Reading], bool] = lambda reading: True,
) -> tuple[Verdict | None, tuple[str, ...], str, tuple[Reading, Reading] | None]:
    """The two reads the holdout movement pairs (the baseline's first, the current version's latest
    read made by the declared command), or why there are none: a verdict, its reasons and a
    sentence."""
    if not history.intact:
        return (
            Verdict.BLOCKED,
            ("holdout_log_tampered",),
            f"{history.log} does not verify ({'; '.join(history.problems[:2])}): no holdout figure is taken from it "
            "(see `oloproof holdout status`)",
            None,
        )
    olds, news = history.of(old_version, criterion), history.of(new_version, criterion)
    missing = [v for v, reads in ((old_version, olds), (new_version, news)) if not reads]
    if missing:
        which = " and ".join(missing)
        why = (
            "the week-0 read is the only read that can never be taken later; without it the gap has no baseline"
            if old_version in missing
            else f'read it with `oloproof holdout run --reason "..."` (version {new_version})'
        )
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("no_holdout_read",),
            f"the holdout log {history.log} holds no read of {which} under criterion {criterion}: {why}",
            None,
        )
    uold, unew = usable(olds), usable(news)
    if not uold or not unew:
        which = old_version if not uold else new_version
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("no_outcome_record",),
            f"no read of {which} has a usable outcome record (none recorded, one edited since the read, unscored, "
            "or a graded criterion): the holdout movement cannot be paired",
            None,
        )
    own = [reading for reading in unew if declared(reading)]
    if not own:
        made = ", ".join(f"read {r.seq} ({_made_by(r)})" for r in unew)
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("holdout_read_not_declared",),
            f"no read of {new_version} was made by the declared system.command ({made}): imported outputs or another "
            f'command are not the current version\'s reading; read it with `oloproof holdout run --reason "..."`',
            None,
        )
    old, new = uold[0], own[-1]
    if old.set_digest != new.set_digest:
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("holdout_changed",),
            f"read {old.seq} ({old_version}) and read {new.seq} ({new_version}) measured different holdout sets "
            f"({old.set_digest[:19]}… and {new.set_digest[:19]}…): they cannot be paired case by case",
            None,
        )
    return None, (), "", (old, new)


def _made_by(reading: Reading) -> str:
    if reading.source == "outputs":
        return "imported outputs"
    if reading.source == "command":
        return "another --command"
    if reading.source == "system.command":
        return "an earlier system.command"
    return "its record does not say which command made it"


def _drift(
    testset: TestSet,
    baseline: RunRecord,
    dev_runs: list[RunRecord],
    reads: list[Reading],
    score: Scorer,
    confidence: float,
) -> tuple[Drift, ...]:
    out: list[Drift] = []
    same = [r for r in dev_runs if r.version == baseline.version and r.testset_digest == testset.digest]
    if same:
        first_values, _ = score(same[0], same[0].run_id)
        first = run_side(same[0], first_values)
        if len(same) > 1:
            last_values, _ = score(same[-1], same[-1].run_id)
            out.append(
                Drift(
                    set="dev",
                    first=first,
                    again=run_side(same[-1], last_values),
                    pairing=pair(first_values, last_values, confidence=confidence, groups=case_groups(testset)),
                    checker_changed=same[0].checker != same[-1].checker,
                )
            )
        else:
            out.append(Drift(set="dev", first=first, again=None, pairing=None, checker_changed=None))
    scored = usable(reads)
    if scored:
        first_read = scored[0]
        again = next((r for r in reversed(scored) if r.seq != first_read.seq), None)
        if again is not None and again.set_digest == first_read.set_digest:
            out.append(
                Drift(
                    set="holdout",
                    first=read_side(first_read),
                    again=read_side(again),
                    pairing=read_pairing(first_read, again, confidence=confidence),
                    checker_changed=None
                    if first_read.checker is None or again.checker is None
                    else first_read.checker != again.checker,
                )
            )
        else:
            out.append(
                Drift(set="holdout", first=read_side(first_read), again=None, pairing=None, checker_changed=None)
            )
    return tuple(out)


def _trajectory(
    history: History, dev_runs: list[RunRecord], testset: TestSet, score: Scorer
) -> tuple[TrajectoryRow, ...]:
    latest_dev: dict[str, RunRecord] = {}
    for record in dev_runs:
        if record.testset_digest == testset.digest:
            latest_dev[record.version] = record
    dev_scores: dict[str, float] = {}
    rows: list[TrajectoryRow] = []
    for reading in history.readings:
        if reading.version in latest_dev and reading.version not in dev_scores:
            values, _ = score(latest_dev[reading.version], reading.version)
            dev_scores[reading.version] = sum(1 for value in values if value) / len(values)
        before = {record.version for record in dev_runs if record.started_at[:19] <= reading.when[:19]}
        rows.append(
            TrajectoryRow(
                seq=reading.seq,
                when=reading.when,
                who=reading.who,
                version=reading.version,
                reason=reading.reason,
                criterion=reading.criterion,
                passes=reading.passes,
                answered=reading.answered,
                n=reading.n,
                versions_before=len(before),
                dev_score=dev_scores.get(reading.version),
            )
        )
    return tuple(rows)
