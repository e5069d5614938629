"""Paired comparison of two versions scored on the same n cases (STATISTICS.md §4).

Every case is scored by both versions, so the comparison lives in the 2×2 table of paired
outcomes. Only the discordant cases carry information about the difference:

* ``b`` — cases only the **new** version gets right (old wrong, new right),
* ``c`` — cases only the **old** version gets right (old right, new wrong),
* ``n`` — all paired cases, concordant ones included.

The estimand is the difference in pass rates, new minus old, as a fraction in [−1, 1]:
Δ = p_new − p_old, estimated by (b − c)/n. (Multiply by 100 for "points".)

Two intervals are offered:

* ``"tango"`` (default, approximate): Tango's asymptotic score interval, recommended for
  paired proportions by Fagerland, Lydersen & Laake (2014).
* ``"melded"`` (exact): Fay & Lumbard's melded interval, R ``exact2x2::mcnemarExactDP``. Its
  coverage is at least nominal for every true (p_b, p_c), and it excludes 0 exactly when the
  two-sided exact McNemar test (:func:`mcnemar_exact_p`) rejects at α = 1 − confidence.

References
----------
Tango T (1998). Equivalence test and confidence interval for the difference in proportions for
the paired-sample design. Statistics in Medicine 17:891–908.
Fagerland MW, Lydersen S, Laake P (2014). Recommended tests and confidence intervals for paired
binomial proportions. Statistics in Medicine 33:2850–2875.
Fay MP, Lumbard K (2021). Confidence intervals for difference in proportions for matched pairs
compatible with exact McNemar's or sign tests. Statistics in Medicine 40:1147–1159.
Fay MP, Proschan MA, Brittain E (2015). Combining one-sample confidence procedures for inference
in the two-sample case. Biometrics 71:146–156.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import optimize, special, stats

from oloproof.stats._validate import check_confidence, check_count
from oloproof.stats.interval import Interval

__all__ = [
    "PairedCounts",
    "mcnemar_exact_p",
    "mcnemar_mid_p",
    "melded_limit",
    "paired_counts",
    "paired_difference",
]

PairedMethod = Literal["tango", "melded"]
Imputation = Literal["conservative", "optimistic"]


@dataclass(frozen=True, slots=True, kw_only=True)
class PairedCounts:
    """The paired 2×2 table of two versions on the same cases.

    ``n`` counts every paired case (``n == b + c + both + neither``); ``b`` counts cases only the
    new version passes, ``c`` cases only the old version passes, ``both`` and ``neither`` the
    concordant cases. ``missing`` counts cases where at least one version gave no output; those
    cases are already placed in one of the four cells by the imputation rule documented in
    :func:`paired_counts`, and the number is kept so reports can say how many were imputed.
    """

    n: int
    b: int
    c: int
    both: int
    neither: int
    missing: int

    @property
    def discordant(self) -> int:
        """b + c: the cases on which the two versions disagree."""
        return self.b + self.c

    @property
    def difference(self) -> float:
        """(b − c)/n, the new-minus-old pass-rate difference as a fraction (0 when n = 0)."""
        return (self.b - self.c) / self.n if self.n else 0.0


def _outcome(name: str, index: int, value: object) -> bool | None:
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name}[{index}] must be True, False or None (missing output), got {value!r}")


def paired_counts(
    old: Sequence[bool | None],
    new: Sequence[bool | None],
    *,
    impute: Imputation = "conservative",
) -> PairedCounts:
    """Tabulate per-case outcomes of an old and a new version on the same cases.

    ``old[i]`` and ``new[i]`` are the verdicts of the two versions on case ``i``: ``True`` (pass),
    ``False`` (fail) or ``None`` (no output: a crash, timeout or unparsable answer). ``n`` is the
    number of cases, i.e. ``len(old) == len(new)``; every case is counted, including imputed ones.

    How missing outputs enter. A comparison rule PASSes on the *lower* bound of the new-minus-old
    difference (a regression guard "fail if the score drops by more than 5 points" passes iff
    the lower bound ≥ −0.05; an improvement claim iff the lower bound ≥ its margin). Counting a
    missing output in a way that raises the difference would make such a PASS easier, so the
    default ``impute="conservative"`` counts it against the new version on both sides:

    * a missing **new** output is a failure of the new version (the new version has to earn
      its PASS with outputs it actually produced);
    * a missing **old** output is a pass of the old version (the baseline is given the benefit
      of the doubt, so a broken baseline run cannot make the new version look better).

    A case missing on both sides therefore becomes old-right/new-wrong, a ``c`` case. This is
    the paired analogue of §1's "the lower bound counts missing outputs as failures".
    ``impute="optimistic"`` is the mirror image (missing new = pass, missing old = fail): use
    the upper bound of the interval computed from it to decide a FAIL, so that missing outputs
    alone can never produce a FAIL either, only INSUFFICIENT_EVIDENCE.
    """
    if impute not in ("conservative", "optimistic"):
        raise ValueError(f"impute must be 'conservative' or 'optimistic', got {impute!r}")
    if len(old) != len(new):
        raise ValueError(f"old and new must score the same cases: len(old) = {len(old)}, len(new) = {len(new)}")
    # Conservative: missing new -> fail, missing old -> pass; optimistic is the mirror image.
    fill_new = impute == "optimistic"
    fill_old = impute == "conservative"
    b = c = both = neither = n_missing = 0
    for i, (raw_old, raw_new) in enumerate(zip(old, new, strict=True)):
        o = _outcome("old", i, raw_old)
        w = _outcome("new", i, raw_new)
        if o is None or w is None:
            n_missing += 1
        o = fill_old if o is None else o
        w = fill_new if w is None else w
        if w and not o:
            b += 1
        elif o and not w:
            c += 1
        elif o and w:
            both += 1
        else:
            neither += 1
    return PairedCounts(n=len(old), b=b, c=c, both=both, neither=neither, missing=n_missing)


def _check_table(b: int, c: int, n: int) -> None:
    check_count("b", b)
    check_count("c", c)
    check_count("n", n, minimum=1)
    if b + c > n:
        raise ValueError(f"b + c must be <= n (discordant cases are among the n), got {b} + {c} > {n}")


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for b vs c discordant cases.

    Conditional on the m = b + c discordant cases, b ~ Binomial(m, ½) under "no difference";
    p = min(1, 2·P(X ≤ min(b, c))) (the doubled one-sided p-value, as R
    ``exact2x2::mcnemar.exact`` and ``mcnemarExactDP``). 9 vs 5 gives 0.424. p = 1 when b + c = 0.
    """
    check_count("b", b)
    check_count("c", c)
    m = b + c
    if m == 0:
        return 1.0
    return float(min(1.0, 2.0 * stats.binom.cdf(min(b, c), m, 0.5)))


