"""Pass rate of pass/fail outcomes (kind ``binary``): values 1.0 (pass), 0.0 (fail), NaN (missing).

Estimate: passes / answered. Interval: Clopper-Pearson (exact), with missing outputs counted as
failures for the lower bound and passes for the upper; on a test set that declares groups, the
clustered interval (approximate). Paired form: the Fay-Lumbard melded interval of the paired
table (``oloproof.pairs``). Shown as "17/20"; stored as 0/1.
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

    from oloproof.stats import binomial, clustered  # lazy: start-up

    values = outcome.values
    details: dict[str, object] = {}
    reasons: list[str] = []
    if testset.has_groups:
        groups = [case.group if case.group is not None else f"\0{case.id}" for case in testset.cases]
        if len(set(groups)) < 2:  # a where: subset or per: row inside one group (18-D2)
            details.update(n_clusters=1, groups_by_size=1.0)
            details["no_method"] = (
                f"its {values.size} cases lie in one group, so a grouped interval has one independent unit to rest "
                "on and none can be computed (the gate needs at least 30 groups)"
            )
            return None, details, ["few_clusters"]
        result = clustered.clustered_proportion(values, groups, confidence=policy.confidence)
        details.update(
            n_clusters=result.n_clusters, groups_by_size=result.by_size, n_eff=result.n_eff, ceiling=result.ceiling
        )
        if result.few_clusters:
            reasons.append("few_clusters")
        return result.interval, details, reasons
    passes = int(np.nansum(values))
    missing = int(np.isnan(values).sum())
    found = binomial.clopper_pearson(passes, int(values.size), confidence=policy.confidence, missing=missing)
    return found, details, reasons


def failing(values: np.ndarray, side: str, threshold: float) -> np.ndarray:
    import numpy as np  # lazy: start-up

    with np.errstate(invalid="ignore"):  # NaN compares False: it is counted by isnan
        bad: np.ndarray = np.isnan(values) | (values < 1.0 if side == "min" else values > 0.0)
    return bad


MEASURE = Measure(
    name="binary",
    reads="1.0 (pass) or 0.0 (fail) per case",
    interval=interval,
    count=lambda passes, answered: f"{int(passes)}/{answered}",
    stored=int,
    failing=failing,
    pass_fail=True,
    paired=True,
)
