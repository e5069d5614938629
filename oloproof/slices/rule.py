"""Deciding a rule with ``where:`` (a subset of cases) or ``per:`` (one verdict per slice).

Whatever measure decides a rule also decides it on a subset: the outcome is cut to the selected
cases through ``CriterionOutcome.case_ids`` and handed to the gate's own decision function, so
missing outputs, approximate methods, invalid evidence and "even a perfect result needs N cases"
mean on a slice exactly what they mean on the whole set.

``per:`` rows are decided by Holm's step-down (``fwer: holm``, the default) run in rounds: every
row not yet decided is tested at two-sided level 1 − α/r, r the number of such rows; rows whose
interval clears or misses the threshold are decided; the next round tests the others at the level
for the fewer rows left, until a round decides none. For a pass-rate criterion this is exactly
Holm's procedure on the exact one-sided binomial p-values of ``oloproof.stats.holm`` (a test says
so); for any other measure it is Holm on the p-values its intervals invert. Each row's interval
is shown at the level of the last round that tested it, so a row reads PASS iff its shown
interval clears the threshold. ``fwer: none`` tests every row once at the policy's level.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oloproof.measures.base import restrict as cut
from oloproof.result import RuleResult
from oloproof.slices.select import (
    MISSING,
    Slice,
    case_value,
    check_output_keys,
    describe,
    json_safe,
    matches,
    slices_of,
    unheld_value,
    why_none,
)
from oloproof.stats.interval import interval_json
from oloproof.verdicts import Verdict, worst

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.testset import TestSet

Decide = Callable[["Rule", "CriterionOutcome", "Policy", "TestSet"], RuleResult]
SHOWN_ROWS = 10  # rows written into the rule's sentence; the JSON report lists all


def restrict(outcome: CriterionOutcome, testset: TestSet, keep: set[str]) -> CriterionOutcome:
    """``outcome`` on the cases in ``keep`` only (in the outcome's order), every per-case array cut
    alike (``measures.base.restrict``: an AUC's labels with its scores)."""
    ids = outcome.case_ids if outcome.case_ids is not None else tuple(case.id for case in testset.cases)
    index = [i for i, case_id in enumerate(ids) if case_id in keep]
    return cut(outcome, index, [ids[i] for i in index])


def decide_sliced(
    rule: Rule,
    outcome: CriterionOutcome,
    policy: Policy,
    testset: TestSet,
    outputs: Mapping[str, Mapping[str, Any]],
    *,
    decide: Decide,
) -> RuleResult:
    """The rule's result on its ``where`` subset, per slice when it has ``per``; ``decide`` otherwise."""
    if not rule.where and rule.per is None:
        return decide(rule, outcome, policy, testset)
    check_output_keys(rule, outputs, testset.cases)
    domain = set(outcome.case_ids) if outcome.case_ids is not None else None
    pool = [case for case in testset.cases if domain is None or case.id in domain]
    selected = [case for case in pool if matches(case, rule.where, outputs)] if rule.where else pool
    subset: dict[str, Any] = {}
    prefix = ""
    if rule.where:
        text = describe(rule.where)
        subset = {
            "where": {key: json_safe(list(values)) for key, values in rule.where},
            "n": len(selected),
            "of": len(pool),
        }
        prefix = f"On {len(selected)} of {len(pool)} cases where {text}: "
        unanswered = _unanswered(rule, pool, outputs)
        if unanswered is not None:
            subset["unanswered"] = unanswered
        unheld = [
            (key, value)
            for key, values in rule.where
            if len(values) > 1
            and not key.startswith("output.")
            and (value := unheld_value(key, values, pool, outputs)) is not MISSING
        ]
        if unheld:  # the dev set is checked before the run (select.check_rule_keys); a holdout here
            key, value = unheld[0]
            return RuleResult.undecided(
                rule,
                Verdict.INSUFFICIENT_EVIDENCE,
                ("where_value_unmatched", *outcome.reasons),
                n=len(selected),
                sentence=f"{rule.criterion}: where: {text} lists a value no case of this set has "
                f"({why_none(pool, ((key, (value,)),), outputs)}), so the rule cannot say what it claims.",
                details={"subset": subset},
            )
        if not selected:
            return RuleResult.undecided(
                rule,
                Verdict.INSUFFICIENT_EVIDENCE,
                ("no_selected_cases", *outcome.reasons),
                n=0,
                sentence=f"{rule.criterion}: no case is selected by where: {text} "
                f"({why_none(pool, rule.where, outputs)}), so there is no evidence either way.",
                details={"subset": subset},
            )
    if rule.per is None:
        result = decide(rule, restrict(outcome, testset, {case.id for case in selected}), policy, testset)
        answered = _answered_note(subset)
        return replace(
            result,
            sentence=f"{prefix}{result.sentence}{answered}",
            details={**result.details, "subset": subset},
        )
    return _per_rows(rule, outcome, policy, testset, slices_of(selected, rule.per), decide, prefix, subset)


def _unanswered(rule: Rule, pool: list[Any], outputs: Mapping[str, Mapping[str, Any]]) -> int | None:
    """Cases matching the case keys of ``where`` that have no output holding its output keys."""
    output_keys = [key for key, _ in rule.where if key.startswith("output.")]
    if not output_keys:
        return None
    case_keys = tuple(item for item in rule.where if not item[0].startswith("output."))
    return sum(
        1
        for case in pool
        if matches(case, case_keys, outputs) and any(case_value(case, key, outputs) is MISSING for key in output_keys)
    )


def _answered_note(subset: dict[str, Any]) -> str:
    if "unanswered" not in subset:
        return ""
    count = subset["unanswered"]
    if not count:
        return " Every case had an output to select on."
    return (
        f" {count} case(s) without an output (or without the key selected on) are not selected: a system that does "
        "not answer shrinks this denominator."
    )


def _per_rows(
    rule: Rule,
    outcome: CriterionOutcome,
    policy: Policy,
    testset: TestSet,
    slices: list[Slice],
    decide: Decide,
    prefix: str,
    subset: dict[str, Any],
) -> RuleResult:
    alpha = 1.0 - policy.confidence
    holm = rule.fwer == "holm"
    results: dict[int, RuleResult] = {}
    rounds: dict[int, int] = {}
    remaining = list(range(len(slices)))
    round_no = 0
    while remaining:
        round_no += 1
        level = 1.0 - alpha / len(remaining) if holm else policy.confidence
        at_level = replace(policy, confidence=level)
        decided = []
        for index in remaining:
            results[index] = _row(rule, outcome, at_level, testset, slices[index], decide)
            rounds[index] = round_no
            if results[index].verdict in (Verdict.PASS, Verdict.FAIL):
                decided.append(index)
        if not holm or not decided:
            break
        remaining = [index for index in remaining if index not in decided]
    rows = [results[i] for i in range(len(slices))]
    verdict = worst([row.verdict for row in rows])
    at = min((i for i, row in enumerate(rows) if row.verdict is verdict), key=lambda i: _margin(rule, rows[i]))
    rep = rows[at]
    fwer = (
        f"Holm's step-down over the {len(rows)} rows (fwer: holm; each row's interval is at the level that decided it)"
        if holm
        else f"each of the {len(rows)} rows at the policy's {policy.confidence:.0%} level, with no family-wise "
        "correction (fwer: none): a row may PASS or FAIL by luck more often than the level says"
    )
    # Past SHOWN_ROWS the sentence keeps the worst rows (most severe verdict, then nearest the other
    # side), listed in row order: a failing slice is never the one cut off (18-D3).
    kept = sorted(
        sorted(range(len(rows)), key=lambda i: (-rows[i].verdict.severity, _margin(rule, rows[i])))[:SHOWN_ROWS]
    )
    listed = "; ".join(_row_text(slices[i], rows[i]) for i in kept)
    more = (
        f"; and {len(rows) - SHOWN_ROWS} more rows, none worse than these (the JSON report lists all)"
        if len(rows) > SHOWN_ROWS
        else ""
    )
    sentence = (
        f"{prefix}per {rule.per}, {fwer}. Worst row {rule.per} = {slices[at].label}: {rep.sentence} "
        f"Rows: {listed}{more}."
    )
    details = {
        **rep.details,
        "subset": subset,
        "per": rule.per,
        "fwer": rule.fwer,
        "rows": [_row_json(slices[i], row, rounds[i], rule) for i, row in enumerate(rows)],
    }
    return replace(rep, verdict=verdict, sentence=sentence, details=details)


def _margin(rule: Rule, row: RuleResult) -> float:
    """How far a row's deciding bound clears its threshold (negative: misses it); a row without an
    interval first. Among rows of the worst verdict, the one nearest to the other side is shown."""
    interval = row.interval
    if interval is None:
        return float("-inf")
    if rule.kind == "max":
        return rule.threshold - interval.high
    return interval.low - rule.threshold


def _row(
    rule: Rule, outcome: CriterionOutcome, policy: Policy, testset: TestSet, piece: Slice, decide: Decide
) -> RuleResult:
    row_outcome = restrict(outcome, testset, set(piece.case_ids))
    if not row_outcome.values.size:
        return RuleResult.undecided(
            rule,
            Verdict.INSUFFICIENT_EVIDENCE,
            ("no_selected_cases", *outcome.reasons),
            n=0,
            sentence=f"{rule.criterion}: this slice has no case in the evidence, so there is no evidence either way.",
        )
    return decide(rule, row_outcome, policy, testset)


def _row_text(piece: Slice, row: RuleResult) -> str:
    interval = row.interval
    if interval is None:
        return f"{piece.label} {row.verdict.value} (n={row.n})"
    return (
        f"{piece.label} {row.verdict.value} {interval.estimate:.3f} [{interval.low:.3f}, {interval.high:.3f}] "
        f"at {interval.level * 100:.4g}% (n={row.n})"
    )


def _row_json(piece: Slice, row: RuleResult, round_no: int, rule: Rule) -> dict[str, Any]:
    from oloproof.stats.holm import row_p_values  # lazy: start-up

    interval = row.interval
    p_values = None
    if (
        interval is not None
        and interval.method == "clopper-pearson"
        and row.passes is not None
        and rule.kind in ("min", "max")
    ):
        claim = row_p_values(
            int(row.passes),
            row.n,
            missing=row.missing,
            threshold=rule.threshold,
            kind="min" if rule.kind == "min" else "max",
        )
        p_values = {"pass": claim.pass_p, "fail": claim.fail_p}
    return {
        "value": None if piece.value is MISSING else json_safe(piece.value),
        "label": piece.label,
        "n": row.n,
        "passes": row.passes,
        "missing": row.missing,
        "estimate": interval.estimate if interval is not None else None,
        "interval": interval_json(interval),
        "level": interval.level if interval is not None else None,
        "round": round_no,
        "p_values": p_values,
        "verdict": row.verdict.value,
        "reasons": list(row.reasons),
        "sentence": row.sentence,
    }
