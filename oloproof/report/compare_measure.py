"""``oloproof compare --criterion auc|mae`` as text for people: each run's measure on the dev set,
the difference B − A with the regression guard's paired interval, and the verdict if one was asked.
Refs, versions and keys come from files and are made inert."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.decide import interval_text
from oloproof.inert import inert

if TYPE_CHECKING:
    from oloproof.compare.measured import MeasuredComparison
    from oloproof.runstore import RunRecord


def _keys(comparison: MeasuredComparison) -> str:
    shown = ", ".join(f"{key} {inert(repr(value))}" for key, value in comparison.keys().items() if value is not None)
    return f"{shown}, from rule {inert(comparison.rule.id)}"


def _run_line(comparison: MeasuredComparison, label: str, ref: str, record: RunRecord) -> str:
    """One side; the ref in backquotes and never followed by a colon (no emoji shortcode once pasted)."""
    old = label == "A"
    estimate = comparison.old_estimate if old else comparison.new_estimate
    missing = comparison.old_missing if old else comparison.new_missing
    state = "" if record.status == "ok" else f", {record.status}"
    shown = inert(ref).replace("`", "'")
    value = "none" if estimate is None else f"{estimate:.3f}"
    lacking = f", {missing} case(s) without a usable output" if missing else ""
    return (
        f"  {label}  `{shown}` = run {inert(record.run_id)} (version {inert(record.version)}{state}), "
        f"dev {comparison.criterion} {value}{lacking}"
    )


def measure_lines(comparison: MeasuredComparison) -> list[str]:
    name = comparison.criterion
    out = [
        f"oloproof compare  criterion {name} ({_keys(comparison)}), dev set {inert(comparison.testset_path)}: "
        f"{comparison.n} cases, {comparison.testset_digest[:19]}…",
        _run_line(comparison, "A", comparison.old_ref, comparison.old),
        _run_line(comparison, "B", comparison.new_ref, comparison.new),
    ]
    interval = comparison.interval
    meaning = (
        "positive means B errs more: the error rose, a drop in quality"
        if comparison.lower_is_better
        else "negative means B ranks worse"
    )
    if interval is None:
        out.append(f"difference B − A on the dev set: no paired interval ({inert(comparison.why)})")
    else:
        out.append(f"difference B − A on the dev set: {interval.estimate:+.3f} ({meaning})")
        out.append(f"  {interval_text(interval)}, the regression guard's paired interval")
    out.extend(f"note: {inert(note)}" for note in comparison.notes)
    out.append(
        "cannot tell: how much of the difference holds beyond these cases; on a set that guided the changes it also "
        "measures fit to the set (`oloproof gap` separates the two with the holdout)"
    )
    decision = comparison.decision
    if decision is not None:
        out.append(f"verdict: {decision.verdict.value}  ({inert(decision.sentence)}; exit {comparison.exit_code})")
    return out
