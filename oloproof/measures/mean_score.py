"""Mean of scores in [0, 1] (kind ``score``): values a score per case, NaN (missing).

Interval: the betting interval for a bounded mean (exact; order averaged over a seed fixed by the
test set's digest), or the t / BCa bootstrap intervals (approximate) by the rule's ``method``; no
interval on grouped cases (review by hand). No paired form. Shown as "mean of 20 scores"; stored
rounded to 9 digits.
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

    from oloproof.stats import bounded  # lazy: start-up

    values = outcome.values
    details: dict[str, object] = {}
    reasons: list[str] = []
    if testset.has_groups:
        details["no_method"] = "no interval is implemented for scores on grouped cases"
        reasons.append("approximate_method")
        return None, details, reasons
    # The betting interval does not depend on the order of the cases: it averages over random
    # orders drawn from a seed fixed by the test set's (order-free) digest, printed with it.
    if rule.method == "exact":
        seed = bounded.order_seed(testset.digest)
        details["seed"] = seed
        return bounded.bounded_mean_betting(values, confidence=policy.confidence, seed=seed), details, reasons
    if rule.method == "t":
        return bounded.bounded_mean_t(values, confidence=policy.confidence), details, reasons
    rng = np.random.default_rng(policy.seed)
    details["seed"] = policy.seed
    return bounded.bounded_mean_bca(values, confidence=policy.confidence, rng=rng), details, reasons


def failing(values: np.ndarray, side: str, threshold: float) -> np.ndarray:
    import numpy as np  # lazy: start-up

    with np.errstate(invalid="ignore"):  # NaN compares False: it is counted by isnan
        bad: np.ndarray = np.isnan(values) | (values < threshold if side == "min" else values > threshold)
    return bad


MEASURE = Measure(
    name="score",
    reads="a score in [0, 1] per case",
    interval=interval,
    count=lambda total, answered: f"mean of {answered} scores",
    stored=lambda value: round(value, 9),
    failing=failing,
)
