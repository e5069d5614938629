"""``oloproof compare REF_A REF_B``: two runs of the dev set, paired case by case (B minus A)."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from oloproof.cli import common
from oloproof.errors import UsageError

if TYPE_CHECKING:
    from oloproof.compare.measured import MeasuredComparison
    from oloproof.compare.runs import Comparison, Decision
    from oloproof.result import CheckReport

    Compared = TypeVar("Compared", Comparison, MeasuredComparison)


@dataclass(frozen=True, slots=True)
class Amount:
    """A --max-drop/--min-gain as typed: its value (``5pt`` is 0.05) and whether it was in points.
    Its range is checked once the criterion is known: [0, 1] for a rate or an AUC, the field's units
    (any number >= 0) for an error (``check_amount``)."""

    option: str
    text: str
    value: float
    points: bool


def fraction(option: str) -> Callable[[str], Amount]:
    """An argparse type for a difference given as a number (0.05) or in points (5pt)."""

    def parse(text: str) -> Amount:
        raw = text.strip()
        scale = 100.0 if raw.endswith("pt") else 1.0
        try:
            value = float(raw.removesuffix("pt")) / scale
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} takes a fraction such as 0.05 (or 5pt), got {text!r}") from None
        return Amount(option, text, value, scale != 1.0)

    return parse


def check_amount(amount: Amount | None, *, error: bool) -> float | None:
    """The amount's value, in [0, 1] (a fraction) or, for an error measure (``error``), any finite
    number >= 0 in the field's units; a usage error otherwise."""
    if amount is None:
        return None
    option, text, value = amount.option, amount.text, amount.value
    if not error:
        if not 0.0 <= value <= 1.0:
            raise UsageError(f"{option} must lie in [0, 1] (a fraction; 5pt = 0.05), got {text!r}")
        return value
    if amount.points:
        raise UsageError(f"{option} for an error is in the field's units (such as 0.5), not in points; got {text!r}")
    if not (math.isfinite(value) and value >= 0.0):
        raise UsageError(f"{option} for an error is a number >= 0 in the field's units, got {text!r}")
    return value


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "compare",
        help="pair two runs of the dev set case by case (B minus A)",
        description="Pair two stored runs of the dev set case by case: the discordant counts (b = only B right, "
        "c = only A right), the difference B − A with its exact (Fay–Lumbard) and approximate (Tango) interval, "
        "McNemar's exact p, the smallest difference the set resolves, and the dev cases that regressed and "
        "improved. With --criterion auc or mae (a built-in measure a rule of release.yaml reads), each run's "
        "measure and B − A with the regression guard's paired interval. Exit 0, or with --max-drop/--min-gain "
        "the verdict's exit code (0 PASS, 1 FAIL, 4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW).",
    )
    common.add_config(parser)
    parser.add_argument("ref_a", metavar="REF_A", help="the older run (baseline): latest~N, version:NAME or a run id")
    parser.add_argument("ref_b", metavar="REF_B", help="the newer run")
    parser.add_argument(
        "--criterion",
        help="the pass/fail criterion to compare (default: the only one, or the rules'), or auc or mae "
        "(read with the keys of the rule on it)",
    )
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument(
        "--max-drop",
        type=fraction("--max-drop"),
        metavar="D",
        help="decide: PASS when B is at most D below A (for mae: B's error at most D above A's, in the field's units)",
    )
    decide.add_argument(
        "--min-gain",
        type=fraction("--min-gain"),
        metavar="G",
        help="decide: PASS when B is at least G above A (for mae: B's error at least G below A's)",
    )
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.compare.measured import compare_measure, names_a_measure  # lazy: start-up
    from oloproof.compare.runs import compare_runs  # lazy: start-up
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.leakage.check import gate_report  # lazy: start-up
    from oloproof.measures.spec import ERRORS  # lazy: start-up
    from oloproof.report.compare import lines  # lazy: start-up
    from oloproof.report.compare_measure import measure_lines  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release = common.load(args)
    measure = names_a_measure(release, args.criterion)
    error = measure and args.criterion in ERRORS
    max_drop, min_gain = (check_amount(amount, error=error) for amount in (args.max_drop, args.min_gain))
    common.check_outputs(args.json, release=release)
    testset = load_dev_testset(release)
    store = RunStore(release.base_dir)
    if measure:
        measured = compare_measure(
            release,
            testset,
            store,
            args.ref_a,
            args.ref_b,
            criterion=args.criterion,
            max_drop=max_drop,
            min_gain=min_gain,
        )
        return _show(args, _with_leakage(measured, gate_report(release, testset, release.base_dir)), measure_lines)
    comparison = compare_runs(
        release,
        testset,
        store,
        args.ref_a,
        args.ref_b,
        criterion=args.criterion,
        max_drop=max_drop,
        min_gain=min_gain,
    )
    return _show(args, _with_leakage(comparison, gate_report(release, testset, release.base_dir)), lines)


def _show(args: argparse.Namespace, comparison: Compared, render: Callable[[Compared], list[str]]) -> int:
    if args.json:
        common.write_json(args.json, comparison.to_json())
    console = common.console()
    for line in render(comparison):
        console.print(line)
    return comparison.exit_code


def _with_leakage(comparison: Compared, leakage: CheckReport) -> Compared:
    """A known leak invalidates a paired decision as it does a gate's rules (the test set is in the
    training data: neither run measures what it names). The comparison itself is still shown."""
    from dataclasses import replace  # lazy: start-up

    if not leakage.invalidates:
        return comparison
    notes, decision = _leaked(comparison.notes, comparison.decision, leakage)
    return replace(comparison, notes=notes, decision=decision)


def _leaked(
    notes: tuple[str, ...], decision: Decision | None, leakage: CheckReport
) -> tuple[tuple[str, ...], Decision | None]:
    from dataclasses import replace  # lazy: start-up

    from oloproof.verdicts import Verdict  # lazy: start-up

    said = f"leakage: {leakage.status}"
    if decision is None:
        return (*notes, said), None
    codes = tuple(dict.fromkeys((*decision.reasons, *leakage.invalidates)))
    sentence = f"{leakage.sentence or said} The difference is shown, not decided"
    return (*notes, said), replace(decision, verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=codes, sentence=sentence)
