"""How well an LLM judge agrees with human labels on the same cases.

Raw agreement gets the exact Clopper–Pearson interval; Cohen's kappa (agreement beyond what
the two label frequencies give by chance) gets the large-sample interval of Fleiss, Cohen &
Everitt (1969), "Large sample standard errors of kappa and weighted kappa", Psychological
Bulletin 72(5): 323–327; the same formula is in Fleiss, Levin & Paik (2003), "Statistical
Methods for Rates and Proportions", 3rd ed., ch. 18. It is the multinomial delta-method
variance of kappa (the tests check it against a numerical delta method).
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from oloproof.stats._validate import check_confidence
from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.interval import Interval

__all__ = ["AgreementResult", "judge_agreement"]

KAPPA_METHOD = "cohen-kappa-fleiss-cohen-everitt"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgreementResult:
    """Judge–human agreement on ``n`` cases (each case labelled once by each).

    ``agreement`` is the exact interval for the share of cases given the same label.
    ``kappa`` is Cohen's kappa, (p_o − p_e)/(1 − p_e), in [−1, 1]. It is NaN, and
    ``kappa_interval`` is None, when chance agreement p_e is 1 — both used one and the same
    label for every case: agreement is then complete but says nothing about whether the judge
    can tell labels apart, so read ``agreement`` and check that the set covers more than one
    label. ``kappa_interval`` is approximate (a large-sample normal interval, clipped to
    [−1, 1]); it has zero width when the agreement is perfect.

    ``by_human_label`` maps each label people used to the exact (Clopper–Pearson) interval for
    the share of the cases they gave that label on which the judge gave it too: for pass/fail,
    the judge's agreement on human passes (sensitivity) and on human fails (specificity).
    Raw agreement alone cannot tell a judge from a rubber stamp: with people failing 10 of 200
    cases, a judge that says "pass" every time agrees on 95% of them (κ = 0) but on none of
    the fails. ``human_counts`` holds how many cases people gave each label.
    """

    n: int
    agreement: Interval
    kappa: float
    kappa_interval: Interval | None
    by_human_label: dict[Hashable, Interval]
    human_counts: dict[Hashable, int]


def judge_agreement(judge: Sequence[Hashable], human: Sequence[Hashable], *, confidence: float) -> AgreementResult:
    """Agreement between ``judge`` and ``human`` labels, given case by case in the same order.

    Labels are any hashable values compared with ``==`` (``None`` is a label like any other;
    drop unlabelled cases before calling).
    """
    level = check_confidence(confidence)
    n = len(judge)
    if len(human) != n:
        raise ValueError(f"judge and human must label the same cases: {n} vs {len(human)} labels")
    if n == 0:
        raise ValueError("judge and human must not be empty")
    codes: dict[Hashable, int] = {}
    j = np.fromiter((codes.setdefault(label, len(codes)) for label in judge), np.int64, n)
    h = np.fromiter((codes.setdefault(label, len(codes)) for label in human), np.int64, n)
    k = len(codes)
    # Joint proportions p_ij: row = judge's label, column = human's label.
    table = np.bincount(j * k + h, minlength=k * k).reshape(k, k) / n
    rows = table.sum(axis=1)
    cols = table.sum(axis=0)
    equal = int((j == h).sum())
    agreement = clopper_pearson(equal, n, confidence=level)
    labels = list(codes)
    human_counts = {labels[code]: int((h == code).sum()) for code in sorted(set(h.tolist()))}
    by_human_label = {
        label: clopper_pearson(int(((h == codes[label]) & (j == h)).sum()), count, confidence=level)
        for label, count in human_counts.items()
    }

    p_o = float(np.trace(table))
    p_e = float(rows @ cols)
    if p_e >= 1.0:
        return AgreementResult(
            n=n,
            agreement=agreement,
            kappa=math.nan,
            kappa_interval=None,
            by_human_label=by_human_label,
            human_counts=human_counts,
        )
    # Clipped: with perfect agreement rounding can give 1.0000000000000004, outside kappa's range.
    kappa = min(max((p_o - p_e) / (1.0 - p_e), -1.0), 1.0)

    # Fleiss, Cohen & Everitt (1969): non-null large-sample variance of kappa,
    #   Var = [A + B − C] / (n (1 − p_e)²), with
    #   A = Σ_i p_ii [1 − (p_i. + p_.i)(1 − κ)]²
    #   B = (1 − κ)² Σ_{i≠j} p_ij (p_.i + p_j.)²
    #   C = [κ − p_e (1 − κ)]²
    diag = np.diag(table)
    a_term = float(np.sum(diag * (1.0 - (rows + cols) * (1.0 - kappa)) ** 2))
    # (p_.i + p_j.) for cell (i, j): column total of i plus row total of j.
    cross = cols[:, None] + rows[None, :]
    off = table.copy()
    np.fill_diagonal(off, 0.0)
    b_term = (1.0 - kappa) ** 2 * float(np.sum(off * cross**2))
    c_term = (kappa - p_e * (1.0 - kappa)) ** 2
    raw = a_term + b_term - c_term
    # A zero variance (a constant rater) comes out as ±1e-16 from cancellation: zero it, or the
    # interval's width would depend on which rater is named first.
    if raw <= 1e-12 * (a_term + b_term + c_term):
        raw = 0.0
    variance = raw / (n * (1.0 - p_e) ** 2)
    half_width = float(stats.norm.isf((1.0 - level) / 2.0)) * math.sqrt(variance)
    kappa_interval = Interval(
        estimate=kappa,
        low=max(kappa - half_width, -1.0),
        high=min(kappa + half_width, 1.0),
        level=level,
        method=KAPPA_METHOD,
        approximate=True,
    )
    return AgreementResult(
        n=n,
        agreement=agreement,
        kappa=kappa,
        kappa_interval=kappa_interval,
        by_human_label=by_human_label,
        human_counts=human_counts,
    )
