"""Deciding one rule from an interval — never from the point estimate.

A ``min`` rule PASSes iff the lower bound is at least ``min`` and FAILs iff the upper bound
is below it; a ``max`` rule mirrors that. Anything else is INSUFFICIENT_EVIDENCE. An
approximate interval decides only when the policy allows approximate methods (otherwise
MANUAL_REVIEW), and evidence marked invalid (an untrusted judge, leaked cases) never
decides at all: it is INSUFFICIENT_EVIDENCE whatever the method, with every reason code kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from oloproof.measures.registry import measure_of
from oloproof.policy import allows_approximate
from oloproof.result import RuleResult
from oloproof.stats.caveats import clustered_caveat
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

# Reasons that make the evidence invalid: the rule cannot PASS or FAIL on it.
# A run that crashed or timed out (`run_failed`) is invalid even where it answered every case: a
# system that exits non-zero has said its own outputs are not to be trusted.
INVALIDATING = (
    "leaked_cases",
    "near_duplicate_cases",
    "judge_untrusted",
    "labels_not_representative",
    "run_failed",
    "transform_declared",
    "transform_unlabelled",
    "transform_changes_meaning",
    "bound_exceeded",
    "one_class",
)

# Evidence a person must not be asked to review: with these the rule is INSUFFICIENT_EVIDENCE
# where it would otherwise be MANUAL_REVIEW (an approximate method). Missing outputs alone never
# invalidate an exact interval (they are bounded: failures below, passes above), but a "manual
# review" is for valid and complete evidence only (SPEC §2; issue 16).
INCOMPLETE = ("missing_outputs",)

MIN_CLUSTERS = 30


def _few_groups(details: dict[str, object] | None) -> str:
    from oloproof.stats.clustered import few_groups_text  # lazy: start-up

    facts = details or {}
    groups, by_size = facts.get("n_clusters"), facts.get("groups_by_size")
    if not isinstance(groups, int) or not isinstance(by_size, float):
        return f"with fewer than {MIN_CLUSTERS} groups"
    return few_groups_text(groups, by_size)


def unfit_for_review(reasons: Sequence[str]) -> str:
    """Why evidence with these reason codes cannot go to a manual review ("" when it can)."""
    invalid = [code for code in reasons if code in INVALIDATING]
    if invalid:
        return f"the evidence is invalid ({', '.join(invalid)})"
    incomplete = [code for code in reasons if code in INCOMPLETE]
    if incomplete:
        return f"the evidence is incomplete ({', '.join(incomplete)})"
    return ""


def fmt(value: float) -> str:
    return f"{value:.3f}"


def interval_text(interval: Interval) -> str:
    kind = "approximate" if interval.approximate else "exact"
    seed = f", seed {interval.seed}" if interval.seed is not None else ""
    bounds = f"[{fmt(interval.low)}, {fmt(interval.high)}]"
    return f"{interval.level * 100:g}% interval {bounds} ({interval.method}, {kind}{seed})"


def compute_interval(
    outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet
) -> tuple[Interval | None, dict[str, object], list[str]]:
    """The interval for ``rule`` on ``outcome``, extra details, and method reason codes: a judge's
    (``oloproof.judged``) or the outcome's measure's (``oloproof.measures``)."""
    if outcome.judged is not None or rule.method == "ppi":
        from oloproof.judged import judged_rule_interval  # lazy: start-up

        return judged_rule_interval(outcome, rule, policy, testset)
    return measure_of(outcome.kind).interval(outcome, rule, policy, testset)


def decide_rule(rule: Rule, outcome: CriterionOutcome, policy: Policy, testset: TestSet) -> RuleResult:
    import numpy as np  # lazy: start-up

    from oloproof.stats.resolution import detectable_distance  # lazy: start-up

    values = outcome.values
    n = int(values.size)
    missing = int(np.isnan(values).sum())
    interval, details, method_reasons = compute_interval(outcome, rule, policy, testset)
    passes = float(details.get("judge_passes", np.nansum(values)))  # type: ignore[arg-type]
    reasons: list[str] = list(method_reasons)
    if missing:
        reasons.append("missing_outputs")
    for code in outcome.reasons:
        if code not in reasons:
            reasons.append(code)
    side: Literal["min", "max"] = "min" if rule.kind == "min" else "max"
    n_eff = details.get("n_eff")
    effective_n = int(n_eff) if isinstance(n_eff, (int, float)) and math.isfinite(n_eff) else n
    resolution = (
        detectable_distance(max(effective_n, 1), rule.threshold, side=side, confidence=policy.confidence)
        # a judge rule's width is set by its labels; a quantile's is in the output's units
        if effective_n >= 1 and "advice" not in details and measure_of(outcome.kind).proportion
        else None
    )
    codes: tuple[str, ...]
    if interval is None:
        unfit = unfit_for_review(reasons)
        verdict = Verdict.INSUFFICIENT_EVIDENCE if unfit else Verdict.MANUAL_REVIEW
        codes = tuple(reasons)
        sentence = f"{rule.criterion}: {details['no_method']}; " + (
            f"{unfit}, so the rule is not decided." if unfit else "review by hand."
        )
    else:
        verdict, codes, sentence = _verdict(
            rule,
            interval,
            policy,
            reasons,
            n=n,
            missing=missing,
            passes=passes,
            kind=outcome.kind,
            resolution=resolution,
            details=details,
        )
    if verdict is Verdict.PASS and isinstance(doubt := details.get("unconfirmed"), str):
        if rule.accepted is None:
            verdict, codes, sentence = Verdict.MANUAL_REVIEW, (*codes, "latency_unconfirmed"), f"{sentence} {doubt}"
        else:  # a person accepted the reported figures: they decide, and every report says who and why
            by, why = rule.accepted
            codes, sentence = (*codes, "latency_reported_accepted"), f"{sentence} {doubt}"
            details["accepted"] = {"by": by, "reason": why}
    caveats = [f"The interval {details['assumption']}."] if "assumption" in details else []
    if verdict is Verdict.PASS and interval is not None and interval.method.startswith("clustered"):
        caveats.append(clustered_caveat(policy.confidence))
    if isinstance(note := outcome.details.get("note"), str):  # the evaluator's own word (label_match's types)
        sentence += f" {note}"
    if "leaked_cases" in outcome.reasons:
        sentence += " Leaked cases invalidate this evidence; remove them from the test set or retrain without them."
    elif "near_duplicate_cases" in outcome.reasons:
        sentence += " Near copies of training rows invalidate this evidence (near: invalidate); remove them or retrain."
    return RuleResult(
        rule_id=rule.id,
        criterion=rule.criterion,
        kind=rule.kind,
        threshold=rule.threshold,
        verdict=verdict,
        reasons=codes,
        sentence=sentence,
        interval=interval,
        n=n,
        passes=passes,
        missing=missing,
        resolution=resolution,
        source=rule.source,
        line=rule.line,
        details=dict(details),
        caveats=tuple(caveats),
    )


def side_of(kind: str, threshold: float, interval: Interval) -> Literal["clears", "misses", "straddles"]:
    """Where an interval lies against a ``min`` (or ``max``) threshold: the decision rule itself."""
    if kind == "min":
        return "clears" if interval.low >= threshold else "misses" if interval.high < threshold else "straddles"
    return "clears" if interval.high <= threshold else "misses" if interval.low > threshold else "straddles"


def _verdict(
    rule: Rule,
    interval: Interval,
    policy: Policy,
    given: list[str],
    *,
    n: int,
    missing: int,
    passes: float,
    kind: str,
    resolution: float | None,
    details: dict[str, object] | None = None,
) -> tuple[Verdict, tuple[str, ...], str]:
    """The verdict, its reason codes (``given`` plus the decision's own) and its sentence."""
    from oloproof.stats.binomial import min_cases_to_pass, min_cases_to_pass_max  # lazy: start-up

    reasons = list(given)

    answered = n - missing
    count = measure_of(kind).count(passes, answered)
    count = str((details or {}).get("count", count))
    head = f"{rule.criterion} is {fmt(interval.estimate)} ({count}"
    head += f", {missing} missing)" if missing else ")"
    head += f", {interval_text(interval)}"
    threshold, relation = rule.threshold, rule.kind
    bound_word, other_word = ("lower", "upper") if rule.kind == "min" else ("upper", "lower")
    clear_value, miss_value = (interval.low, interval.high) if rule.kind == "min" else (interval.high, interval.low)
    invalid = [code for code in reasons if code in INVALIDATING]
    if invalid:
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            tuple(reasons),
            (f"{head}; the evidence is invalid ({', '.join(invalid)}), so the rule is not decided."),
        )
    allowed = allows_approximate(rule, policy)  # the rule's own approximate:, else the policy's
    review = (interval.approximate and not allowed) or "few_clusters" in reasons
    if review and "missing_outputs" in reasons:
        codes = [*reasons, "approximate_method"] if interval.approximate else reasons
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            tuple(dict.fromkeys(codes)),
            (
                f"{head}; {unfit_for_review(reasons)}: a manual review needs every output, so the rule is not "
                "decided; make the system answer every case."
            ),
        )
    if interval.approximate and not allowed:
        why = (
            "the test set declares groups, so only an approximate (clustered) interval exists"
            if interval.method.startswith("clustered")
            else f"the rule's method ({interval.method}) is approximate"
        )
        return (
            Verdict.MANUAL_REVIEW,
            (*reasons, "approximate_method"),
            (
                f"{head}; {why}: set approximate: allow on the rule (or allow_approximate_methods: true in the "
                "policy) to let it decide, or review by hand."
            ),
        )
    if "few_clusters" in reasons:
        return (
            Verdict.MANUAL_REVIEW,
            tuple(reasons),
            f"{head}; {_few_groups(details)} the clustered interval is not trustworthy: review by hand or add groups.",
        )
    side = side_of(rule.kind, threshold, interval)
    if side == "clears":
        return (
            Verdict.PASS,
            ("interval_clears_threshold", *reasons),
            (f"{head}: the {bound_word} bound {fmt(clear_value)} clears {relation} {threshold:g}."),
        )
    if side == "misses":
        return (
            Verdict.FAIL,
            ("interval_misses_threshold", *reasons),
            (f"{head}: even the {other_word} bound {fmt(miss_value)} misses {relation} {threshold:g}."),
        )
    if missing and missing * 2 >= n:  # more cases would not help: the outputs are what is missing
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("interval_straddles_threshold", *reasons),
            (
                f"{head} contains {relation} {threshold:g}: {missing} of {n} cases have no usable output (the run's "
                "errors and case notes say why: ids that match no case, lines that are not JSON objects, a key the "
                "evaluator does not read), so more cases would not settle it; make the system answer every case."
            ),
        )
    ceiling = (details or {}).get("ceiling")
    groups = (details or {}).get("n_clusters")
    if rule.kind == "min" and isinstance(ceiling, float) and ceiling < threshold:
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("interval_straddles_threshold", *reasons, "set_too_small"),
            (
                f"{head} contains {relation} {threshold:g}; these {groups} groups can never clear it: even a perfect "
                f"run's lower bound on {groups} groups is {fmt(ceiling)} (the clustered interval counts groups, not "
                f"cases); clearing min {threshold:g} needs at least {_groups_needed(threshold, policy.confidence)} "
                "groups."
            ),
        )
    smallest = min_cases_to_pass if rule.kind == "min" else min_cases_to_pass_max
    needed = smallest(threshold, confidence=policy.confidence) if measure_of(kind).proportion else 0
    if n < needed:
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("interval_straddles_threshold", *reasons, "set_too_small"),
            (
                f"{head} contains {relation} {threshold:g}; this set can never clear {relation} {threshold:g}: "
                f"even a perfect result needs at least {needed} cases, it has {n}."
            ),
        )
    if isinstance(labels_advice := (details or {}).get("advice"), str):
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            ("interval_straddles_threshold", *reasons),
            f"{head} contains {relation} {threshold:g}: {labels_advice}.",
        )
    advice = (
        f"this set resolves only distances of {resolution:.3f} or more from the threshold (80% power)"
        if resolution is not None and math.isfinite(resolution)
        else "add cases to settle it"
    )
    advice += (_sizing(rule, interval, policy, grouped=groups is not None) if measure_of(kind).proportion else "") + "."
    return (
        Verdict.INSUFFICIENT_EVIDENCE,
        ("interval_straddles_threshold", *reasons),
        (f"{head} contains {relation} {threshold:g}: {advice}"),
    )


