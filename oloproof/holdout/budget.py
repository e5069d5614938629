"""The read budget: what is in force, what is used (across logs), and why a read must not happen."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.holdout.cases import holdout_spec
from oloproof.holdout.log import LogState, printable
from oloproof.holdout.records import OutcomeRecord, load_outcome_records, log_key

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
    spec: HoldoutSpec,
    state: LogState,
    *,
    n: int | None,
    confidence: float,
    delta: float | None = None,
    psi: float = DEFAULT_PSI,
    foreign: Iterable[OutcomeRecord] = (),
) -> BudgetStatus:
    """``declared`` is the budget in force (see :func:`budget_in_force`)."""
    budget, _ = budget_in_force(spec, state)
    suggestion = None
    if budget is None and n is not None:
        from oloproof.stats.budget import suggested_holdout_budget  # lazy: start-up

        suggestion = suggested_holdout_budget(n, delta=delta, psi=psi, confidence=confidence)
    return BudgetStatus(declared=budget, used=reads_used(state, foreign), suggestion=suggestion)


def refusal(
    spec: HoldoutSpec, state: LogState, foreign: tuple[OutcomeRecord, ...] = ()
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
    if foreign:
        logs = sorted({record.log for record in foreign})
        reasons.append("holdout_log_moved")
        sentences.append(
            f"{len(foreign)} read(s) of this holdout set are recorded under another log "
            f"({', '.join(map(printable, logs))}; "
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
            "A fresh read needs a fresh holdout set; raising the budget (`oloproof holdout budget`) spends "
            "independence "
            "this set may no longer have"
        )
    if not reasons:
        return None
    return tuple(reasons), "; ".join(sentences) + "."
