"""The terminal rendering: a rich verdict table and the sentences a person acts on."""

from __future__ import annotations

import io

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from oloproof.inert import inert, inert_lines
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


def build(result: GateResult) -> Group:
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
    parts.append(table)
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

    for report in result.checks:
        line = Text()
        line.append(f"{inert(report.title)}: ", style="bold")
        line.append(inert(report.status))
        if report.sentence:
            line.append(f"\n  {inert(report.sentence)}")
        for extra in report.lines:
            line.append(f"\n  {inert(extra)}")
        parts.append(line)

    metamorphic = metamorphic_lines(result)
    if metamorphic.plain:
        parts.append(metamorphic)

    notes = Text()
    for rule in result.rules:
        if rule.verdict is Verdict.PASS and rule.kind != "regression":  # a guard's sentence names what regressed
            continue
        notes.append(f"{inert(rule.rule_id)}: ", style=STYLE[rule.verdict])
        notes.append(inert(rule.sentence) + "\n")
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


def render(result: GateResult, *, width: int = 120) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None, markup=False, emoji=False)
    console.print(build(result))
    return console.export_text()


def print_result(result: GateResult, console: Console) -> None:
    console.print(build(result))
