"""Mean of one run's scores in [0, 1] (rewards, graded judges) — STATISTICS.md §1b.

Exact (coverage ≥ confidence for every distribution on [0, 1], cases independent):
:func:`bounded_mean_betting` (Waudby-Smith & Ramdas 2023, averaged over seeded random orders so
that it does not depend on the order of the cases) and the looser
:func:`bounded_mean_hoeffding`. Approximate: :func:`bounded_mean_t` and
:func:`bounded_mean_bca`. Every method here is a function of the multiset of scores (and a
seed): the order in which cases are given never changes the interval.

Every function takes ``scores``, one float in [0, 1] per case. Cases that produced no output
are given either in place, as NaN in ``scores``, or as a count, ``missing``, of further cases.
``n`` is always every case, answered or not. The lower bound is computed with missing cases
scored 0 and the upper bound with them scored 1; the estimate is the mean score of the answered
cases (0.0 when none was answered, as for :func:`~oloproof.stats.binomial.clopper_pearson`).
Bounds are proportions in [0, 1]. No bound is ever moved to the estimate: an interval that
would not contain its own estimate raises ArithmeticError (it would be a bug, not data).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any, TypeAlias

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special, stats

from oloproof.stats._validate import check_confidence, check_count, check_seed
from oloproof.stats.interval import Interval

__all__ = [
    "betting_lower_rows",
    "bounded_mean_bca",
    "bounded_mean_betting",
    "bounded_mean_hoeffding",
    "bounded_mean_t",
    "order_seed",
    "permutation_count",
]

# Hedged-capital truncation: bets are capped at c/m and c/(1 − m) so that no single case can
# lose more than a fraction c of the capital. Waudby-Smith & Ramdas (2023), hedged capital
# process, suggest c = 1/2 or 3/4; 1/2 is also the default of their `confseq` package
# (``trunc_scale``).
BET_TRUNCATION = 0.5

# Each reported bound is a mean known to be excluded, at most a few times this below (above)
# the exact end; erring outwards only adds coverage.
BETTING_TOLERANCE = 1e-7

# Random orders averaged by the betting interval: 32, fewer for very large n (see
# permutation_count).
MAX_PERMUTATIONS = 32
MIN_PERMUTATIONS = 1
_PERMUTATION_TERMS = 1_000_000

# Scores: a list of floats or a 1-D numpy array; NaN marks a case without output.
Scores: TypeAlias = Sequence[float] | NDArray[Any]


def _completed(scores: Scores, missing: int) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Scores with ``missing`` NaNs appended, and the missing mask. Validates everything."""
    check_count("missing", missing)
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    if values.size + missing == 0:
        raise ValueError("need at least one case: scores is empty and missing is 0")
    if np.isinf(values).any():
        raise ValueError("scores must be finite (NaN marks a missing case)")
    answered = values[~np.isnan(values)]
    if ((answered < 0.0) | (answered > 1.0)).any():
        bad = answered[(answered < 0.0) | (answered > 1.0)][0]
        raise ValueError(f"scores must lie in [0, 1], got {bad!r}")
    full = np.concatenate([values, np.full(missing, np.nan)])
    return full, np.isnan(full)


def _estimate(full: NDArray[np.float64], mask: NDArray[np.bool_]) -> float:
    return float(full[~mask].mean()) if (~mask).any() else 0.0


def _fill(full: NDArray[np.float64], mask: NDArray[np.bool_], value: float) -> NDArray[np.float64]:
    return np.where(mask, value, full)


def _interval(
    estimate: float, low: float, high: float, level: float, method: str, approximate: bool, seed: int | None = None
) -> Interval:
    """The result, with bounds clipped to [0, 1]; never moved towards the estimate."""
    low, high = max(low, 0.0), min(high, 1.0)
    if not low <= estimate <= high:
        raise ArithmeticError(
            f"{method} interval [{low!r}, {high!r}] does not contain its estimate {estimate!r}; "
            "this is a bug in oloproof, please report it with the scores"
        )
    return Interval(
        estimate=estimate, low=low, high=high, level=level, method=method, approximate=approximate, seed=seed
    )


# --------------------------------------------------------------------------------------------
# Betting (Waudby-Smith & Ramdas 2023), averaged over seeded random orders


