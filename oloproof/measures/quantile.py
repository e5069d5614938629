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
    return found, details, []


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
