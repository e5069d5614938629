"""The interval of a rule on a judge criterion: people's grade, estimated from the judge on every
case and the human labels where they exist (``oloproof.stats.judged`` holds the statistics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet


def judged_rule_interval(
    outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet
) -> tuple[Interval | None, dict[str, object], list[str]]:
    """The interval for ``rule`` on a judge's ``outcome``, details for the report, and reason codes."""
    from oloproof.stats.bounded import order_seed  # lazy: start-up
    from oloproof.stats.judged import judged_interval  # lazy: start-up

    judged = outcome.judged
    if judged is None:
        return None, {"no_method": "method: ppi needs a judge criterion (one with human labels)"}, []
    if testset.has_groups:
        return (
            None,
            {"no_method": "no interval that carries a judge's errors is implemented for grouped cases"},
            ["approximate_method"],
        )
    interval, details = judged_interval(
        outcome.values,
        judged.human,
        judged.answered,
        judged.pass_threshold,
        mean_grade=rule.measure == "mean_grade",
        use_ppi=rule.method == "ppi",
        confidence=policy.confidence,
        seed=order_seed(testset.digest),
    )
    # The labels do not look like a random sample of the cases (or the judge treats labelled cases
    # differently): no estimator that assumes they are can be trusted.
    return interval, details, ["labels_not_representative"] if details.get("not_representative") else []
