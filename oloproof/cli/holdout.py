"""``oloproof holdout run|status|repair|budget``: read the reserved holdout set against its budget."""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.cli import common

if TYPE_CHECKING:
    from rich.console import Console


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "holdout",
        help="read the reserved holdout set (with a reason, against a budget), show its log",
        description="The holdout set is read only with a reason, against the budget in release.yaml, and every read "
        "is appended to a tamper-evident log (holdout.log). See docs/holdout.md.",
    )
    common.add_config(parser)  # `oloproof holdout -c FILE run …` and `oloproof holdout run -c FILE …` both work
    actions = parser.add_subparsers(dest="holdout_action", metavar="ACTION")
    actions.required = True

    run = actions.add_parser(
        "run",
        help="score the current system on the holdout and log the read",
        description="Score the system on the holdout set and append one entry to the reads log. Refused (BLOCKED, "
        "exit 3) without scoring any case when the budget is spent or the log fails its hash-chain check.",
    )
    _add_config(run)
    run.add_argument(
        "--reason", required=True, metavar="TEXT", help="why you are reading the holdout (required, logged)"
    )
    run.add_argument(
        "--outputs", metavar="FILE", help="score these JSONL outputs (made elsewhere) instead of running the system"
    )
    run.add_argument(
        "--command",
        metavar="CMD",
        help="score this command instead of system.command, as version NAME "
        "(e.g. the week-0 prompt, for a baseline re-measurement); needs --version",
    )
    run.add_argument(
        "--version",
        dest="run_version",
        metavar="NAME",
        help="system version of --outputs or --command (required with them)",
    )
    common.add_json(run)
    common.add_quiet(run)
    run.set_defaults(handler=handle_run)

    status = actions.add_parser(
        "status",
        help="show every read, the budget left, and whether the log verifies",
        description="Show the reads table and the budget; verify the log's hash chain (exit 3 when it fails). "
        "With no budget declared, suggest one from the set's size (STATISTICS.md §6).",
    )
    _add_config(status)
    status.add_argument(
        "--delta",
        type=_fraction("--delta"),
        metavar="FRACTION",
        help="smallest difference the set must settle, for the suggested budget (e.g. 0.095 = 9.5 points)",
    )
    status.add_argument(
        "--psi",
        type=_fraction("--psi"),
        default=0.12,
        metavar="FRACTION",
        help="expected discordance between compared versions (default %(default)s)",
    )
    status.add_argument(
        "--since", metavar="GITREF", help="also check that the log only grew since this git commit (e.g. origin/main)"
    )
    common.add_json(status)
    status.set_defaults(handler=handle_status)

    repair = actions.add_parser(
        "repair",
        help="acknowledge a broken log with a logged repair entry",
        description="Append a repair entry that acknowledges every problem of a log that fails its check, with who "
        "and why. The damaged lines are kept as they are; reads are allowed again afterwards.",
    )
    _add_config(repair)
    repair.add_argument(
        "--reason", required=True, metavar="TEXT", help="what happened and why the log may be trusted again (logged)"
    )
    repair.add_argument(
        "--reads-used", type=int, metavar="N", help="reads really made, when more were lost than the log shows"
    )
    common.add_json(repair)
    repair.set_defaults(handler=handle_repair)

    size = actions.add_parser(
        "size",
        help="how many reserved cases settle a paired difference of D",
        description="Size a reserved set against the smallest paired difference it must settle: the cases a "
        "comparison of two versions needs to detect a true difference D (two-sided, at the policy's confidence) "
        "with the given power. The discordance comes from --psi, else from this holdout's own reads, else 0.12. "
        "Reads no holdout case.",
    )
    _add_config(size)
    size.add_argument(
        "--delta",
        required=True,
        type=_fraction("--delta"),
        metavar="FRACTION",
        help="the smallest difference to settle (e.g. 0.033 = 3.3 points)",
    )
    size.add_argument("--power", type=_fraction("--power"), default=0.8, metavar="P", help="default %(default)s")
    size.add_argument(
        "--psi",
        type=_fraction("--psi"),
        metavar="FRACTION",
        help="expected discordance between the versions (default: observed on this holdout, else 0.12)",
    )
    common.add_json(size)
    size.set_defaults(handler=handle_size)

    budget = actions.add_parser(
        "budget",
        help="change the budget in force, with a logged reason",
        description="Append a budget entry to the reads log: the budget in force becomes N ('none': no budget). "
        "Raising a budget spends independence the holdout may no longer have; lowering it needs no entry "
        "(lower holdout.budget in release.yaml). release.yaml's holdout.budget must not exceed the logged one.",
    )
    _add_config(budget)
    budget.add_argument(
        "budget", type=_budget_value, metavar="N", help="reads the set may serve in all ('none': no budget)"
    )
    budget.add_argument("--reason", required=True, metavar="TEXT", help="why the budget changes (required, logged)")
    common.add_json(budget)
    budget.set_defaults(handler=handle_budget)