def permutation_count(n: int) -> int:
    """How many random orders the betting interval averages over for n cases.

    32 up to 31,250 cases, then fewer (10 at 100,000, one from a million) so the work and the
    memory stay near a million terms per evaluation of the capital. Depends only on n, never on
    the scores, so validity is untouched (one random order is already exact); with large n the
    orders differ less (the bound's spread over seeds is below 1e-4 from 10,000 cases on).
    """
    return int(min(MAX_PERMUTATIONS, max(MIN_PERMUTATIONS, _PERMUTATION_TERMS // max(n, 1))))


def _random_orders(x: NDArray[np.float64], seed: int, count: int) -> NDArray[np.float64]:
    """``count`` rows, each the scores in an independent uniformly random order.

    The scores are sorted first, so the rows depend only on the multiset of scores and the seed,
    never on the order the caller passed. Each order ranks ``n`` uniform draws of numpy's
    default generator (PCG64) seeded with ``seed``: the same seed gives the same orders.
    """
    ordered = np.sort(x)
    rng = np.random.default_rng(seed)
    ranks = np.argsort(rng.random((count, x.size)), axis=1, kind="stable")
    return ordered[ranks]


def _plug_in_bets(x: NDArray[np.float64], alpha: float) -> NDArray[np.float64]:
    """Predictable plug-in bets λ_t for a fixed-n interval, before truncation; one row per order.

    Waudby-Smith & Ramdas (2023), "Estimating means of bounded random variables by betting",
    JRSS-B 86(1): the predictable plug-in bets of the hedged capital process, with t·log(1 + t)
    replaced by n for a fixed-time interval (as their fixed-n intervals and
    ``confseq.betting.betting_ci`` do):
        μ̂_t = (1/2 + Σ_{i≤t} x_i) / (t + 1),    σ̂²_t = (1/4 + Σ_{i≤t} (x_i − μ̂_i)²) / (t + 1),
        λ_t = √(2 log(2/α) / (n σ̂²_{t−1})),       σ̂²_0 = 1/4.
    λ_t uses only x_1..x_{t−1} (and n), which is what makes the capital a supermartingale.
    """
    rows, n = x.shape
    t = np.arange(1, n + 1)
    mu = (0.5 + np.cumsum(x, axis=1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((x - mu) ** 2, axis=1)) / (t + 1)
    sigma2_prev = np.concatenate([np.full((rows, 1), 0.25), sigma2[:, :-1]], axis=1)
    lam: np.ndarray = np.sqrt(2.0 * math.log(2.0 / alpha) / (n * sigma2_prev))
    return lam


def _log_mean_capital(x: NDArray[np.float64], bets: NDArray[np.float64], m: float) -> float:
    """log of the mean over orders of the final positive capital K⁺_n(m).

    K⁺_n(m) = Π_i (1 + λ⁺_i(m)(x_i − m)) with λ⁺_i(m) = min(λ_i, c/m): every factor is at least
    1 − c > 0 and non-increasing in m, so the mean capital is non-increasing in m and the set of
    means it excludes is an interval [0, a).
    """
    lam = bets if m <= 0.0 else np.minimum(bets, BET_TRUNCATION / m)
    log_capital = np.log1p(lam * (x - m)).sum(axis=1)
    return float(special.logsumexp(log_capital)) - math.log(x.shape[0])


def _betting_lower(x: NDArray[np.float64], alpha: float) -> float:
    """Lower end of the interval from the orders in the rows of ``x`` (one row: one order).

    The smallest mean m at which the mean over orders of K⁺_n(m) stays below 2/α, found by
    Brent's method on the monotone log capital and then moved down until the returned point is
    known to be excluded, so the bound errs outwards by at most a few BETTING_TOLERANCE.
    (The hedged capital max(K⁺, K⁻)/2 reaches 1/α iff K⁺ or K⁻ reaches 2/α, so the lower bound
    needs K⁺ alone.)
    """
    bets = _plug_in_bets(x, alpha)
    barrier = math.log(2.0 / alpha)

    def excess(m: float) -> float:
        return _log_mean_capital(x, bets, m) - barrier

    if excess(0.0) < 0.0:
        return 0.0
    # m = 1 is never excluded from below: every factor is at most 1.
    root = float(optimize.brentq(excess, 0.0, 1.0, xtol=BETTING_TOLERANCE / 4, rtol=4 * np.finfo(float).eps))
    step = BETTING_TOLERANCE / 4
    low = root
    while low > 0.0 and excess(low) < 0.0:
        low = max(low - step, 0.0)
        step *= 2
    return low


def betting_lower_rows(rows: NDArray[np.float64], *, alpha: float) -> float:
    """Lower end of the order-averaged betting interval at one-sided level α/2, from ``rows``.

    Each row is one sequence of values in [0, 1] that, under the model, are independent draws
    with the mean being bounded, in a random order chosen independently of the values (the
    rows of :func:`_random_orders`, or the per-block values of
    :func:`oloproof.stats.auc.auc_interval_exact`). The mean over rows of the final capital is
    an e-value, so the returned bound is exceeded by the true mean with probability ≤ α/2.
    """
    values = np.asarray(rows, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] == 0:
        raise ValueError("rows must be a non-empty two-dimensional array")
    if np.isnan(values).any() or (values < 0.0).any() or (values > 1.0).any():
        raise ValueError("rows must hold values in [0, 1]")
    return _betting_lower(values, alpha)


def order_seed(digest: str) -> int:
    """The seed of the betting interval's random orders for a test set: from its digest.

    The test-set digest (e.g. ``"sha256:<hex>"``, computed over the sorted case lines, so it does
    not depend on file order) is hashed with a fixed label into a 64-bit seed. It is fixed before
    any score is seen, and anyone can recompute it from the test set alone: a pull request cannot
    pick a favourable seed without changing the test set itself.
    """
    if not isinstance(digest, str) or not digest:
        raise ValueError("digest must be a non-empty string")
    hashed = hashlib.sha256(b"oloproof betting order\0" + digest.encode("utf-8")).digest()
    return int.from_bytes(hashed[:8], "big")


def bounded_mean_betting(
    scores: Scores,
    *,
    confidence: float,
    seed: int,
    missing: int = 0,
) -> Interval:
    """Exact, order-free interval for the mean of scores in [0, 1]: hedged capital betting.

    Waudby-Smith & Ramdas (2023), hedged capital process (θ = 1/2, bets truncated at c = 1/2)
    with predictable plug-in bets tuned for n cases, made independent of the order of the cases:
    the scores are sorted, put in ``permutation_count(n)`` random orders drawn from ``seed``, and
    a mean m is excluded from below when the **mean over those orders of the final capital**
    K⁺_n(m) reaches 2/α (α = 1 − confidence); the upper end is 1 − (lower end for 1 − x), with
    the same seed.

    Why it is exact: the cases are independent draws from one distribution, and each order is a
    uniformly random permutation independent of the scores, so each permuted sequence is again
    an independent sample; its final capital at the true mean is a non-negative martingale with
    mean ≤ 1 (an e-value), a mean of e-values is an e-value (Vovk & Wang 2021, "E-values:
    calibration, combination and applications", Ann. Statist. 49(3)), and Markov's inequality
    gives P(mean capital ≥ 2/α) ≤ α/2 per side. The guarantee averages over the seed as well as
    the data; a seed fixed in advance (:func:`order_seed`) plays the part of that draw. Only
    the final capital is used (the running maximum over t is valid for one order, not for a
    mean over orders); this costs about 0.1–0.5% of the width.

    The result depends only on the multiset of scores and ``seed``: a file sorted by score or
    grouped by category gives the same interval as any shuffle of it (the one-order interval it
    replaces put its lower bound above the true mean about half the time on such files). Over
    seeds the bound varies by a few 1e-4 at most (32 orders); choosing among seeds cannot buy a
    meaningful gain. The result records ``seed`` so a report can print it.

    Missing cases: NaN in ``scores`` marks a case without output; ``missing`` counts further
    ones (equivalent, since the order no longer matters). The lower bound scores them 0, the
    upper bound 1. A bound that crosses the estimate would be a bug and raises ArithmeticError.

    Time: about 10 ms for 1,000 scores, 0.1 s for 10,000, 0.35 s for 100,000 and 0.6 s for a
    million (one core, shared machine).
    """
    level = check_confidence(confidence)
    check_seed(seed)
    alpha = 1.0 - level
    full, mask = _completed(scores, missing)
    count = permutation_count(full.size)
    low = _betting_lower(_random_orders(_fill(full, mask, 0.0), seed, count), alpha)
    high = 1.0 - _betting_lower(_random_orders(1.0 - _fill(full, mask, 1.0), seed, count), alpha)
    return _interval(_estimate(full, mask), low, high, level, "betting-wsr", approximate=False, seed=seed)


# --------------------------------------------------------------------------------------------
# Hoeffding


def bounded_mean_hoeffding(scores: Scores, *, confidence: float, missing: int = 0) -> Interval:
    """Exact but conservative interval for the mean of scores in [0, 1]: Hoeffding's bound.

    mean ± √(log(2/α) / (2n)) (Hoeffding 1963, Theorem 2, range 1, each side at α/2), clipped to
    [0, 1]. Ignores the variance, so it is much wider than the betting interval when scores are
    concentrated; useful as a simple cross-check.
    """
    level = check_confidence(confidence)
    full, mask = _completed(scores, missing)
    half_width = math.sqrt(math.log(2.0 / (1.0 - level)) / (2.0 * full.size))
    low = float(_fill(full, mask, 0.0).mean()) - half_width
    high = float(_fill(full, mask, 1.0).mean()) + half_width
    return _interval(_estimate(full, mask), low, high, level, "hoeffding", approximate=False)


# --------------------------------------------------------------------------------------------
# Approximate: Student t and BCa bootstrap


def _t_bounds(y: NDArray[np.float64], tail: float) -> tuple[float, float]:
    n = y.size
    if n < 2:
        return 0.0, 1.0  # no variance estimate from one case
    half_width = float(stats.t.isf(tail, n - 1)) * float(y.std(ddof=1)) / math.sqrt(n)
    mean = float(y.mean())
    return mean - half_width, mean + half_width


def bounded_mean_t(scores: Scores, *, confidence: float, missing: int = 0) -> Interval:
    """Approximate interval: mean ± t_{1−α/2, n−1} · s/√n, clipped to [0, 1].

    Under-covers for skewed scores (most mass at 0 or 1) and collapses to a point when all
    scores are equal; one case gives [0, 1].
    """
    level = check_confidence(confidence)
    tail = (1.0 - level) / 2.0
    full, mask = _completed(scores, missing)
    low, _ = _t_bounds(_fill(full, mask, 0.0), tail)
    _, high = _t_bounds(_fill(full, mask, 1.0), tail)
    return _interval(_estimate(full, mask), low, high, level, "student-t", approximate=True)


def _bca_bounds(
    y: NDArray[np.float64], level: float, rng: np.random.Generator, n_resamples: int
) -> tuple[float, float]:
    if y.size < 2:
        return 0.0, 1.0
    if np.all(y == y[0]):
        # Every resample has the same mean; scipy would warn and return NaN. (The mean, not y[0]:
        # the two can differ in the last bit, and the estimate is the mean.)
        mean = float(y.mean())
        return mean, mean
    result = stats.bootstrap(
        (y,),
        np.mean,
        confidence_level=level,
        n_resamples=n_resamples,
        method="BCa",
        rng=rng,
    )
    low = float(result.confidence_interval.low)
    high = float(result.confidence_interval.high)
    if math.isnan(low) or math.isnan(high):
        # BCa's acceleration is undefined for some near-degenerate samples (e.g. one odd value
        # in a large sample); fall back to the percentile interval of the same kind of resample.
        result = stats.bootstrap(
            (y,),
            np.mean,
            confidence_level=level,
            n_resamples=n_resamples,
            method="percentile",
            rng=rng,
        )
        low = float(result.confidence_interval.low)
        high = float(result.confidence_interval.high)
    return low, high


def bounded_mean_bca(
    scores: Scores,
    *,
    confidence: float,
    rng: np.random.Generator,
    n_resamples: int = 10000,
    missing: int = 0,
) -> Interval:
    """Approximate interval: BCa bootstrap of the mean (Efron 1987; scipy.stats.bootstrap).

    ``rng`` drives the resampling (seed it from the config and print the seed). Two bootstraps
    are run when cases are missing (missing scored 0 for the lower bound, 1 for the upper).
    All-equal scores give a zero-width interval at that value; one case gives [0, 1].
    """
    level = check_confidence(confidence)
    check_count("n_resamples", n_resamples, minimum=1)
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    full, mask = _completed(scores, missing)
    if mask.any():
        low, _ = _bca_bounds(_fill(full, mask, 0.0), level, rng, n_resamples)
        _, high = _bca_bounds(_fill(full, mask, 1.0), level, rng, n_resamples)
    else:
        low, high = _bca_bounds(full, level, rng, n_resamples)
    return _interval(_estimate(full, mask), low, high, level, "bca-bootstrap", approximate=True)
