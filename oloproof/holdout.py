"""The reserved holdout set: read only with a reason, against a budget, every read logged (SPEC §7).

A read scores the current system on the holdout with the evaluator of ``holdout.criterion`` and
appends one entry to READS.log (oloproof/readslog.py). The budget check, the scoring and the append
happen under the log's lock, so concurrent reads serialise and a refused read scores nothing.

What a read keeps, and where (docs/holdout.md):

- the log entry: counts, score, interval, digests, who/when/commit/version/reason — never cases or
  outputs;
- an outcome record ``.oloproof/holdout/read-NNNN-<hash12>.json``: the per-case outcome of the
  criterion, ordered by the SHA-256 of each case id, with no ids and no contents, so a later paired
  comparison of two reads of the same set digest can line the cases up;
- nothing else: the system's outputs are scored in memory and dropped (``.oloproof/`` is
  committed; outputs in it would put holdout material in the repository).

Case ids and contents of the holdout never appear in any message, report or file we write.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.checks import CheckReport, GateCheck, GateContext
from oloproof.errors import ConfigError, DataError, OloproofError, UsageError
from oloproof.readslog import MAX_REASON, LogError, LogState, ReadEntry, ReadFields, ReadsLog, RepairEntry, Witness, quote, verify
from oloproof.runstore import RunRecord, RunStore
from oloproof.verdicts import REASONS, Verdict

if TYPE_CHECKING:
    from oloproof.config import HoldoutSpec, Release
    from oloproof.stats.budget import BudgetSuggestion
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

READ_SCHEMA = "oloproof.holdout-read/1"
STATUS_SCHEMA = "oloproof.holdout-status/1"
REPAIR_SCHEMA = "oloproof.holdout-repair/1"
OUTCOMES_SCHEMA = "oloproof.holdout-outcomes/1"
OUTCOME_ORDER = "cases sorted by the SHA-256 (hex) of their UTF-8 id; ids are not stored"
RECORDS_DIR = (".oloproof", "holdout")
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


def uses_environment(spec: HoldoutSpec) -> tuple[str, ...]:
    return tuple(_VARIABLE.findall(spec.cases))


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


def _git(cwd: Path, *args: str) -> str | None:
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
    who = actor or _git(base_dir, "config", "user.name") or env.get("GITHUB_ACTOR") or env.get("USER") or env.get("USERNAME") or "unknown"
    commit = _git(base_dir, "rev-parse", "--short=12", "HEAD") or env.get("GITHUB_SHA", "")[:12] or "unknown"
    return who, commit


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --------------------------------------------------------------------------- outcome records


@dataclass(frozen=True, slots=True, kw_only=True)
class OutcomeRecord:
    """The per-case outcomes of one read, for paired comparisons of reads of the same set.

    ``outcomes[i]`` belongs to the i-th case in the order of sha256(case id): 1/0 for pass/fail
    (or a score in [0, 1]), None for a case without a usable output.
    """

    path: Path
    log: str
    seq: int
    entry_hash: str
    set_digest: str
    n: int
    criterion: str
    kind: str
    version: str
    outcomes: tuple[float | None, ...]
    data: dict[str, Any]


def records_dir(release: Release) -> Path:
    return release.base_dir.joinpath(*RECORDS_DIR)


def load_outcome_records(release: Release) -> tuple[list[OutcomeRecord], list[str]]:
    """Every outcome record of this release's log, oldest read first, and notes on unreadable ones."""
    spec = holdout_spec(release)
    folder = records_dir(release)
    records: list[OutcomeRecord] = []
    notes: list[str] = []
    if not folder.is_dir():
        return records, notes
    for file in sorted(folder.glob("read-*.json")):
        try:
            data = orjson.loads(file.read_bytes())
            if data.get("schema") != OUTCOMES_SCHEMA:
                raise ValueError(f"schema is not {OUTCOMES_SCHEMA}")
            record = OutcomeRecord(
                path=file, log=data["log"], seq=int(data["read"]), entry_hash=str(data["entry_hash"]),
                set_digest=data["set"]["digest"], n=int(data["set"]["n"]), criterion=data["criterion"], kind=data["kind"],
                version=data["version"], outcomes=tuple(data["outcomes"]), data=data,
            )
        except (OSError, orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            notes.append(f"outcome record {_relative(release, file)} is unreadable and was ignored ({exc})")
            continue
        if record.log == spec.log:
            records.append(record)
    records.sort(key=lambda record: (record.seq, record.entry_hash))
    return records, notes


def _relative(release: Release, file: Path) -> str:
    try:
        return file.relative_to(release.base_dir).as_posix()
    except ValueError:
        return str(file)


def _witnesses(release: Release) -> list[Witness]:
    records, _ = load_outcome_records(release)
    return [Witness(seq=record.seq, hash=record.entry_hash, source=_relative(release, record.path)) for record in records]


def open_log(release: Release) -> ReadsLog:
    spec = holdout_spec(release)
    return ReadsLog(release.resolve(spec.log), shown=spec.log, witnesses=lambda: _witnesses(release))


def outcome_vector(testset: TestSet, values: Any, kind: str) -> list[float | None]:
    import math

    order = sorted(range(len(testset.cases)), key=lambda i: hashlib.sha256(testset.cases[i].id.encode()).hexdigest())
    out: list[float | None] = []
    for index in order:
        value = float(values[index])
        out.append(None if math.isnan(value) else (int(value) if kind == "binary" else round(value, 9)))
    return out


def _write_record(release: Release, entry: ReadEntry, testset: TestSet, values: Any, kind: str, run: dict[str, Any]) -> Path:
    from oloproof.atomic import atomic_write_bytes
    from oloproof.identity import checker_identity

    spec = holdout_spec(release)
    data = {
        "schema": OUTCOMES_SCHEMA, "log": spec.log, "read": entry.seq, "entry_hash": entry.hash, "when": entry.when,
        "set": {"kind": "holdout", "digest": testset.digest, "n": len(testset)},
        "version": entry.fields.version, "criterion": entry.fields.criterion, "kind": kind,
        "config_digest": release.digest, "checker": checker_identity().to_json(), "run": run,
        "order": OUTCOME_ORDER, "outcomes": outcome_vector(testset, values, kind),
    }
    path = records_dir(release) / f"read-{entry.seq:04d}-{entry.hash[:12]}.json"
    atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_SORT_KEYS) + b"\n")
    return path


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

    def text(self) -> str:
        if self.declared is None:
            hint = f" (suggested: {self.suggestion.reads}; see `oloproof holdout status`)" if self.suggestion else ""
            return f"{self.used} read(s) so far; no budget declared{hint}"
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


