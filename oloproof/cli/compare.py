"""``oloproof compare REF_A REF_B``: two runs of the dev set, paired case by case (B minus A)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from oloproof.cli import common

if TYPE_CHECKING:
    from oloproof.compare.runs import Comparison
    from oloproof.result import CheckReport


def fraction(option: str) -> Callable[[str], float]:
    """An argparse type for a difference in [0, 1] given as a fraction (0.05) or in points (5pt)."""

    def parse(text: str) -> float:
        raw = text.strip()
        scale = 100.0 if raw.endswith("pt") else 1.0
        try:
            value = float(raw.removesuffix("pt")) / scale
        except ValueError:
            raise argparse.ArgumentTypeError(f"{option} takes a fraction such as 0.05 (or 5pt), got {text!r}") from None
        if not 0.0 <= value <= 1.0:
            raise argparse.ArgumentTypeError(f"{option} must lie in [0, 1] (a fraction; 5pt = 0.05), got {text!r}")
        return value

    return parse


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "compare",
        help="pair two runs of the dev set case by case (B minus A)",
        description="Pair two stored runs of the dev set case by case: the discordant counts (b = only B right, "
        "c = only A right), the difference B − A with its exact (Fay–Lumbard) and approximate (Tango) interval, "
        "McNemar's exact p, the smallest difference the set resolves, and the dev cases that regressed and "
        "improved. Exit 0, or with --max-drop/--min-gain the verdict's exit code (0 PASS, 1 FAIL, "
        "4 INSUFFICIENT_EVIDENCE).",
    )
    common.add_config(parser)
    parser.add_argument("ref_a", metavar="REF_A", help="the older run (baseline): latest~N, version:NAME or a run id")
    parser.add_argument("ref_b", metavar="REF_B", help="the newer run")
    parser.add_argument("--criterion", help="the pass/fail criterion to compare (default: the only one, or the rules')")
    decide = parser.add_mutually_exclusive_group()
    decide.add_argument(
        "--max-drop", type=fraction("--max-drop"), metavar="D", help="decide: PASS when B is at most D below A"
    )
    decide.add_argument(
        "--min-gain", type=fraction("--min-gain"), metavar="G", help="decide: PASS when B is at least G above A"
    )
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.compare.runs import compare_runs  # lazy: start-up
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.leakage.check import gate_report  # lazy: start-up
    from oloproof.report.compare import lines  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    testset = load_dev_testset(release)
    comparison = compare_runs(
        release,
        testset,
        RunStore(release.base_dir),
        args.ref_a,
        args.ref_b,
        criterion=args.criterion,
        max_drop=args.max_drop,
        min_gain=args.min_gain,
    )
    comparison = _with_leakage(comparison, gate_report(release, testset, release.base_dir))
    if args.json:
        common.write_json(args.json, comparison.to_json())
    console = common.console()
    for line in lines(comparison):
        console.print(line)
    return comparison.exit_code


def _with_leakage(comparison: Comparison, leakage: CheckReport) -> Comparison:
    """A known leak invalidates a paired decision as it does a gate's rules (the test set is in the
    training data: neither run measures what it names). The comparison itself is still shown."""
    from dataclasses import replace  # lazy: start-up

    from oloproof.verdicts import Verdict  # lazy: start-up

    if not leakage.invalidates:
        return comparison
    said = f"leakage: {leakage.status}"
    notes = (*comparison.notes, said)
    decision = comparison.decision
    if decision is None:
        return replace(comparison, notes=notes)
    codes = tuple(dict.fromkeys((*decision.reasons, *leakage.invalidates)))
    sentence = f"{leakage.sentence or said} The difference is shown, not decided"
    return replace(
        comparison,
        notes=notes,
        decision=replace(decision, verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=codes, sentence=sentence),
    )
