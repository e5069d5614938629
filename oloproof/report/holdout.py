"""Holdout reads, status, repairs and budget changes as text for people (terminal and logs).

Every score names its set ("holdout score", "holdout set sha256:…"); free text from the log (who,
reason, version) is escaped by ``printable``; no holdout case id or content is ever at hand here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from oloproof.holdout.log import entry_score, interval_words, printable, short
from oloproof.stats.budget import NON_ADAPTIVE_CAVEAT

if TYPE_CHECKING:
    from rich.table import Table

    from oloproof.config import Release
    from oloproof.holdout.log import BudgetEntry, LogState, RepairEntry
    from oloproof.holdout.read import HoldoutRead
    from oloproof.holdout.size import Sizing
    from oloproof.holdout.status import HoldoutStatus


def score_line(read: HoldoutRead) -> str:
    """``holdout score: 0.708 (85/120), 95% interval [0.619, 0.787] (clopper-pearson, exact) — holdout set sha256:…``"""
    assert read.entry is not None and read.set_digest is not None
    if read.unscored:
        failure = read.run.get("failure")
        why = f"the system failed ({failure})" if failure else "the system answered no case"
        fields = read.entry.fields
        return (
            f"holdout score: none — {why}; {fields.answered} of {fields.n} cases answered; the read still counts "
            f"(the system saw the cases) — holdout set {short(read.set_digest)}"
        )
    return (
        f"holdout score: {entry_score(read.entry)}{interval_words(read.entry)} — holdout set {short(read.set_digest)}"
    )


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


def read_lines(read: HoldoutRead) -> list[str]:
    """What ``oloproof holdout run`` prints: the refusal, or the score, its notes and the log line."""
    if read.verdict is not None:
        return [f"{read.verdict.value} ({', '.join(read.reasons)}): {read.sentence}"]
    return [score_line(read), *(f"  note: {note}" for note in read.notes), appended_line(read)]


def status_items(status: HoldoutStatus) -> list[str | Table]:
    """What ``oloproof holdout status`` prints, in order: lines, and the reads table."""
    state = status.state
    out: list[str | Table] = []
    if status.set_digest is not None:
        out.append(f"holdout set {status.set_shown}: {status.n} cases, {short(status.set_digest)}")
    else:
        out.append(f"holdout set {status.set_shown}: not available here ({status.unavailable})")
    if not state.intact:  # before existence: a deleted log with outcome records left is tampered, not new
        chain = f"TAMPERED: {len(state.problems)} problem(s); holdout reads are refused (holdout_log_tampered)"
    elif not state.exists:
        chain = "no reads yet (the file does not exist)"
    else:
        chain = f"intact, hash chain verified ({len(state.reads)} read entries"
        if state.interrupted:  # reads that began and were cut off: they count against the budget
            chain += f", {len(state.interrupted)} interrupted read(s) that count"
        chain += f", {len(state.repairs)} repair(s))" if state.repairs else ")"
    out.append(f"log {status.log}: {chain}")
    out.extend(f"  {problem}" for problem in state.problems)
    if status.history is not None:
        out.append(f"  since {status.since}: {status.history}")
    elif status.since is not None:
        out.append(f"  append-only since {status.since}")
    if state.reads:
        out.extend(_reads_table(state))
    for repair in state.repairs:
        out.append(
            f"repair at line {repair.line} ({repair.when}, {printable(repair.who)}): {printable(repair.reason)}; "
            f"it acknowledged: {printable(repair.found) or 'nothing'}"
        )
    for change in state.budgets:
        out.append(
            f"budget entry at line {change.line} ({change.when}, {printable(change.who)}): budget "
            f"{'none' if change.budget is None else change.budget}: {printable(change.reason)}"
        )
    if status.refused is not None and state.intact:
        out.append(f"holdout reads are refused ({', '.join(status.refused[0])}): {status.refused[1]}.")
    budget = status.budget
    out.append(f"budget: {budget.text(hint=False)}")
    if budget.suggestion is not None:
        s = budget.suggestion
        out.append(f"suggested budget: {s.reads} reads for {s.n} cases (STATISTICS.md §6)")
        out.append(f"  {s.explanation()}")
        out.append(f"  note: {NON_ADAPTIVE_CAVEAT}")
        out.append(
            "  a read spends a 1/B share of the chance of a spurious difference of delta or more; size delta to the "
            "smallest "
            "difference the set must settle (--delta 0.095 for 9.5 points) and declare it as holdout.budget in "
            "release.yaml"
        )
    out.extend(f"note: {note}" for note in (*state.notes, *status.notes))
    return out


def _reads_table(state: LogState) -> list[str | Table]:
    from rich.table import Table  # lazy: start-up
    from rich.text import Text  # lazy: start-up

    out: list[str | Table] = []
    first = state.reads[0].fields
    same = all(
        entry.fields.set_digest == first.set_digest and entry.fields.criterion == first.criterion
        for entry in state.reads
    )
    if same:  # every score still names its set: once above the table, or in its own column
        out.append(f"reads of holdout set {short(first.set_digest)}, criterion {printable(first.criterion)}:")
    table = Table(header_style="bold")
    for column in (
        "read",
        "when (UTC)",
        "who",
        "commit",
        "version",
        "holdout score",
        *(() if same else ("criterion", "set")),
        "reason",
    ):
        table.add_column(
            column,
            no_wrap=column in ("read", "holdout score"),
            overflow="fold",
            ratio=2 if column == "reason" else None,
        )
    flagged = {problem.line for problem in (*state.problems, *state.acknowledged) if problem.line is not None}
    for entry in state.reads:
        fields = entry.fields
        cells: list[Any] = [
            f"{entry.seq} !" if entry.line in flagged else str(entry.seq),
            entry.when[:16].replace("T", " "),
        ]
        cells += [
            Text(printable(fields.who)),
            Text(printable(fields.commit)),
            Text(printable(fields.version)),
            entry_score(entry),
        ]
        if not same:
            cells += [Text(printable(fields.criterion)), short(fields.set_digest)]
        table.add_row(*cells, Text(printable(fields.reason)))
    out.append(table)
    if any(entry.line in flagged for entry in state.reads):
        out.append(
            "! the chain check found a problem at this entry's line (listed above, or acknowledged by a repair): do "
            "not trust it"
        )
    return out


def repair_lines(before: LogState, entry: RepairEntry) -> list[str]:
    return [
        f"appended a repair entry to {before.shown} (line {entry.line}) acknowledging {len(before.problems)} "
        f"problem(s):",
        *(f"  {problem}" for problem in before.problems),
        f"reads used: {entry.reads_used}; the damaged lines are kept; reads are allowed again",
    ]


def budget_lines(release: Release, before: LogState, entry: BudgetEntry) -> list[str]:
    new = "none" if entry.budget is None else str(entry.budget)
    old = "none" if not before.budget_logged or before.logged_budget is None else str(before.logged_budget)
    out = [
        f"appended a budget entry to {before.shown} (line {entry.line}): budget {new} (logged before: "
        f"{old if before.budget_logged else 'nothing'}); {before.reads_used} read(s) used"
    ]
    raised = entry.budget is None or (
        before.budget_logged and (before.logged_budget is not None and entry.budget > before.logged_budget)
    )
    if raised:
        out.append(
            "note: raising a budget spends independence this holdout set may no longer have; a fresh set is the "
            "honest way on"
        )
    declared = release.holdout.budget if release.holdout is not None else None
    if (declared is None and entry.budget is not None) or (
        declared is not None and entry.budget is not None and declared > entry.budget
    ):
        out.append(
            f"note: declare holdout.budget: {new} in release.yaml (reads are refused while it exceeds the logged "
            f"budget)"
        )
    elif declared is not None and (entry.budget is None or declared < entry.budget):
        out.append(
            f"note: release.yaml declares holdout.budget: {declared}, which stays in force while it is lower; "
            f"declare holdout.budget: {new} there to use the logged budget"
            if entry.budget is not None
            else f"note: release.yaml declares holdout.budget: {declared}, which stays in force; "
            "remove it to read without a budget"
        )
    return out


def _points(value: float) -> str:
    return f"{100 * value:.1f}" if 100 * value >= 0.1 else f"{100 * value:.2g}"


def size_lines(sizing: Sizing) -> list[str]:
    """``oloproof holdout size``: the cases a paired difference needs, and what the current set resolves."""
    exact = ""
    if sizing.exact_power is not None:
        exact = f"; the exact McNemar test's power there is {sizing.exact_power:.2f}"
        if sizing.cases_exact is not None:
            exact += f", and stays at {sizing.power:.0%} or more from about {sizing.cases_exact} cases"
    lines = [
        f"to settle a paired difference of {_points(sizing.delta)} points ({sizing.confidence:.0%} two-sided, "
        f"{sizing.power:.0%} power): about {sizing.cases:,} reserved cases (normal approximation){exact}",
        f"  discordance ψ = {sizing.psi:.3f}, {printable(sizing.psi_source)}",
    ]
    if sizing.psi_range is not None and sizing.cases_range is not None:
        low, high = sizing.psi_range
        lines.append(
            f"  ψ is itself measured on few cases: its 95% range [{low:.3f}, {high:.3f}] puts the answer between about "
            f"{sizing.cases_range[0]:,} and {sizing.cases_range[1]:,} cases"
        )
    if sizing.holdout_n is not None and sizing.holdout_resolution is not None:
        lines.append(
            f"  the declared holdout has {sizing.holdout_n} cases: it resolves about "
            f"{100 * sizing.holdout_resolution:.1f} points at this ψ and power"
        )
    return lines
