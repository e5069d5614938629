"""Area under the ROC curve of a score output against a binary label (kind ``auc``): values the
output's score per case (NaN missing), ``labels`` the cases' ``expected.label`` (1 positive).

Rule: ``{criterion: auc, score: score, min: 0.8}``. Interval (``oloproof.stats.auc``): by default
the exact block-betting interval (coverage at least the level for every pair of score
distributions, given the labels; its width is set by the smaller class), or with ``method:
delong`` DeLong's interval (approximate: decides only under ``allow_approximate_methods``).
Missing scores are bounded both ways (worst and best rank). A test set without both classes has
no AUC: the rule is not decided. Paired form (``oloproof.measures.paired``): the exact paired block
betting interval, or DeLong's paired difference, read by the regression guard and ``oloproof compare
--criterion auc``. Shown as "12 positive, 30 negative".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.measures.base import IntervalResult, Measure

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.testset import TestSet


def interval(outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet) -> IntervalResult:
    import numpy as np  # lazy: start-up

    from oloproof.stats import auc, bounded  # lazy: start-up

    assert outcome.labels is not None
    labels = outcome.labels
    positive, negative = int((labels == 1.0).sum()), int((labels == 0.0).sum())
    details: dict[str, object] = {"count": f"{positive} positive, {negative} negative", "positive": positive}
    details["negative"] = negative
    if not positive or not negative:
        details["no_method"] = (
            f"the AUC needs cases of both classes; expected.label has {positive} positive (1) and {negative} "
            "negative (0) cases"
        )
        return None, details, ["one_class"]
    if testset.has_groups:
        details["no_method"] = "no AUC interval is implemented for grouped cases"
        return None, details, ["approximate_method"]
    if rule.method == "delong":
        return auc.auc_interval(outcome.values, labels, confidence=policy.confidence), details, []
    seed = bounded.order_seed(testset.digest)
    details["seed"] = seed
    found = auc.auc_interval_exact(np.asarray(outcome.values), labels, confidence=policy.confidence, seed=seed)
    return found, details, []


def failing(values: np.ndarray, side: str, threshold: float) -> np.ndarray:
    import numpy as np  # lazy: start-up

    bad: np.ndarray = np.isnan(values)  # a ranking measure has no failing case of its own; missing ones count
    return bad


MEASURE = Measure(
    name="auc",
    reads="a score per case, ranked against expected.label (1 positive, 0 negative)",
    interval=interval,
    count=lambda total, answered: f"{answered} scores",
    stored=float,
    failing=failing,
    proportion=False,  # thresholds are in (0, 1), but the binomial sizing advice is not about an AUC
)
