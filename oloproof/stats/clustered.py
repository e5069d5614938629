"""Pass rate of one run whose cases come in clusters (STATISTICS.md §2) — approximate.

Cases that share a ``group`` (several questions about one document, turns of one dialogue)
are not independent; treating them as independent makes intervals too narrow. The clustered
standard error is that of Miller (2024), "Adding Error Bars to Evals", arXiv 2411.00640,
App. A (also inspect_ai's ``stderr(cluster=...)``); the interval is the Korn–Graubard
effective-sample-size Clopper–Pearson interval (Korn & Graubard 1998, Survey Methodology 24:
193–201), as R's ``survey::svyciprop(method="beta")`` computes it, with two changes:

* **Degrees of freedom from the clusters that carry the variance.** svyciprop uses G − 1. When
  the failures (or the passes) sit in a few clusters, as at high pass rates with strong
  clustering, the variance estimate rests on those few clusters and G − 1 is optimistic: at
  ICC 0.2–0.4 with 50–100 groups the one-sided error reached 4–5% (nominal 2.5%). We use
  ν = K − 1, with K the smaller of the Kish effective numbers of clusters holding the failures,
  F² / Σ_g f_g², and the passes, P² / Σ_g (m_g − f_g)² (Kish 1965, the participation ratio;
  the idea of Bell & McCaffrey 2002's and Carter, Schnepel & Steigerwald 2017's effective
  number of clusters), clipped to [min(5, G − 1), G − 1]. The floor keeps one lone failing
  cluster from sending the t quantile to Cauchy tails. ν = G − 1 (svyciprop exactly) whenever
  failures and passes are both spread over the clusters.
* **Monotone.** Turning a failure into a pass never lowers the lower bound (nor the upper).
  The bound at the observed failure counts f = (f_g) is the minimum of the bound above over
  every f' ≤ f (every outcome with some failures turned into passes), computed exactly for
  each total F' through bounds on Σ f'_g² and Σ m_g f'_g that only loosen as f grows. Without
  it a perfect run of 30 groups of 20 got 0.884 (each group one trial) and 599/600 got 0.990.
  A consequence worth knowing: no run on G groups gets a lower bound above a perfect run's,
  (α/2)^{1/G} (0.884 for 30 groups, 0.929 for 50, 0.964 for 100 at 95%). Without an
  assumption on the within-group correlation no valid monotone bound can do better: if whole
  groups pass or fail together, G groups are G trials.

Measured one-sided error of the lower bound (``benchmarks/clustered_coverage.py``; beta-binomial
groups, 30–100 groups of 5, 20 or 5–35 cases, ICC 0–0.4, true rate 0.7–0.98): at most about 3%
against a nominal 2.5% (at ICC 0.4, rate 0.9–0.95, groups of unequal size), where svyciprop's
reached 4–5%. The interval stays approximate (a central limit theorem over clusters); the gate
needs ``allow_approximate_methods`` and at least ``MIN_CLUSTERS`` groups to decide on it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import special

from oloproof.stats._validate import check_confidence
from oloproof.stats.interval import Interval

__all__ = [
    "MIN_CLUSTERS",
    "ClusteredResult",
    "clustered_proportion",
    "few_groups_text",
    "groups_by_size",
    "too_few_groups",
]

METHOD = "clustered-korn-graubard"

# Below this many clusters the cluster-level central limit theorem behind the clustered SE is
# not trustworthy (STATISTICS.md §2): the gate sends such a rule to MANUAL_REVIEW.
MIN_CLUSTERS = 30

# Floor of the degrees of freedom of the clustered variance (see the module docstring).
MIN_DF = 5.0


def groups_by_size(sizes: Sequence[float] | NDArray[Any]) -> float:
    """The effective number of groups of these sizes, (Σ m_g)² / Σ m_g² (Kish's participation ratio).

    It is G for groups of equal size and falls as one group holds more of the cases: one group of
    200 beside 29 single cases counts as 1.3 groups, however many groups there are. This is the
    effective number of clusters of Carter, Schnepel & Steigerwald (2017) for a mean when the
    cases of a group move together (their worst case, ICC 1): the cluster-robust variance then
    rests on about that many independent units, and the "at least MIN_CLUSTERS groups" rule is
    about them. (An audit of issue 17 measured the guard's false PASS at 21–35% with one group of
    200 cases beside 29 single cases, "30 groups", against a nominal 2.5%.)
    """
    total = float(np.sum(sizes))
    squares = float(np.sum(np.square(np.asarray(sizes, dtype=np.float64))))
    return total * total / squares if squares > 0 else 0.0


def too_few_groups(n_groups: int, effective: float) -> bool:
    """Whether a clustered interval on ``n_groups`` groups (``effective`` by size) must not decide."""
    return n_groups < MIN_CLUSTERS or effective < MIN_CLUSTERS - 1e-9


def few_groups_text(n_groups: int, effective: float) -> str:
    """Why ``n_groups`` groups are too few, in words ("" when they are not)."""
    if n_groups < MIN_CLUSTERS:
        return f"with {n_groups} groups, fewer than {MIN_CLUSTERS}"
    if effective < MIN_CLUSTERS - 1e-9:
        return (
            f"with {n_groups} groups of such unequal sizes that they count as {effective:.1f} by size (fewer than "
            f"{MIN_CLUSTERS}: a few groups hold most of the cases)"
        )
    return ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusteredResult:
    """A clustered pass-rate interval and the design facts behind it.

    ``n`` counts every case (answered or not), ``n_clusters`` the distinct groups, ``n_eff``
    the Korn–Graubard effective number of independent cases at the observed outcomes (after
    the degrees-of-freedom adjustment; the smaller of the two bounds' values when cases are
    missing; the number of clusters when every answered case passed or every one failed), and
    ``df`` the degrees of freedom used for it (the smaller of the two bounds'). ``by_size`` is the
    effective number of groups given their sizes (:func:`groups_by_size`); ``few_clusters`` is
    True when there are fewer than ``MIN_CLUSTERS`` groups, or fewer than that by size. ``ceiling`` is the lower bound
    of a perfect run on these groups, (α/2)^{1/G}: no run on them can get a higher one, so a
    ``min`` above it can never be cleared ("add groups", not "add cases").
    """

    interval: Interval
    n: int
    n_clusters: int
    n_eff: float
    df: float
    few_clusters: bool
    ceiling: float
    by_size: float = 0.0


def _check_inputs(
    scores: Sequence[float] | NDArray[Any],
    groups: Sequence[Hashable],
    missing: Sequence[bool] | NDArray[np.bool_] | None,
) -> tuple[NDArray[np.float64], NDArray[np.int64], NDArray[np.bool_], int]:
    n = len(scores)
    if n == 0:
        raise ValueError("scores must not be empty")
    if len(groups) != n:
        raise ValueError(f"groups must have one entry per score: {len(groups)} groups, {n} scores")
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    mask = np.isnan(values)
    if missing is not None:
        if len(missing) != n:
            raise ValueError(f"missing must have one entry per score: {len(missing)} flags, {n} scores")
        mask |= np.asarray(missing, dtype=bool)
    answered = values[~mask]
    bad = ~((answered == 0.0) | (answered == 1.0))
    if bad.any():
        raise ValueError(
            f"scores must be 0 or 1 for answered cases, got {answered[bad][0]!r}; "
            "graded scores in [0, 1] belong to oloproof.stats.bounded"
        )
    codes: dict[Hashable, int] = {}
    cluster = np.fromiter((codes.setdefault(g, len(codes)) for g in groups), np.int64, n)
    if len(codes) < 2:
        raise ValueError(f"groups must name at least 2 clusters, got {len(codes)}")
    return np.where(mask, 0.0, values), cluster, mask, len(codes)


# Cells of the (total × cluster) matrix handled at once by the dual bound, and the most it is
# used for: above that (e.g. 18,000 passes in 2,000 groups) only the separable bound is used,
# which is as valid and only a little looser, so very large designs stay fast.
_CHUNK_CELLS = 2_000_000
_DUAL_CELLS = 4_000_000


def _fill_greedy(
    boxes: NDArray[np.float64], totals: NDArray[np.float64]
) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """For boxes in fill order: how many are full at each total, and the rest in the next one."""
    filled = np.concatenate([[0.0], np.cumsum(boxes)])
    full = np.searchsorted(filled, totals, side="right") - 1
    return full, totals - filled[full]


def _square_bound(
    failures: NDArray[np.float64], centres: NDArray[np.float64], totals: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Upper bound of Σ_g (f'_g − a_g)² over {0 ≤ f' ≤ failures, Σ f' = F'} for each total F' ≥ 1.

    ``centres`` holds a_g, one row per total or one row for all. The function is convex and
    separable, so the Lagrangian dual min_λ [λF' + Σ_g max(a_g², (f_g − a_g)² − λ f_g)] bounds
    its maximum; the minimising λ is the breakpoint f_g − 2a_g at which the boxes, sorted by it
    (largest first), first hold F'. The bound is exact at the full total, and never decreases
    when a box grows, which is what the monotone envelope needs.
    """
    out = np.empty(totals.size)
    shared = centres.shape[0] == 1
    step = totals.size if shared else max(1, _CHUNK_CELLS // max(failures.size, 1))
    for start in range(0, totals.size, step):
        target = totals[start : start + step]
        a = centres if shared else centres[start : start + step]
        breaks = failures[None, :] - 2.0 * a
        order = np.argsort(-breaks, axis=1, kind="stable")
        f_sorted = failures[order]
        b_sorted = np.take_along_axis(breaks, order, axis=1)
        a_sorted = np.take_along_axis(a, order, axis=1)
        # Prefix sums over the sorted boxes: Σ_{i<j} (f − a)², Σ_{i<j} f, Σ_{i≥j} a².
        zero = np.zeros((a.shape[0], 1))
        outside = np.concatenate([zero, np.cumsum((f_sorted - a_sorted) ** 2, axis=1)], axis=1)
        held = np.concatenate([zero, np.cumsum(f_sorted, axis=1)], axis=1)
        centre_tail = np.concatenate([np.cumsum((a_sorted**2)[:, ::-1], axis=1)[:, ::-1], zero], axis=1)
        if shared:
            # j*: the first box at which the running total reaches F'.
            j = np.minimum(np.searchsorted(held[0, 1:], target, side="left"), failures.size - 1)
            rows = np.zeros(target.size, dtype=np.int64)
        else:
            j = np.minimum((held[:, 1:] < target[:, None]).sum(axis=1), failures.size - 1)
            rows = np.arange(target.size)
        lam = b_sorted[rows, j]
        out[start : start + step] = lam * (target - held[rows, j]) + outside[rows, j] + centre_tail[rows, j]
    return out


def _bounds(
    failures: NDArray[np.float64], sizes: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Bounds over every f' ≤ failures with Σ f' = F', for each F' = 0, …, Σ failures.

    Returns (totals F', max Σ f'², an upper bound of Σ (m c − f')² with c = F'/n, an upper bound
    of Σ (m − f')²). Σ f'² is convex, so its maximum fills the largest boxes first (exact). The
    other two are the smaller of two bounds, each of which only loosens when a box grows: the
    dual bound of :func:`_square_bound`, and the sum of the separate extremes of their terms
    (max Σ f'², min Σ m·f' filling the smallest clusters first, both exact), which is the exact
    maximum when all clusters have one size.
    """
    total = round(float(failures.sum()))
    totals = np.arange(total + 1, dtype=np.float64)
    n = float(sizes.sum())
    c = totals / n
    size_squares = float(np.sum(sizes**2))
    largest = np.sort(failures)[::-1]
    full, rest = _fill_greedy(largest, totals)
    squares = np.concatenate([[0.0], np.cumsum(largest**2)])[full] + rest**2
    order = np.argsort(sizes, kind="stable")
    boxes, weights = failures[order], sizes[order]
    full, rest = _fill_greedy(boxes, totals)
    weighted = (
        np.concatenate([[0.0], np.cumsum(boxes * weights)])[full] + rest * weights[np.minimum(full, weights.size - 1)]
    )
    residual = squares - 2.0 * c * weighted + c * c * size_squares
    pass_squares = size_squares - 2.0 * weighted + squares
    if total > 0 and not np.all(sizes == sizes[0]) and total * sizes.size <= _DUAL_CELLS:
        some = totals[1:]
        residual[1:] = np.minimum(residual[1:], _square_bound(failures, c[1:, None] * sizes[None, :], some))
        pass_squares[1:] = np.minimum(pass_squares[1:], _square_bound(failures, sizes[None, :], some))
    residual[0] = 0.0
    return totals, squares, np.maximum(residual, 0.0), pass_squares


def _korn_graubard(
    totals: NDArray[np.float64],
    squares: NDArray[np.float64],
    residual_squares: NDArray[np.float64],
    pass_squares: NDArray[np.float64],
    sizes: NDArray[np.float64],
    tail: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Korn–Graubard lower bounds (with Kish df) at F = ``totals`` failures, vectorised.

    ``squares`` is Σ f_g², ``residual_squares`` Σ_g S_g² (S_g = m_g·F/n − f_g, the cluster sum
    of residuals), ``pass_squares`` Σ_g (m_g − f_g)². Returns (lower bounds, n_eff, df). The
    bound falls as ``residual_squares``, ``squares`` or ``pass_squares`` grows.
    """
    n = float(sizes.sum())
    g = sizes.size
    p = 1.0 - totals / n
    # Miller (2024) App. A: SE_C² = G/(G−1) · Σ_g S_g² / n²; svymean's with-replacement variance.
    variance = g / (g - 1) * residual_squares / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        # n_eff = p̂(1−p̂)/SE²; capped at n, so clustering never claims more information than n
        # independent cases (svyciprop does not cap; it binds only when SE_C is tiny or 0).
        n_eff = np.where(variance > 0.0, np.minimum(p * (1.0 - p) / variance, n), n)
        fail_clusters = np.where(squares > 0.0, totals**2 / squares, g)
        pass_clusters = np.where(pass_squares > 0.0, (n - totals) ** 2 / pass_squares, g)
    df = np.clip(np.minimum(fail_clusters, pass_clusters) - 1.0, min(MIN_DF, g - 1.0), g - 1.0)
    # Korn & Graubard's adjustment, as in svyciprop(method="beta"): n_eff · (t_{α/2,n−1} / t_{α/2,ν})².
    n_eff = n_eff * (special.stdtrit(n - 1.0, tail) / special.stdtrit(df, tail)) ** 2
    x_eff = n_eff * p
    inner = (totals > 0) & (totals < n)
    low = np.zeros_like(p)  # every case failed: 0
    # Clopper–Pearson lower quantile at the (non-integer) effective counts.
    low[inner] = special.betaincinv(x_eff[inner], n_eff[inner] - x_eff[inner] + 1.0, tail)
    # No failure: each cluster is one trial (STATISTICS.md §2), CP with G of G.
    low[totals == 0] = tail ** (1.0 / g)
    n_eff[~inner] = g
    df[~inner] = g - 1
    return low, n_eff, df


def _korn_graubard_lower(
    failures: NDArray[np.float64], sizes: NDArray[np.float64], tail: float
) -> tuple[float, float, float]:
    """(lower bound, n_eff, df) from per-cluster failure counts and sizes (STATISTICS.md §2).

    The monotone envelope of :func:`_korn_graubard`: its minimum over every outcome with some
    failures turned into passes, evaluated for each total of failures at the pessimistic end of
    the bounds from :func:`_bounds`. The totals include 0 (a perfect run), hence the ceiling
    (α/2)^{1/G}. n_eff and df are those at the observed counts.
    """
    totals, squares, residual_squares, pass_squares = _bounds(failures, sizes)
    low, n_eff, df = _korn_graubard(totals, squares, residual_squares, pass_squares, sizes, tail)
    if np.isnan(low).any():  # pragma: no cover - defensive
        raise ArithmeticError("clustered interval came out NaN")
    return float(low.min()), float(n_eff[-1]), float(df[-1])


def clustered_proportion(
    scores: Sequence[float] | NDArray[Any],
    groups: Sequence[Hashable],
    *,
    confidence: float,
    missing: Sequence[bool] | NDArray[np.bool_] | None = None,
) -> ClusteredResult:
    """Approximate interval for a pass rate over clustered cases (Korn–Graubard, §2).

    ``scores`` holds one 0/1 outcome per case (bools work); ``groups`` the cluster label of each
    case (any hashable). A case that produced no output is marked NaN in ``scores``, or flagged
    in the optional ``missing`` mask (its score is then ignored). As in the exact binomial interval, the
    lower bound is computed with missing cases scored 0 and the upper bound with them scored 1,
    each as a full clustered analysis. The estimate is the pass rate of the answered cases
    (0.0 when none was answered, as in :func:`~oloproof.stats.binomial.clopper_pearson`).

    Only 0/1 scores are accepted: the effective-n Clopper–Pearson construction is for
    proportions. Graded scores belong to :mod:`oloproof.stats.bounded`.

    The result is approximate (its coverage rests on a central limit theorem over clusters);
    with fewer than ``MIN_CLUSTERS`` clusters ``few_clusters`` is set and the gate should not
    decide on it. At least two clusters are required.
    """
    level = check_confidence(confidence)
    tail = (1.0 - level) / 2.0
    y, cluster, mask, g = _check_inputs(scores, groups, missing)
    n_answered = int((~mask).sum())
    estimate = float(y[~mask].mean()) if n_answered else 0.0
    sizes = np.bincount(cluster, minlength=g).astype(np.float64)
    # Lower bound: missing cases fail. Upper bound: the lower bound of the failure rate with
    # missing cases passing, i.e. of the passes' complement (the construction is symmetric).
    passes_low = np.bincount(cluster, weights=y, minlength=g).astype(np.float64)
    passes_high = np.bincount(cluster, weights=np.where(mask, 1.0, y), minlength=g).astype(np.float64)
    low, n_eff_low, df_low = _korn_graubard_lower(sizes - passes_low, sizes, tail)
    flipped_low, n_eff_high, df_high = _korn_graubard_lower(passes_high, sizes, tail)
    high = 1.0 - flipped_low
    if not low <= estimate <= high:
        raise ArithmeticError(
            f"clustered interval [{low!r}, {high!r}] does not contain its estimate {estimate!r}; "
            "this is a bug in oloproof, please report it with the scores and groups"
        )
    return ClusteredResult(
        interval=Interval(
            estimate=estimate,
            low=low,
            high=high,
            level=level,
            method=METHOD,
            approximate=True,
        ),
        n=int(y.size),
        n_clusters=g,
        n_eff=min(n_eff_low, n_eff_high),
        df=min(df_low, df_high),
        few_clusters=too_few_groups(g, groups_by_size(sizes)),
        ceiling=tail ** (1.0 / g),
        by_size=groups_by_size(sizes),
    )
