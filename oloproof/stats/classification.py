"""Per-class precision, recall and F1 with intervals, and the confusion matrix (issue 18 §3).

Inputs are class indices: ``truth[i]`` in [0, k) and ``predicted[i]`` in [0, k) or -1 for a case
without a usable output. The point values are scikit-learn's ``precision_recall_fscore_support``
(``zero_division=0``: a class never predicted has precision 0.0, flagged undefined here) and its
``classification_report`` averages; tests/stats/test_classification.py pins them against it.

Intervals (docs/statistics.md, "Classification report"):

- recall of class c: exact Clopper–Pearson on TP of the cases whose truth is c; a case without an
  output counts as missed for the lower bound and found for the upper (as every pass rate here);
- precision of class c: exact Clopper–Pearson on TP of the cases predicted c, conditional on how
  many were predicted c (exact given that number; the number itself is random);
- F1 of class c: a seeded percentile bootstrap over cases, labelled approximate, shown only, never
  gated; none when TP = 0 or FP + FN = 0 (every resample then gives the same F1, and a width-0
  interval would claim a certainty the data do not give). Resampling cases draws class c's four
  cells (TP, FP, FN, the rest) from the multinomial with the observed cell shares, so the bootstrap
  is drawn from that multinomial directly (the same distribution, in O(B) per class, not O(B n)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from oloproof.stats._validate import check_confidence, check_count
from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.interval import Interval

__all__ = ["ClassReport", "ClassRow", "classification_report", "f1_bootstrap"]

BOOTSTRAP_METHOD = "percentile bootstrap over cases"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassRow:
    """One class: counts, scikit-learn's point values and their intervals."""

    index: int
    support: int  # cases whose truth is this class
    predicted: int  # cases predicted as this class
    tp: int
    missing: int  # cases of this class without an output
    precision: float  # 0.0 where nothing was predicted (scikit-learn's zero_division=0)
    recall: float
    f1: float
    precision_defined: bool
    recall_defined: bool  # False for a class only predicted, never true (support 0): recall 0.0 by convention
    recall_interval: Interval | None  # None when the class has no case
    precision_interval: Interval | None  # None when nothing was predicted as the class
    f1_interval: Interval | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassReport:
    rows: tuple[ClassRow, ...]
    matrix: NDArray[np.int64]  # k × (k + 1): truth by predicted, the last column "no output"
    n: int
    accuracy: float
    macro: tuple[float, float, float]  # precision, recall, f1
    weighted: tuple[float, float, float]
    seed: int
    replicates: int


def _f1(tp: NDArray[np.float64], fp: NDArray[np.float64], fn: NDArray[np.float64]) -> NDArray[np.float64]:
    denominator = 2 * tp + fp + fn
    return np.where(denominator > 0, 2 * tp / np.where(denominator > 0, denominator, 1), 0.0)


def f1_bootstrap(
    tp: int,
    fp: int,
    fn: int,
    n: int,
    *,
    confidence: float,
    rng: np.random.Generator,
    replicates: int = 2000,
    seed: int | None = None,
) -> Interval:
    """Percentile bootstrap interval for one class's F1 over ``n`` cases (approximate); ``seed``:
    the seed ``rng`` was made from, printed with the interval."""
    level = check_confidence(confidence)
    for name, value in (("tp", tp), ("fp", fp), ("fn", fn)):
        check_count(name, value)
    check_count("n", n, minimum=1)
    rest = n - tp - fp - fn
    if rest < 0:
        raise ValueError(f"tp + fp + fn must be <= n, got {tp + fp + fn} > {n}")
    draws = rng.multinomial(n, np.array([tp, fp, fn, rest], dtype=float) / n, size=replicates).astype(float)
    values = _f1(draws[:, 0], draws[:, 1], draws[:, 2])
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(values, [tail, 1.0 - tail])
    estimate = float(_f1(np.array([tp], dtype=float), np.array([fp], dtype=float), np.array([fn], dtype=float))[0])
    return Interval(
        estimate=estimate,
        low=float(min(low, estimate)),
        high=float(max(high, estimate)),
        level=level,
        method=BOOTSTRAP_METHOD,
        approximate=True,
        seed=seed,
    )


def classification_report(
    truth: NDArray[np.int64],
    predicted: NDArray[np.int64],
    k: int,
    *,
    confidence: float,
    seed: int,
    replicates: int = 2000,
) -> ClassReport:
    """Every class's row, the confusion matrix and the averages. ``predicted`` -1: no output."""
    check_confidence(confidence)
    check_count("k", k, minimum=1)
    truth = np.asarray(truth, dtype=np.int64)
    predicted = np.asarray(predicted, dtype=np.int64)
    if truth.shape != predicted.shape or truth.ndim != 1 or not truth.size:
        raise ValueError("truth and predicted must be 1-d arrays of the same non-zero length")
    if truth.min() < 0 or truth.max() >= k or predicted.min() < -1 or predicted.max() >= k:
        raise ValueError(f"truth must lie in [0, {k}) and predicted in [-1, {k})")
    n = int(truth.size)
    column = np.where(predicted < 0, k, predicted)
    matrix = np.zeros((k, k + 1), dtype=np.int64)
    np.add.at(matrix, (truth, column), 1)
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(k):
        tp = int(matrix[c, c])
        support = int(matrix[c].sum())
        missing = int(matrix[c, k])
        called = int(matrix[:, c].sum())
        fp, fn = called - tp, support - tp
        rows.append(
            ClassRow(
                index=c,
                support=support,
                predicted=called,
                tp=tp,
                missing=missing,
                precision=tp / called if called else 0.0,
                recall=tp / support if support else 0.0,
                f1=float(_f1(np.array([tp], float), np.array([fp], float), np.array([fn], float))[0]),
                precision_defined=called > 0,
                recall_defined=support > 0,
                recall_interval=clopper_pearson(tp, support, confidence=confidence, missing=missing)
                if support
                else None,
                precision_interval=clopper_pearson(tp, called, confidence=confidence) if called else None,
                f1_interval=f1_bootstrap(
                    tp, fp, fn, n, confidence=confidence, rng=rng, replicates=replicates, seed=seed
                )
                if tp and fp + fn
                else None,  # no TP or no error: every resample gives the same F1, a width-0 "interval"
            )
        )
    supports = np.array([row.support for row in rows], dtype=float)
    table = np.array([[row.precision, row.recall, row.f1] for row in rows])
    weights = supports / supports.sum()
    macro = tuple(float(x) for x in table.mean(axis=0))
    weighted = tuple(float(x) for x in weights @ table)
    return ClassReport(
        rows=tuple(rows),
        matrix=matrix,
        n=n,
        accuracy=float(np.trace(matrix[:, :k]) / n),
        macro=macro,  # type: ignore[arg-type]
        weighted=weighted,  # type: ignore[arg-type]
        seed=seed,
        replicates=replicates,
    )
