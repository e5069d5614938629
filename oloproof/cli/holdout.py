"""``oloproof holdout run|status|repair|budget``: read the reserved holdout set against its budget."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from oloproof.cli import common

if TYPE_CHECKING:
    from rich.console import Console

    from oloproof.readslog import LogState


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "holdout", help="read the reserved holdout set (with a reason, against a budget), show its log",
        description="The holdout set is read only with a reason, against the budget in release.yaml, and every read "
        "is appended to a tamper-evident log (holdout.log). See docs/holdout.md.",
    )
    common.add_config(parser)  # `oloproof holdout -c FILE run …` and `oloproof holdout run -c FILE …` both work
    actions = parser.add_subparsers(dest="holdout_action", metavar="ACTION")
    actions.required = True

    run = actions.add_parser(
        "run", help="score the current system on the holdout and log the read",
        description="Score the system on the holdout set and append one entry to the reads log. Refused (BLOCKED, "
        "exit 3) without scoring any case when the budget is spent or the log fails its hash-chain check.",
    )
    _add_config(run)
    run.add_argument("--reason", required=True, metavar="TEXT", help="why you are reading the holdout (required, logged)")
    run.add_argument("--outputs", metavar="FILE", help="score these JSONL outputs (made elsewhere) instead of running the system")
    run.add_argument("--command", metavar="CMD", help="score this command instead of system.command, as version NAME "
                     "(e.g. the week-0 prompt, for a baseline re-measurement); needs --version")
    run.add_argument("--version", dest="run_version", metavar="NAME", help="system version of --outputs or --command (required with them)")
    common.add_json(run)
    common.add_quiet(run)
    run.set_defaults(handler=handle_run)

    status = actions.add_parser(
        "status", help="show every read, the budget left, and whether the log verifies",
        description="Show the reads table and the budget; verify the log's hash chain (exit 3 when it fails). "
        "With no budget declared, suggest one from the set's size (STATISTICS.md §6).",
    )
    _add_config(status)
    status.add_argument("--delta", type=_fraction("--delta"), metavar="FRACTION",
                        help="smallest difference the set must settle, for the suggested budget (e.g. 0.095 = 9.5 points)")
    status.add_argument("--psi", type=_fraction("--psi"), default=0.12, metavar="FRACTION",
                        help="expected discordance between compared versions (default %(default)s)")
    status.add_argument("--since", metavar="GITREF", help="also check that the log only grew since this git commit (e.g. origin/main)")
    common.add_json(status)
    status.set_defaults(handler=handle_status)

    repair = actions.add_parser(
        "repair", help="acknowledge a broken log with a logged repair entry",
        description="Append a repair entry that acknowledges every problem of a log that fails its check, with who "
        "and why. The damaged lines are kept as they are; reads are allowed again afterwards.",
    )
    _add_config(repair)
    repair.add_argument("--reason", required=True, metavar="TEXT", help="what happened and why the log may be trusted again (logged)")
    repair.add_argument("--reads-used", type=int, metavar="N", help="reads really made, when more were lost than the log shows")
    common.add_json(repair)
    repair.set_defaults(handler=handle_repair)


    budget = actions.add_parser(
        "budget", help="change the budget in force, with a logged reason",
        description="Append a budget entry to the reads log: the budget in force becomes N ('none': no budget). "
        "Raising a budget spends independence the holdout may no longer have; lowering it needs no entry "
        "(lower holdout.budget in release.yaml). release.yaml's holdout.budget must not exceed the logged one.",
    )
    _add_config(budget)
    budget.add_argument("budget", type=_budget_value, metavar="N", help="reads the set may serve in all ('none': no budget)")
    budget.add_argument("--reason", required=True, metavar="TEXT", help="why the budget changes (required, logged)")
    common.add_json(budget)
    budget.set_defaults(handler=handle_budget)


def _fraction(option: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} takes a fraction strictly between 0 and 1, e.g. 0.095; got {text!r}") from None
        if not math.isfinite(number) or not 0.0 < number < 1.0:
            raise argparse.ArgumentTypeError(
                f"{option} takes a fraction strictly between 0 and 1 (0.095 = 9.5 points), got {text!r}"
            )
        return number

    return parse


def _budget_value(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a budget is a positive whole number of reads, or 'none'; got {text!r}")
    return int(text)


def _say(console: Console, text: str) -> None:
    # Plain text, never rich markup (a reason may hold "[bold]"), never wrapped (CI logs, grep).
    console.print(text, markup=False, soft_wrap=True)


def _add_config(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: an action's parser must not overwrite a -c given before the action with its default.
    parser.add_argument("-c", "--config", default=argparse.SUPPRESS, metavar="FILE", help="release.yaml to read (default: release.yaml)")


def handle_run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from oloproof.holdout import appended_line, read_holdout, score_line

    release = common.load(args)
    console = common.console()

    def waiting() -> None:
        print("waiting for another holdout read to finish (the reads log is locked)…", file=sys.stderr, flush=True)

    with common.BatchProgress("scoring holdout", enabled=common.interactive() and not args.quiet) as progress:
        result = read_holdout(
            release, reason=args.reason, outputs=Path(args.outputs) if args.outputs else None, outputs_shown=args.outputs,
            command=args.command, version=args.run_version, on_wait=waiting, on_batch=progress,
        )
    if result.verdict is not None:
        _say(console, f"{result.verdict.value} ({', '.join(result.reasons)}): {result.sentence}")
    else:
        _say(console, score_line(result))
        for note in result.notes:
            _say(console, f"  note: {note}")
        _say(console, appended_line(result))
    if args.json:
        common.write_json(args.json, result.to_json())
    return result.exit_code


def handle_status(args: argparse.Namespace) -> int:
    from oloproof.holdout import printable, short
    from oloproof.holdout_status import holdout_status

    release = common.load(args)
    status = holdout_status(release, delta=args.delta, psi=args.psi, since=args.since)
    state = status.state
    console = common.console()
    if status.set_digest is not None:
        _say(console, f"holdout set {status.set_shown}: {status.n} cases, {short(status.set_digest)}")
    else:
        _say(console, f"holdout set {status.set_shown}: not available here ({status.unavailable})")
    if not state.intact:  # before existence: a deleted log with outcome records left is tampered, not new
        chain = f"TAMPERED: {len(state.problems)} problem(s); holdout reads are refused (holdout_log_tampered)"
    elif not state.exists:
        chain = "no reads yet (the file does not exist)"
    elif state.intact:
        chain = f"intact, hash chain verified ({len(state.reads)} read entries"
        chain += f", {len(state.repairs)} repair(s))" if state.repairs else ")"
    _say(console, f"log {status.log}: {chain}")
    for problem in state.problems:
        _say(console, f"  {problem}")
    if status.history is not None:
        _say(console, f"  since {status.since}: {status.history}")
    elif status.since is not None:
        _say(console, f"  append-only since {status.since}")
    if state.reads:
        _reads_table(console, state)
    for repair in state.repairs:
        _say(
            console,
            f"repair at line {repair.line} ({repair.when}, {printable(repair.who)}): {printable(repair.reason)}; "
            f"it acknowledged: {printable(repair.found) or 'nothing'}",
        )
    for change in state.budgets:
        _say(
            console,
            f"budget entry at line {change.line} ({change.when}, {printable(change.who)}): budget "
            f"{'none' if change.budget is None else change.budget}: {printable(change.reason)}",
        )
    if status.refused is not None and state.intact:
        _say(console, f"holdout reads are refused ({', '.join(status.refused[0])}): {status.refused[1]}.")
    budget = status.budget
    _say(console, f"budget: {budget.text(hint=False)}")
    if budget.suggestion is not None:
        s = budget.suggestion
        _say(console, f"suggested budget: {s.reads} reads for {s.n} cases (STATISTICS.md §6)")
        _say(console, f"  {s.explanation()}")
        _say(
            console,
            "  a read spends a 1/B share of the chance of a spurious difference of delta or more; size delta to the smallest "
            "difference the set must settle (--delta 0.095 for 9.5 points) and declare it as holdout.budget in release.yaml",
        )
    for note in (*state.notes, *status.notes):
        _say(console, f"note: {note}")
    if args.json:
        common.write_json(args.json, status.to_json())
    return status.exit_code


def _reads_table(console: Console, state: LogState) -> None:
    from rich.table import Table
    from rich.text import Text

    from oloproof.holdout import entry_score, printable, short

    first = state.reads[0].fields
    same = all(entry.fields.set_digest == first.set_digest and entry.fields.criterion == first.criterion for entry in state.reads)
    if same:  # every score still names its set: once above the table, or in its own column
        _say(console, f"reads of holdout set {short(first.set_digest)}, criterion {printable(first.criterion)}:")
    table = Table(header_style="bold")
    for column in ("read", "when (UTC)", "who", "commit", "version", "holdout score", *(() if same else ("criterion", "set")), "reason"):
        table.add_column(column, no_wrap=column in ("read", "holdout score"), overflow="fold", ratio=2 if column == "reason" else None)
    flagged = {problem.line for problem in (*state.problems, *state.acknowledged) if problem.line is not None}
    for entry in state.reads:
        fields = entry.fields
        cells: list[str | Text] = [f"{entry.seq} !" if entry.line in flagged else str(entry.seq), entry.when[:16].replace("T", " ")]
        cells += [Text(printable(fields.who)), Text(printable(fields.commit)), Text(printable(fields.version)), entry_score(entry)]
        if not same:
            cells += [Text(printable(fields.criterion)), short(fields.set_digest)]
        table.add_row(*cells, Text(printable(fields.reason)))
    console.print(table)
    if any(entry.line in flagged for entry in state.reads):
        _say(console, "! the chain check found a problem at this entry's line (listed above, or acknowledged by a repair): do not trust it")


def handle_repair(args: argparse.Namespace) -> int:
    from oloproof.holdout_status import REPAIR_SCHEMA, repair_json, repair_log

    release = common.load(args)
    before, entry = repair_log(release, reason=args.reason, reads_used=args.reads_used)
    console = common.console()
    problems = len(before.problems)
    _say(console, f"appended a repair entry to {before.shown} (line {entry.line}) acknowledging {problems} problem(s):")
    for problem in before.problems:
        _say(console, f"  {problem}")
    _say(console, f"reads used: {entry.reads_used}; the damaged lines are kept; reads are allowed again")
    if args.json:
        data = {
            "schema": REPAIR_SCHEMA, "log": before.shown, "repair": repair_json(entry),
            "acknowledged": [{"line": p.line, "message": p.message} for p in before.problems],
        }
        common.write_json(args.json, data)
    return 0


def handle_budget(args: argparse.Namespace) -> int:
    from oloproof.holdout_status import BUDGET_SCHEMA, budget_json, set_budget

    release = common.load(args)
    before, entry = set_budget(release, budget=args.budget, reason=args.reason)
    console = common.console()
    new = "none" if entry.budget is None else str(entry.budget)
    old = "none" if not before.budget_logged or before.logged_budget is None else str(before.logged_budget)
    _say(console, f"appended a budget entry to {before.shown} (line {entry.line}): budget {new} (logged before: "
         f"{old if before.budget_logged else 'nothing'}); {before.reads_used} read(s) used")
    raised = entry.budget is None or (before.budget_logged and (before.logged_budget is not None and entry.budget > before.logged_budget))
    if raised:
        _say(console, "note: raising a budget spends independence this holdout set may no longer have; a fresh set is the honest way on")
    declared = release.holdout.budget if release.holdout is not None else None
    if (declared is None and entry.budget is not None) or (declared is not None and entry.budget is not None and declared > entry.budget):
        _say(console, f"note: declare holdout.budget: {new} in release.yaml (reads are refused while it exceeds the logged budget)")
    elif declared is not None and (entry.budget is None or declared < entry.budget):
        _say(console, f"note: release.yaml declares holdout.budget: {declared}, which stays in force while it is lower; "
             f"declare holdout.budget: {new} there to use the logged budget" if entry.budget is not None else
             f"note: release.yaml declares holdout.budget: {declared}, which stays in force; remove it to read without a budget")
    if args.json:
        common.write_json(args.json, {"schema": BUDGET_SCHEMA, "log": before.shown, "budget": budget_json(entry)})
    return 0
