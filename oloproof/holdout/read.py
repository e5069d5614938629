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
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.decide import compute_interval
from oloproof.errors import ConfigError, UsageError
from oloproof.evaluators.base import EvalContext
from oloproof.holdout.budget import BudgetStatus, budget_in_force, budget_status, foreign_records, refusal
from oloproof.holdout.cases import cases_path, holdout_spec, load_holdout, open_log, withheld
from oloproof.holdout.log import MAX_REASON, LogState, ReadEntry, ReadFields, entry_json, short
from oloproof.holdout.records import OutcomeRecord, case_keys, relative, write_outcome_record
from oloproof.policy import Rule
from oloproof.run import execute, import_outputs
from oloproof.runstore import RunRecord, RunStore
from oloproof.verdicts import REASONS, Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.holdout.spec import HoldoutSpec
    from oloproof.stats.interval import Interval


READ_SCHEMA = "oloproof.holdout-read/1"


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict is None else int(self.verdict.exit_code)

    def to_json(self) -> dict[str, Any]:
        fields = self.entry.fields if self.entry else None
        return {
            "schema": READ_SCHEMA,
            "read": self.entry is not None,
            "verdict": None if self.verdict is None else self.verdict.value,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            "sentence": self.sentence,
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
                "interval": None
                if self.interval is None
                else {
                    "low": self.interval.low,
                    "high": self.interval.high,
                    "level": self.interval.level,
                    "method": self.interval.method,
                    "approximate": self.interval.approximate,
                },
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
    baseline re-measurement), or imported ``outputs`` of ``version`` — and append the read.

    The budget is checked once without the lock (to refuse without loading anything) and again
    under it; scoring and the append happen under the lock, so N concurrent reads with k left make
    exactly k entries and N − k refusals, and a refused read scores no case.
    """
    import numpy as np  # lazy: start-up

    spec = holdout_spec(release)
    reason = check_reason(reason)
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
    log = open_log(release)
    confidence = release.policy.confidence

    def refused(
        state: LogState, why: tuple[tuple[str, ...], str], foreign: tuple[OutcomeRecord, ...] = ()
    ) -> HoldoutRead:
        n = state.reads[-1].fields.n if state.reads else None
        return HoldoutRead(
            verdict=Verdict.BLOCKED,
            reasons=why[0],
            sentence=f"Refused: {why[1]} No case was scored and the log is unchanged.",
            log=spec.log,
            budget=budget_status(spec, state, n=n, confidence=confidence, foreign=foreign),
        )

    before = log.state()
    foreign = foreign_records(release, before)
    if (why := refusal(spec, before, foreign)) is not None:
        return refused(before, why, foreign)
    testset = load_holdout(release, environ)
    foreign = foreign_records(release, before, (testset.digest,))
    if (why := refusal(spec, before, foreign)) is not None:
        return refused(before, why, foreign)
    keys = withheld(spec.cases, lambda: case_keys(cases_path(release, environ), testset))
    evaluator = release.criteria()[spec.criterion]

    def evaluate(answers: Mapping[str, dict[str, Any]]) -> Any:
        ctx = EvalContext(
            testset=testset, outputs=answers, base_dir=release.base_dir, policy=release.policy, quiet=True
        )
        return withheld(spec.cases, lambda: evaluator.evaluate(ctx))

    evaluate({})  # a case whose `expected` the evaluator cannot read fails now, before the system runs
    store = _DiscardingStore(release.base_dir)
    with log.transaction(on_wait=on_wait) as tx:
        state = tx.state
        foreign = foreign_records(release, state, (testset.digest,))
        if (why := refusal(spec, state, foreign)) is not None:
            return refused(state, why, foreign)
        budget, _ = budget_in_force(spec, state)
        if outputs is not None:
            assert version is not None
            shown = outputs_shown or str(outputs)
            record, answers = import_outputs(
                release, testset, store, outputs, version=version, shown=shown, kind="holdout"
            )
        else:
            record, answers = execute(
                release, testset, store, kind="holdout", on_batch=on_batch, command=command, version=version
            )
        outcome = evaluate(answers)
        interval, details, method_reasons = compute_interval(
            outcome, _holdout_rule(release, spec), release.policy, testset
        )
        values = outcome.values
        missing = int(np.isnan(values).sum())
        answered = len(testset) - missing
        passes = float(np.nansum(values))
        estimate = interval.estimate if interval is not None else (passes / answered if answered else 0.0)
        fields = ReadFields(
            who=who,
            commit=commit,
            version=record.version,
            set_digest=testset.digest,
            n=len(testset),
            criterion=spec.criterion,
            kind="binary" if outcome.kind == "binary" else "score",
            passes=passes,
            answered=answered,
            missing=missing,
            estimate=estimate,
            low=None if interval is None else interval.low,
            high=None if interval is None else interval.high,
            level=confidence,
            approximate=bool(interval and interval.approximate),
            method=interval.method if interval is not None else "none",
            budget=budget,
            reason=reason,
        )
        entry = tx.append_read(fields, when=utc_now())
        run = {
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
            values=values,
            kind=fields.kind,
            run=run,
            config_digest=release.digest,
            keys=keys,
        )
    after = replace(state, reads_used=entry.seq, budget_logged=True, logged_budget=budget)
    notes = _read_notes(record.failure, missing, len(testset), (*method_reasons, *outcome.reasons), details)
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
        budget=budget_status(spec, after, n=len(testset), confidence=confidence),
        entry=entry,
        set_digest=testset.digest,
        set_shown=spec.cases,
        n=len(testset),
        interval=interval,
        record=relative(release.base_dir, path),
        run=run,
        notes=notes,
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
