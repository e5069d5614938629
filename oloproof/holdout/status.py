"""``holdout status``, ``holdout repair`` and ``holdout budget``: what the log says, whether it verifies, what is left.

Status reads the log and the outcome records, not the holdout cases (it loads the set only to
show its digest, and says so when the set is not available here, e.g. without its secret path).
With ``since`` it also asks git whether the log only grew since a commit: a chain that was
recomputed from scratch verifies by itself, but cannot hide from the committed history.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.files import read_evidence
from oloproof.holdout.budget import DEFAULT_PSI, BudgetStatus, budget_status, other_reads, refusal
from oloproof.holdout.cases import HoldoutUnavailable, holdout_spec, load_holdout, open_log
from oloproof.holdout.history import unregistered_reads
from oloproof.holdout.log import BudgetEntry, LogError, LogState, RepairEntry, Witness, entry_json, printable, short
from oloproof.holdout.read import check_reason, utc_now
from oloproof.holdout.records import load_outcome_records, relative
from oloproof.holdout.registry import register_path, register_shown, repository_root
from oloproof.holdout.verify import verify
from oloproof.store import MAX_REGISTER_BYTES
from oloproof.store import shown as store_shown
from oloproof.vcs import git_bytes, git_output
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release

STATUS_SCHEMA = "oloproof.holdout-status/1"
REPAIR_SCHEMA = "oloproof.holdout-repair/1"
BUDGET_SCHEMA = "oloproof.holdout-budget/1"


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
    refused: tuple[tuple[str, ...], str] | None  # why a read would be refused now
    history: str | None  # --since: None when append-only since the ref, else what is wrong
    since: str | None
    notes: tuple[str, ...]

    @property
    def intact(self) -> bool:
        return (
            self.state.intact and self.history is None and not (self.refused and "holdout_log_moved" in self.refused[0])
        )

    @property
    def exit_code(self) -> int:
        return 0 if self.intact else int(Verdict.BLOCKED.exit_code)

    def to_json(self) -> dict[str, Any]:
        state = self.state
        flagged = {problem.line for problem in (*state.problems, *state.acknowledged) if problem.line is not None}
        return {
            "schema": STATUS_SCHEMA,
            "intact": self.intact,
            "exit_code": self.exit_code,
            "reasons": []
            if self.intact
            else (["holdout_log_tampered"] if not self.state.intact or self.history is not None else [])
            + (["holdout_log_moved"] if self.refused and "holdout_log_moved" in self.refused[0] else []),
            "refused": None
            if self.refused is None
            else {"reasons": list(self.refused[0]), "sentence": self.refused[1]},
            "log": {
                "path": self.log,
                "exists": state.exists,
                "chain_intact": state.intact,
                "problems": [{"line": p.line, "message": p.message} for p in state.problems],
                "acknowledged": [{"line": p.line, "message": p.message} for p in state.acknowledged],
                "since": None
                if self.since is None
                else {"ref": self.since, "append_only": self.history is None, "problem": self.history},
                "notes": list(state.notes),
            },
            "set": {
                "kind": "holdout",
                "path": self.set_shown,
                "digest": self.set_digest,
                "n_cases": self.n,
                "unavailable": self.unavailable,
            },
            "budget": self.budget.to_json(),
            "reads": [
                {**entry_json(entry), "outcome_record": self.records.get(entry.hash), "flagged": entry.line in flagged}
                for entry in state.reads
            ],
            "repairs": [repair_json(entry) for entry in state.repairs],
            "budget_entries": [budget_json(entry) for entry in state.budgets],
            "interrupted_reads": list(state.interrupted),
            "notes": list(self.notes),
        }


def _reads_at(release: Release, ref: str) -> int:
    """How many reads the log held at commit ``ref`` (0 when it did not exist there)."""
    spec = holdout_spec(release)
    path = release.resolve(spec.log)
    old = git_bytes(path.parent, "show", f"{ref}:./{path.name}")
    return 0 if old is None else len(verify(old, shown=spec.log).reads)


def _history_problem(release: Release, ref: str, current: bytes | None) -> str | None:
    spec = holdout_spec(release)
    path = release.resolve(spec.log)
    if git_output(path.parent, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}") is None:
        raise UsageError(f"--since {ref}: not a commit in the repository holding {spec.log}")
    try:
        proc = subprocess.run(
            ["git", "show", f"{ref}:./{path.name}"], cwd=path.parent, capture_output=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise UsageError(f"--since {ref}: git failed ({exc})") from None
    if proc.returncode != 0:
        return None  # the log did not exist at ref: anything since is an append
    old = proc.stdout
    kept = old[: verify(old, shown=spec.log).append_offset]
    if (current or b"").startswith(kept):
        return None
    return f"the log at {ref} is not a prefix of the log now: entries were changed or removed since {ref}"


def _register_history_problem(release: Release, ref: str) -> str | None:
    """The repository's holdout register must also only have grown since ``ref``."""
    root = repository_root(release.base_dir)
    path = register_path(root)
    try:
        relative = path.relative_to(root).as_posix()
    except ValueError:
        return None
    old = git_bytes(root, "show", f"{ref}:{relative}")
    if old is None:
        return None  # not committed at ref: anything since is an addition
    current = read_evidence(path, register_shown(), expected="the holdout register", max_bytes=MAX_REGISTER_BYTES)
    current = current or b""
    if current.startswith(old):
        return None
    return (
        f"the holdout register {relative} at {ref} is not a prefix of the register now: reads were removed since {ref}"
    )


