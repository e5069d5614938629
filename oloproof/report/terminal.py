"""The terminal rendering: a rich verdict table and the sentences a person acts on."""

from __future__ import annotations

import io
from typing import Literal

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from oloproof.inert import inert, inert_lines
from oloproof.report.classes import terminal_text as classes_text
from oloproof.report.slices import terminal_lines
from oloproof.result import GateResult, accepted_text, shared_caveats
from oloproof.stats.caveats import JUDGE_GRADED
from oloproof.store import short_digest as short_digest  # one shortening; renderers import it from here too
from oloproof.verdicts import Verdict

STYLE = {
    Verdict.PASS: "bold green",
    Verdict.FAIL: "bold red",
    Verdict.BLOCKED: "bold magenta",
    Verdict.MANUAL_REVIEW: "bold yellow",
    Verdict.INSUFFICIENT_EVIDENCE: "bold yellow",
}


STDERR_LINES = 20  # of a failed system's stderr tail (the run keeps its last 4 KiB)
Detail = Literal["brief", "normal", "full"]  # -q, default, -v


def build(result: GateResult, *, width: int | None = None, detail: Detail = "normal") -> Group:
    """The report for a terminal ``width`` columns wide (None: any). ``brief`` (``-q``) is the
    first line, what is not a pass and the verdict; ``full`` (``-v``) adds every pass's sentence,
    every rule's method and each label_match criterion's classification report."""
    release, testset, run = result.release, result.testset, result.run
    parts: list[object] = []
    header = Text()
    header.append("oloproof gate ", style="bold")
    header.append(f"{inert(release.path)}  system {inert(result.version)}")
    if result.version_differs:
        header.append(f"  (release.yaml declares {inert(release.system.version)})", style="yellow")
    header.append("\n")
    header.append(f"dev set {inert(testset.path)}: {len(testset)} cases, {short_digest(testset.digest)}")
    if run is not None:
        how = "reused" if result.run_reused else "new"
        header.append(f"\nrun {inert(run.run_id)} ({how}, {run.status}, {run.n_outputs}/{run.n_cases} outputs)")
        if run.imported_from is not None:
            header.append(f"  IMPORTED from {inert(run.imported_from)}: not made by system.command", style="yellow")
        if run.checker != result.checker.to_json():
            header.append("  [checker changed since this run]", style="yellow")
    for note in result.run_notes:
        header.append(f"\n  {inert(note)}", style="yellow")
    if run is not None and run.failure is not None and run.stderr_tail.strip():
        header.append(f"\n  the system failed ({inert(run.failure)}); the last lines of its stderr:", style="yellow")
        for tail_line in inert_lines(run.stderr_tail)[-STDERR_LINES:]:
            header.append(f"\n  | {tail_line}")
    if detail == "brief":
        return Group(Text(header.plain.split("\n", 1)[0], style="bold"), *_brief(result))
    parts.append(header)

    table = Table(show_lines=False, header_style="bold")
    for column in ("rule", "criterion", "estimate", "interval", "threshold", "verdict", "reasons"):
        table.add_column(column, overflow="fold")
    for rule in result.rules:
        interval = rule.interval
        estimate = f"{interval.estimate:.3f}" if interval else "-"
        bounds = (
            f"[{interval.low:.3f}, {interval.high:.3f}]" + ("*" if interval.approximate else "") if interval else "-"
        )
        if rule.kind == "min":
            threshold = f">= {rule.threshold:g}"
        elif rule.kind == "max":
            threshold = f"<= {rule.threshold:g}"
        elif rule.kind == "regression":
            threshold = f"drop <= {rule.threshold:g}"
        else:
            threshold = "-"
        reasons = ", ".join(code for code in rule.reasons if code not in ("interval_clears_threshold",))
        table.add_row(
            inert(rule.rule_id),
            inert(rule.criterion),
            estimate,
            bounds,
            threshold,
            Text(rule.verdict.value + (" (advisory)" if rule.advisory else ""), style=STYLE[rule.verdict]),
            reasons,
        )
    for report in result.checks:
        if report.verdict is not None:
            table.add_row(
                f"[{inert(report.name)}]",
                "-",
                "-",
                "-",
                "-",
                Text(report.verdict.value, style=STYLE[report.verdict]),
                ", ".join(report.reasons),
            )
    parts.append(table if width is None or fits(table, width) else plain_rows(table))
    marked = [rule.interval for rule in result.rules if rule.interval is not None and rule.interval.approximate]
    if any(not interval.method.startswith(JUDGE_GRADED) for interval in marked):
        parts.append(
            Text(
                "* approximate interval; decides only with allow_approximate_methods: true or the rule's "
                "approximate: allow",
                style="dim",
            )
        )
    for rule in result.rules:  # what is said beside a verdict (advisory, approximate: allow, accepted)
        for mark in rule.marks:
            parts.append(Text(f"{inert(rule.rule_id)}: {inert(mark)}"))
    if any(interval.method.startswith(JUDGE_GRADED) for interval in marked):
        parts.append(Text("* judge-graded paired interval: shown, never decides", style="dim"))
    for ids, text in shared_caveats(result.rules):
        parts.append(Text(f"caveat ({inert(', '.join(ids))}): {inert(text)}"))
    if sliced := terminal_lines(result):  # where:/per: rules' subsets and rows
        parts.append(Text("\n".join(sliced)))

    for report in result.checks:
        line = Text()
        line.append(f"{inert(report.title)}: ", style="bold")
        line.append(inert(report.status))
        if report.sentence:
            line.append(f"\n  {inert(report.sentence)}")
        for extra in report.lines:
            line.append(f"\n  {inert(extra)}")
        parts.append(line)

    if detail == "full" and (classes := classes_text(result)):  # label_match criteria: per-class report (-v)
        parts.append(Text(classes))
    metamorphic = metamorphic_lines(result)
    if metamorphic.plain:
        parts.append(metamorphic)

    notes = Text()
    for rule in result.rules:
        shown = detail == "full" or rule.verdict is not Verdict.PASS or rule.kind == "regression"
        if not shown:  # a pass's sentence repeats its row; a guard's names what regressed
            continue
        notes.append(f"{inert(rule.rule_id)}: ", style=STYLE[rule.verdict])
        notes.append(inert(rule.sentence) + "\n")
        if detail == "full" and rule.interval is not None:
            kind = "approximate" if rule.interval.approximate else "exact"
            notes.append(f"  method: {inert(rule.interval.method)} ({kind})\n", style="dim")
    for problem in result.problems:
        notes.append("problem: ", style="yellow")
        notes.append(inert(problem) + "\n")
    if notes.plain:
        parts.append(notes)
    if result.specific_limitations:
        parts.append(cannot_tell(result.specific_limitations))
    verdict = Text()
    verdict.append("verdict: ", style="bold")
    verdict.append(result.verdict.value, style=STYLE[result.verdict])
    verdict.append(f"  (exit {int(result.verdict.exit_code)}; confidence {result.release.policy.confidence:g})")
    parts.append(verdict)
    return Group(*parts)  # type: ignore[arg-type]


