"""Mean absolute error and root mean squared error of a numeric output (kinds ``mae``, ``rmse``):
values ``|output.field - expected.field|`` per case, NaN where the output has no number.

Rule: ``{criterion: mae, field: value, max: 5}`` (or ``rmse``), optionally ``bound: B``, the
largest absolute error the team declares possible. With ``bound`` the interval is exact (betting
on errors / B; a missing output counts as B for the upper limit, 0 for the lower). Without it the
BCa bootstrap (approximate; decides only under ``allow_approximate_methods``), and a missing output
leaves the rule undecided (an unbounded error cannot be bounded). An observed error above the
declared bound means the bound is wrong: the rule is INSUFFICIENT_EVIDENCE (``bound_exceeded``),
never PASS. Paired form (MAE): ``paired_mae_difference``, read by the regression guard and
``oloproof compare --criterion mae`` (``oloproof.measures.paired``). Shown as "20 errors".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.measures.base import IntervalResult, Measure

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.testset import TestSet


def _interval(outcome: CriterionOutcome, rule: Rule, policy: Policy, testset: TestSet) -> IntervalResult:
    import numpy as np  # lazy: start-up

    from oloproof.stats import bounded, regression_error  # lazy: start-up

    errors = np.asarray(outcome.values, dtype=float)
    answered = int((~np.isnan(errors)).sum())
    name = outcome.kind
    details: dict[str, object] = {"count": f"{answered} errors"}
    if rule.bound is not None:
        details["bound"] = rule.bound
        above = int((errors > rule.bound).sum())  # NaN compares False
        if above:
            details["no_method"] = (
                f"{above} case(s) have an absolute error above the declared bound {rule.bound:g} (largest "
                f"{float(np.nanmax(errors)):g}): the bound is wrong, so the exact interval does not hold; raise bound "
                "or remove it (approximate)"
            )
            return None, details, ["bound_exceeded"]
    if testset.has_groups:
        details["no_method"] = f"no {name} interval is implemented for grouped cases"
        return None, details, ["approximate_method"]
    if rule.bound is None and answered < errors.size:
        details["no_method"] = (
            f"without bound: a missing output's error could be anything, so {errors.size - answered} missing output(s) "
            "leave no interval; declare bound: (the largest absolute error possible) or make the system answer "
            "every case"
        )
        return None, details, []
    if rule.bound is None and answered < 2:
        details["no_method"] = f"the {name} needs at least 2 answered cases without bound"
        return None, details, []
    seed = bounded.order_seed(testset.digest) if rule.bound is not None else policy.seed
    details["seed"] = seed
    compute = regression_error.mae_interval if name == "mae" else regression_error.rmse_interval
    return compute(errors, confidence=policy.confidence, bound=rule.bound, seed=seed), details, []


def failing(values: np.ndarray, side: str, threshold: float) -> np.ndarray:
    import numpy as np  # lazy: start-up

    with np.errstate(invalid="ignore"):  # NaN compares False: it is counted by isnan
        bad: np.ndarray = np.isnan(values) | (values > threshold)
    return bad


MAE = Measure(
    name="mae",
    reads="the absolute error |output - expected| per case; the rule reads its mean",
    interval=_interval,
    count=lambda total, answered: f"{answered} errors",
    stored=float,
    failing=failing,
    proportion=False,
)
RMSE = Measure(
    name="rmse",
    reads="the absolute error |output - expected| per case; the rule reads the root of its mean square",
    interval=_interval,
    count=lambda total, answered: f"{answered} errors",
    stored=float,
    failing=failing,
    proportion=False,
)