def mcnemar_mid_p(b: int, c: int) -> float:
    """Two-sided McNemar mid-p value for b vs c discordant cases.

    p = 2·[P(X ≤ min(b, c)) − ½·P(X = min(b, c))] with X ~ Binomial(b + c, ½), capped at 1
    (Fagerland, Lydersen & Laake 2013, BMC Med Res Methodol 13:91). Not exact, but closer to
    nominal size than the exact test. 9 vs 5 gives 0.302; 1 when b = c.
    """
    check_count("b", b)
    check_count("c", c)
    m = b + c
    if m == 0:
        return 1.0
    k = min(b, c)
    one_sided = stats.binom.cdf(k, m, 0.5) - 0.5 * stats.binom.pmf(k, m, 0.5)
    return float(min(1.0, 2.0 * one_sided))


def _bisect(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Root of f on [lo, hi] given f(lo) > 0 > f(hi); f may return ±inf at the ends."""
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango's score statistic T(Δ₀) (Tango 1998, eq. 3; Fagerland et al. 2014, eq. 9).

    T = (b − c − nΔ₀) / √(n·(2·p̃_c + Δ₀(1 − Δ₀))), where p̃_c is the restricted maximum-likelihood
    estimate of P(old right, new wrong) under Δ = Δ₀: the root
    p̃_c = (√(B² − 4AC) − B)/(2A), A = 2n, B = −b − c + (2n − b + c)Δ₀, C = −cΔ₀(1 − Δ₀).
    """
    a_coef = 2.0 * n
    b_coef = -b - c + (2.0 * n - b + c) * delta
    c_coef = -c * delta * (1.0 - delta)
    disc = max(b_coef * b_coef - 4.0 * a_coef * c_coef, 0.0)
    root = math.sqrt(disc)
    # Same root, written to avoid cancellation when B > 0 (numerically stable quadratic formula).
    if b_coef <= 0:
        p_c = (root - b_coef) / (2.0 * a_coef)
    else:
        p_c = -2.0 * c_coef / (b_coef + root)
    variance = n * (2.0 * p_c + delta * (1.0 - delta))
    numerator = b - c - n * delta
    if variance <= 1e-300:
        # At Δ₀ = ±1 the restricted variance vanishes: the statistic is infinite unless the
        # data sit exactly on that boundary.
        return 0.0 if numerator == 0 else math.copysign(math.inf, numerator)
    return numerator / math.sqrt(variance)


def _tango_interval(b: int, c: int, n: int, confidence: float) -> tuple[float, float]:
    # The interval is {Δ₀ : |T(Δ₀)| ≤ z_{1−α/2}}; T decreases in Δ₀ and is 0 at the estimate.
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    estimate = (b - c) / n
    if estimate <= -1.0:
        low = -1.0
    else:
        low = _bisect(lambda d: _tango_statistic(d, b, c, n) - z, -1.0, estimate)
    if estimate >= 1.0:
        high = 1.0
    else:
        high = _bisect(lambda d: _tango_statistic(d, b, c, n) + z, estimate, 1.0)
    return low, high


# Melded interval (Fay & Lumbard 2021; R exact2x2::mcnemarExactDP, numeric-integration branch).
#
# Write Δ = τ(2θ − 1), τ = p_b + p_c the discordance probability and θ = p_b/τ. Exact one-sample
# procedures for τ (Clopper–Pearson on m = b + c of n) and θ (Clopper–Pearson on b of m) have
# confidence distributions given by Beta random variables; melding (Fay, Proschan & Brittain
# 2015) takes the quantiles of T·(2B − 1). For the upper limit:
#   B  ~ Beta(b + 1, m − b)                      (upper CP confidence distribution for θ)
#   T  ~ Beta(m + 1, n − m) when Δ > 0           (upper CP for τ: larger τ, larger Δ)
#   T  ~ Beta(m, n − m + 1) when Δ < 0           (lower CP for τ: smaller τ, larger Δ)
#   p_U(Δ) = P[T(2B − 1) ≥ Δ],   upper = the Δ with p_U(Δ) = α/2.
# The lower limit is the mirror image: lower(b, c) = −upper(c, b).
# A Beta with a zero shape parameter is the point mass at 0 or 1 (R's pbeta/qbeta convention).

_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(256)


def _beta_sf(x: float | np.ndarray, a: int, b: int) -> np.ndarray:
    """P(X > x) for X ~ Beta(a, b), with the point-mass conventions for a = 0 or b = 0."""
    xs = np.clip(np.asarray(x, dtype=float), 0.0, 1.0)
    if a == 0:  # point mass at 0
        return np.where(xs < 0.0, 1.0, 0.0)
    if b == 0:  # point mass at 1
        return np.where(xs < 1.0, 1.0, 0.0)
    # I_{1−x}(b, a) = 1 − I_x(a, b), computed without cancellation.
    return np.asarray(special.betainc(b, a, 1.0 - xs))


def _melded_upper_tail(delta: float, x: int, m: int, n: int) -> float:
    """p_U(Δ) = P[T(2B − 1) ≥ Δ] for the upper melded limit (x = b, m = b + c)."""
    b_a, b_b = x + 1, m - x  # B ~ Beta(x + 1, m − x); point mass at 1 when x = m
    if delta == 0.0:
        return float(_beta_sf(0.5, b_a, b_b))
    if delta > 0.0:
        t_a, t_b = m + 1, n - m  # T ~ Beta(m + 1, n − m); point mass at 1 when m = n
    else:
        t_a, t_b = m, n - m + 1  # T ~ Beta(m, n − m + 1); point mass at 0 when m = 0
    if t_a == 0:  # T ≡ 0, so T(2B − 1) ≡ 0 ≥ Δ (Δ < 0 here)
        return 1.0
    if t_b == 0:  # T ≡ 1
        return float(_beta_sf(0.5 + delta / 2.0, b_a, b_b))
    if b_b == 0:  # B ≡ 1, so T(2B − 1) = T
        return 1.0 if delta < 0.0 else float(_beta_sf(delta, t_a, t_b))
    # P = ∫ P(B ≥ ½ + Δ/(2t)) dF_T(t). Substituting u = F_T(t) turns the peaked Beta density
    # into a uniform weight, so Gauss–Legendre on u is accurate. For Δ > 0 the integrand is 0
    # when t < Δ; for Δ < 0 it is 1 when t < −Δ: integrate only over t ∈ [|Δ|, 1].
    u0 = float(special.betainc(t_a, t_b, abs(delta)))
    head = u0 if delta < 0.0 else 0.0
    if u0 >= 1.0:
        return head
    u = u0 + (1.0 - u0) * (_GL_NODES + 1.0) / 2.0
    t = special.betaincinv(t_a, t_b, u)
    t = np.maximum(t, abs(delta))
    integrand = _beta_sf(0.5 + delta / (2.0 * t), b_a, b_b)
    return head + float((1.0 - u0) / 2.0 * np.dot(_GL_WEIGHTS, integrand))


def _melded_upper(x: int, m: int, n: int, alpha_half: float) -> float:
    if x == m == n:
        return 1.0
    if m == 0:
        # Closed form (as in mcnemarExactDP): B ≡ 1 and T ~ Beta(1, n), so p_U(Δ) = (1 − Δ)^n.
        return float(stats.beta.ppf(1.0 - alpha_half, 1, n))

    def excess(delta: float) -> float:
        return _melded_upper_tail(delta, x, m, n) - alpha_half

    # p_U is continuous and decreasing, so p_U − α/2 falls from 1 − α/2 at Δ = −1 to −α/2 at
    # Δ = 1 and Brent's method converges. Bracket on the side of 0 given by the closed-form
    # p_U(0), the one-sided exact McNemar p-value: this keeps "excludes 0 ⇔ the exact McNemar
    # test rejects" exact rather than true up to integration error.
    if excess(0.0) < 0.0:
        root = float(optimize.brentq(excess, -1.0, 0.0, xtol=1e-12))
        return min(root, -float(np.nextafter(0.0, 1.0)))
    return float(optimize.brentq(excess, 0.0, 1.0, xtol=1e-12))


def _melded_interval(b: int, c: int, n: int, confidence: float) -> tuple[float, float]:
    alpha_half = (1.0 - confidence) / 2.0
    m = b + c
    high = _melded_upper(b, m, n, alpha_half)
    low = -_melded_upper(c, m, n, alpha_half)  # mirror image: swap the roles of b and c
    return low, high


def melded_limit(b: float, c: float, n: float, *, confidence: float, upper: bool) -> float:
    """One melded limit at real-valued counts (b, c of n), as the clustered paired interval uses it
    at effective counts (``oloproof.stats.clustered_paired``); at integers, the exact interval's."""
    n = max(n, b + c)  # effective counts: b + c may exceed n by a rounding error
    alpha_half = (1.0 - check_confidence(confidence)) / 2.0
    if upper:
        return _melded_upper(b, b + c, n, alpha_half)  # type: ignore[arg-type]
    return -_melded_upper(c, b + c, n, alpha_half)  # type: ignore[arg-type]


def paired_difference(
    b: int,
    c: int,
    n: int,
    *,
    confidence: float,
    method: PairedMethod = "tango",
) -> Interval:
    """Interval for the new-minus-old pass-rate difference on n paired cases.

    ``b`` = cases only the new version passes, ``c`` = cases only the old one passes, ``n`` = all
    paired cases (``b + c <= n``). The estimate is (b − c)/n, a fraction in [−1, 1]; the interval
    is two-sided at ``confidence``.

    ``method="tango"`` (default): Tango's score interval, approximate. Worked example n = 120,
    b = 9, c = 5: +3.3 points, [−3.1, +10.2]. When b + c = 0 it still has positive width
    (±z²/(n + z²)), unlike Wald.

    ``method="melded"``: Fay–Lumbard melded interval, exact (R ``exact2x2::mcnemarExactDP``):
    [−3.7, +10.6] for the example; it excludes 0 iff ``mcnemar_exact_p(b, c) < 1 − confidence``.
    """
    _check_table(b, c, n)
    level = check_confidence(confidence)
    if method == "tango":
        low, high = _tango_interval(b, c, n, level)
        label, approximate = "tango-score", True
    elif method == "melded":
        low, high = _melded_interval(b, c, n, level)
        label, approximate = "fay-lumbard-melded", False
    else:
        raise ValueError(f"method must be 'tango' or 'melded', got {method!r}")
    estimate = (b - c) / n
    return Interval(
        estimate=estimate,
        low=max(-1.0, min(low, estimate)),
        high=min(1.0, max(high, estimate)),
        level=level,
        method=label,
        approximate=approximate,
    )
