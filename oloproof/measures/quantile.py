"""A quantile of a numeric output (kind ``quantile``): values the output's number per case (a
latency in ms, a cost), NaN where the case has no usable number.

Rule: ``{criterion: latency_ms, quantile: 0.95, max: 800}``. Interval: the exact distribution-free
order-statistic interval (``oloproof.stats.quantile``), missing values bounded both ways (so they
never PASS a ``max`` rule, nor FAIL it). Below the smallest set that can bound the quantile on the
deciding side, the rule says how many cases it needs. No paired form. Shown as "p95 of 120
values"; never stored in holdout records (a holdout criterion is an evaluator's).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from oloproof.measures.base import IntervalResult, Measure

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.testset import TestSet


def label(p: float) -> str:
    """``0.95`` -> "p95", ``0.999`` -> "p99.9"."""
    return f"p{p * 100:g}"


def interval(outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet) -> IntervalResult:
    import math  # lazy: start-up

    import numpy as np  # lazy: start-up

    from oloproof.stats.quantile import min_cases_for_bound, quantile_interval  # lazy: start-up

    assert rule.quantile is not None
    p = rule.quantile
    values = np.asarray(outcome.values, dtype=float)
    batch = outcome.details.get("batch_size", 1)
    batched = isinstance(batch, int) and batch > 1 and values.size > 1
    if batched:  # wall times of batches: one observation per batch (its cases share its mean)
        values = values[:: int(batch)]
    unit = "batches" if batched else "values"
    answered = int((~np.isnan(values)).sum())
    details: dict[str, object] = {"quantile": p, "count": f"{label(p)} of {answered} {unit}"}
    if outcome.details.get("source"):
        details["source"] = outcome.details["source"]
    found = quantile_interval(values, p, confidence=policy.confidence)
    if batched:
        # A quantile of per-batch means is not the quantile of single requests: approximate.
        found = replace(found, method=f"{found.method} over batch means", approximate=True)
        name = label(p)
        details["assumption"] = (
            f"reads wall time per batch of {batch} cases (one observation per batch): the {name} of batch means is "
            f"not the {name} of single requests; set system.batch_size: 1 for one observation per case"
        )
    # A max rule PASSes on the upper bound, a min rule on the lower: too few cases leave it infinite.
    side = "upper" if rule.kind == "max" else "lower"
    deciding = found.high if side == "upper" else found.low
    needed = min_cases_for_bound(p, confidence=policy.confidence, side=side)
    if math.isinf(deciding) and values.size >= needed and answered < values.size:  # the missing values leave it open
        details["advice"] = (
            f"{values.size - answered} of {values.size} {'batches' if batched else 'cases'} have no usable value, "
            f"counted as unbounded (they could be the {'largest' if side == 'upper' else 'smallest'}), so the "
            f"{label(p)} has no {side} bound: make the system report it on every case"
        )
    elif math.isinf(deciding):
        details["advice"] = (
            f"no set of {values.size} {unit} bounds the {label(p)} from {'above' if side == 'upper' else 'below'} at "
            f"{policy.confidence:g} confidence: that needs at least {needed} {'batches' if batched else 'cases'}, "
            "every one answered"
        )
    if outcome.details.get("unmeasured"):
        details["assumption"] = (
            "rests on latency_ms figures the system reported itself, which oloproof could not check against a wall "
            "time it measured (the outputs were imported, or the run kept no wall times)"
        )
    doubt = _unconfirmed(outcome, rule, testset)
    if doubt:
        details["unconfirmed"] = doubt
    return found, details, []


def _unconfirmed(outcome: CriterionOutcome, rule: Rule, testset: TestSet) -> str:
    """When the system reports its own ``latency_ms`` and oloproof measured the run's wall time: why
    the measurement does not bear the report out ("" when it does). A system can write any number;
    the wall time per case (start-up included) is at least the mean time a sequential system spent
    on a case, so a p95 measured above a ``max`` the self-report clears is a contradiction a person
    must look at, never a PASS (RT-H6)."""
    import numpy as np  # lazy: start-up

    measured = outcome.details.get("measured_wall_ms")
    if rule.kind != "max" or not isinstance(measured, dict) or rule.quantile is None:
        return ""
    ids = outcome.case_ids if outcome.case_ids is not None else [case.id for case in testset.cases]
    wall = np.array([measured[case_id] for case_id in ids if case_id in measured], dtype=float)
    if not wall.size:
        return ""
    point = float(np.quantile(wall, rule.quantile, method="inverted_cdf"))
    if point <= rule.threshold:
        return ""
    name = label(rule.quantile)
    return (
        f"The system reports its own latency_ms, but oloproof measured a {name} of {point:,.0f} ms of wall time per "
        f"case (start-up included), above {rule.threshold:g}: the self-reported figure is not borne out, so a person "
        "must check it (a larger system.batch_size spreads start-up over more cases; outputs without latency_ms are "
        "decided on the measured time)."
    )


def failing(values: np.ndarray, side: str, threshold: float) -> np.ndarray:
    import numpy as np  # lazy: start-up

    with np.errstate(invalid="ignore"):  # NaN compares False: it is counted by isnan
        bad: np.ndarray = np.isnan(values) | (values < threshold if side == "min" else values > threshold)
    return bad


MEASURE = Measure(
    name="quantile",
    reads="a number per case (a latency in ms, a cost), the rule's quantile of them",
    interval=interval,
    count=lambda total, answered: f"{answered} values",
    stored=float,
    failing=failing,
    proportion=False,
)