def _fraction(option: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            number = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{option} takes a fraction strictly between 0 and 1, e.g. 0.095; got {text!r}"
            ) from None
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
    parser.add_argument(
        "-c", "--config", default=argparse.SUPPRESS, metavar="FILE", help="release.yaml to read (default: release.yaml)"
    )


def _emit(console: Console, items: list[Any]) -> None:
    for item in items:
        if isinstance(item, str):
            _say(console, item)
        else:
            console.print(item)


def handle_run(args: argparse.Namespace) -> int:
    from oloproof.holdout.read import read_holdout  # lazy: start-up
    from oloproof.report.holdout import read_lines  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release, inputs=[args.outputs])
    console = common.console()
    from oloproof.vcs import local_identity  # lazy: start-up

    who, commit = local_identity(release.base_dir)

    def waiting() -> None:
        print("waiting for another holdout read to finish (the reads log is locked)…", file=sys.stderr, flush=True)

    with common.BatchProgress("scoring holdout", quiet=args.quiet) as progress:
        result = read_holdout(
            release,
            reason=args.reason,
            outputs=Path(args.outputs) if args.outputs else None,
            outputs_shown=args.outputs,
            command=args.command,
            version=args.run_version,
            on_wait=waiting,
            on_batch=progress,
            who=who,
            commit=commit,
        )
    _emit(console, list(read_lines(result)))
    if args.json:
        common.write_json(args.json, result.to_json())
    return result.exit_code


def handle_status(args: argparse.Namespace) -> int:
    from oloproof.holdout.status import holdout_status  # lazy: start-up
    from oloproof.report.holdout import status_items  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    status = holdout_status(release, delta=args.delta, psi=args.psi, since=args.since)
    _emit(common.console(), status_items(status))
    if args.json:
        common.write_json(args.json, status.to_json())
    return status.exit_code


def handle_repair(args: argparse.Namespace) -> int:
    from oloproof.holdout.status import REPAIR_SCHEMA, repair_json, repair_log  # lazy: start-up
    from oloproof.report.holdout import repair_lines  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    from oloproof.vcs import local_identity  # lazy: start-up

    who, commit = local_identity(release.base_dir)
    before, entry = repair_log(release, reason=args.reason, reads_used=args.reads_used, who=who, commit=commit)
    _emit(common.console(), list(repair_lines(before, entry)))
    if args.json:
        data = {
            "schema": REPAIR_SCHEMA,
            "log": before.shown,
            "repair": repair_json(entry),
            "acknowledged": [{"line": p.line, "message": p.message} for p in before.problems],
        }
        common.write_json(args.json, data)
    return 0


def handle_budget(args: argparse.Namespace) -> int:
    from oloproof.holdout.status import BUDGET_SCHEMA, budget_json, set_budget  # lazy: start-up
    from oloproof.report.holdout import budget_lines  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    from oloproof.vcs import local_identity  # lazy: start-up

    who, commit = local_identity(release.base_dir)
    before, entry = set_budget(release, budget=args.budget, reason=args.reason, who=who, commit=commit)
    _emit(common.console(), list(budget_lines(release, before, entry)))
    if args.json:
        common.write_json(args.json, {"schema": BUDGET_SCHEMA, "log": before.shown, "budget": budget_json(entry)})
    return 0


def handle_size(args: argparse.Namespace) -> int:
    from oloproof.holdout.size import holdout_size  # lazy: start-up
    from oloproof.report.holdout import size_lines  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    sizing = holdout_size(release, delta=args.delta, power=args.power, psi=args.psi)
    _emit(common.console(), list(size_lines(sizing)))
    if args.json:
        common.write_json(args.json, sizing.to_json())
    return 0
