"""The subset and the per-slice rows of ``where:``/``per:`` rules, for the terminal and Markdown
reports (the JSON report carries them in each rule's ``details``; JUnit in its sentence)."""

from __future__ import annotations

from typing import Any

from oloproof.inert import inert
from oloproof.result import GateResult, RuleResult

MAX_ROWS_SHOWN = 20  # per rule, in the terminal and Markdown; the JSON report lists all


def subset_text(rule: RuleResult) -> str:
    """``on 47 of 300 cases where expected.species = "Chinstrap"`` (with unanswered cases said), or ""."""
    subset = rule.details.get("subset")
    if not isinstance(subset, dict) or "where" not in subset:
        return ""
    where = " and ".join(
        f"{key} = {_value(values[0])}" if len(values) == 1 else f"{key} in ({', '.join(_value(v) for v in values)})"
        for key, values in subset["where"].items()
    )
    text = f"on {subset['n']} of {subset['of']} cases where {where}"
    if "unanswered" in subset:
        text += f" ({subset['unanswered']} case(s) without an output not selected)"
    return inert(text)


def _value(value: Any) -> str:
    from oloproof.slices.select import shown  # lazy: start-up

    return shown(value)


def worst_rows(rows: list[Any], limit: int) -> list[Any]:
    """At most ``limit`` of a ``per`` rule's JSON rows, the most severe verdicts kept, in row order:
    a failing slice is never the one cut off (18-D3)."""
    from oloproof.verdicts import Verdict  # lazy: start-up

    def severity(row: Any) -> int:
        try:
            return Verdict(row.get("verdict")).severity
        except ValueError:
            return 99  # an unknown verdict is shown, never hidden

    kept = sorted(sorted(range(len(rows)), key=lambda i: -severity(rows[i]))[:limit])
    return [rows[i] for i in kept]


def row_lines(rule: RuleResult) -> list[str]:
    """One compact line per ``per`` row: value, verdict, estimate, interval at its level, n."""
    rows = rule.details.get("rows")
    if not isinstance(rows, list):
        return []
    lines = []
    for row in worst_rows(rows, MAX_ROWS_SHOWN):
        interval = row.get("interval")
        shown = (
            f"{interval['estimate']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}] "
            f"at {interval['level'] * 100:.4g}%" + ("*" if interval["approximate"] else "")
            if interval
            else "-"
        )
        lines.append(
            inert(f"{rule.details.get('per')} = {row['label']}: {row['verdict']} {shown}, n={row['n']}")
            + (f", {row['missing']} missing" if row.get("missing") else "")
        )
    if len(rows) > MAX_ROWS_SHOWN:
        lines.append(f"… and {len(rows) - MAX_ROWS_SHOWN} more rows, none worse than these (the JSON report lists all)")
    return lines


def fwer_text(rule: RuleResult) -> str:
    fwer = rule.details.get("fwer")
    if fwer == "holm":
        return "Holm's step-down over the rows (fwer: holm)"
    if fwer == "none":
        return "no family-wise correction (fwer: none)"
    return ""


def terminal_lines(result: GateResult) -> list[str]:
    """Lines under the verdict table: each sliced rule's subset and rows."""
    out: list[str] = []
    for rule in result.rules:
        subset, rows = subset_text(rule), row_lines(rule)
        if not subset and not rows:
            continue
        head = f"{inert(rule.rule_id)}: " + "; ".join(part for part in (subset, fwer_text(rule)) if part)
        out.append(head)
        out.extend(f"  {line}" for line in rows)
    return out


def markdown_block(result: GateResult, esc: Any, code: Any) -> str:
    """A "Subsets and slices" section: one bullet per sliced rule, what it selects and how its rows are
    corrected (the rows themselves follow the rule in the rules table: ``oloproof.report.md_rules``)."""
    text = ""
    for rule in result.rules:
        head = "; ".join(part for part in (subset_text(rule), fwer_text(rule)) if part)
        if head:
            text += f"- {code(rule.rule_id)} **{rule.verdict.value}**: {esc(head)}\n"
    return f"### Subsets and slices\n\n{text}\n" if text else ""