def fits(table: Table, width: int) -> bool:
    """Whether ``table`` fits ``width`` columns without splitting a word: each column as wide as its
    longest word (or header), plus rich's padding and borders (three per column and one)."""
    need = 1
    for column in table.columns:
        texts = [str(column.header), *(cell.plain if isinstance(cell, Text) else str(cell) for cell in column.cells)]
        need += 3 + max((len(word) for text in texts for word in text.split()), default=1)
    return need <= width


def plain_rows(table: Table) -> Text:
    """The table as one line per row, ``header: value`` pairs, for a terminal too narrow for it: a
    narrow terminal wraps these at spaces instead of cutting INSUFFICIENT_EVIDENCE into three."""
    columns = [(column.header, list(column.cells)) for column in table.columns]
    text = Text()
    for row in range(table.row_count):
        cells = [(str(header), cells[row]) for header, cells in columns]
        verdict = next((cell for header, cell in cells if header == "verdict"), "")
        text.append(verdict) if isinstance(verdict, Text) else text.append(str(verdict))
        for header, cell in cells:
            value = cell.plain if isinstance(cell, Text) else str(cell)
            if header == "verdict" or value in ("", "-"):
                continue
            text.append(f" {value}" if header == "rule" else f"; {header} {value}")
        text.append("\n")
    text.rstrip()
    return text


