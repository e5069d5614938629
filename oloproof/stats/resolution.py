"""Resolution and power: what a test set of this size can settle (STATISTICS.md §7).

Rates, thresholds and distances are proportions in [0, 1] (0.05 is 5 points). ``n`` counts the
cases of the test set. Power is the probability that a run PASSes its rule when the true rate is
on the passing side of the threshold, under the gate's exact Clopper–Pearson decision:
``min`` rules PASS iff the lower bound ≥ threshold, ``max`` rules iff the upper bound ≤ threshold.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from oloproof.stats._validate import check_confidence, check_count, check_probability
from oloproof.stats.binomial import cp_lower, cp_upper

__all__ = [
    "cases_needed",
    "detectable_distance",
    "paired_cases_needed",
    "paired_cases_needed_exact",
    "paired_exact_power",
    "paired_mdd",
]

Side = Literal["min", "max"]

# cases_needed stops looking past this many cases: sizing advice beyond ten million cases is
# not advice, and the scan would take seconds.
MAX_CASES = 10_000_000


def _check_side(side: str) -> Side:
    if side == "min":
        return "min"
    if side == "max":
        return "max"
    raise ValueError(f"side must be 'min' or 'max', got {side!r}")


def _check_power(power: float, tail: float) -> float:
    power = check_probability("power", power)
    # At the threshold itself a run PASSes with probability at most (1 - confidence)/2, so a
    # power at or below that is met by d <= 0 and asks nothing of the test set.
    if not (tail < power < 1.0):
        raise ValueError(f"power must lie strictly between {tail!r} and 1, got {power!r}")
    return power


def _critical_min(ns: NDArray[np.int64], threshold: float, tail: float) -> NDArray[np.int64]:
    """Smallest pass count x with CP lower(x, n) ≥ threshold, per n; n + 1 where none exists.

    First guess from the binomial tail (CP duality: lower(x, n) ≥ t iff P(X ≥ x | t) ≤ tail,
    i.e. x − 1 ≥ binom.isf(tail, n, t)), then corrected one step at a time against
    :func:`cp_lower` itself, so the answer matches the gate's decision to the last bit.
    """
    guess = np.asarray(stats.binom.isf(tail, ns, threshold), dtype=np.float64)
    x: NDArray[np.int64] = np.clip(guess.astype(np.int64) + 1, 0, ns + 1)
    for _ in range(64):
        x_in = np.minimum(x, ns)
        too_low = (x <= ns) & (cp_lower(x_in, ns, tail) < threshold)
        prev = np.maximum(x - 1, 0)
        can_drop = (x >= 1) & (cp_lower(prev, ns, tail) >= threshold)
        if not (too_low.any() or can_drop.any()):
            return x
        x = np.where(too_low, x + 1, np.where(can_drop, x - 1, x))
    raise RuntimeError("critical count search did not converge")  # pragma: no cover


def _critical_max(ns: NDArray[np.int64], threshold: float, tail: float) -> NDArray[np.int64]:
    """Largest event count x with CP upper(x, n) ≤ threshold, per n; −1 where none exists."""
    # upper(x, n) ≤ t iff P(X ≤ x | t) ≤ tail (CP duality), i.e. x ≤ binom.ppf(tail, n, t) − 1.
    guess = np.asarray(stats.binom.ppf(tail, ns, threshold), dtype=np.float64)
    x: NDArray[np.int64] = np.clip(guess.astype(np.int64) - 1, -1, ns)
    for _ in range(64):
        x_in = np.maximum(x, 0)
        too_high = (x >= 0) & (cp_upper(x_in, ns, tail) > threshold)
        nxt = np.minimum(x + 1, ns)
        can_raise = (x < ns) & (cp_upper(nxt, ns, tail) <= threshold)
        if not (too_high.any() or can_raise.any()):
            return x
        x = np.where(too_high, x - 1, np.where(can_raise, x + 1, x))
    raise RuntimeError("critical count search did not converge")  # pragma: no cover


def detectable_distance(n: int, threshold: float, *, side: Side, confidence: float, power: float = 0.8) -> float | None:
    """Smallest distance d such that a true rate d beyond the threshold PASSes with ``power``.

    For ``side="min"`` the true rate is ``threshold + d``, for ``"max"`` it is
    ``threshold − d``. The computation is exact: with x* the smallest pass count that clears
    the rule at this n, P(PASS | p) = P(X ≥ x*) = I_p(x*, n − x* + 1) (the binomial–beta
    identity), so the rate reaching ``power`` is Beta⁻¹(power; x*, n − x* + 1); no normal
    approximation. Returns None when no run of n cases can clear the threshold at all
    ("this set can never clear it"), and 0.0 when every run clears it (min 0 or max 1).
    Runs in well under a millisecond at n = 100,000.
    """
    check_count("n", n, minimum=1)
    threshold = check_probability("threshold", threshold)
    side = _check_side(side)
    tail = (1.0 - check_confidence(confidence)) / 2.0
    power = _check_power(power, tail)
    ns = np.array([n], dtype=np.int64)
    if side == "min":
        x = int(_critical_min(ns, threshold, tail)[0])
        if x > n:
            return None
        if x == 0:
            return 0.0
        rate = float(stats.beta.ppf(power, x, n - x + 1))
        return rate - threshold
    x = int(_critical_max(ns, threshold, tail)[0])
    if x < 0:
        return None
    if x == n:
        return 0.0
    # P(X ≤ x | p) = 1 − I_p(x + 1, n − x) ≥ power  iff  p ≤ Beta⁻¹(1 − power; x + 1, n − x).
    rate = float(stats.beta.isf(power, x + 1, n - x))
    return threshold - rate


def _power_at(
    ns: NDArray[np.int64], threshold: float, true_rate: float, side: Side, tail: float
) -> NDArray[np.float64]:
    if side == "min":
        x = _critical_min(ns, threshold, tail)
        result = stats.binom.sf(x - 1, ns, true_rate)
        return np.where(x > ns, 0.0, result).astype(np.float64)
    x = _critical_max(ns, threshold, tail)
    result = stats.binom.cdf(x, ns, true_rate)
    return np.where(x < 0, 0.0, result).astype(np.float64)


def _first_reaching(threshold: float, true_rate: float, side: Side, tail: float, power: float, start: int = 1) -> int:
    """Smallest n ≥ start at which the power reaches ``power`` (exact scan in growing blocks)."""
    block = 1024
    while start <= MAX_CASES:
        ns = np.arange(start, min(start + block, MAX_CASES + 1), dtype=np.int64)
        hits = np.nonzero(_power_at(ns, threshold, true_rate, side, tail) >= power)[0]
        if hits.size:
            return int(ns[hits[0]])
        start += block
        block = min(block * 2, 1 << 17)
    raise ValueError(
        f"no test set of up to {MAX_CASES} cases reaches power {power} for a true rate of "
        f"{true_rate} against a {side} of {threshold}"
    )


def cases_needed(
    threshold: float,
    true_rate: float,
    *,
    side: Side,
    confidence: float,
    power: float = 0.8,
    stable: bool = True,
) -> int:
    """Smallest n from which a run with this true rate PASSes the rule with probability ≥ power.

    Exact binomial scan over n. Because pass counts are integers the power is a sawtooth in n,
    not monotone: after it first reaches ``power`` it can fall back below for a while (min 0.8,
    true rate 0.88, 95%: 0.811 at 173 cases, below 0.8 again at 175–178 and 183–184, above for
    good from 185). With ``stable=True`` (the default, and what sizing advice must use) the
    answer is the n from which the power stays at or above ``power``: every n up to
    4·n_first + 4/min(t, 1 − t) is checked exactly (over 6 thresholds × 6 distances × 4 powers
    × both sides the power never dipped again beyond 1.6·n_first, the sawtooth's period being
    about 1/min(t, 1 − t) cases). ``stable=False`` returns where it *first* reaches ``power``.

    ``true_rate`` must lie strictly on the passing side of the threshold (above it for
    ``min``, below it for ``max``); raises ValueError if no set of up to ten million cases
    reaches the power.
    """
    threshold = check_probability("threshold", threshold)
    true_rate = check_probability("true_rate", true_rate)
    side = _check_side(side)
    tail = (1.0 - check_confidence(confidence)) / 2.0
    power = _check_power(power, tail)
    if side == "min" and not true_rate > threshold:
        raise ValueError(f"true_rate must be above the min threshold, got {true_rate!r} <= {threshold!r}")
    if side == "max" and not true_rate < threshold:
        raise ValueError(f"true_rate must be below the max threshold, got {true_rate!r} >= {threshold!r}")
    first = _first_reaching(threshold, true_rate, side, tail, power)
    if not stable:
        return first
    edge = min(threshold, 1.0 - threshold)
    if edge <= 0.0:
        return first  # min 0 or max 1: every run passes, the power is 1 for every n
    horizon = min(int(4 * first + 4 / edge), MAX_CASES)
    ns = np.arange(first, horizon + 1, dtype=np.int64)
    below = np.nonzero(_power_at(ns, threshold, true_rate, side, tail) < power)[0]
    return first if below.size == 0 else int(ns[below[-1]]) + 1


def paired_mdd(n: int, *, psi: float = 0.117, confidence: float = 0.95, power: float = 0.8) -> float:
    """Minimum detectable difference of a paired comparison on n shared cases.

    (z_{1−α/2} + z_power) · √(ψ/n), a proportion (multiply by 100 for points); ψ is the
    discordance, the share of cases on which the two versions disagree (the default 0.117 is
    the gap chapter's 14 of 120). STATISTICS.md §7: 8.7, 6.8, 5.1 and 3.0 points at n = 120,
    200, 350 and 1000. Normal approximation (the McNemar statistic's variance ψ/n under
    small true differences).
    """
    check_count("n", n, minimum=1)
    psi = check_probability("psi", psi)
    if psi <= 0.0:
        raise ValueError("psi must be > 0: with no discordant cases nothing can be detected")
    level = check_confidence(confidence)
    power = check_probability("power", power)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    z_alpha = float(stats.norm.isf((1.0 - level) / 2.0))
    z_power = float(stats.norm.ppf(power))
    return (z_alpha + z_power) * math.sqrt(psi / n)


def paired_cases_needed(delta: float, *, psi: float, confidence: float = 0.95, power: float = 0.8) -> int:
    """Shared cases a paired comparison needs to detect a true difference ``delta`` (the inverse of
    :func:`paired_mdd`): ⌈(z_{1−α/2} + z_power)² · ψ / δ²⌉, normal approximation.

    ``psi`` is the discordance expected between the two versions; a difference can never exceed
    it (every case that moves, moves one way), so ``0 < delta <= psi``. The chapter's 3.3 points
    at ψ = 0.117 need 825 cases.
    """
    delta = check_probability("delta", delta)
    psi = check_probability("psi", psi)
    if psi <= 0.0:
        raise ValueError("psi must be > 0: with no discordant cases nothing can be detected")
    if not 0.0 < delta <= psi:
        raise ValueError(
            f"delta must lie in (0, psi] = (0, {psi:g}]: a paired difference cannot exceed the share of cases that "
            f"move, got {delta!r}"
        )
    level = check_confidence(confidence)
    power = check_probability("power", power)
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must lie strictly between 0 and 1, got {power!r}")
    z = float(stats.norm.isf((1.0 - level) / 2.0)) + float(stats.norm.ppf(power))
    # (z/δ)·(z/δ)·ψ, not z²ψ/δ²: δ² underflows to 0 for δ below about 1e-162.
    needed = (z / delta) * (z / delta) * psi
    if not math.isfinite(needed):
        raise ValueError(f"delta {delta!r} is too small: the number of cases needed exceeds any float")
    return max(1, math.ceil(needed - 1e-9))


def paired_exact_power(n: int, *, delta: float, psi: float, confidence: float = 0.95) -> float:
    """Power of the two-sided exact McNemar test at level 1 − ``confidence`` on ``n`` shared cases
    (equivalently: of the Fay–Lumbard interval excluding 0), when a share ``psi`` of cases is
    discordant and the true difference is ``delta`` (``0 <= |delta| <= psi``).

    Exact: the number of discordant cases m ~ Binomial(n, ψ); given m, b ~ Binomial(m, (ψ + δ)/(2ψ));
    the test rejects when 2·P(X ≤ min(b, m − b)) < α with X ~ Binomial(m, ½).
    """
    check_count("n", n, minimum=1)
    psi = check_probability("psi", psi)
    if psi <= 0.0 or abs(delta) > psi:
        raise ValueError(f"need 0 < psi and |delta| <= psi, got psi={psi!r}, delta={delta!r}")
    alpha = 1.0 - check_confidence(confidence)
    reject = _mcnemar_rejection(n, delta=delta, psi=psi, alpha=alpha)
    return _power_from(reject, n, psi)


def _mcnemar_rejection(m_max: int, *, delta: float, psi: float, alpha: float) -> NDArray[np.float64]:
    """P(the exact McNemar test rejects | m discordant cases), for m = 0 … m_max."""
    m = np.arange(m_max + 1)
    # Largest k with P(X <= k) < α/2 (−1 when none): the lower rejection region is b <= k.
    k = stats.binom.ppf(alpha / 2.0, m, 0.5)
    k = np.where(stats.binom.cdf(k, m, 0.5) < alpha / 2.0, k, k - 1)
    q = (psi + delta) / (2.0 * psi)
    # P(b <= k) + P(b >= m − k), b ~ Binomial(m, q)
    return np.asarray(np.where(k >= 0, stats.binom.cdf(k, m, q) + stats.binom.sf(m - k - 1, m, q), 0.0))


def _power_from(reject: NDArray[np.float64], n: int, psi: float) -> float:
    weights = stats.binom.pmf(np.arange(n + 1), n, psi)
    return float(np.clip(np.sum(weights * reject[: n + 1]), 0.0, 1.0))


# The exact scan stays within this many cases (about a second of work); beyond it only the normal
# approximation is given.
EXACT_SCAN_LIMIT = 20_000


def paired_cases_needed_exact(delta: float, *, psi: float, confidence: float = 0.95, power: float = 0.8) -> int | None:
    """The smallest n from which the exact McNemar test's power (:func:`paired_exact_power`) stays at
    or above ``power`` — exact power saw-tooths in n, so "stays" is checked over a grid up to 1.5
    times the normal-approximation answer. None when that answer is beyond ``EXACT_SCAN_LIMIT``.
    """
    start = paired_cases_needed(delta, psi=psi, confidence=confidence, power=power)
    if start > EXACT_SCAN_LIMIT:
        return None
    step = max(1, start // 400)
    grid = list(range(max(1, start - 20 * step), int(1.5 * start) + 20 * step, step))
    reject = _mcnemar_rejection(grid[-1], delta=delta, psi=psi, alpha=1.0 - check_confidence(confidence))
    ok = [_power_from(reject, n, psi) >= power for n in grid]
    for index in range(len(grid)):
        if all(ok[index:]):
            return grid[index]
    return None
