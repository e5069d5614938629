"""The regression guard on a built-in measure with a paired form: AUC (DeLong's paired difference)
and MAE (the paired difference of absolute errors), both versions on the same cases.

``difference = new - baseline``. For the AUC (higher is better) the rule PASSes iff the lower bound
is at least ``-max_drop`` and FAILs iff the upper bound is below it, as for pass rates. For the MAE
(lower is better) a regression is a rise: PASS iff the upper bound is at most ``max_drop`` (in the
field's units), FAIL iff the lower bound is above it. An approximate interval (DeLong; MAE without
``bound``) decides only under ``allow_approximate_methods``; evidence marked invalid never decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.decide import INVALIDATING, interval_text, side_of, unfit_for_review
from oloproof.policy import allows_approximate
from oloproof.result import RuleResult
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet


def paired_interval(
    rule: Rule, now: CriterionOutcome, baseline: CriterionOutcome, policy: Policy, testset: TestSet
) -> tuple[Interval | None, str]:
    """The interval of (now - baseline), or None and why there is none."""
    import numpy as np  # lazy: start-up

    from oloproof.stats import auc, bounded, regression_error  # lazy: start-up

    if testset.has_groups:
        return None, f"no paired {rule.criterion} interval is implemented for grouped cases"
    try:
        if rule.criterion == "auc":
            assert now.labels is not None
            labels = now.labels
            if rule.method != "delong":
                seed = bounded.order_seed(testset.digest)
                found = auc.paired_auc_difference_exact(
                    np.asarray(baseline.values), np.asarray(now.values), labels, confidence=policy.confidence, seed=seed
                )
                return found, ""
            return auc.paired_auc_difference(baseline.values, now.values, labels, confidence=policy.confidence), ""
        largest = float(np.nanmax(np.concatenate([now.values, baseline.values, [0.0]])))
        if rule.bound is not None and largest > rule.bound:
            return None, f"an absolute error exceeds the declared bound {rule.bound:g}: the bound is wrong"
        seed = bounded.order_seed(testset.digest) if rule.bound is not None else policy.seed
        found = regression_error.paired_mae_difference(
            baseline.values, now.values, confidence=policy.confidence, bound=rule.bound, seed=seed
        )
        return found, ""
    except ValueError as err:  # one class; a missing output without bound; fewer than two answers
        return None, str(err)


def decide_paired(
    rule: Rule,
    now: CriterionOutcome,
    baseline: CriterionOutcome,
    policy: Policy,
    testset: TestSet,
    *,
    baseline_label: str,
) -> RuleResult:
    import numpy as np  # lazy: start-up

    missing = int(np.isnan(now.values).sum() + np.isnan(baseline.values).sum())
    reasons = list(dict.fromkeys([*(["missing_outputs"] if missing else []), *now.reasons, *baseline.reasons]))
    interval, why = paired_interval(rule, now, baseline, policy, testset)
    if "exceeds the declared bound" in why:
        reasons.append("bound_exceeded")
    lower_is_better = rule.criterion != "auc"
    common = dict(
        rule_id=rule.id,
        criterion=rule.criterion,
        kind=rule.kind,
        threshold=rule.threshold,
        n=int(now.values.size),
        source=rule.source,
        line=rule.line,
        passes=None,
        missing=missing,
        resolution=None,
        details={"baseline": baseline_label},
    )
    if interval is None:
        unfit = unfit_for_review(reasons) or "there is no interval"
        return RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=tuple(reasons),
            interval=None,
            sentence=f"{rule.criterion} against {baseline_label}: {why}; {unfit}, so the rule is not decided.",
            **common,  # type: ignore[arg-type]
        )
    word = "rose" if lower_is_better else "moved"
    head = (
        f"{rule.criterion} {word} {interval.estimate:+.3f} against {baseline_label} on the same {now.values.size} "
        f"cases, {interval_text(interval)}"
    )
    invalid = [code for code in reasons if code in INVALIDATING]
    if invalid:
        return RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=tuple(reasons),
            interval=interval,
            sentence=f"{head}; the evidence is invalid ({', '.join(invalid)}), so the rule is not decided.",
            **common,  # type: ignore[arg-type]
        )
    if interval.approximate and not allows_approximate(rule, policy):
        codes = (*reasons, "approximate_method")
        if "missing_outputs" in reasons:
            return RuleResult(
                verdict=Verdict.INSUFFICIENT_EVIDENCE,
                reasons=codes,
                interval=interval,
                sentence=f"{head}; {unfit_for_review(reasons)}: a manual review needs every output.",
                **common,  # type: ignore[arg-type]
            )
        return RuleResult(
            verdict=Verdict.MANUAL_REVIEW,
            reasons=codes,
            interval=interval,
            sentence=f"{head}; the method ({interval.method}) is approximate: set approximate: allow on the rule (or "
            "allow_approximate_methods: true in the policy) to let it decide, or review by hand.",
            **common,  # type: ignore[arg-type]
        )
    # An error may rise by at most max_drop (a max rule at +max_drop); a rate or AUC may fall by at most it.
    side = side_of("max", rule.threshold, interval) if lower_is_better else side_of("min", -rule.threshold, interval)
    allowed = f"the allowed {'rise' if lower_is_better else 'drop'} {rule.threshold:g}"
    if side == "clears":
        verdict, code, text = Verdict.PASS, "interval_clears_threshold", f"{head}: within {allowed}."
    elif side == "misses":
        verdict, code, text = Verdict.FAIL, "interval_misses_threshold", f"{head}: beyond {allowed} even at best."
    else:
        verdict, code, text = (
            Verdict.INSUFFICIENT_EVIDENCE,
            "interval_straddles_threshold",
            f"{head} contains {allowed}; add cases to settle it.",
        )
    return RuleResult(
        verdict=verdict,
        reasons=(code, *reasons),
        interval=interval,
        sentence=text,
        **common,  # type: ignore[arg-type]
    )
