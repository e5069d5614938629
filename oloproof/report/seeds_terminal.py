"""The seeds command's terminal rendering: the checkpoints, where each run came from, the
recipe's verdict, the cases that change with the seed, and what the verdict cannot tell."""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from oloproof.inert import inert, inert_lines
from oloproof.report.terminal import STYLE, cannot_tell, short_digest
from oloproof.run import describe_problems

if TYPE_CHECKING:
    from oloproof.seeds.check import SeedsResult

STDERR_LINES = 10  # of a failed checkpoint's stderr tail
MADE = {"new": "now", "reused": "reused"}  # how a checkpoint's run came to be (a ref names it otherwise)


def build(result: SeedsResult) -> Group:
    testset = result.testset
    parts: list[object] = [
        Text.assemble(
            "recipe ",
            (inert(result.spec.recipe), "bold"),
            f" on dev set {inert(testset.path)} ({len(testset)} cases, {short_digest(testset.digest)})",
        )
    ]
    table = Table(header_style="bold")
    for column in ("checkpoint", "run", "made", "version", "status", "pass rate", "missing"):
        table.add_column(column)
    usable = [cp for cp in result.checkpoints if cp.problem is None]
    for cp in result.checkpoints:
        rate = missing = "-"
        if result.recipe is not None and cp in usable:
            position = usable.index(cp)
            value = result.recipe.seed_pass_rates[position]
            rate = "-" if value is None else f"{value:.1%}"
            missing = str(result.recipe.seed_missing[position])
        table.add_row(
            inert(cp.name),
            inert(cp.run.run_id) if cp.run else "-",
            inert(MADE.get(cp.origin, f"named by {cp.ref}")),
            inert(cp.run.version) if cp.run else "-",
            inert(cp.run.status if cp.run else (cp.problem or "-")),
            rate,
            missing,
        )
    parts.append(table)
    details = Text()
    for cp in result.checkpoints:
        lines = list(cp.notes)
        if cp.run is not None and cp.origin == "new":
            lines += describe_problems(cp.run, limit=3)
            if cp.run.failure is not None and cp.run.stderr_tail.strip():
                lines.append("the last lines of its stderr:")
                lines += [f"| {line}" for line in inert_lines(cp.run.stderr_tail)[-STDERR_LINES:]]
        for line in lines:
            details.append(f"  {inert(cp.name)}: {inert(line)}\n", style="yellow")
    if details.plain:
        details.rstrip()
        parts.append(details)
    rule = result.rule
    verdict = Text()
    verdict.append(f"{inert(rule.rule_id)}: ", style="bold")
    verdict.append(rule.verdict.value, style=STYLE[rule.verdict])
    verdict.append(f"  {inert(rule.full_sentence)}")
    parts.append(verdict)
    if result.recipe is not None:
        ids = [case.id for case in testset.cases]
        unstable = [inert(ids[i]) for i in result.recipe.unstable_cases]
        shown = ", ".join(unstable[:10]) + (f", … (+{len(unstable) - 10})" if len(unstable) > 10 else "")
        parts.append(Text(f"{len(unstable)} case(s) change verdict with the seed{': ' + shown if unstable else ''}"))
    parts.append(cannot_tell(result.limitations))
    return Group(*parts)  # type: ignore[arg-type]


def render(result: SeedsResult, *, width: int = 140) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None, markup=False, emoji=False)
    console.print(build(result))
    return console.export_text()


def print_result(result: SeedsResult, console: Console) -> None:
    console.print(build(result))