def budget_status(
    spec: HoldoutSpec, state: LogState, *, n: int | None, confidence: float, delta: float | None = None, psi: float = DEFAULT_PSI
) -> BudgetStatus:
    suggestion = None
    if spec.budget is None and n is not None:
        from oloproof.stats.budget import suggested_holdout_budget

        suggestion = suggested_holdout_budget(n, delta=delta, psi=psi, confidence=confidence)
    return BudgetStatus(declared=spec.budget, used=state.reads_used, suggestion=suggestion)


def refusal(spec: HoldoutSpec, state: LogState) -> tuple[tuple[str, ...], str] | None:
    """Why a read must not happen now (reason codes and a sentence), or None."""
    reasons: list[str] = []
    sentences: list[str] = []
    if not state.intact:
        reasons.append("holdout_log_tampered")
        sentences.append(
            f"{state.shown} fails its hash-chain check ({len(state.problems)} problem(s); see `oloproof holdout status`). "
            "Restore it from git history, or acknowledge the damage with `oloproof holdout repair --reason \"...\"`"
        )
    if spec.budget is not None and state.reads_used >= spec.budget:
        reasons.append("holdout_budget_spent")
        sentences.append(
            f"the holdout's read budget is spent: {state.reads_used} of {spec.budget} reads used ({state.shown}). "
            "A fresh read needs a fresh holdout set; raising holdout.budget spends independence this set may no longer have"
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


def repair_json(entry: RepairEntry) -> dict[str, Any]:
    return {
        "when": entry.when, "who": entry.who, "commit": entry.commit, "reads_used": entry.reads_used, "orphans": list(entry.orphans),
        "found": entry.found, "reason": entry.reason, "line": entry.line, "prev": entry.prev, "hash": entry.hash,
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
    version: str | None = None,
    on_wait: Callable[[], None] | None = None,
    on_batch: Callable[[int, int], None] | None = None,
    environ: Mapping[str, str] | None = None,
) -> HoldoutRead:
    """Read the holdout once: refuse (BLOCKED) on a broken log or a spent budget, otherwise score
    the system (or imported ``outputs`` of ``version``) and append the read to the log.

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
    log = open_log(release)
    confidence = release.policy.confidence

    def refused(state: LogState, why: tuple[tuple[str, ...], str]) -> HoldoutRead:
        n = state.reads[-1].fields.n if state.reads else None
        return HoldoutRead(
            verdict=Verdict.BLOCKED, reasons=why[0], sentence=f"Refused: {why[1]} No case was scored and the log is unchanged.",
            log=spec.log, budget=budget_status(spec, state, n=n, confidence=confidence),
        )

    before = log.state()
    if (why := refusal(spec, before)) is not None:
        return refused(before, why)
    if outputs is None and release.system.command is None:
        raise ConfigError(
            release.path, release.system.line, "system.command",
            "no command declared; score outputs made elsewhere with `oloproof holdout run --outputs FILE --version NAME`",
        )
    if outputs is not None and not (version or "").strip():
        raise UsageError("--outputs needs --version NAME (the system version that produced them)")
    testset = load_holdout(release, environ)
    evaluator = release.criteria()[spec.criterion]

    def evaluate(answers: Mapping[str, dict[str, Any]]) -> Any:
        ctx = EvalContext(testset=testset, outputs=answers, base_dir=release.base_dir, policy=release.policy, quiet=True)
        return _withheld(spec.cases, lambda: evaluator.evaluate(ctx))

    evaluate({})  # a case whose `expected` the evaluator cannot read fails now, before the system runs
    who, commit = reader(release.base_dir, environ)
    store = _DiscardingStore(release.base_dir)
    with log.transaction(on_wait=on_wait) as tx:
        state = tx.state
        if (why := refusal(spec, state)) is not None:
            return refused(state, why)
        if outputs is not None:
            assert version is not None
            shown = outputs_shown or str(outputs)
            record, answers = import_outputs(release, testset, store, outputs, version=version.strip(), shown=shown, kind="holdout")
        else:
            record, answers = execute(release, testset, store, kind="holdout", on_batch=on_batch)
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
            method=interval.method if interval is not None else "none", budget=spec.budget, reason=reason,
        )
        entry = tx.append_read(fields, when=utc_now())
        run = {
            "status": record.status, "failure": record.failure, "imported_from": record.imported_from,
            "n_outputs": record.n_outputs, "problems": len(record.case_errors) + len(record.run_errors),
        }
        path = _write_record(release, entry, testset, values, fields.kind, run)
    after = replace(state, reads_used=state.reads_used + 1)
    notes = _read_notes(record.failure, missing, len(testset), (*method_reasons, *outcome.reasons), details)
    return HoldoutRead(
        verdict=None, reasons=(), sentence="", log=spec.log,
        budget=budget_status(spec, after, n=len(testset), confidence=confidence), entry=entry, set_digest=testset.digest,
        set_shown=spec.cases, n=len(testset), interval=interval, record=_relative(release, path), run=run, notes=notes,
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


# --------------------------------------------------------------------------- status


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutStatus:
    log: str
    state: LogState
    budget: BudgetStatus
    set_shown: str
    set_digest: str | None  # None when the set is not available here
    n: int | None
    unavailable: str | None  # why the set could not be read here
    records: dict[str, str]  # entry hash -> outcome record path
    history: str | None  # --since: None when append-only since the ref, else what is wrong
    since: str | None
    notes: tuple[str, ...]

    @property
    def intact(self) -> bool:
        return self.state.intact and self.history is None

    @property
    def exit_code(self) -> int:
        return 0 if self.intact else int(Verdict.BLOCKED.exit_code)

    def to_json(self) -> dict[str, Any]:
        state = self.state
        return {
            "schema": STATUS_SCHEMA, "intact": self.intact, "exit_code": self.exit_code,
            "reasons": [] if self.intact else ["holdout_log_tampered"],
            "log": {
                "path": self.log, "exists": state.exists, "chain_intact": state.intact,
                "problems": [{"line": p.line, "message": p.message} for p in state.problems],
                "acknowledged": [{"line": p.line, "message": p.message} for p in state.acknowledged],
                "since": None if self.since is None else {"ref": self.since, "append_only": self.history is None, "problem": self.history},
                "notes": list(state.notes),
            },
            "set": {"kind": "holdout", "path": self.set_shown, "digest": self.set_digest, "n_cases": self.n, "unavailable": self.unavailable},
            "budget": self.budget.to_json(),
            "reads": [{**entry_json(entry), "outcome_record": self.records.get(entry.hash)} for entry in state.reads],
            "repairs": [repair_json(entry) for entry in state.repairs],
            "notes": list(self.notes),
        }


def _history_problem(release: Release, ref: str, current: bytes | None) -> str | None:
    spec = holdout_spec(release)
    path = release.resolve(spec.log)
    if _git(path.parent, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") is None:
        raise UsageError(f"--since {ref}: not a commit in the repository holding {spec.log}")
    try:
        proc = subprocess.run(["git", "show", f"{ref}:./{path.name}"], cwd=path.parent, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"--since {ref}: git failed ({exc})") from None
    if proc.returncode != 0:
        return None  # the log did not exist at ref: anything since is an append
    old = proc.stdout
    kept = old[: verify(old, shown=spec.log).append_offset]
    if (current or b"").startswith(kept):
        return None
    return f"the log at {ref} is not a prefix of the log now: entries were changed or removed since {ref}"


def holdout_status(
    release: Release, *, delta: float | None = None, psi: float = DEFAULT_PSI, since: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> HoldoutStatus:
    spec = holdout_spec(release)
    log = open_log(release)
    data = log.read_bytes()
    records, record_notes = load_outcome_records(release)
    state = verify(data, shown=spec.log, witnesses=[
        Witness(seq=r.seq, hash=r.entry_hash, source=_relative(release, r.path)) for r in records
    ])
    digest: str | None = None
    n: int | None = None
    unavailable: str | None = None
    try:
        testset = load_holdout(release, environ)
        digest, n = testset.digest, len(testset)
    except HoldoutUnavailable as exc:
        unavailable = exc.message
    notes = list(record_notes)
    last = state.reads[-1] if state.reads else None
    if n is None and last is not None:
        n = last.fields.n
    if digest is not None and last is not None and last.fields.set_digest != digest:
        notes.append(
            f"the holdout set changed since read {last.seq} ({short(last.fields.set_digest)} then, {short(digest)} now): "
            "earlier reads measured other cases; the budget still counts them"
        )
    recorded = {r.entry_hash: _relative(release, r.path) for r in records}
    missing_records = [entry.seq for entry in state.reads if entry.hash not in recorded]
    if missing_records:
        notes.append(
            f"no outcome record for read(s) {', '.join(map(str, missing_records))} under {'/'.join(RECORDS_DIR)}/: "
            "paired comparisons cannot use them (commit .oloproof/holdout/ with the log)"
        )
    history = _history_problem(release, since, data) if since else None
    return HoldoutStatus(
        log=spec.log, state=state,
        budget=budget_status(spec, state, n=n, confidence=release.policy.confidence, delta=delta, psi=psi),
        set_shown=spec.cases, set_digest=digest, n=n, unavailable=unavailable, records=recorded, history=history,
        since=since, notes=tuple(notes),
    )


# --------------------------------------------------------------------------- repair


def repair_log(
    release: Release, *, reason: str, reads_used: int | None = None, environ: Mapping[str, str] | None = None
) -> tuple[LogState, RepairEntry]:
    """Append a repair entry acknowledging every problem of a broken log (its lines are kept)."""
    reason = check_reason(reason, what="repair")
    log = open_log(release)
    who, commit = reader(release.base_dir, environ)
    with log.transaction() as tx:
        if tx.state.intact:
            raise UsageError(f"{tx.state.shown} verifies ({tx.state.reads_used} reads): there is nothing to repair")
        if reads_used is not None and reads_used < tx.state.reads_used:
            raise UsageError(f"--reads-used {reads_used} is below the {tx.state.reads_used} reads the log shows; a repair never lowers the count")
        try:
            entry = tx.append_repair(when=utc_now(), who=who, commit=commit, reason=reason, reads_used=reads_used)
        except LogError as exc:
            raise UsageError(str(exc)) from None
        return tx.state, entry


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
        budget = budget_status(spec, state, n=last.fields.n if last else None, confidence=release.policy.confidence)
        reasons: tuple[str, ...] = ()
        sentence = ""
        why = refusal(spec, state)
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