def _brief(result: GateResult) -> list[Text]:
    lines: list[Text] = []
    for rule in result.rules:
        if rule.verdict is Verdict.PASS:
            continue
        line = Text()
        line.append(f"{rule.verdict.value} ", style=STYLE[rule.verdict])
        line.append("(advisory) " if rule.advisory else "")
        line.append(f"{inert(rule.rule_id)}: {inert(rule.sentence)}")
        lines.append(line)
    for report in result.checks:
        if report.verdict is not None and report.verdict is not Verdict.PASS:
            line = Text()
            line.append(f"{report.verdict.value} ", style=STYLE[report.verdict])
            line.append(f"[{inert(report.name)}]: {inert(report.status)}")
            lines.append(line)
    passed = sum(rule.verdict is Verdict.PASS for rule in result.rules)
    verdict = Text()
    verdict.append("verdict: ", style="bold")
    verdict.append(result.verdict.value, style=STYLE[result.verdict])
    advisory = sum(rule.advisory for rule in result.rules)
    counted = f", {advisory} advisory" if advisory else ""
    verdict.append(f"  (exit {int(result.verdict.exit_code)}; {passed} of {len(result.rules)} rules pass{counted})")
    lines.append(verdict)
    return lines


def metamorphic_lines(result: GateResult) -> Text:
    """One line per metamorphic criterion: flip rate over changed cases, and its evidence status."""
    text = Text()
    for criterion, outcome in result.outcomes.items():
        info = outcome.details.get("metamorphic")
        if not isinstance(info, dict):
            continue
        rate = "-" if info["flip_rate"] is None else f"{info['flip_rate']:.3f}"
        text.append(f"  {inert(info['transform'])}", style="bold")
        text.append(
            f" ({info['kind']} on {inert(info['input_field'])}; {inert(criterion)}): flip rate {rate} "
            f"({info['flips']}/{info['answered']} changed cases"
            + (f", {info['missing']} missing" if info["missing"] else "")
            + f"; {info['not_applicable']} not applicable), "
            + (inert(accepted_text(info["accepted"])) if isinstance(info.get("accepted"), dict) else info["status"])
            + "\n"
        )
    if text.plain:
        head = Text("metamorphic: ", style="bold")
        head.append("flip rates over the cases each transform changed\n")
        text.rstrip()
        return Text.assemble(head, text)
    return text


def cannot_tell(items: tuple[str, ...]) -> Text:
    """The "what this cannot tell" lines, shown once, near the end of a terminal report."""
    text = Text("what this cannot tell:", style="bold")
    for item in items:
        text.append(f"\n  - {inert(item)}", style="dim")
    return text


def render(result: GateResult, *, width: int = 120, detail: Detail = "normal", soft_wrap: bool = False) -> str:
    """The report as plain text: tables laid out for ``width``; with ``soft_wrap`` a sentence stays
    one line (for a log whose viewer wraps it), as the CLI prints it when not on a terminal."""
    console = Console(
        width=width, record=True, file=io.StringIO(), color_system=None, markup=False, emoji=False, soft_wrap=soft_wrap
    )
    console.print(build(result, width=width, detail=detail))
    return console.export_text()


def print_result(result: GateResult, console: Console, *, detail: Detail = "normal") -> None:
    console.print(build(result, width=console.width, detail=detail))
