"""Deciding one rule from an interval — never from the point estimate.

A ``min`` rule PASSes iff the lower bound is at least ``min`` and FAILs iff the upper bound
is below it; a ``max`` rule mirrors that. Anything else is INSUFFICIENT_EVIDENCE. An
approximate interval decides only when the policy allows approximate methods (otherwise
MANUAL_REVIEW), and evidence marked invalid (an untrusted judge, leaked cases) never
decides at all.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from oloproof.verdicts import RuleResult, Verdict

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

# Reasons that make the evidence invalid: the rule cannot PASS or FAIL on it.
INVALIDATING = ("leaked_cases", "judge_untrusted")

MIN_CLUSTERS = 30


def fmt(value: float) -> str:
    return f"{value:.3f}"


def interval_text(interval: Interval) -> str:
    kind = "approximate" if interval.approximate else "exact"
    return f"{interval.level:.0%} interval [{fmt(interval.low)}, {fmt(interval.high)}] ({interval.method}, {kind})"


def compute_interval(
    outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet
) -> tuple[Interval | None, dict[str, object], list[str]]:
    """The interval for ``rule`` on ``outcome``, extra details, and method reason codes."""
    import numpy as np

    from oloproof.stats import binomial, bounded, clustered

    values = outcome.values
    missing_mask = np.isnan(values)
    missing = int(missing_mask.sum())
    n = int(values.size)
    confidence = policy.confidence
    details: dict[str, object] = {}
    reasons: list[str] = []
    if testset.has_groups:
        if outcome.kind != "binary":
            details["no_method"] = "no interval is implemented for scores on grouped cases"
            reasons.append("approximate_method")
            return None, details, reasons
        groups = [case.group if case.group is not None else f"\0{case.id}" for case in testset.cases]
        result = clustered.clustered_proportion(values, groups, confidence=confidence)
        details.update(n_clusters=result.n_clusters, n_eff=result.n_eff)
        if result.few_clusters:
            reasons.append("few_clusters")
        return result.interval, details, reasons
    if outcome.kind == "binary":
        passes = int(np.nansum(values))
        return binomial.clopper_pearson(passes, n, confidence=confidence, missing=missing), details, reasons
    scores = values[~missing_mask]
    if rule.method == "exact":
        return bounded.bounded_mean_betting(scores, confidence=confidence, missing=missing), details, reasons
    if rule.method == "t":
        return bounded.bounded_mean_t(scores, confidence=confidence, missing=missing), details, reasons
    rng = np.random.default_rng(policy.seed)
    details["seed"] = policy.seed
    return bounded.bounded_mean_bca(scores, confidence=confidence, missing=missing, rng=rng), details, reasons


def decide_rule(rule: Rule, outcome: CriterionOutcome, policy: Policy, testset: TestSet) -> RuleResult:
    import numpy as np

    from oloproof.stats.resolution import detectable_distance

    values = outcome.values
    n = int(values.size)
    missing = int(np.isnan(values).sum())
    passes = float(np.nansum(values))
    interval, details, method_reasons = compute_interval(outcome, rule, policy, testset)
    reasons: list[str] = list(method_reasons)
    if missing:
        reasons.append("missing_outputs")
    for code in outcome.reasons:
        if code not in reasons:
            reasons.append(code)
    side = "min" if rule.kind == "min" else "max"
    effective_n = int(details.get("n_eff", n)) if isinstance(details.get("n_eff", n), (int, float)) else n
    resolution = (
        detectable_distance(max(effective_n, 1), rule.threshold, side=side, confidence=policy.confidence)
        if effective_n >= 1 else None
    )
    if interval is None:
        verdict = Verdict.MANUAL_REVIEW
        sentence = f"{rule.criterion}: {details['no_method']}; review by hand."
    else:
        verdict, sentence = _verdict(rule, interval, policy, reasons, n=n, missing=missing, passes=passes,
                                     kind=outcome.kind, resolution=resolution)
    if "leaked_cases" in outcome.reasons:
        sentence += " Leaked cases invalidate this evidence; remove them from the test set or retrain without them."
    return RuleResult(
        rule_id=rule.id, criterion=rule.criterion, kind=rule.kind, threshold=rule.threshold, verdict=verdict,
        reasons=tuple(reasons), sentence=sentence, interval=interval, n=n, passes=passes, missing=missing,
        resolution=resolution, source=rule.source, line=rule.line, details=dict(details),
    )


def _verdict(
    rule: Rule, interval: Interval, policy: Policy, reasons: list[str], *, n: int, missing: int, passes: float,
    kind: str, resolution: float | None,
) -> tuple[Verdict, str]:
    from oloproof.stats.binomial import min_cases_to_pass, min_cases_to_pass_max

    answered = n - missing
    count = f"{int(passes)}/{answered}" if kind == "binary" else f"mean of {answered} scores"
    head = f"{rule.criterion} is {fmt(interval.estimate)} ({count}"
    head += f", {missing} missing)" if missing else ")"
    head += f", {interval_text(interval)}"
    threshold = rule.threshold
    if rule.kind == "min":
        clears, misses = interval.low >= threshold, interval.high < threshold
        bound_word, other_word = "lower", "upper"
        clear_value, miss_value = interval.low, interval.high
        relation = "min"
    else:
        clears, misses = interval.high <= threshold, interval.low > threshold
        bound_word, other_word = "upper", "lower"
        clear_value, miss_value = interval.high, interval.low
        relation = "max"
    invalid = [code for code in reasons if code in INVALIDATING]
    if invalid:
        return Verdict.INSUFFICIENT_EVIDENCE, f"{head}; the evidence is invalid ({', '.join(invalid)}), so the rule is not decided."
    if interval.approximate and not policy.allow_approximate_methods:
        reasons.append("approximate_method")
        why = (
            "the test set declares groups, so only an approximate (clustered) interval exists"
            if interval.method.startswith("clustered") else f"the rule's method ({interval.method}) is approximate"
        )
        return Verdict.MANUAL_REVIEW, f"{head}; {why}: set allow_approximate_methods: true in the policy to let it decide, or review by hand."
    if "few_clusters" in reasons:
        return Verdict.MANUAL_REVIEW, f"{head}; with fewer than {MIN_CLUSTERS} groups the clustered interval is not trustworthy: review by hand or add groups."
    if clears:
        reasons.insert(0, "interval_clears_threshold")
        return Verdict.PASS, f"{head}: the {bound_word} bound {fmt(clear_value)} clears {relation} {threshold:g}."
    if misses:
        reasons.insert(0, "interval_misses_threshold")
        return Verdict.FAIL, f"{head}: even the {other_word} bound {fmt(miss_value)} misses {relation} {threshold:g}."
    reasons.insert(0, "interval_straddles_threshold")
    needed = min_cases_to_pass(threshold, confidence=policy.confidence) if rule.kind == "min" else min_cases_to_pass_max(threshold, confidence=policy.confidence)
    if n < needed:
        reasons.append("set_too_small")
        return Verdict.INSUFFICIENT_EVIDENCE, (
            f"{head} contains {relation} {threshold:g}; this set can never clear {relation} {threshold:g}: "
            f"even a perfect result needs at least {needed} cases, it has {n}."
        )
    advice = (
        f"this set resolves only distances of {resolution:.3f} or more from the threshold (80% power); add cases to settle it."
        if resolution is not None and math.isfinite(resolution) else "add cases to settle it."
    )
    return Verdict.INSUFFICIENT_EVIDENCE, f"{head} contains {relation} {threshold:g}: {advice}"
