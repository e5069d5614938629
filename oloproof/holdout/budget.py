"""The read budget: what is in force, what is used (across logs), and why a read must not happen."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.holdout.cases import holdout_spec
from oloproof.holdout.log import LogState, printable
from oloproof.holdout.records import OutcomeRecord, load_outcome_records, log_key
from oloproof.holdout.registry import load_register, relative_to_root, repository_root
from oloproof.store import shown as store_shown

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.holdout.spec import HoldoutSpec
    from oloproof.stats.budget import BudgetSuggestion


DEFAULT_PSI = 0.12  # expected discordance between two compared versions (STATISTICS.md §6)


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
            hint_text = (
                f" (suggested: {self.suggestion.reads}; see `oloproof holdout status`)"
                if self.suggestion and hint
                else ""
            )
            return f"{self.used} read(s) so far; no budget declared{hint_text}"
        over = f" ({self.used - self.declared} over budget)" if self.used > self.declared else ""
        return f"{self.used} of {self.declared} reads used, {self.left} left{over}"

    def to_json(self) -> dict[str, Any]:
        suggestion = self.suggestion
        return {
            "declared": self.declared,
            "used": self.used,
            "left": self.left,
            "spent": self.spent,
            "suggested": None
            if suggestion is None
            else {
                "reads": suggestion.reads,
                "n": suggestion.n,
                "delta": suggestion.delta,
                "delta_source": suggestion.delta_source,
                "psi": suggestion.psi,
                "alpha": suggestion.alpha,
                "cap": suggestion.cap,
                "capped": suggestion.capped,
                "formula": suggestion.formula,
                "explanation": suggestion.explanation(),
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
        f'`oloproof holdout budget {_words(declared)} --reason "..."`, or restore holdout.budget'
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class OtherReads:
    """Reads of this holdout's cases made under other logs, which the budget counts too.

    ``foreign``: outcome records of this project naming another log for the same set (a moved or
    renamed log: BLOCKED, ``holdout_log_moved``). ``keys``: every such read, and every read the
    repository's register holds of a set sharing a case with this one (another config, another
    directory, a near copy), as (log relative to the repository root, read number). ``budget``: the
    lowest budget any of those reads was made under: a second config cannot give the same cases a
    larger budget."""

    foreign: tuple[OutcomeRecord, ...] = ()
    keys: frozenset[tuple[str, int]] = frozenset()
    logs: tuple[str, ...] = ()  # the other logs the register names, for messages
    budget: int | None = None


NO_OTHER_READS = OtherReads()


def other_reads(
    release: Release, state: LogState, *, digests: Iterable[str] = (), commitments: Iterable[str] | None = None
) -> OtherReads:
    """The reads of this holdout made elsewhere (see ``OtherReads``). ``commitments``: the case
    commitments of the holdout as loaded now (``register.commitments``); without them, the cases of
    the sets this log has read are used."""
    spec = holdout_spec(release)
    sets = {entry.fields.set_digest for entry in state.reads} | set(digests)
    foreign = foreign_records(release, state, sets)
    root = repository_root(release.base_dir)
    register = load_register(root)
    own_log = relative_to_root(root, release.resolve(spec.log))
    cases: set[str] = set(commitments or ())
    for digest in sets:
        cases |= register.sets.get(digest, frozenset())
    shared = [read for read in register.reads_of(register.overlapping(cases)) if read.log != own_log]
    keys = {read.key for read in shared}
    keys |= {(relative_to_root(root, release.resolve(record.log)), record.seq) for record in foreign}
    budgets = [read.budget for read in shared if read.budget is not None]
    return OtherReads(
        foreign=foreign,
        keys=frozenset(keys),
        logs=tuple(sorted({read.log for read in shared})),
        budget=min(budgets) if budgets else None,
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


def reads_used(state: LogState, others: OtherReads = NO_OTHER_READS) -> int:
    """What the budget counts: the log's reads, and the reads of the same cases under other logs."""
    return state.reads_used + len(others.keys)


def budget_for(spec: HoldoutSpec, state: LogState, others: OtherReads = NO_OTHER_READS) -> int | None:
    """The budget in force for this log, lowered to the lowest budget the same cases were read
    under elsewhere."""
    budget, _ = budget_in_force(spec, state)
    if others.budget is not None and (budget is None or others.budget < budget):
        return others.budget
    return budget


def budget_status(
    spec: HoldoutSpec,
    state: LogState,
    *,
    n: int | None,
    confidence: float,
    delta: float | None = None,
    psi: float = DEFAULT_PSI,
    others: OtherReads = NO_OTHER_READS,
) -> BudgetStatus:
    """``declared`` is the budget in force (see :func:`budget_for`)."""
    budget = budget_for(spec, state, others)
    suggestion = None
    if budget is None and n is not None:
        from oloproof.stats.budget import suggested_holdout_budget  # lazy: start-up

        suggestion = suggested_holdout_budget(n, delta=delta, psi=psi, confidence=confidence)
    return BudgetStatus(declared=budget, used=reads_used(state, others), suggestion=suggestion)


def refusal(
    spec: HoldoutSpec, state: LogState, others: OtherReads = NO_OTHER_READS
) -> tuple[tuple[str, ...], str] | None:
    """Why a read must not happen now (reason codes and a sentence), or None."""
    reasons: list[str] = []
    sentences: list[str] = []
    if not state.intact:
        reasons.append("holdout_log_tampered")
        sentences.append(
            f"{state.shown} fails its hash-chain check ({len(state.problems)} problem(s); see `oloproof holdout "
            f"status`). "
            'Restore it from git history, or acknowledge the damage with `oloproof holdout repair --reason "..."`'
        )
    foreign = others.foreign
    if foreign:
        logs = sorted({record.log for record in foreign})
        reasons.append("holdout_log_moved")
        sentences.append(
            f"{len(foreign)} read(s) of this holdout set are recorded under another log "
            f"({', '.join(map(printable, logs))}; "
            f"outcome records in {store_shown('holdout_records')}/), not {state.shown}. Moving or renaming the log "
            "does not reset the "
            "budget: point holdout.log back at that log; a fresh budget needs a fresh holdout set"
        )
    _, unlogged = budget_in_force(spec, state)
    if unlogged is not None:
        reasons.append("holdout_budget_unlogged")
        sentences.append(unlogged)
    budget = budget_for(spec, state, others)
    used = reads_used(state, others)
    if budget is not None and used >= budget:
        elsewhere = (
            f", {len(others.keys)} of them of the same cases under other logs "
            f"({', '.join(map(printable, others.logs))})"
            if others.logs
            else ""
        )
        reasons.append("holdout_budget_spent")
        sentences.append(
            f"the holdout's read budget is spent: {used} of {budget} reads used ({state.shown}{elsewhere}). "
            "A fresh read needs a fresh holdout set; raising the budget (`oloproof holdout budget`) spends "
            "independence "
            "this set may no longer have"
        )
    if not reasons:
        return None
    return tuple(reasons), "; ".join(sentences) + "."
