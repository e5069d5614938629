"""The scores a run is stored with: each criterion's estimate and interval on the run's outputs,
as ``oloproof run`` prints them and ``oloproof runs`` lists them.

They are computed once, when the run is recorded, with the evaluators and policy of that moment;
they are shown, never decided on: the gate evaluates the stored outputs again (a run's JSON can be
edited, and the evaluators may have changed since). A criterion that needs more than the run —
a judge's grades, a transform's copies — is listed with why it is not scored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from oloproof.decide import compute_interval
from oloproof.errors import OloproofError
from oloproof.evaluators.base import CriterionOutcome, EvalContext
from oloproof.measures.outputs import output_outcome
from oloproof.measures.spec import reads_outputs

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.policy import Rule
    from oloproof.testset import TestSet

NOT_HERE = {  # evaluator types whose criteria a run alone cannot score
    "judge": "a judge's grades: `oloproof gate` scores it",
    "metamorphic_relation": "the transformed copies: `oloproof gate` runs them",
}


def score_outputs(
    release: Release,
    testset: TestSet,
    outputs: dict[str, dict[str, Any]],
    *,
    wall_ms: Mapping[str, float] | None = None,
    batch_size: int = 0,
) -> tuple[dict[str, Any], ...]:
    """One entry per criterion a rule reads, in rule order: ``{criterion, estimate, low, high, level,
    method, approximate, n, missing}``, or ``{criterion, note}`` when it is not scored here. Never
    raises for what the outputs hold: the run is stored whatever its scores are. ``wall_ms`` and
    ``batch_size``: the run's wall times, read by a latency rule as the gate reads them."""
    rules: dict[str, Rule] = {}
    for rule in release.policy.rules:
        rules.setdefault(_name(rule), rule)
    criteria = release.criteria()
    ctx = EvalContext(testset=testset, outputs=outputs, base_dir=release.base_dir, policy=release.policy)
    found: list[dict[str, Any]] = []
    for criterion, rule in rules.items():
        evaluator = None if reads_outputs(rule) else criteria.get(criterion)
        if evaluator is None and not reads_outputs(rule):
            continue
        if evaluator is not None and evaluator.type in NOT_HERE:
            found.append({"criterion": criterion, "note": f"needs {NOT_HERE[evaluator.type]}"})
            continue
        try:
            # A built-in measure (auc, mae, rmse, a quantile) reads the outputs with its rule's keys.
            outcome: CriterionOutcome = (
                output_outcome(rule, ctx, wall_ms=wall_ms, batch_size=batch_size)
                if evaluator is None
                else evaluator.evaluate(ctx)
            )
            interval, details, _ = compute_interval(outcome, rule, release.policy, testset)
        except (OloproofError, ValueError, ArithmeticError) as exc:
            found.append({"criterion": criterion, "note": f"not scored: {exc}"})
            continue
        if interval is None:
            found.append({"criterion": criterion, "note": str(details.get("no_method", "no interval"))})
            continue
        found.append(
            {
                "criterion": criterion,
                "estimate": interval.estimate,
                "low": interval.low,
                "high": interval.high,
                "level": interval.level,
                "method": interval.method,
                "approximate": interval.approximate,
                "n": int(outcome.values.size),
                "missing": int(sum(1 for value in outcome.values if value != value)),  # NaN: no usable output
                **({"note": note} if isinstance(note := outcome.details.get("note"), str) else {}),
            }
        )
    return tuple(found)


def _name(rule: Rule) -> str:
    """The name a score is listed under: the criterion, and for a quantile which one (latency_ms p95)."""
    return rule.criterion if rule.quantile is None else f"{rule.criterion} p{rule.quantile * 100:g}"


def score_text(score: dict[str, Any], *, short: bool = False) -> str:
    """One score as a line: ``correct 0.850 [0.765, 0.914] (95%, clopper-pearson, exact; 100 cases)``;
    ``short``: ``correct 0.850 [0.765, 0.914]`` (``*`` marks an approximate interval)."""
    if "estimate" not in score:
        return f"{score.get('criterion')}: {score.get('note', '(unreadable score)')}"
    try:
        head = f"{score['criterion']} {score['estimate']:.3f} [{score['low']:.3f}, {score['high']:.3f}]"
        if short:
            return head + ("*" if score["approximate"] else "")
        kind = "approximate" if score["approximate"] else "exact"
        missing = f", {score['missing']} missing" if score.get("missing") else ""
        note = f" {score['note']}" if isinstance(score.get("note"), str) else ""
        return (
            f"{head} ({float(score['level']) * 100:g}%, {score['method']}, {kind}; {score['n']} cases{missing}){note}"
        )
    except (KeyError, TypeError, ValueError):  # an edited run.json: shown as unreadable, never a crash
        return f"{score.get('criterion', '?')}: (unreadable score)"
