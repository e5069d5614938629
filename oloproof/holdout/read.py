"""The reserved holdout set: read only with a reason, against a budget, every read logged (SPEC §7).

A read scores the current system on the holdout with the evaluator of ``holdout.criterion`` and
appends one entry to READS.log (oloproof/readslog.py). The budget check, the scoring and the append
happen under the log's lock, so concurrent reads serialise and a refused read scores nothing.

What a read keeps, and where (docs/holdout.md):

- the log entry: counts, score, interval, digests, who/when/commit/version/reason — never cases or
  outputs;
- an outcome record ``.oloproof/holdout/read-NNNN-<hash12>.json`` (oloproof/holdout_records.py):
  the per-case outcome of the criterion, ordered by the SHA-256 of each case's canonical line, with
  no ids and no contents, so a later paired comparison of two reads of the same set digest can line them up;
- nothing else: the system's outputs are scored in memory and dropped (``.oloproof/`` is
  committed; outputs in it would put holdout material in the repository).

Case ids and contents of the holdout never appear in any message, report or file we write.
``holdout status``, ``holdout repair`` and ``holdout budget`` live in oloproof/holdout_status.py.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.checks import CheckReport, GateCheck, GateContext
from oloproof.errors import ConfigError, DataError, OloproofError, UsageError
from oloproof.holdout_records import (
    OutcomeRecord,
    case_keys,
    load_outcome_records,
    log_key,
    relative,
    witnesses,
    write_outcome_record,
)
from oloproof.readslog import MAX_REASON, LogState, ReadEntry, ReadFields, quote
from oloproof.readslog_file import ReadsLog
from oloproof.runstore import RunRecord, RunStore
from oloproof.verdicts import REASONS, Verdict

if TYPE_CHECKING:
    from oloproof.config import HoldoutSpec, Release
    from oloproof.stats.budget import BudgetSuggestion
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

READ_SCHEMA = "oloproof.holdout-read/1"
DEFAULT_PSI = 0.12  # expected discordance between two compared versions (STATISTICS.md §6)

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class HoldoutUnavailable(ConfigError):
    """The holdout file cannot be reached here (an unset variable, a missing file): exit 2 for a
    read, a note for ``holdout status``, which reads the log without the set."""


# --------------------------------------------------------------------------- the set


def holdout_spec(release: Release) -> HoldoutSpec:
    if release.holdout is None:
        raise ConfigError(
            release.path, None, "holdout",
            "no holdout declared; add `holdout: {cases: evals/holdout/cases.jsonl, budget: 20, log: evals/holdout/READS.log}`",
        )
    return release.holdout


def cases_path(release: Release, environ: Mapping[str, str] | None = None) -> Path:
    """The holdout file, with every ``${VAR}`` of ``holdout.cases`` taken from the environment.

    An unset or empty variable is a configuration error naming it and the release.yaml line.
    """
    spec = holdout_spec(release)
    env = os.environ if environ is None else environ
    line = release.document.line("holdout.cases")

    def expand(match: re.Match[str]) -> str:
        name = match[1]
        found = env.get(name, "")
        if not found:
            raise HoldoutUnavailable(
                release.path, line, "holdout.cases",
                f"environment variable {name} is not set (holdout.cases is '{spec.cases}'); "
                f"set {name} to the path of the holdout file",
            )
        return found

    if "$" in _VARIABLE.sub("", spec.cases):
        raise ConfigError(release.path, line, "holdout.cases", f"'{spec.cases}': write environment variables as ${{NAME}}")
    return release.resolve(_VARIABLE.sub(expand, spec.cases))


_ID_QUOTED = re.compile(r"(case(?: id)? )'(?:[^'\\]|\\.)*'")
_ID_REPR = re.compile(r"got id .*$")


def withhold_ids(message: str) -> str:
    """Drop holdout case ids from a data error: the file and line are enough to find the case."""
    return _ID_REPR.sub("got an id that is not a non-empty string", _ID_QUOTED.sub(r"\1<id withheld>", message))


def _withheld(shown: str, call: Callable[[], Any]) -> Any:
    try:
        return call()
    except DataError as exc:
        if exc.path != shown:
            raise
        raise DataError(exc.path, exc.line, withhold_ids(exc.message)) from None


def load_holdout(release: Release, environ: Mapping[str, str] | None = None) -> TestSet:
    """Read and validate the holdout set (errors name file and line, never a case's content)."""
    from oloproof.testset import load_testset

    spec = holdout_spec(release)
    path = cases_path(release, environ)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "not found"
        raise HoldoutUnavailable(release.path, release.document.line("holdout.cases"), "holdout.cases", f"holdout set {what}: {path}")
    return _withheld(spec.cases, lambda: load_testset(path, display=spec.cases, kind="holdout set"))


def short(digest: str) -> str:
    algo, _, hexpart = digest.partition(":")
    return f"{algo}:{hexpart[:12]}…"


def printable(text: str) -> str:
    """Free text from the log, safe for a terminal (control and bidi characters escaped)."""
    return quote(text)[1:-1].replace('\\"', '"')


# --------------------------------------------------------------------------- who and where


def git_output(cwd: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def reader(base_dir: Path, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(who, commit) of a read. In GitHub Actions the actor who triggered the run is who; elsewhere
    ``git config user.name``, then $GITHUB_ACTOR, $USER. The commit is HEAD of the repository
    holding release.yaml (or $GITHUB_SHA), 12 hex digits, or "unknown"."""
    env = os.environ if environ is None else environ
    actor = env.get("GITHUB_ACTOR") if env.get("GITHUB_ACTIONS") == "true" else None
    who = actor or git_output(base_dir, "config", "user.name") or env.get("GITHUB_ACTOR") or env.get("USER") or env.get("USERNAME") or "unknown"
    commit = git_output(base_dir, "rev-parse", "--short=12", "HEAD") or env.get("GITHUB_SHA", "")[:12] or "unknown"
    return who, commit


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def open_log(release: Release) -> ReadsLog:
    spec = holdout_spec(release)
    return ReadsLog(release.resolve(spec.log), shown=spec.log, witnesses=lambda: witnesses(release.base_dir, log=spec.log))


# --------------------------------------------------------------------------- budget


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetStatus:
    declared: int | None
    used: int
    suggestion: BudgetSuggestion | None  # only when no budget is declared and n is known

    @property
    def left(self) -> int | None:
        return None if self.declared is None else max(self.declared - self.used, 0)

    @property
    def spent(self) -> bool:
        return self.declared is not None and self.used >= self.declared

    def text(self, *, hint: bool = True) -> str:
        if self.declared is None:
            hint_text = f" (suggested: {self.suggestion.reads}; see `oloproof holdout status`)" if self.suggestion and hint else ""
            return f"{self.used} read(s) so far; no budget declared{hint_text}"
        over = f" ({self.used - self.declared} over budget)" if self.used > self.declared else ""
        return f"{self.used} of {self.declared} reads used, {self.left} left{over}"

    def to_json(self) -> dict[str, Any]:
        suggestion = self.suggestion
        return {
            "declared": self.declared, "used": self.used, "left": self.left, "spent": self.spent,
            "suggested": None if suggestion is None else {
                "reads": suggestion.reads, "n": suggestion.n, "delta": suggestion.delta, "delta_source": suggestion.delta_source,
                "psi": suggestion.psi, "alpha": suggestion.alpha, "cap": suggestion.cap, "capped": suggestion.capped,
                "formula": suggestion.formula, "explanation": suggestion.explanation(),
            },
        }


def _words(budget: int | None) -> str:
    return "none" if budget is None else str(budget)


def budget_in_force(spec: HoldoutSpec, state: LogState) -> tuple[int | None, str | None]:
    """The budget in force, and why release.yaml's ``holdout.budget`` is not it (or None).

    Before any read or budget entry, the declared budget (or none). After one, the budget of the
    latest read or ``budget`` entry of the log: release.yaml may lower it (or add one where none
    was logged) without ceremony, but raising or removing it needs ``oloproof holdout budget``.
    """
    declared = spec.budget
    if not state.budget_logged:
        return declared, None
    logged = state.logged_budget
    if logged is None or (declared is not None and declared <= logged):
        return declared, None
    change = "removed" if declared is None else f"raised to {declared}"
    return logged, (
        f"holdout.budget is {change} in release.yaml, but the budget in force is {logged} (recorded in {state.shown}). "
        f"Raising a budget spends independence this set may no longer have, so it must be logged: "
        f"`oloproof holdout budget {_words(declared)} --reason \"...\"`, or restore holdout.budget"
    )


def foreign_records(release: Release, state: LogState, digests: Iterable[str] = ()) -> tuple[OutcomeRecord, ...]:
    """Outcome records of reads of this holdout (the set digests of the log's reads, and
    ``digests``) that name another log than ``holdout.log``: reads a moved or renamed log forgot."""
    spec = holdout_spec(release)
    sets = {entry.fields.set_digest for entry in state.reads} | set(digests)
    if not sets:
        return ()
    own = log_key(release.base_dir, spec.log)
    records, _ = load_outcome_records(release.base_dir, log=None)
    return tuple(r for r in records if r.set_digest in sets and log_key(release.base_dir, r.log) != own)


def reads_used(state: LogState, foreign: Iterable[OutcomeRecord] = ()) -> int:
    """What the budget counts: the log's reads, and the reads of the same set under other logs."""
    own = {entry.hash for entry in state.reads}
    return state.reads_used + len({record.entry_hash for record in foreign} - own)


def budget_status(
    spec: HoldoutSpec, state: LogState, *, n: int | None, confidence: float, delta: float | None = None, psi: float = DEFAULT_PSI,
    foreign: Iterable[OutcomeRecord] = (),
) -> BudgetStatus:
    """``declared`` is the budget in force (see :func:`budget_in_force`)."""
    budget, _ = budget_in_force(spec, state)
    suggestion = None
    if budget is None and n is not None:
        from oloproof.stats.budget import suggested_holdout_budget

        suggestion = suggested_holdout_budget(n, delta=delta, psi=psi, confidence=confidence)
    return BudgetStatus(declared=budget, used=reads_used(state, foreign), suggestion=suggestion)


def refusal(spec: HoldoutSpec, state: LogState, foreign: tuple[OutcomeRecord, ...] = ()) -> tuple[tuple[str, ...], str] | None:
    """Why a read must not happen now (reason codes and a sentence), or None."""
    reasons: list[str] = []
    sentences: list[str] = []
    if not state.intact:
        reasons.append("holdout_log_tampered")
        sentences.append(
            f"{state.shown} fails its hash-chain check ({len(state.problems)} problem(s); see `oloproof holdout status`). "
            "Restore it from git history, or acknowledge the damage with `oloproof holdout repair --reason \"...\"`"
        )
    if foreign:
        logs = sorted({record.log for record in foreign})
        reasons.append("holdout_log_moved")
        sentences.append(
            f"{len(foreign)} read(s) of this holdout set are recorded under another log ({', '.join(map(printable, logs))}; "
            f"outcome records in .oloproof/holdout/), not {state.shown}. Moving or renaming the log does not reset the "
            "budget: point holdout.log back at that log; a fresh budget needs a fresh holdout set"
        )
    budget, unlogged = budget_in_force(spec, state)
    if unlogged is not None:
        reasons.append("holdout_budget_unlogged")
        sentences.append(unlogged)
    used = reads_used(state, foreign)
    if budget is not None and used >= budget:
        reasons.append("holdout_budget_spent")
        sentences.append(
            f"the holdout's read budget is spent: {used} of {budget} reads used ({state.shown}). "
            "A fresh read needs a fresh holdout set; raising the budget (`oloproof holdout budget`) spends independence "
            "this set may no longer have"
        )
    if not reasons:
        return None
    return tuple(reasons), "; ".join(sentences) + "."


# --------------------------------------------------------------------------- a read


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
            "schema": READ_SCHEMA, "read": self.entry is not None,
            "verdict": None if self.verdict is None else self.verdict.value, "exit_code": self.exit_code,
            "reasons": list(self.reasons), "sentence": self.sentence,
            "set": None if self.set_digest is None else {"kind": "holdout", "path": self.set_shown, "digest": self.set_digest, "n_cases": self.n},
            "score": None if fields is None else {
                "criterion": fields.criterion, "kind": fields.kind, "estimate": fields.estimate, "passes": fields.passes,
                "answered": fields.answered, "missing": fields.missing, "n": fields.n,
                "interval": None if self.interval is None else {
                    "low": self.interval.low, "high": self.interval.high, "level": self.interval.level,
                    "method": self.interval.method, "approximate": self.interval.approximate,
                },
            },
            "entry": None if self.entry is None else entry_json(self.entry),
            "log": {"path": self.log}, "budget": self.budget.to_json(), "outcome_record": self.record,
            "run": self.run, "notes": list(self.notes),
        }


def entry_json(entry: ReadEntry) -> dict[str, Any]:
    f = entry.fields
    return {
        "read": entry.seq, "when": entry.when, "who": f.who, "commit": f.commit, "version": f.version,
        "set": {"kind": "holdout", "digest": f.set_digest, "n": f.n}, "criterion": f.criterion, "kind": f.kind,
        "estimate": f.estimate, "passes": f.passes, "answered": f.answered, "missing": f.missing,
        "interval": None if f.low is None else {"low": f.low, "high": f.high, "level": f.level, "method": f.method, "approximate": f.approximate},
        "budget": f.budget, "reason": f.reason, "line": entry.line, "prev": entry.prev, "hash": entry.hash,
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

    def save(self, record: RunRecord, outputs: dict[str, dict[str, Any]]) -> Path:
        return self.runs_dir / record.run_id  # nothing is written


def _holdout_rule(release: Release, spec: HoldoutSpec) -> Any:
    from oloproof.policy import Rule

    # Not a rule of the policy: only the interval machinery of the gate, so missing outputs, groups
    # and graded scores are handled exactly as the gate handles them. Graded scores get the exact
    # (betting) interval.
    return Rule(
        id="holdout", criterion=spec.criterion, kind="min", threshold=0.0, baseline=None, method="exact",
        description="", source=release.path, line=spec.line, key_path="holdout",
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
) -> HoldoutRead:
    """Read the holdout once: refuse (BLOCKED) on a broken log or a spent budget, otherwise score
    the system — ``system.command``, or ``command`` as ``version`` (e.g. the week-0 prompt for a
    baseline re-measurement), or imported ``outputs`` of ``version`` — and append the read.

    The budget is checked once without the lock (to refuse without loading anything) and again
    under it; scoring and the append happen under the lock, so N concurrent reads with k left make
    exactly k entries and N − k refusals, and a refused read scores no case.
    """
    import numpy as np

    from oloproof.decide import compute_interval
    from oloproof.evaluators.base import EvalContext
    from oloproof.run import execute, import_outputs

    spec = holdout_spec(release)
    reason = check_reason(reason)
    version = (version or "").strip() or None
    if outputs is not None and command is not None:
        raise UsageError("give --outputs or --command, not both")
    if (outputs is not None or command is not None) and version is None:
        raise UsageError(f"{'--outputs' if outputs is not None else '--command'} needs --version NAME (the system version it scores)")
    if version is not None and outputs is None and command is None:
        raise UsageError("--version names imported outputs (--outputs) or a --command; a read of system.command uses system.version")
    if outputs is None and command is None and release.system.command is None:
        raise ConfigError(
            release.path, release.system.line, "system.command",
            "no command declared; score outputs made elsewhere with `oloproof holdout run --outputs FILE --version NAME`",
        )
    log = open_log(release)
    confidence = release.policy.confidence

    def refused(state: LogState, why: tuple[tuple[str, ...], str], foreign: tuple[OutcomeRecord, ...] = ()) -> HoldoutRead:
        n = state.reads[-1].fields.n if state.reads else None
        return HoldoutRead(
            verdict=Verdict.BLOCKED, reasons=why[0], sentence=f"Refused: {why[1]} No case was scored and the log is unchanged.",
            log=spec.log, budget=budget_status(spec, state, n=n, confidence=confidence, foreign=foreign),
        )

    before = log.state()
    foreign = foreign_records(release, before)
    if (why := refusal(spec, before, foreign)) is not None:
        return refused(before, why, foreign)
    testset = load_holdout(release, environ)
    foreign = foreign_records(release, before, (testset.digest,))
    if (why := refusal(spec, before, foreign)) is not None:
        return refused(before, why, foreign)
    keys = _withheld(spec.cases, lambda: case_keys(cases_path(release, environ), testset))
    evaluator = release.criteria()[spec.criterion]

    def evaluate(answers: Mapping[str, dict[str, Any]]) -> Any:
        ctx = EvalContext(testset=testset, outputs=answers, base_dir=release.base_dir, policy=release.policy, quiet=True)
        return _withheld(spec.cases, lambda: evaluator.evaluate(ctx))

    evaluate({})  # a case whose `expected` the evaluator cannot read fails now, before the system runs
    who, commit = reader(release.base_dir, environ)
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
            record, answers = import_outputs(release, testset, store, outputs, version=version, shown=shown, kind="holdout")
        else:
            record, answers = execute(release, testset, store, kind="holdout", on_batch=on_batch, command=command, version=version)
        outcome = evaluate(answers)
        interval, details, method_reasons = compute_interval(outcome, _holdout_rule(release, spec), release.policy, testset)
        values = outcome.values
        missing = int(np.isnan(values).sum())
        answered = len(testset) - missing
        passes = float(np.nansum(values))
        estimate = interval.estimate if interval is not None else (passes / answered if answered else 0.0)
        fields = ReadFields(
            who=who, commit=commit, version=record.version, set_digest=testset.digest, n=len(testset), criterion=spec.criterion,
            kind="binary" if outcome.kind == "binary" else "score", passes=passes, answered=answered, missing=missing,
            estimate=estimate, low=None if interval is None else interval.low, high=None if interval is None else interval.high,
            level=confidence, approximate=bool(interval and interval.approximate),
            method=interval.method if interval is not None else "none", budget=budget, reason=reason,
        )
        entry = tx.append_read(fields, when=utc_now())
        run = {
            "status": record.status, "failure": record.failure, "imported_from": record.imported_from,
            "n_outputs": record.n_outputs, "problems": len(record.case_errors) + len(record.run_errors),
        }
        path = write_outcome_record(
            release.base_dir, log=spec.log, entry=entry, testset=testset, values=values, kind=fields.kind, run=run,
            config_digest=release.digest, keys=keys,
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
        verdict=None, reasons=(), sentence="", log=spec.log,
        budget=budget_status(spec, after, n=len(testset), confidence=confidence), entry=entry, set_digest=testset.digest,
        set_shown=spec.cases, n=len(testset), interval=interval, record=relative(release.base_dir, path), run=run, notes=notes,
    )


def _read_notes(failure: str | None, missing: int, n: int, reasons: tuple[str, ...], details: Mapping[str, Any]) -> tuple[str, ...]:
    notes: list[str] = []
    if failure is not None:
        notes.append(f"the system failed on the holdout ({failure}); the read still counts: the system saw the cases")
    if missing:
        notes.append(f"{missing} of {n} cases have no usable output: they count as failures for the lower bound and passes for the upper")
    for code in dict.fromkeys(reasons):
        if code in REASONS and code not in ("missing_outputs",):
            notes.append(f"{code}: {REASONS[code]}")
    if "no_method" in details:
        notes.append(f"no interval: {details['no_method']}")
    return tuple(notes)


def score_line(read: HoldoutRead) -> str:
    """``holdout score: 0.708 (85/120), 95% interval [0.619, 0.787] (clopper-pearson, exact) — holdout set sha256:…``"""
    assert read.entry is not None and read.set_digest is not None
    return f"holdout score: {entry_score(read.entry)}{interval_words(read.entry)} — holdout set {short(read.set_digest)}"


def entry_score(entry: ReadEntry) -> str:
    f = entry.fields
    count = f"{round(f.passes)}/{f.answered}" if f.kind == "binary" else f"mean of {f.answered}"
    return f"{f.estimate:.3f} ({count}{f', {f.missing} missing' if f.missing else ''})"


def interval_words(entry: ReadEntry) -> str:
    f = entry.fields
    if f.low is None or f.high is None:
        return ", no interval"
    kind = "approximate" if f.approximate else "exact"
    return f", {f.level:.0%} interval [{f.low:.3f}, {f.high:.3f}] ({f.method}, {kind})"


def appended_line(read: HoldoutRead) -> str:
    assert read.entry is not None
    budget = read.budget
    if budget.declared is None:
        hint = f" (suggested: {budget.suggestion.reads}; see `oloproof holdout status`)" if budget.suggestion else ""
        where = f"run {read.entry.seq}; no budget declared{hint}"
    else:
        where = f"run {read.entry.seq} of {budget.declared} in budget"
        if budget.spent:
            where += "; the budget is now spent"
    return f"appended to {read.log} ({where})"


def read_for_gate(release: Release, *, reason: str, environ: Mapping[str, str] | None = None) -> CheckReport:
    """One read as a check report (name ``holdout-read``), for the GitHub Action: the score line and
    the log line as its status, or a BLOCKED row when the read is refused. Its ``data`` is the
    ``oloproof.holdout-read/1`` JSON. Configuration errors (an unset variable, a malformed set)
    raise like everywhere else."""
    result = read_holdout(release, reason=reason, environ=environ)
    spec = holdout_spec(release)
    if result.verdict is not None:
        return CheckReport(
            name="holdout-read", title="Holdout read", status=f"refused ({', '.join(result.reasons)})", verdict=result.verdict,
            reasons=result.reasons, sentence=result.sentence, data=result.to_json(), source=release.path, line=spec.line,
        )
    return CheckReport(
        name="holdout-read", title="Holdout read", status=score_line(result), sentence=appended_line(result),
        lines=result.notes, data=result.to_json(), source=release.path, line=spec.line,
    )


# --------------------------------------------------------------------------- the gate's view


class HoldoutCheck(GateCheck):
    """Reports the holdout's budget and log in the gate. It never blocks the gate: the gate decides
    on the dev set, and a holdout read is a separate, explicit act (`oloproof holdout run`)."""

    name = "holdout"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        release = ctx.release
        spec = release.holdout
        if spec is None:
            return None
        try:
            state = open_log(release).state()
        except (OloproofError, OSError) as exc:
            return CheckReport(name=self.name, title="holdout", status=f"log {spec.log} unreadable: {exc}", source=release.path, line=spec.line)
        last = state.reads[-1] if state.reads else None
        foreign = foreign_records(release, state)
        budget = budget_status(spec, state, n=last.fields.n if last else None, confidence=release.policy.confidence, foreign=foreign)
        reasons: tuple[str, ...] = ()
        sentence = ""
        why = refusal(spec, state, foreign)
        if why is not None:
            reasons, sentence = why[0], f"Holdout reads are refused: {why[1]}"
        log_words = "log intact" if state.intact else f"log TAMPERED ({len(state.problems)} problem(s))"
        lines: list[str] = []
        if last is not None:
            lines.append(
                f"last read {last.seq} ({last.when}, version {printable(last.fields.version)}): holdout score {entry_score(last)} "
                f"on holdout set {short(last.fields.set_digest)}"
            )
        lines.extend(str(problem) for problem in state.problems[:5])
        return CheckReport(
            name=self.name, title="holdout", status=f"{budget.text()}; {log_words} ({spec.log})", reasons=reasons,
            sentence=sentence, lines=tuple(lines), source=release.path, line=spec.line,
            data={
                "log": spec.log, "intact": state.intact, "problems": [str(p) for p in state.problems],
                "budget": budget.to_json(), "last_read": None if last is None else entry_json(last),
            },
        )


# --------------------------------------------------------------------------- not as a dev set


def holdout_digests(release: Release, environ: Mapping[str, str] | None = None) -> tuple[Path | None, set[str]]:
    """The holdout's resolved path (None when a ``${VAR}`` of it is unset) and every digest it is
    known by: the declared file's, the ``set=`` of every read in the log, and the outcome records'."""
    spec = holdout_spec(release)
    digests: set[str] = set()
    try:
        path: Path | None = cases_path(release, environ).resolve()
    except HoldoutUnavailable:
        path = None
    if path is not None and path.is_file():
        try:
            digests.add(load_holdout(release, environ).digest)
        except (OloproofError, OSError):
            pass  # malformed: the log's digests still apply
    try:
        state = open_log(release).state()
        digests.update(entry.fields.set_digest for entry in state.reads)
    except (OloproofError, OSError):
        pass
    records, _ = load_outcome_records(release.base_dir, log=spec.log)
    digests.update(record.set_digest for record in records)
    return path, digests


def refuse_holdout_as_dev_set(release: Release, testset: TestSet, path: Path | None = None) -> None:
    """Refuse (UsageError, exit 2) a dev test set that is the declared holdout: scoring it through
    ``gate``, ``run`` or ``seeds`` would read the holdout without a reason or a budget, print its
    score as a dev score and store its outputs in the committed ``.oloproof/runs/``."""
    if release.holdout is None:
        return
    holdout_path, digests = holdout_digests(release)
    same_path = path is not None and holdout_path is not None and path.resolve() == holdout_path
    if not same_path and testset.digest not in digests:
        return
    why = "is the holdout file (holdout.cases)" if same_path else f"has the digest of the holdout set ({short(testset.digest)})"
    raise UsageError(
        f"the dev test set {testset.path} {why}: scoring it as a dev set would read the holdout without a reason or a "
        "budget and store its outputs in .oloproof/runs/. Point testset.cases at the dev set; read the holdout only "
        "with `oloproof holdout run --reason \"...\"`"
    )
