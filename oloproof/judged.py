"""The interval of a rule on a judge criterion: people's grade, estimated from the judge on every
case and the human labels where they exist (``oloproof.stats.judged`` holds the statistics)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome, JudgedEvidence
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
        known=None if judged.stale is None else judged.answered & ~judged.stale,
    )
    _binding(details, judged)
    # The labels do not look like a random sample of the cases (or the judge treats labelled cases
    # differently): no estimator that assumes they are can be trusted.
    return interval, details, ["labels_not_representative"] if details.get("not_representative") else []


def _binding(details: dict[str, object], judged: JudgedEvidence) -> None:
    """Say in the rule's details and sentence which labels graded other outputs (``stale``) and
    which were only assumed to grade this run's (unbound, under ``judges.unbound_labels: allow``)."""
    stale = int(judged.stale.sum()) if judged.stale is not None else 0
    details.update(stale_labels=stale, labels_without_output=judged.no_output, unbound_labels_assumed=judged.unbound)
    file = judged.labels_file
    said: list[str] = []
    if stale:
        details["count"] = f"{details['count']}, {stale} of them stale"
        said.append(
            f"does not use {stale} label(s) in {file} that graded another output than this run's for their case "
            "(stale): those cases count as people's failures for the lower bound and passes for the upper; label "
            "this version's outputs of them (output_sha256)"
        )
        details["advice"] = (
            f"{stale} labelled case(s) have labels of other outputs only: label this version's outputs of them to "
            "settle it"
        )
    if judged.no_output:
        said.append(f"does not use the labels of {judged.no_output} case(s) this run did not answer")
    if judged.unbound:
        said.append(
            f"takes {judged.unbound} label(s) in {file} that do not say which output they graded as grades of this "
            "run's outputs (ASSUMED: policy.judges.unbound_labels: allow)"
        )
    if said and "assumption" in details:
        details["assumption"] = "; it ".join([*said, str(details["assumption"])])
