"""People's pass rate (or mean grade) estimated from a judge on every case and human labels on some.

A judge's grades are not people's grades: deciding a rule on the judge's own pass rate lets a
lenient judge PASS what people would FAIL. Both methods here estimate the mean of the *human*
grade over the distribution the test cases come from (the quantity Clopper–Pearson on human
grades of every case would estimate), using the judge on every case and the human labels where
they exist. Both assume that the labelled cases are a simple random sample of the test cases.

**Double sampling (exact, conservative).** Tenenbein (1970), "A double sampling scheme for
estimating from binomial data with misclassifications", JASA 65(331): 1350–1361: with the
judge's verdict ``J`` on every case and the human verdict ``H`` on a random subsample,
    p = P(H = 1) = q·a + (1 − q)·b,  q = P(J = 1), a = P(H = 1 | J = 1), b = P(H = 1 | J = 0).
``q`` gets an exact Clopper–Pearson interval from the judge's verdicts on all N cases; ``a``
and ``b`` get exact Clopper–Pearson bounds from the labelled cases in each stratum, where the
human grades are used directly. p is increasing in a and b and linear in q, so its lower bound
is the worst case over the box, min over q ∈ {q_lo, q_hi} of q·a_lo + (1 − q)·b_lo (the upper
bound mirrors it). Bonferroni: a one-sided error α/2 is split as α/4 for q's two-sided interval
(α/8 per side), α/8 for a and α/8 for b, so each bound errs with probability at most α/2 for
every q, a and b. It is never unbounded (unlike the Rogan–Gladen correction, which divides by
sensitivity + specificity − 1) and a useless judge (a = b) just gives the labels' own interval,
widened. The strata may be any function of a case: a case the judge did not grade joins the
judge-fail stratum for the lower bound and the judge-pass one for the upper; a case the system
did not answer counts as a human failure for the lower bound and a pass for the upper.

**Prediction-powered inference (approximate, CLT).** Angelopoulos, Bates, Fannjiang, Jordan &
Zrnic (2023), "Prediction-powered inference", Science 382: 669–674, with the power tuning of
PPI++ (Angelopoulos, Duchi & Zrnic 2023, arXiv:2311.01453): θ̂ = λ·mean(Ĵ over unlabelled) +
mean(H − λ·J over labelled), with the normal interval of its two independent terms, λ tuned as
in ``ppi_py.ppi_mean_ci`` (the tests pin its values). It works on scores too (a mean-grade rule).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from oloproof.stats._validate import check_confidence
from oloproof.stats.caveats import ppi_caveat
from oloproof.stats.interval import Interval

__all__ = ["DOUBLE_SAMPLING", "PPI", "DoubleSampling", "double_sampling", "ppi_lambda", "ppi_mean"]

DOUBLE_SAMPLING = "judge-double-sampling-clopper-pearson-bonferroni"
PPI = "ppi++-mean-clt"


@dataclass(frozen=True, slots=True, kw_only=True)
class Side:
    """One bound's ingredients: the judge-pass rate q over all cases and people's pass rates within
    each judge verdict on the labelled cases, with the exact bounds used."""

    bound: float
    n_cases: int
    judge_passes: int  # cases in the judge-pass stratum
    q: tuple[float, float]
    labelled_judge_pass: int
    human_pass_given_judge_pass: int
    a: float  # the bound used for P(H=1 | J=1): lower for the lower bound, upper for the upper
    labelled_judge_fail: int
    human_pass_given_judge_fail: int
    b: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DoubleSampling:
    interval: Interval
    low: Side
    high: Side


def _beta_low(x: int, n: int, tail: float) -> float:
    return 0.0 if x <= 0 else float(stats.beta.ppf(tail, x, n - x + 1))


def _beta_high(x: int, n: int, tail: float) -> float:
    return 1.0 if x >= n else float(stats.beta.isf(tail, x + 1, n - x))


def _side(
    stratum: NDArray[np.bool_], human: NDArray[np.bool_], labelled: NDArray[np.bool_], tail: float, *, lower: bool
) -> tuple[Side, float]:
    """One bound at one-sided error ``tail``, and the plug-in estimate of the same quantity."""
    n_cases = int(stratum.size)
    k = int(stratum.sum())
    share = tail / 4.0  # q two-sided at tail/2 (tail/4 a side), a and b one-sided at tail/4 each
    q_lo, q_hi = _beta_low(k, n_cases, share), _beta_high(k, n_cases, share)
    n1 = int((labelled & stratum).sum())
    x1 = int((labelled & stratum & human).sum())
    n0 = int((labelled & ~stratum).sum())
    x0 = int((labelled & ~stratum & human).sum())
    bound_of = _beta_low if lower else _beta_high
    a, b = bound_of(x1, n1, share), bound_of(x0, n0, share)
    corners = [q * a + (1.0 - q) * b for q in (q_lo, q_hi)]
    bound = min(corners) if lower else max(corners)
    if n1 + n0:
        overall = (x1 + x0) / (n1 + n0)
        a_hat = x1 / n1 if n1 else overall
        b_hat = x0 / n0 if n0 else overall
    else:  # no label at all: the estimate is the judge's own rate (the interval, [0, 1], says the rest)
        a_hat, b_hat = 1.0, 0.0
    q_hat = k / n_cases
    side = Side(
        bound=min(max(bound, 0.0), 1.0),
        n_cases=n_cases,
        judge_passes=k,
        q=(q_lo, q_hi),
        labelled_judge_pass=n1,
        human_pass_given_judge_pass=x1,
        a=a,
        labelled_judge_fail=n0,
        human_pass_given_judge_fail=x0,
        b=b,
    )
    return side, q_hat * a_hat + (1.0 - q_hat) * b_hat


def double_sampling(
    judge: NDArray[np.float64],
    human: NDArray[np.float64],
    answered: NDArray[np.bool_],
    *,
    confidence: float,
) -> DoubleSampling:
    """The exact double-sampling interval for people's pass rate.

    ``judge`` holds the judge's verdict per case (1.0 pass, 0.0 fail, NaN not graded), ``human``
    people's verdict (1.0, 0.0, NaN unlabelled), ``answered`` whether the system answered the case;
    all of length N >= 1, aligned.
    """
    level = check_confidence(confidence)
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    answered = np.asarray(answered, dtype=bool)
    if not (judge.shape == human.shape == answered.shape) or judge.ndim != 1 or judge.size == 0:
        raise ValueError("judge, human and answered must be non-empty and of one same length")
    tail = (1.0 - level) / 2.0
    labelled = ~np.isnan(human)
    said_pass = np.nan_to_num(judge, nan=0.0) >= 0.5
    said_fail = np.nan_to_num(judge, nan=1.0) < 0.5
    human_pass = np.nan_to_num(human, nan=0.0) >= 0.5
    # Lower bound: an ungraded case is in the judge-fail stratum, an unanswered one a human failure.
    low, estimate = _side(said_pass, human_pass & answered, labelled, tail, lower=True)
    high, _ = _side(~said_fail, human_pass | ~answered, labelled, tail, lower=False)
    interval = Interval(
        estimate=min(max(estimate, low.bound), high.bound),
        low=low.bound,
        high=high.bound,
        level=level,
        method=DOUBLE_SAMPLING,
        approximate=False,
    )
    return DoubleSampling(interval=interval, low=low, high=high)


def ppi_lambda(y: NDArray[np.float64], yhat: NDArray[np.float64], yhat_unlabelled: NDArray[np.float64]) -> float:
    """PPI++'s power-tuning weight for a mean, clipped to [0, 1], as ``ppi_py`` computes it:
    cov(y, ŷ) (population form, labelled cases) over (1 + n/N)·var(ŷ) (sample form, all cases)."""
    n, big_n = y.size, yhat_unlabelled.size
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    var = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if var <= 0.0:
        return 0.0
    return float(np.clip(cov / ((1.0 + n / big_n) * var), 0.0, 1.0))


def ppi_mean(
    y: NDArray[np.float64],
    yhat: NDArray[np.float64],
    yhat_unlabelled: NDArray[np.float64],
    *,
    confidence: float,
    lam: float | None = None,
) -> tuple[Interval, float]:
    """The PPI++ interval for the mean of ``y`` (human grades on the n labelled cases) from
    ``yhat`` (the judge on the same cases) and ``yhat_unlabelled`` (the judge on N other cases,
    independent of them), and the λ used (tuned when ``lam`` is None). Normal (CLT) interval,
    clipped to [0, 1]; approximate."""
    level = check_confidence(confidence)
    y, yhat, unl = (np.asarray(a, dtype=float) for a in (y, yhat, yhat_unlabelled))
    if y.size < 2 or unl.size < 1 or y.shape != yhat.shape:
        raise ValueError("PPI needs at least 2 labelled cases (graded by the judge) and 1 unlabelled one")
    weight = ppi_lambda(y, yhat, unl) if lam is None else float(lam)
    estimate = weight * float(unl.mean()) + float(np.mean(y - weight * yhat))
    spread = math.sqrt(float(np.var(weight * unl)) / unl.size + float(np.var(y - weight * yhat)) / y.size)
    half = float(stats.norm.isf((1.0 - level) / 2.0)) * spread
    interval = Interval(
        estimate=min(max(estimate, 0.0), 1.0),
        low=min(max(estimate - half, 0.0), 1.0),
        high=min(max(estimate + half, 0.0), 1.0),
        level=level,
        method=PPI,
        approximate=True,
    )
    return interval, weight


ASSUMPTION = "assumes the labelled cases are a random sample of the test cases"


def judged_interval(
    judge: NDArray[np.float64],
    human: NDArray[np.float64],
    answered: NDArray[np.bool_],
    pass_threshold: float,
    *,
    mean_grade: bool,
    use_ppi: bool,
    confidence: float,
    seed: int = 0,
    known: NDArray[np.bool_] | None = None,
) -> tuple[Interval | None, dict[str, object]]:
    """The interval for people's pass rate (or, ``mean_grade``, mean grade) on a judge criterion.

    ``judge`` and ``human`` are grades in [0, 1] (NaN: not graded / unlabelled), ``answered``
    whether the system answered each case. A pass rate uses the exact double-sampling interval
    unless ``use_ppi``; a mean grade always uses PPI++ (approximate). When every case is labelled
    the judge adds nothing: Clopper–Pearson on people's verdicts decides a pass rate, and the exact
    betting interval (random orders from ``seed``) on people's grades a mean grade. Returns the
    interval (None with ``details["no_method"]`` when there is none) and details for the report.
    ``known`` (default ``answered``) says where a labelled case's human grade is about this run's
    output; where it is not (an unanswered case, a stale label) the case stays labelled and
    counts as a human failure for the lower bound and a pass for the upper.
    """
    from oloproof.stats.binomial import clopper_pearson  # lazy: start-up

    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    answered = np.asarray(answered, dtype=bool)
    known = answered if known is None else np.asarray(known, dtype=bool) & answered
    n_cases = int(judge.size)
    labelled = ~np.isnan(human)
    n_labelled = int(labelled.sum())
    graded = ~np.isnan(judge)
    judge_passes = int((graded & (np.nan_to_num(judge) >= pass_threshold)).sum())
    details: dict[str, object] = {
        "target": "people's mean grade" if mean_grade else "people's pass rate",
        "n_cases": n_cases,
        "n_labelled": n_labelled,
        "judge_passes": judge_passes,
        "judge_mean_grade": float(np.nanmean(judge)) if graded.any() else None,
        "assumption": ASSUMPTION,
    }
    representative = _representative(judge, graded, labelled, pass_threshold)
    if representative is not None:
        details["labels_vs_rest"] = representative
        if representative["fisher_p"] < NOT_RANDOM_P:
            details["not_representative"] = True
            details["assumption"] = (
                f"{ASSUMPTION}, and they do not look like one: the judge passes "
                f"{representative['labelled_judge_pass_rate']:.1%} of the {representative['labelled']} labelled cases "
                f"but {representative['unlabelled_judge_pass_rate']:.1%} of the other {representative['unlabelled']} "
                f"(Fisher exact p = {representative['fisher_p']:.1e}); label cases drawn at random, and do not let the "
                "judge see the labels"
            )
    details["advice"] = (
        "its width comes mostly from the human labels: label more cases, drawn at random from the test set, to "
        "settle it"
    )
    label_text = f"the judge on {n_cases} cases and {n_labelled} human labels"
    details["count"] = f"{'mean grade' if mean_grade else 'pass rate'} people would give, from {label_text}"
    if mean_grade:
        y_low, y_high = human.copy(), human.copy()
        j_low, j_high = np.nan_to_num(judge, nan=0.0), np.nan_to_num(judge, nan=1.0)
    else:
        verdict = np.where(np.isnan(human), np.nan, (human >= pass_threshold).astype(float))
        y_low, y_high = verdict.copy(), verdict.copy()
        j_low = (np.nan_to_num(judge, nan=0.0) >= pass_threshold).astype(float)
        j_high = (np.nan_to_num(judge, nan=1.0) >= pass_threshold).astype(float)
    # A case the system did not answer is a failure for the lower bound and a pass for the upper,
    # as in every other rule; the judge's "prediction" of it is then exact.
    y_low[~known & labelled], y_high[~known & labelled] = 0.0, 1.0
    j_low[~answered], j_high[~answered] = 0.0, 1.0
    if n_labelled == n_cases:
        details["method_note"] = "every case is labelled, so people's grades decide directly and the judge adds nothing"
        details["advice"] = "every case is labelled already: add labelled cases to settle it"
        if mean_grade:
            from oloproof.stats.bounded import bounded_mean_betting  # lazy: start-up

            details["seed"] = seed
            return bounded_mean_betting(np.where(known, human, np.nan), confidence=confidence, seed=seed), details
        passes = int((y_low[known] >= 0.5).sum())
        missing = int((~known).sum())
        return clopper_pearson(passes, n_cases, confidence=confidence, missing=missing), details
    if not mean_grade and not use_ppi:
        # double_sampling places ungraded and unanswered cases itself (the worst case for each bound).
        result = double_sampling(
            _verdicts(judge, graded, pass_threshold),
            _human_verdicts(human, pass_threshold),
            known,  # double sampling uses it only for people's side: unknown grades take the worst case
            confidence=confidence,
        )
        details.update(
            split=(
                "Bonferroni: each one-sided error alpha/2 split as alpha/4 for the judge's pass rate over all cases "
                "(two-sided, alpha/8 a side) and alpha/8 each for people's pass rate among the labelled cases the "
                "judge passed and among those it failed"
            ),
            lower=_side_json(result.low),
            upper=_side_json(result.high),
        )
        interval = result.interval
        if (labelled & ~known).any():
            # The estimate from the grades that are known (the bounds take the worst case for the others).
            guess = double_sampling(
                _verdicts(judge, graded, pass_threshold),
                np.where(known, _human_verdicts(human, pass_threshold), np.nan),
                answered,
                confidence=confidence,
            ).interval.estimate
            interval = replace(interval, estimate=min(max(guess, interval.low), interval.high))
        return interval, details
    if n_labelled < 2:
        details["no_method"] = "PPI needs at least 2 labelled cases"
        return None, details
    details["assumption"] = str(details["assumption"]) + ppi_caveat(confidence)  # measured error by label count
    unl = ~labelled
    low, lam_low = ppi_mean(y_low[labelled], j_low[labelled], j_low[unl], confidence=confidence)
    high, lam_high = ppi_mean(y_high[labelled], j_high[labelled], j_high[unl], confidence=confidence)
    details.update(lam_lower=lam_low, lam_upper=lam_high, n_unlabelled=int(unl.sum()))
    interval = Interval(
        estimate=min(max(low.estimate, low.low), high.high),
        low=low.low,
        high=high.high,
        level=low.level,
        method=PPI,
        approximate=True,
    )
    return interval, details


NOT_RANDOM_P = 0.001


def _representative(
    judge: NDArray[np.float64], graded: NDArray[np.bool_], labelled: NDArray[np.bool_], threshold: float
) -> dict[str, float | int] | None:
    """The judge's pass rate on the labelled cases against the rest, with Fisher's exact test: if the
    labels are a random sample (and the judge cannot tell which cases are labelled) they match."""
    passed = graded & (np.nan_to_num(judge) >= threshold)
    rows = [(int((passed & side).sum()), int((graded & side).sum())) for side in (labelled, ~labelled)]
    if any(total == 0 for _, total in rows):
        return None
    table = [[k, total - k] for k, total in rows]
    return {
        "labelled": rows[0][1],
        "labelled_judge_pass_rate": rows[0][0] / rows[0][1],
        "unlabelled": rows[1][1],
        "unlabelled_judge_pass_rate": rows[1][0] / rows[1][1],
        "fisher_p": float(stats.fisher_exact(table).pvalue),
    }


def _verdicts(judge: NDArray[np.float64], graded: NDArray[np.bool_], threshold: float) -> NDArray[np.float64]:
    return np.where(graded, (np.nan_to_num(judge) >= threshold).astype(float), np.nan)


def _human_verdicts(human: NDArray[np.float64], threshold: float) -> NDArray[np.float64]:
    return np.where(np.isnan(human), np.nan, (np.nan_to_num(human) >= threshold).astype(float))


def _side_json(side: Side) -> dict[str, object]:
    return {
        "bound": side.bound,
        "judge_pass_stratum": side.judge_passes,
        "judge_pass_rate_bounds": list(side.q),
        "labelled_judge_passed": side.labelled_judge_pass,
        "people_passed_of_those": side.human_pass_given_judge_pass,
        "people_pass_rate_given_judge_pass_bound": side.a,
        "labelled_judge_failed": side.labelled_judge_fail,
        "people_passed_of_those_failed": side.human_pass_given_judge_fail,
        "people_pass_rate_given_judge_fail_bound": side.b,
    }