def holdout_status(
    release: Release,
    *,
    delta: float | None = None,
    psi: float = DEFAULT_PSI,
    since: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> HoldoutStatus:
    spec = holdout_spec(release)
    log = open_log(release)
    data = log.read_bytes()
    records, record_notes = load_outcome_records(release.base_dir, log=spec.log)
    state = verify(
        data,
        shown=spec.log,
        witnesses=[Witness(seq=r.seq, hash=r.entry_hash, source=relative(release.base_dir, r.path)) for r in records],
    )
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
            f"the holdout set changed since read {last.seq} ({short(last.fields.set_digest)} then, {short(digest)} "
            f"now): "
            "earlier reads measured other cases; the budget still counts them"
        )
    notes.extend(_budget_changes(state, spec.budget))
    others = other_reads(release, state, digests=() if digest is None else (digest,))
    refused = refusal(spec, state, others)
    recorded = {r.entry_hash: relative(release.base_dir, r.path) for r in records}
    missing_records = [entry.seq for entry in state.reads if entry.hash not in recorded]
    if missing_records:
        notes.append(
            f"no outcome record for read(s) {', '.join(map(str, missing_records))} under "
            f"{store_shown('holdout_records')}/: "
            f"paired comparisons cannot use them (commit {store_shown('holdout_records')}/ with the log)"
        )
    unregistered = unregistered_reads(release, state)
    if unregistered:
        notes.append(
            f"read(s) {', '.join(map(str, unregistered))} are not in the holdout register ({register_shown()}), which "
            "`oloproof holdout run` writes before every read: they were not made by it here, or the register was not "
            "committed; `oloproof gap` does not use them"
        )
    history = (_history_problem(release, since, data) or _register_history_problem(release, since)) if since else None
    if since and history is None:
        added = [entry for entry in state.reads if entry.seq > _reads_at(release, since)]
        if added:
            listed = "; ".join(
                f"read {e.seq} ({e.when}, {printable(e.fields.version)}, by {printable(e.fields.who)})" for e in added
            )
            notes.append(
                f"{len(added)} read(s) added since {since}: {listed}. Reads are made by the release workflow, never "
                "in a pull request: confirm these were"
            )
    return HoldoutStatus(
        log=spec.log,
        state=state,
        budget=budget_status(
            spec, state, n=n, confidence=release.policy.confidence, delta=delta, psi=psi, others=others
        ),
        set_shown=spec.cases,
        set_digest=digest,
        n=n,
        unavailable=unavailable,
        records=recorded,
        refused=refused,
        history=history,
        since=since,
        notes=tuple(notes),
    )


def repair_log(
    release: Release, *, reason: str, who: str, commit: str, reads_used: int | None = None
) -> tuple[LogState, RepairEntry]:
    """Append a repair entry acknowledging every problem of a broken log (its lines are kept)."""
    reason = check_reason(reason, what="repair")
    log = open_log(release)
    with log.transaction() as tx:
        if tx.state.intact:
            raise UsageError(f"{tx.state.shown} verifies ({tx.state.reads_used} reads): there is nothing to repair")
        if reads_used is not None and reads_used < tx.state.reads_used:
            raise UsageError(
                f"--reads-used {reads_used} is below the {tx.state.reads_used} reads the log shows; a repair never "
                f"lowers the count"
            )
        try:
            entry = tx.append_repair(when=utc_now(), who=who, commit=commit, reason=reason, reads_used=reads_used)
        except LogError as exc:
            raise UsageError(str(exc)) from None
        return tx.state, entry


def set_budget(
    release: Release, *, budget: int | None, reason: str, who: str, commit: str
) -> tuple[LogState, BudgetEntry]:
    """Append a ``budget`` entry: the budget in force becomes ``budget`` (None: no budget), as long
    as release.yaml declares at least as much (release.yaml may always lower it)."""
    reason = check_reason(reason, what="budget change")
    if budget is not None and budget < 1:
        raise UsageError(f"budget {budget}: a budget is a positive whole number of reads (or 'none')")
    log = open_log(release)
    with log.transaction() as tx:
        try:
            entry = tx.append_budget(when=utc_now(), who=who, commit=commit, budget=budget, reason=reason)
        except LogError as exc:
            raise UsageError(str(exc)) from None
        return tx.state, entry


def _budget_changes(state: LogState, declared: int | None) -> list[str]:
    """Every change of the budget between reads: raising it is visible, never silent."""
    notes: list[str] = []
    previous: tuple[str, int | None] | None = None
    events = sorted(
        [(entry.line, f"read {entry.seq}", entry.fields.budget) for entry in state.reads]
        + [
            (entry.line, f"the budget entry at line {entry.line} ({printable(entry.reason)})", entry.budget)
            for entry in state.budgets
        ]
    )
    for _, where, budget in events:
        if previous is not None and budget != previous[1]:
            notes.append(f"the budget was {_w(previous[1])} at {previous[0]} and {_w(budget)} at {where}")
        previous = (where, budget)
    if previous is not None and previous[1] != declared:
        notes.append(f"the budget was {_w(previous[1])} at {previous[0]} and is {_w(declared)} in release.yaml now")
    return notes


def _w(budget: int | None) -> str:
    return "none" if budget is None else str(budget)


def budget_json(entry: BudgetEntry) -> dict[str, Any]:
    return {
        "when": entry.when,
        "who": entry.who,
        "commit": entry.commit,
        "budget": entry.budget,
        "reason": entry.reason,
        "line": entry.line,
        "prev": entry.prev,
        "hash": entry.hash,
    }


def repair_json(entry: RepairEntry) -> dict[str, Any]:
    return {
        "when": entry.when,
        "who": entry.who,
        "commit": entry.commit,
        "reads_used": entry.reads_used,
        "orphans": list(entry.orphans),
        "found": entry.found,
        "reason": entry.reason,
        "line": entry.line,
        "prev": entry.prev,
        "hash": entry.hash,
    }