def _groups_needed(threshold: float, confidence: float) -> int:
    """The fewest groups whose perfect run clears ``min: threshold``: (α/2)^(1/G) >= threshold."""
    tail = (1.0 - confidence) / 2.0
    return max(1, math.ceil(math.log(tail) / math.log(threshold)))


def _sizing(rule: Rule, interval: Interval, policy: Policy, *, grouped: bool) -> str:
    """How many cases would settle the rule if the truth were the estimate (where it would pass)."""
    from oloproof.stats.resolution import cases_needed  # lazy: start-up

    estimate, threshold = interval.estimate, rule.threshold
    passing = estimate > threshold if rule.kind == "min" else estimate < threshold
    if grouped or not passing or rule.kind not in ("min", "max"):
        return "; add cases to settle it"
    try:
        needed = cases_needed(threshold, estimate, side=rule.kind, confidence=policy.confidence)
    except (ValueError, ArithmeticError):
        return "; add cases to settle it"
    return (
        f"; if the true rate were {fmt(estimate)}, PASS would need {needed} cases or more (the power stays above 80% "
        "from there)"
    )


def decide_regression(
    rule: Rule,
    now: CriterionOutcome,
    baseline: CriterionOutcome,
    policy: Policy,
    *,
    baseline_label: str,
    case_ids: Sequence[str],
    groups: Sequence[str] | None = None,
) -> RuleResult:
    """A regression guard: PASS iff the paired interval's lower bound >= -max_drop.

    The interval of (new − baseline) on the same cases is the Fay–Lumbard melded interval
    (exact; STATISTICS.md §4). Missing outputs are imputed against the new version for the lower
    bound and in its favour for the upper, so missing outputs alone never PASS or FAIL
    (``oloproof.pairs``). The sentence names the dev-set cases that regressed and the smallest
    drop this set resolves. With ``groups`` the clustered interval decides (approximate;
    ``oloproof.pairs.grouped_review``).
    """
    from oloproof.pairs import as_outcomes, caveat, grouped_review, judge_review, listed, pair  # lazy: start-up

    common = dict(
        rule_id=rule.id,
        criterion=rule.criterion,
        kind=rule.kind,
        threshold=rule.threshold,
        n=int(now.values.size),
        source=rule.source,
        line=rule.line,
    )
    if not (measure_of(now.kind).paired and measure_of(baseline.kind).paired):
        import numpy as np  # lazy: start-up

        missing = int(np.isnan(now.values).sum() + np.isnan(baseline.values).sum())
        codes = ["approximate_method", *(["missing_outputs"] if missing else []), *now.reasons, *baseline.reasons]
        codes = list(dict.fromkeys(codes))
        unfit = unfit_for_review(codes)
        return RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE if unfit else Verdict.MANUAL_REVIEW,
            reasons=tuple(codes),
            interval=None,
            passes=None,
            missing=missing,
            resolution=None,
            sentence=(
                f"{rule.criterion}: no paired interval is implemented for score criteria; "
                + (f"{unfit}, so the rule is not decided." if unfit else "review the regression by hand.")
            ),
            **common,  # type: ignore[arg-type]
        )
    judged = any(side.judged is not None or "judge" in side.details for side in (now, baseline))  # a judge graded
    paired = pair(
        as_outcomes(baseline.values),
        as_outcomes(now.values),
        confidence=policy.confidence,
        groups=groups,
        judged=judged,
    )
    interval, resolution = paired.decisive, paired.resolution
    reasons: list[str] = []
    if paired.missing:
        reasons.append("missing_outputs")
    for code in (*now.reasons, *baseline.reasons, *(["judge_graded"] if judged else [])):
        if code not in reasons:
            reasons.append(code)
    floor = -rule.threshold
    regressed = [case_ids[i] for i in paired.regressed]
    moved = f"; {len(regressed)} case(s) regressed: {listed(regressed)}" if regressed else "; no case regressed"
    head = (
        f"{rule.criterion} moved {interval.estimate:+.3f} against {baseline_label} on the same {paired.n} cases "
        f"(b={paired.b} only now right, c={paired.c} only before), {interval_text(interval)}"
    )
    sizing = (
        f" This set resolves paired differences of about {resolution:.3f} or more (about 80% power)."
        if resolution is not None
        else ""
    )
    invalid = [code for code in reasons if code in INVALIDATING]
    side = side_of("min", floor, interval)  # the difference must stay at or above −max_drop
    review = (
        None
        if invalid
        else judge_review(paired, reasons=reasons, unfit_for_review=unfit_for_review)
        or grouped_review(paired, allow_approximate=allows_approximate(rule, policy), reasons=reasons)
    )
    if invalid:
        verdict, sentence = Verdict.INSUFFICIENT_EVIDENCE, f"{head}; the evidence is invalid ({', '.join(invalid)})."
    elif review is not None:
        verdict, reasons, why = review
        sentence = f"{head}; {why}{moved}."
    elif side == "clears":
        reasons.insert(0, "interval_clears_threshold")
        verdict = Verdict.PASS
        sentence = f"{head}: the lower bound {interval.low:+.3f} is within the allowed drop {rule.threshold:g}{moved}."
    elif side == "misses":
        reasons.insert(0, "interval_misses_threshold")
        verdict = Verdict.FAIL
        sentence = (
            f"{head}: even the upper bound {interval.high:+.3f} is a drop of more than {rule.threshold:g}{moved}."
        )
    else:
        reasons.insert(0, "interval_straddles_threshold")
        verdict = Verdict.INSUFFICIENT_EVIDENCE
        more = "groups" if paired.clustered else "cases"  # grouped cases: only more groups narrow it
        sentence = f"{head} contains a drop of {rule.threshold:g}{moved}; add {more} to settle it."
    details = {
        "b": paired.b,
        "c": paired.c,
        "n": paired.n,
        "baseline": baseline_label,
        "discordant": paired.discordant,
        "regressed": len(regressed),
        "improved": len(paired.improved),
        "regressed_ids": regressed,
        "improved_ids": [case_ids[i] for i in paired.improved],
        "mcnemar_exact_p": paired.mcnemar_p,
    }
    return RuleResult(
        verdict=verdict,
        reasons=tuple(reasons),
        sentence=sentence + sizing,
        caveats=tuple(
            text for text in [caveat(paired, policy.confidence)] if text and (verdict is Verdict.PASS or judged)
        ),
        interval=interval,
        passes=None,
        missing=len(paired.missing),
        resolution=resolution,
        details=details,
        **common,  # type: ignore[arg-type]
    )
