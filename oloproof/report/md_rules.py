"""The rules of the Markdown summary: the *why* under the verdict, and a table that fits GitHub's
column at 1000 px (rule, verdict, estimate, interval on one line, a picture of the interval against
its threshold, the threshold; criterion and method on the rule's second line, reason codes in the
*why*). A ``per:`` rule's rows follow it in the table.

The picture (``picture``) is 19 monospace characters: the interval ``├──┤`` with its estimate ``■``,
and the threshold ``¦``, on a scale of its own: from min(lower bound, threshold) to max(upper bound,
threshold) over 17 characters, one blank either side.
So the gap between a bound and ``¦`` reads in widths of the interval; the distance itself is printed
under it (``clears by 0.051``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from oloproof.report.md_text import ICON, NBSP, Block, code, esc, prose, threshold_text, verdict_badge
from oloproof.report.slices import worst_rows
from oloproof.result import RuleResult
from oloproof.verdicts import Verdict

WIDTH = 19  # characters of a picture; the span is drawn over WIDTH - 2, one blank either side
MAX_ROWS = 20  # of a per: rule, in the table (the JSON report lists all)
_HIDDEN_REASONS = frozenset({"interval_clears_threshold", "interval_misses_threshold", "interval_straddles_threshold"})


def interval_text(low: float, high: float, approximate: bool = False) -> str:
    """``[0.765, 0.914]`` in a code span that does not wrap (``≈`` after an approximate one)."""
    return f"<code>[{low:.3f},{NBSP}{high:.3f}]</code>" + (f"{NBSP}≈" if approximate else "")


def bound_threshold(rule: RuleResult) -> tuple[float, str] | None:
    """The threshold on the interval's own scale and the side that passes ("min": above, "max": below);
    a regression guard's interval is of the paired difference, which passes above -max_drop."""
    if rule.threshold is None:
        return None
    if rule.kind == "min":
        return rule.threshold, "min"
    if rule.kind == "max":
        return rule.threshold, "max"
    if rule.kind == "regression":
        return -rule.threshold, "min"
    return None


def picture(low: float, high: float, estimate: float, threshold: float) -> str:
    """``├──■──┤ ¦`` scaled to the span of the interval and the threshold (module docstring)."""
    lo, hi = min(low, threshold), max(high, threshold)
    span = hi - lo
    last = WIDTH - 2

    def col(x: float) -> int:
        return 1 + round((x - lo) / span * (last - 1)) if span > 0 else WIDTH // 2

    cells = [NBSP] * WIDTH
    a, b, e = col(low), col(high), col(estimate)
    for i in range(a, b + 1):
        cells[i] = "─"
    if a == b:
        cells[a] = "■"
    else:
        cells[a], cells[b] = "├", "┤"
        if a < e < b:
            cells[e] = "■"
    t = col(threshold)
    if threshold < low:
        t = min(t, a - 1)  # never drawn over the bound it clears or misses
    elif threshold > high:
        t = max(t, b + 1)
    elif b - a >= 2:
        t = min(max(t, a + 1), b - 1)
    else:  # a straddled threshold on an interval one or two characters wide: beside it, not over a bound
        t = a - 1 if threshold - low <= high - threshold else b + 1
    cells[t] = "¦"
    return "".join(cells)


def margin_text(low: float, high: float, threshold: float, side: str) -> str:
    near, far = (low, high) if side == "min" else (high, low)
    clears = near >= threshold if side == "min" else near <= threshold
    misses = far < threshold if side == "min" else far > threshold
    if clears:
        return f"clears by {abs(near - threshold):.3f}"
    if misses:
        return f"misses by {abs(far - threshold):.3f}"
    return "straddles"


def _picture_cell(low: float, high: float, estimate: float, rule: RuleResult) -> str:
    found = bound_threshold(rule)
    if found is None or not all(math.isfinite(x) for x in (low, high, estimate, found[0])):
        return "—"
    threshold, side = found
    margin = margin_text(low, high, threshold, side)
    return f"<code>{picture(low, high, estimate, threshold)}</code><br><sub>{margin}</sub>"


def _rule_row(rule: RuleResult) -> str:
    interval = rule.interval
    method = f" · {esc(interval.method)}" if interval is not None else ""
    name = f"{code(rule.rule_id)}<br><sub>{code(rule.criterion)}{method}</sub>"
    verdict = verdict_badge(rule.verdict) + ("<br><sub>advisory</sub>" if rule.advisory else "")
    if interval is None:
        cells = ["—", "—", "—"]
    else:
        cells = [
            f"{interval.estimate:.3f}",
            interval_text(interval.low, interval.high, interval.approximate),
            _picture_cell(interval.low, interval.high, interval.estimate, rule),
        ]
    return f"| {name} | {verdict} | {' | '.join(cells)} | {threshold_text(rule)} |\n"


