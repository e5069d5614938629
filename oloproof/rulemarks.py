"""What a rule's result says beside its verdict (issue 18 §6-7): advisory, decided by the rule's own
``approximate: allow``, or resting on a declared transform a person accepted.

The gate marks every rule result once, before any renderer sees it; the gate's verdict
(``oloproof.result.gate_verdict``) then leaves advisory rules out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from oloproof.policy import uses_own_permission

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Rule
    from oloproof.result import RuleResult


def declared_rules(release: Release) -> dict[str, Rule]:
    """Every rule of the gate by id: the policy's and the seeds recipe's."""
    found = {rule.id: rule for rule in release.policy.rules}
    if release.seeds is not None:
        found.setdefault(release.seeds.rule.id, release.seeds.rule)
    return found


def acceptance(outcome: CriterionOutcome | None) -> dict[str, str] | None:
    """The acceptance of the declared transform an outcome's flip rate is measured under, if any."""
    info = outcome.details.get("metamorphic") if outcome is not None else None
    accepted = info.get("accepted") if isinstance(info, dict) else None
    return dict(accepted) if isinstance(accepted, dict) else None


def _own_acceptance(details: dict[str, object]) -> dict[str, str] | None:
    """A rule's own acceptance (a latency rule's self-reported figures), when its decision used it."""
    accepted = details.get("accepted")
    return {str(k): str(v) for k, v in accepted.items()} if isinstance(accepted, dict) else None


def mark_rules(
    results: tuple[RuleResult, ...], release: Release, outcomes: dict[str, CriterionOutcome]
) -> tuple[RuleResult, ...]:
    """``results`` with each rule's marks set from its declaration and its evidence."""
    rules = declared_rules(release)
    marked: list[RuleResult] = []
    for result in results:
        rule = rules.get(result.rule_id)
        if rule is None:
            marked.append(result)
            continue
        approximate = result.interval is not None and result.interval.approximate
        marked.append(
            replace(
                result,
                advisory=rule.advisory,
                approximate_permission=approximate and uses_own_permission(rule, release.policy),
                accepted=acceptance(outcomes.get(rule.criterion)) or _own_acceptance(result.details),
            )
        )
    return tuple(marked)
