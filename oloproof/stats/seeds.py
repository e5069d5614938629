"""The recipe across k seeds: a pass rate from n cases crossed with k seeds (STATISTICS.md §3).

The estimand is the pass rate of a *new* seed on a *new* case: both the cases and the seeds
are samples, so the interval must carry case-to-case and seed-to-seed variation. The data are
the n × k matrix Y of 0/1 outcomes (rows = cases, columns = seeds / independent runs).

Method (approximate, "crossed-anova-logit-t"):

* two-way ANOVA without replication (e.g. Montgomery, *Design and Analysis of Experiments*,
  randomized complete block design):
  MS_case = k·var(row means), MS_seed = n·var(column means) (ddof = 1),
  MS_e = Σ(Y_ij − row_i − col_j + grand)² / ((n − 1)(k − 1));
* variance of the grand mean under the crossed random-effects model (cases and seeds both
  random): V = (MS_case + MS_seed − MS_e)/(nk), bounded below by MS_case/(nk) and
  MS_seed/(nk) so a negative variance-component estimate never shrinks it;
* interval on the logit scale with Student t on k − 1 degrees of freedom (seeds are the
  scarce replicate): logit(p̂) ± t_{k−1}·√V/(p̂(1 − p̂)), by the delta method, then
  back-transformed, with p̂ clipped to [½/(nk), 1 − ½/(nk)] so the logit is finite.

The guide's example (the shipped model-validation example: n = 350, seeds passing 313, 301, 300,
314, 316, 10.7% of cases changing verdict between two seeds on average, 81 between some two)
gives 88.2% [83.2%, 91.9%]; so does the constructed matrix of tests/stats/test_seeds.py (300,
307, 310, 311, 316). Coverage by regime (docs/statistics.md, benchmarks/seeds_coverage.py):
97.7–100% at k = 3; at k = 5 and 10, 96–100% while seed-to-seed variation is small (as in the
guide), but the lower bound errs about 3–4% of the time (nominal 2.5%) at seed sd 0.5 on the
logit scale, and up to 7.0% (k = 5) and 7.4% (k = 10) at seed sd 1.0 (documented, not fixed: no
variant measured holds 2.5% there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from oloproof.stats._validate import check_confidence
from oloproof.stats.interval import Interval

__all__ = ["Anova", "RecipeResult", "recipe_interval"]

DegreesOfFreedom = Literal["k-1", "satterthwaite"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Anova:
    """The two-way ANOVA behind one bound (mean squares of 0/1 outcomes, unitless).

    ``variance`` is V, the variance of the grand mean (fraction²); ``df`` the degrees of freedom
    of the t quantile used with it.
    """

    pass_rate: float
    ms_case: float
    ms_seed: float
    ms_error: float
    variance: float
    df: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RecipeResult:
    """Pass rate of a new seed on a new case, with the evidence behind it.

    ``n`` counts cases (rows), ``k`` seeds (columns). ``interval`` is the two-sided interval for
    the pass rate as a fraction; its estimate is the pass rate over answered cells.
    ``seed_pass_rates[j]`` is seed j's pass rate over the cases it answered (``None`` if it
    answered none); ``seed_missing[j]`` how many cases it left unanswered.
    ``unstable_cases`` are the row indices whose answered outcomes differ across seeds;
    ``incomplete_cases`` the rows with at least one missing output. ``ceiling`` is the lower bound
    of an all-pass n × k matrix: no matrix of this shape gets a higher lower bound (nor an upper
    bound below 1 − ceiling), so a ``min`` above it can never be cleared with k seeds on n cases
    (0.986 for 350 × 5, 0.881 for 38 × 5, 0.827 for 350 × 3 at 95%). ``anova_low`` is the ANOVA of
    Y with missing = 0 (it gives the lower bound), ``anova_high`` with missing = 1 (upper bound);
    they are equal when nothing is missing.
    """

    interval: Interval
    n: int
    k: int
    ceiling: float
    seed_pass_rates: tuple[float | None, ...]
    seed_missing: tuple[int, ...]
    unstable_cases: tuple[int, ...]
    incomplete_cases: tuple[int, ...]
    missing: int
    anova_low: Anova
    anova_high: Anova


def _as_matrix(name: str, values: np.ndarray, *, allow_nan: bool) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of cases × seeds, got shape {array.shape}")
    if array.dtype == bool:
        return array.astype(float)
    if not np.issubdtype(array.dtype, np.number):
        raise TypeError(f"{name} must hold numbers 0/1 (or NaN for missing), got dtype {array.dtype}")
    matrix = array.astype(float)
    missing = np.isnan(matrix)
    if missing.any() and not allow_nan:
        raise ValueError(f"{name} must not contain NaN when Y_high is given")
    bad = ~missing & (matrix != 0.0) & (matrix != 1.0)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        raise ValueError(f"{name}[{i}, {j}] must be 0 or 1 (NaN for a missing output), got {matrix[i, j]!r}")
    return matrix


def _anova(y: np.ndarray, t_level: float, df_rule: DegreesOfFreedom) -> tuple[Anova, float, float]:
    """ANOVA of one complete 0/1 matrix; returns it with the logit-t interval (low, high)."""
    n, k = y.shape
    cells = n * k
    grand = float(y.mean())
    row = y.mean(axis=1)
    col = y.mean(axis=0)
    ms_case = k * float(row.var(ddof=1))
    ms_seed = n * float(col.var(ddof=1))
    resid = y - row[:, None] - col[None, :] + grand
    ms_error = float((resid * resid).sum()) / ((n - 1) * (k - 1))
    # Variance of the grand mean with cases and seeds both random (STATISTICS.md §3):
    # E[MS_case + MS_seed − MS_e] = nk·Var(grand mean) in the additive crossed model.
    combined = ms_case + ms_seed - ms_error
    variance_sum = max(combined, ms_case, ms_seed)
    # p̂ clipped to [½/(nk), 1 − ½/(nk)] keeps the logit finite (STATISTICS.md §3).
    p = min(max(grand, 0.5 / cells), 1.0 - 0.5 / cells)
    # Guard (ours, not in §3): when every cell is equal all mean squares are 0 and the interval
    # would collapse to a point at the clipped p̂. Never let V fall below the binomial variance
    # of nk independent outcomes at the clipped p̂; it binds only for (near-)constant matrices.
    floor = p * (1.0 - p)
    if df_rule == "k-1":
        df = float(k - 1)
    elif variance_sum < floor:
        df = float(k - 1)
    elif variance_sum == combined:
        # Satterthwaite (1946): df of a linear combination Σ a_i MS_i is
        # (Σ a_i MS_i)² / Σ (a_i MS_i)²/df_i, here with a = (1, 1, −1).
        denominator = ms_case**2 / (n - 1) + ms_seed**2 / (k - 1) + ms_error**2 / ((n - 1) * (k - 1))
        df = max(1.0, combined**2 / denominator) if denominator > 0 else float(k - 1)
    elif variance_sum == ms_case:
        df = float(n - 1)
    else:
        df = float(k - 1)
    variance = max(variance_sum, floor) / cells
    t = float(stats.t.ppf(t_level, df))
    centre = math.log(p / (1.0 - p))
    # Delta method: SE(logit p̂) = SE(p̂)/(p̂(1 − p̂)).
    half = t * math.sqrt(variance) / (p * (1.0 - p))
    low = 1.0 / (1.0 + math.exp(-(centre - half)))
    high = 1.0 / (1.0 + math.exp(-(centre + half)))
    anova = Anova(
        pass_rate=grand,
        ms_case=ms_case,
        ms_seed=ms_seed,
        ms_error=ms_error,
        variance=variance,
        df=df,
    )
    return anova, low, high


def recipe_interval(
    Y_low: np.ndarray,
    Y_high: np.ndarray | None = None,
    *,
    confidence: float,
    df: DegreesOfFreedom = "k-1",
) -> RecipeResult:
    """Interval for the pass rate of a new seed on a new case, from n cases × k seeds.

    The usual call passes one matrix, ``recipe_interval(Y, confidence=0.95)``: ``Y`` has shape
    (n, k), n cases (rows) by k seeds (columns), entries 1 = pass, 0 = fail, NaN = missing
    output (bool arrays are accepted). Missing outputs are bounded, as in §1: the lower bound is
    computed from Y with missing = 0, the upper bound from Y with missing = 1, so a failed seed
    widens the interval instead of being dropped. (Alternatively pass the two completed 0/1
    matrices yourself as ``Y_low`` and ``Y_high``; cells where they differ are the missing ones.)

    ``df="k-1"`` (default) uses t on k − 1 degrees of freedom; ``df="satterthwaite"`` uses the
    Satterthwaite degrees of freedom of MS_case + MS_seed − MS_e (opt-in: 3–50% narrower, and its
    one-sided error reaches 4–5% at seed sd 0.5 on the logit scale, 8% at 1.0; docs/statistics.md).

    Raises ``ValueError`` if k < 2 or n < 2 (no ANOVA is possible; a caller should report
    INSUFFICIENT_EVIDENCE for k < 3 before calling) or if no output at all was observed.
    The result is approximate (``method="crossed-anova-logit-t"``). The estimate is the pass rate
    over answered cells. It always lies within the interval: if p̂ is 0 or 1 the corresponding
    bound is 0 or 1 (the clipped logit would otherwise stop just short of it). No lower bound
    exceeds that of the all-pass matrix (``ceiling``), so a perfect recipe never fares worse
    than one with failures; the interval is otherwise *not* monotone in the outcomes (see
    docs/statistics.md): one seed doing better can widen it, since the estimand is a new seed's
    pass rate and seed-to-seed variation counts.
    """
    level = check_confidence(confidence)
    if df not in ("k-1", "satterthwaite"):
        raise ValueError(f"df must be 'k-1' or 'satterthwaite', got {df!r}")
    if Y_high is None:
        y = _as_matrix("Y", Y_low, allow_nan=True)
        missing_mask = np.isnan(y)
        y0 = np.where(missing_mask, 0.0, y)
        y1 = np.where(missing_mask, 1.0, y)
    else:
        y0 = _as_matrix("Y_low", Y_low, allow_nan=False)
        y1 = _as_matrix("Y_high", Y_high, allow_nan=False)
        if y0.shape != y1.shape:
            raise ValueError(f"Y_low and Y_high must have the same shape, got {y0.shape} and {y1.shape}")
        if (y0 > y1).any():
            i, j = (int(v) for v in np.argwhere(y0 > y1)[0])
            raise ValueError(f"Y_low[{i}, {j}] = 1 but Y_high[{i}, {j}] = 0: Y_low must be <= Y_high")
        missing_mask = y0 != y1
    n, k = y0.shape
    if k < 2:
        raise ValueError(f"Y must have at least 2 seeds (columns) to estimate seed variation, got {k}")
    if n < 2:
        raise ValueError(f"Y must have at least 2 cases (rows), got {n}")
    answered = ~missing_mask
    if not answered.any():
        raise ValueError("every output in Y is missing: there is no pass rate to estimate")

    t_level = 0.5 + level / 2.0
    anova_low, low, high = _anova(y0, t_level, df)
    anova_high = anova_low
    if missing_mask.any():
        anova_high, _, high = _anova(y1, t_level, df)
    # A perfect matrix must never get a lower bound below one with failures (issue 10: near
    # p̂ = 1 the delta method on the logit scale widens faster than p̂ rises; 38 cases × 5 seeds
    # gave 0.881 with no failure and 0.921 with one). Every lower bound is capped at the all-pass
    # matrix's, every upper bound at the all-fail matrix's (1 − the same, by symmetry).
    _, ceiling, _ = _anova(np.ones((n, k)), t_level, df)
    low, high = min(low, ceiling), max(high, 1.0 - ceiling)
    # At p̂ = 1 (or 0) the clipped logit stops just short of it: that bound is 1 (or 0) exactly.
    if y1.min() == 1.0:
        high = 1.0
    if y0.max() == 0.0:
        low = 0.0

    estimate = float(y0[answered].mean())
    if not low <= estimate <= high:
        raise ArithmeticError(
            f"seeds interval [{low!r}, {high!r}] does not contain its estimate {estimate!r}; "
            "this is a bug in oloproof, please report it with the matrix"
        )
    method = "crossed-anova-logit-t" if df == "k-1" else "crossed-anova-logit-t-satterthwaite"
    interval = Interval(estimate=estimate, low=low, high=high, level=level, method=method, approximate=True)

    seed_answered = answered.sum(axis=0)
    seed_passes = (y0 * answered).sum(axis=0)
    seed_rates = tuple(float(p) / int(a) if a else None for p, a in zip(seed_passes, seed_answered, strict=True))
    # A case is unstable when its answered outcomes disagree across seeds; a missing output is
    # not evidence either way.
    row_min = np.where(answered, y0, np.inf).min(axis=1)
    row_max = np.where(answered, y0, -np.inf).max(axis=1)
    unstable = np.flatnonzero(answered.any(axis=1) & (row_min != row_max))
    incomplete = np.flatnonzero(missing_mask.any(axis=1))
    return RecipeResult(
        interval=interval,
        n=n,
        k=k,
        ceiling=ceiling,
        seed_pass_rates=seed_rates,
        seed_missing=tuple(int(v) for v in missing_mask.sum(axis=0)),
        unstable_cases=tuple(int(i) for i in unstable),
        incomplete_cases=tuple(int(i) for i in incomplete),
        missing=int(missing_mask.sum()),
        anova_low=anova_low,
        anova_high=anova_high,
    )
