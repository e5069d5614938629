"""The reserved holdout set: read only with a reason, against a budget, every read logged (SPEC §7).

A read scores the current system on the holdout with the evaluator of ``holdout.criterion`` and
appends one entry to READS.log (``oloproof.holdout.log``). The budget check, the scoring and the append
happen under the log's lock, so concurrent reads serialise and a refused read scores nothing.

What a read keeps, and where (docs/holdout.md):

- the log entry: counts, score, interval, digests, who/when/commit/version/reason — never cases or
  outputs;
- an outcome record ``.oloproof/holdout/read-NNNN-<hash12>.json`` (``oloproof.holdout.records``):
  the per-case outcome of the criterion, ordered by the SHA-256 of each case's canonical line, with
  no ids and no contents, so a later paired comparison of two reads of the same set digest can line them up;
- nothing else: the system's outputs are scored in memory and dropped (``.oloproof/`` is
  committed; outputs in it would put holdout material in the repository).

Case ids and contents of the holdout never appear in any message, report or file we write.
``holdout status``, ``holdout repair`` and ``holdout budget`` live in ``oloproof.holdout.status``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from oloproof.decide import compute_interval
from oloproof.errors import ConfigError, UsageError
from oloproof.evaluators.base import EvalContext
from oloproof.holdout.budget import BudgetStatus, OtherReads, budget_for, budget_status, other_reads, refusal
from oloproof.holdout.cases import cases_path, holdout_spec, load_holdout, open_log, withheld
from oloproof.holdout.log import MAX_REASON, LogState, ReadEntry, ReadFields, entry_json, short
from oloproof.holdout.records import case_keys, command_digest, relative, write_outcome_record
from oloproof.holdout.registry import load_register, record_read, register_lock, repository_root
from oloproof.measures.registry import measure_of
from oloproof.policy import Rule
from oloproof.run import execute, import_outputs
from oloproof.runstore import RunRecord, RunStore
from oloproof.stats.interval import interval_json
from oloproof.store import utc_stamp
from oloproof.verdicts import REASONS, Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.holdout.spec import HoldoutSpec
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet


READ_SCHEMA = "oloproof.holdout-read/1"


def utc_now() -> str:
    """When a read or a log entry is made (``oloproof.store.utc_stamp``, to the second)."""
    return utc_stamp()


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutRead:
    """The result of ``oloproof holdout run``: a read, or a refusal (``verdict`` BLOCKED)."""

    verdict: Verdict | None  # None: the read happened
    reasons: tuple[str, ...]
    sentence: str
    log: str
    budget: BudgetStatus
    entry: ReadEntry | None = None
    set_digest: str | None = None
    set_shown: str | None = None
    n: int | None = None
    interval: Interval | None = None
    record: str | None = None
    run: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    # The read happened (it counts: the system saw the cases) but the system failed or answered no
    # case: nothing was measured, and the command does not exit 0 as if it had.
    unscored: bool = False

    @property
    def exit_code(self) -> int:
        if self.verdict is not None:
            return int(self.verdict.exit_code)
        return int(Verdict.INSUFFICIENT_EVIDENCE.exit_code) if self.unscored else 0

    def to_json(self) -> dict[str, Any]:
        fields = self.entry.fields if self.entry else None
        return {
            "schema": READ_SCHEMA,
            "read": self.entry is not None,
            "verdict": None if self.verdict is None else self.verdict.value,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            "sentence": self.sentence,
            "scored": self.entry is not None and not self.unscored,
            "set": None
            if self.set_digest is None
            else {"kind": "holdout", "path": self.set_shown, "digest": self.set_digest, "n_cases": self.n},
            "score": None
            if fields is None
            else {
                "criterion": fields.criterion,
                "kind": fields.kind,
                "estimate": fields.estimate,
                "passes": fields.passes,
                "answered": fields.answered,
                "missing": fields.missing,
                "n": fields.n,
                "interval": interval_json(self.interval),
            },
            "entry": None if self.entry is None else entry_json(self.entry),
            "log": {"path": self.log},
            "budget": self.budget.to_json(),
            "outcome_record": self.record,
            "run": self.run,
            "notes": list(self.notes),
        }


def check_reason(reason: str | None, *, what: str = "read") -> str:
    text = (reason or "").strip()
    if not text:
        raise UsageError(
            f"--reason must not be empty: say why you are making this {what} (it is logged with your name"
            + (", and every read counts against the budget)" if what == "read" else ")")
        )
    if len(text) > MAX_REASON:
        raise UsageError(f"--reason is {len(text)} characters long; keep it under {MAX_REASON}")
    return text


class _DiscardingStore(RunStore):
    """A run store that keeps nothing: holdout outputs must never reach .oloproof/ (committed)."""

    def save(self, record: RunRecord, outputs: dict[str, dict[str, Any]]) -> RunRecord:
        return record  # nothing is written


def _holdout_rule(release: Release, spec: HoldoutSpec) -> Any:
    # Not a rule of the policy: only the interval machinery of the gate, so missing outputs, groups
    # and graded scores are handled exactly as the gate handles them. Graded scores get the exact
    # (betting) interval.
    return Rule(
        id="holdout",
        criterion=spec.criterion,
        kind="min",
        threshold=0.0,
        baseline=None,
        method="exact",
        description="",
        source=release.path,
        line=spec.line,
        key_path="holdout",
    )


def _check_source(release: Release, outputs: Path | None, command: str | None, version: str | None) -> str | None:
    """What is scored: ``system.command``, or ``command`` as ``version``, or imported ``outputs`` of
    ``version`` (usage errors otherwise). Returns the version named, or None for system.version."""
    version = (version or "").strip() or None
    if outputs is not None and command is not None:
        raise UsageError("give --outputs or --command, not both")
    if (outputs is not None or command is not None) and version is None:
        raise UsageError(
            f"{'--outputs' if outputs is not None else '--command'} needs --version NAME (the system version it scores)"
        )
    if version is not None and outputs is None and command is None:
        raise UsageError(
            "--version names imported outputs (--outputs) or a --command; a read of system.command uses system.version"
        )
    if outputs is None and command is None and release.system.command is None:
        raise ConfigError(
            release.path,
            release.system.line,
            "system.command",
            "no command declared; score outputs made elsewhere with `oloproof holdout run --outputs FILE --version "
            "NAME`",
        )
    return version


def read_holdout(
    release: Release,
    *,
    reason: str,
    outputs: Path | None = None,
    outputs_shown: str | None = None,
    command: str | None = None,
    version: str | None = None,
    on_wait: Callable[[], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    environ: Mapping[str, str] | None = None,
    who: str,
    commit: str,
) -> HoldoutRead:
    """Read the holdout once: refuse (BLOCKED) on a broken log or a spent budget, otherwise score
    the system — ``system.command``, or ``command`` as ``version`` (e.g. the week-0 prompt for a
    baseline re-measurement), or imported ``outputs`` of ``version`` — and log the read.

    ``who`` and ``commit`` say who reads and at which commit (the CLI asks git, the action gives the
    run's actor). The budget counts every read of the same cases in the repository (the register).
    The budget is checked once without the locks (to refuse without loading anything) and again
    under them; the read is registered and its first half logged *before* the system sees a case,
    so a read killed half-way is counted, and N concurrent reads with k left make exactly k reads
    and N − k refusals, of which none scored a case.
    """
    spec = holdout_spec(release)
    reason = check_reason(reason)
    version = _check_source(release, outputs, command, version)
    log = open_log(release)
    before = log.state()
    if (why := refusal(spec, before, other_reads(release, before))) is not None:
        return _refused(release, before, why, other_reads(release, before))
    testset = load_holdout(release, environ)
    keys = withheld(spec.cases, lambda: case_keys(cases_path(release, environ), testset))
    scorer = _Scorer(release, testset, reason=reason, who=who, commit=commit)
    scorer.evaluate({})  # a case whose `expected` the evaluator cannot read fails now, before the system runs
    root = repository_root(release.base_dir)
    with register_lock(root), log.transaction(on_wait=on_wait) as tx:
        state = tx.state
        register = load_register(root)
        others = other_reads(
            release, state, digests=(testset.digest,), commitments=register.commitments(testset).values()
        )
        if (why := refusal(spec, state, others)) is not None:
            return _refused(release, state, why, others)
        budget = budget_for(spec, state, others)
        when = utc_now()
        read_version = version or release.system.version
        record_read(register, testset, log=log.path, seq=state.next_seq, when=when, budget=budget)
        started = tx.begin_read(scorer.opening(read_version), when=when)
        store = _DiscardingStore(release.base_dir)
        if outputs is not None:
            record, answers = import_outputs(
                release,
                testset,
                store,
                outputs,
                version=read_version,
                shown=outputs_shown or str(outputs),
                kind="holdout",
            )
        else:
            record, answers = execute(
                release, testset, store, kind="holdout", on_batch=on_batch, command=command, version=version
            )
        score = scorer.score(answers, record, budget=budget)
        entry = started.finish(score.fields)
        run = {
            # what made the read: `oloproof gap` takes as the current version's reading only one made
            # by system.command (not imported outputs, not another --command)
            "source": "outputs" if outputs is not None else ("command" if command is not None else "system.command"),
            "command_sha256": None if outputs is not None else _command_digest(command, release),
            "status": record.status,
            "failure": record.failure,
            "imported_from": record.imported_from,
            "n_outputs": record.n_outputs,
            "problems": len(record.case_errors) + len(record.run_errors),
        }
        path = write_outcome_record(
            release.base_dir,
            log=spec.log,
            entry=entry,
            testset=testset,
            values=score.values,
            kind=score.fields.kind,
            run=run,
            config_digest=release.digest,
            keys=keys,
        )
    after = replace(state, reads_used=entry.seq, budget_logged=True, logged_budget=score.fields.budget)
    notes = score.notes
    if state.reads and state.reads[-1].fields.set_digest != testset.digest:
        previous = state.reads[-1]
        notes += (
            f"the holdout set changed since read {previous.seq} ({short(previous.fields.set_digest)}): "
            "this score is not comparable with earlier ones, and the budget still counts every read",
        )
    return HoldoutRead(
        verdict=None,
        reasons=(),
        sentence="",
        log=spec.log,
        budget=budget_status(spec, after, n=len(testset), confidence=release.policy.confidence, others=others),
        entry=entry,
        set_digest=testset.digest,
        set_shown=spec.cases,
        n=len(testset),
        interval=score.interval,
        record=relative(release.base_dir, path),
        run=run,
        notes=notes,
        unscored=record.failure is not None or score.fields.answered == 0,
    )


def _command_digest(command: str | None, release: Release) -> str | None:
    used = command if command is not None else release.system.command
    return None if used is None else command_digest(used)


def _refused(release: Release, state: LogState, why: tuple[tuple[str, ...], str], others: OtherReads) -> HoldoutRead:
    spec = holdout_spec(release)
    n = state.reads[-1].fields.n if state.reads else None
    return HoldoutRead(
        verdict=Verdict.BLOCKED,
        reasons=why[0],
        sentence=f"Refused: {why[1]} No case was scored and the log is unchanged.",
        log=spec.log,
        budget=budget_status(spec, state, n=n, confidence=release.policy.confidence, others=others),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _Score:
    fields: ReadFields
    values: Any  # per case, aligned with the holdout's cases (NaN: no usable output)
    interval: Interval | None
    notes: tuple[str, ...]


class _Scorer:
    """Scores answers on the holdout as the gate would score them (its evaluator and interval
    machinery), never naming a case in a message."""

    def __init__(self, release: Release, testset: TestSet, *, reason: str, who: str, commit: str) -> None:
        self.release = release
        self.testset = testset
        self.spec = holdout_spec(release)
        self.evaluator = release.criteria()[self.spec.criterion]
        self.reason = reason
        self.who = who
        self.commit = commit

    def evaluate(self, answers: Mapping[str, dict[str, Any]]) -> Any:
        release = self.release
        ctx = EvalContext(
            testset=self.testset,
            outputs=answers,
            base_dir=release.base_dir,
            policy=release.policy,
            quiet=True,
            refuse_key_mismatch=False,  # the read is spent: it is recorded, every output without the key missing
            holdout=True,
        )
        return withheld(self.spec.cases, lambda: self.evaluator.evaluate(ctx))

    def opening(self, version: str) -> ReadFields:
        """The fields known before the system runs (what ``begin_read`` writes); the rest are filled
        in by ``score``."""
        return self._fields(
            version=version, kind="binary", passes=0.0, answered=0, missing=0, estimate=0.0, interval=None, budget=None
        )

    def score(self, answers: Mapping[str, dict[str, Any]], record: RunRecord, *, budget: int | None) -> _Score:
        import numpy as np  # lazy: start-up

        outcome = self.evaluate(answers)
        interval, details, method_reasons = compute_interval(
            outcome, _holdout_rule(self.release, self.spec), self.release.policy, self.testset
        )
        values = outcome.values
        missing = int(np.isnan(values).sum())
        answered = len(self.testset) - missing
        passes = float(np.nansum(values))
        estimate = interval.estimate if interval is not None else (passes / answered if answered else 0.0)
        fields = self._fields(
            version=record.version,
            kind="binary" if measure_of(outcome.kind).pass_fail else "score",  # the log's two stored kinds
            passes=passes,
            answered=answered,
            missing=missing,
            estimate=estimate,
            interval=interval,
            budget=budget,
        )
        notes = _read_notes(record.failure, missing, len(self.testset), (*method_reasons, *outcome.reasons), details)
        return _Score(fields=fields, values=values, interval=interval, notes=notes)

    def _fields(
        self,
        *,
        version: str,
        kind: Literal["binary", "score"],
        passes: float,
        answered: int,
        missing: int,
        estimate: float,
        interval: Interval | None,
        budget: int | None,
    ) -> ReadFields:
        return ReadFields(
            who=self.who,
            commit=self.commit,
            version=version,
            set_digest=self.testset.digest,
            n=len(self.testset),
            criterion=self.spec.criterion,
            kind=kind,
            passes=passes,
            answered=answered,
            missing=missing,
            estimate=estimate,
            low=None if interval is None else interval.low,
            high=None if interval is None else interval.high,
            level=self.release.policy.confidence,
            approximate=bool(interval and interval.approximate),
            method=interval.method if interval is not None else "none",
            budget=budget,
            reason=self.reason,
        )


def _read_notes(
    failure: str | None, missing: int, n: int, reasons: tuple[str, ...], details: Mapping[str, Any]
) -> tuple[str, ...]:
    notes: list[str] = []
    if failure is not None:
        notes.append(f"the system failed on the holdout ({failure}); the read still counts: the system saw the cases")
    if missing:
        notes.append(
            f"{missing} of {n} cases have no usable output: they count as failures for the lower bound and passes for "
            f"the upper"
        )
    for code in dict.fromkeys(reasons):
        if code in REASONS and code not in ("missing_outputs",):
            notes.append(f"{code}: {REASONS[code]}")
    if "no_method" in details:
        notes.append(f"no interval: {details['no_method']}")
    return tuple(notes)