def _per_rows(rule: RuleResult) -> list[str]:
    rows = rule.details.get("rows")
    if not isinstance(rows, list):
        return []
    out = []
    for row in worst_rows(rows, MAX_ROWS):
        interval: dict[str, Any] | None = row.get("interval")
        missing = f", {row['missing']} missing" if row.get("missing") else ""
        try:
            badge = verdict_badge(Verdict(row["verdict"]))
        except ValueError:
            badge = esc(row["verdict"])
        if interval:
            level = f" · {interval['level'] * 100:.4g}%"
            cells = [
                f"{interval['estimate']:.3f}",
                interval_text(interval["low"], interval["high"], bool(interval["approximate"])),
                _picture_cell(interval["low"], interval["high"], interval["estimate"], rule),
            ]
        else:
            level, cells = "", ["—", "—", "—"]
        name = f"↳{NBSP}{code(row['label'])}<br><sub>n={row['n']}{missing}{level}</sub>"
        out.append(f"| {name} | {badge} | {' | '.join(cells)} | {threshold_text(rule)} |\n")
    if len(rows) > MAX_ROWS:
        out.append(
            f"| ↳ … {len(rows) - MAX_ROWS} more rows, none worse than these (the JSON report lists all) | | | | | |\n"
        )
    return out


def rules_block(result: Any, *, severe_first: bool) -> Block:
    rules: Sequence[RuleResult] = result.rules
    if severe_first:
        rules = sorted(rules, key=lambda rule: -rule.verdict.severity)
    level = f"{result.release.policy.confidence:.0%}"
    head = (
        "### Rules\n\n"
        f"| Rule | Verdict | Estimate | {level} interval | Against the threshold | Threshold |\n"
        "|---|---|--:|---|---|---|\n"
    )
    rows = []
    for rule in rules:
        rows.append(_rule_row(rule))
        rows.extend(_per_rows(rule))
    if not rows:
        rows.append("| — | — | — | — | — | — |\n")
    return Block(head=head, rows=rows, name="rules")


def _reasons(codes: Sequence[str]) -> str:
    shown = [code(reason) for reason in codes if reason not in _HIDDEN_REASONS]
    return f" <sub>{' '.join(shown)}</sub>" if shown else ""


def _closest(rules: Sequence[RuleResult]) -> str:
    best: tuple[float, RuleResult] | None = None
    for rule in rules:
        found, interval = bound_threshold(rule), rule.interval
        if found is None or interval is None:
            continue
        threshold, side = found
        margin = interval.low - threshold if side == "min" else threshold - interval.high
        if best is None or margin < best[0]:
            best = (margin, rule)
    if best is None:
        return ""
    return f" The closest, {code(best[1].rule_id)}, clears by {best[0]:.3f}."


def why_block(result: Any) -> Block:
    """The verdict's reasons, first under the heading: each sentence once (rules that share one,
    as a blocked gate's do, are named together), advisory rules after, then what is said beside a
    verdict (advisory, approximate: allow, an accepted transform)."""
    ordered = sorted(result.rules, key=lambda rule: (rule.advisory, -rule.verdict.severity))
    groups: dict[tuple[bool, Verdict, str], list[RuleResult]] = {}
    for rule in ordered:
        if rule.verdict is not Verdict.PASS:
            groups.setdefault((rule.advisory, rule.verdict, rule.sentence), []).append(rule)
    rows = []
    for (advisory, verdict, sentence), members in groups.items():
        ids = ", ".join(code(rule.rule_id) for rule in members)
        label = f"{verdict.value}, advisory" if advisory else verdict.value
        reasons = list(dict.fromkeys(reason for rule in members for reason in rule.reasons))
        rows.append(f"- {ICON[verdict]} {ids} **{label}**: {prose(sentence)}{_reasons(reasons)}\n")
    rows += [f"- {code(rule.rule_id)}: {prose(mark)}\n" for rule in result.rules for mark in rule.marks]
    deciding = [rule for rule in result.rules if not rule.advisory]
    if not result.rules:
        lead = "no rules were decided."
    elif all(rule.verdict is Verdict.PASS for rule in deciding):
        which = "every deciding rule's" if len(deciding) < len(result.rules) else "every rule's"
        lead = f"{which} interval clears its threshold.{_closest(deciding)}"
    else:
        failing = sum(1 for rule in deciding if rule.verdict is not Verdict.PASS)
        what = "were not decided" if result.verdict is Verdict.BLOCKED else "did not pass"
        lead = f"{failing} of {len(deciding)} deciding rule{'s' if len(deciding) != 1 else ''} {what}."
    return Block(head=f"**Why:** {lead}\n\n", rows=rows, name="reasons")
