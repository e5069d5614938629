"""Clustered pass rate: Miller (2024) SE + Korn–Graubard effective-n CP (STATISTICS.md §2)."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import special, stats

from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.clustered import MIN_CLUSTERS, _korn_graubard, _korn_graubard_lower, clustered_proportion

# Six clusters of unequal size, 16 passes of 21.
SCORES = [1, 1, 1, 0, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1]
GROUPS = ["a"] * 4 + ["b"] * 5 + ["c"] * 3 + ["d"] * 4 + ["e"] * 2 + ["f"] * 3


def _svyciprop_beta(scores: list[int], groups: list[str], confidence: float) -> tuple[float, float]:
    """R's survey::svyciprop(method = "beta") for svydesign(ids = ~g, data = d), re-derived.

    From survey's svyciprop.R:
        n.eff <- coef(m) * (1 - coef(m)) / vcov(m)
        n.eff <- n.eff * (qt(alpha/2, nrow(design) - 1) / qt(alpha/2, degf(design)))^2
        ci <- c(qbeta(alpha/2, n.eff*rval, n.eff*(1-rval)+1), qbeta(1-alpha/2, n.eff*rval+1, n.eff*(1-rval)))
    with vcov(m) svymean's with-replacement cluster variance G/(G−1)·Σ_g (Σ_{i∈g}(y_i−ȳ)/n)² and
    degf = G − 1. Written with plain loops and scipy.special.betaincinv, independently of the
    module (not run against R itself: no R on this machine).
    """
    n = len(scores)
    mean = sum(scores) / n
    totals: dict[str, float] = defaultdict(float)
    for y, g in zip(scores, groups, strict=True):
        totals[g] += (y - mean) / n
    clusters = len(totals)
    variance = clusters / (clusters - 1) * sum(t * t for t in totals.values())
    alpha = 1 - confidence
    n_eff = mean * (1 - mean) / variance
    n_eff *= (stats.t.ppf(alpha / 2, n - 1) / stats.t.ppf(alpha / 2, clusters - 1)) ** 2
    low = special.betaincinv(n_eff * mean, n_eff * (1 - mean) + 1, alpha / 2)
    high = special.betaincinv(n_eff * mean + 1, n_eff * (1 - mean), 1 - alpha / 2)
    return float(low), float(high)


def _at_the_data(scores: list[int], groups: list[str], confidence: float) -> tuple[float, float]:
    """The module's Korn–Graubard bounds at the observed counts only (no monotone envelope)."""
    codes = {g: i for i, g in enumerate(dict.fromkeys(groups))}
    cluster = np.array([codes[g] for g in groups])
    sizes = np.bincount(cluster).astype(float)
    tail = (1 - confidence) / 2

    def lower(failures: np.ndarray) -> float:
        total = np.array([failures.sum()])
        c = total / sizes.sum()
        low, _, _ = _korn_graubard(
            total, np.array([np.sum(failures**2)]), np.array([np.sum((sizes * c - failures) ** 2)]),
            np.array([np.sum((sizes - failures) ** 2)]), sizes, tail,
        )
        return float(low[0])

    passes = np.bincount(cluster, weights=np.array(scores, dtype=float))
    return lower(sizes - passes), 1 - lower(passes)


def test_matches_svyciprop_beta_formula_at_the_data() -> None:
    # Six groups: the Kish degrees of freedom are floored at G − 1 = 5, so the bound at the
    # observed counts is exactly svyciprop's.
    low, high = _svyciprop_beta(SCORES, GROUPS, 0.95)
    assert _at_the_data(SCORES, GROUPS, 0.95) == pytest.approx((low, high), rel=1e-10)
    # Pinned values of the reference for this data (guards both routes against drifting).
    assert (low, high) == pytest.approx((0.43030, 0.95373), abs=5e-5)


def _kish_svyciprop_lower(failures: list[int], sizes: list[int], tail: float) -> float:
    """svyciprop's lower bound with Kish degrees of freedom, from per-group failure counts (loops)."""
    n, g, total = sum(sizes), len(sizes), sum(failures)
    if total == 0:
        return tail ** (1 / g)
    if total == n:
        return 0.0
    p = 1 - total / n
    variance = g / (g - 1) * sum((m * total / n - f) ** 2 for f, m in zip(failures, sizes, strict=True)) / n**2
    n_eff = min(p * (1 - p) / variance, n) if variance > 0 else n
    kish = min(total**2 / sum(f * f for f in failures), (n - total) ** 2 / sum((m - f) ** 2 for f, m in zip(failures, sizes, strict=True)))
    df = min(max(kish - 1, min(5, g - 1)), g - 1)
    n_eff *= (stats.t.ppf(tail, n - 1) / stats.t.ppf(tail, df)) ** 2
    return float(special.betaincinv(n_eff * p, n_eff * (1 - p) + 1, tail))


def _envelope_by_enumeration(scores: list[int], groups: list[str], tail: float) -> tuple[float, float]:
    """min of the bound over every outcome with some failures turned into passes (and mirrored)."""
    names = list(dict.fromkeys(groups))
    sizes = [groups.count(g) for g in names]
    passes = [sum(s for s, h in zip(scores, groups, strict=True) if h == g) for g in names]
    failures = [m - x for m, x in zip(sizes, passes, strict=True)]
    low = min(_kish_svyciprop_lower(list(f), sizes, tail) for f in itertools.product(*(range(k + 1) for k in failures)))
    high = 1 - min(_kish_svyciprop_lower(list(f), sizes, tail) for f in itertools.product(*(range(k + 1) for k in passes)))
    return low, high


def test_the_monotone_envelope_against_enumeration() -> None:
    # Turning failures into passes reaches outcomes with a lower bound (two of the five
    # failures sit in the 3-case group c; with the lone failures elsewhere passing, the failures
    # are more concentrated): the reported bound is at most the lowest of them. With unequal
    # group sizes the module bounds each total's worst case instead of enumerating (which is
    # exponential), so it could be a little lower still; here it is exact.
    at_data = _at_the_data(SCORES, GROUPS, 0.95)
    low, high = _envelope_by_enumeration(SCORES, GROUPS, 0.025)
    assert (low, high) == pytest.approx((0.41574, 0.96756), abs=5e-5)
    result = clustered_proportion(SCORES, GROUPS, confidence=0.95)
    assert result.interval.low <= low <= at_data[0]
    assert result.interval.high >= high >= at_data[1]
    assert low - result.interval.low < 0.01 and result.interval.high - high < 0.02
    assert result.interval.estimate == pytest.approx(16 / 21)
    assert result.n == 21


@pytest.mark.parametrize("seed", range(6))
def test_the_envelope_is_exact_for_groups_of_one_size(seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups = [f"g{i // 3}" for i in range(5 * 3)]
    scores = (rng.random(15) < rng.choice([0.5, 0.8, 0.95])).astype(int).tolist()
    low, high = _envelope_by_enumeration(scores, groups, 0.025)
    result = clustered_proportion(scores, groups, confidence=0.95)
    assert result.interval.low == pytest.approx(low, rel=1e-9, abs=1e-12)
    assert result.interval.high == pytest.approx(high, rel=1e-9, abs=1e-12)


def test_clustered_se_is_millers_formula() -> None:
    # Miller (2024) App. A: SE_C = √(G/(G−1)·Σ_g S_g²)/n. n_eff before the df factor is
    # p̂(1−p̂)/SE_C²; check it through the reported n_eff.
    p = 16 / 21
    sums: dict[str, float] = defaultdict(float)
    for y, g in zip(SCORES, GROUPS, strict=True):
        sums[g] += y - p
    se = math.sqrt(6 / 5 * sum(s * s for s in sums.values())) / 21
    factor = (stats.t.ppf(0.025, 20) / stats.t.ppf(0.025, 5)) ** 2
    result = clustered_proportion(SCORES, GROUPS, confidence=0.95)
    assert result.n_eff == pytest.approx(p * (1 - p) / se**2 * factor, rel=1e-12)


def test_singleton_clusters_give_n_minus_one_effective_cases_before_the_df_factor() -> None:
    # Every case its own cluster: SE_C² = p̂(1−p̂)/(n−1), so n_eff = n − 1 before the df factor.
    # The F failures sit in F clusters (Kish count F), so the degrees of freedom are
    # min(F, n − F) − 1 instead of G − 1: the interval is a little wider than Clopper–Pearson's.
    rng = np.random.default_rng(3)
    scores = (rng.random(80) < 0.7).astype(int).tolist()
    failures = 80 - sum(scores)
    result = clustered_proportion(scores, list(range(80)), confidence=0.95)
    assert result.df == failures - 1
    factor = (stats.t.ppf(0.025, 79) / stats.t.ppf(0.025, failures - 1)) ** 2
    assert result.n_eff == pytest.approx(79 * factor, rel=1e-9)
    assert result.few_clusters is False
    p = sum(scores) / 80
    at_data = stats.beta.ppf(0.025, 79 * factor * p, 79 * factor * (1 - p) + 1)
    assert result.interval.low <= at_data + 1e-12
    assert result.interval.low == pytest.approx(at_data, abs=0.01)
    assert result.interval.low < clopper_pearson(sum(scores), 80, confidence=0.95).low


@pytest.mark.parametrize("clusters", [2, 5, 40])
def test_all_pass_or_all_fail_treats_each_cluster_as_one_trial(clusters: int) -> None:
    groups = [g for g in range(clusters) for _ in range(3)]
    everything = clustered_proportion([1] * len(groups), groups, confidence=0.95)
    assert everything.interval.low == pytest.approx(0.025 ** (1 / clusters), rel=1e-12)
    assert everything.interval.high == 1.0
    assert everything.n_eff == clusters
    nothing = clustered_proportion([0] * len(groups), groups, confidence=0.95)
    assert nothing.interval.low == 0.0
    assert nothing.interval.high == pytest.approx(1 - 0.025 ** (1 / clusters), rel=1e-12)


def test_few_clusters_flag_boundary() -> None:
    scores = [1, 0] * MIN_CLUSTERS
    below = clustered_proportion(scores[:-2], [i // 2 for i in range(len(scores) - 2)], confidence=0.95)
    at = clustered_proportion(scores, [i // 2 for i in range(len(scores))], confidence=0.95)
    assert below.n_clusters == MIN_CLUSTERS - 1 and below.few_clusters
    assert at.n_clusters == MIN_CLUSTERS and not at.few_clusters


def test_zero_clustered_variance_falls_back_to_n_cases() -> None:
    # Each cluster holds one pass and one failure: every cluster sum of residuals is 0, so
    # SE_C = 0. The interval must not collapse; n_eff is capped at n (before the df factor).
    scores = [1, 0] * 40
    groups = [i // 2 for i in range(80)]
    result = clustered_proportion(scores, groups, confidence=0.95)
    factor = (stats.t.ppf(0.025, 79) / stats.t.ppf(0.025, 39)) ** 2
    assert result.n_eff == pytest.approx(80 * factor)
    assert result.interval.width > 0.15


def test_missing_scored_zero_below_and_one_above() -> None:
    missing = [False] * 21
    missing[3] = missing[9] = True  # two failures lose their output
    nan_scores = [math.nan if m else s for s, m in zip(SCORES, missing, strict=True)]
    result = clustered_proportion(nan_scores, GROUPS, confidence=0.95, missing=missing)
    as_zero = [0 if m else s for s, m in zip(SCORES, missing, strict=True)]
    as_one = [1 if m else s for s, m in zip(SCORES, missing, strict=True)]
    assert result.interval.low == clustered_proportion(as_zero, GROUPS, confidence=0.95).interval.low
    assert result.interval.high == clustered_proportion(as_one, GROUPS, confidence=0.95).interval.high
    assert result.interval.estimate == pytest.approx(16 / 19)


def test_nan_scores_are_missing_cases() -> None:
    nan_scores = np.array(SCORES, dtype=float)
    nan_scores[[3, 9]] = np.nan
    mask = np.isnan(nan_scores)
    by_nan = clustered_proportion(nan_scores, GROUPS, confidence=0.95)
    by_mask = clustered_proportion(np.nan_to_num(nan_scores), GROUPS, confidence=0.95, missing=mask)
    assert by_nan == by_mask
    assert by_nan.interval.estimate == pytest.approx(16 / 19)


def test_all_missing_is_uninformative() -> None:
    result = clustered_proportion([0] * 6, [1, 1, 2, 2, 3, 3], confidence=0.95, missing=[True] * 6)
    assert (result.interval.low, result.interval.estimate, result.interval.high) == (0.0, 0.0, 1.0)


@pytest.mark.parametrize(
    ("scores", "groups", "missing", "message"),
    [
        ([1, 0.5], [1, 2], None, "scores must be 0 or 1"),
        ([1, 0], [1], None, "one entry per score"),
        ([1, 0], [1, 1], None, "at least 2 clusters"),
        ([], [], None, "must not be empty"),
        ([1, 0], [1, 2], [True], "one entry per score"),
    ],
)
def test_rejects_bad_input(
    scores: list[float], groups: list[int], missing: list[bool] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        clustered_proportion(scores, groups, confidence=0.95, missing=missing)


def test_coverage_under_clustering_where_naive_cp_fails() -> None:
    """60 clusters of 8, true rate 0.8, intra-cluster correlation 0.2 (beta-binomial).

    Korn–Graubard must cover about as often as promised; the independent-case CP, which
    ignores the clusters, covers far less (about 82% in this design).
    """
    rng = np.random.default_rng(2024)
    clusters, size, rate, icc = 60, 8, 0.8, 0.2
    a, b = rate * (1 - icc) / icc, (1 - rate) * (1 - icc) / icc
    groups = np.repeat(np.arange(clusters), size).tolist()
    trials = 1000
    clustered_hits = naive_hits = 0
    for _ in range(trials):
        cluster_rates = rng.beta(a, b, size=clusters)
        y = (rng.random((clusters, size)) < cluster_rates[:, None]).astype(int).ravel()
        interval = clustered_proportion(y.tolist(), groups, confidence=0.95).interval
        clustered_hits += interval.low <= rate <= interval.high
        naive = clopper_pearson(int(y.sum()), y.size, confidence=0.95)
        naive_hits += naive.low <= rate <= naive.high
    assert stats.binomtest(clustered_hits, trials, 0.95, alternative="less").pvalue > 0.01
    assert naive_hits / trials < 0.9


@st.composite
def clustered_runs(draw: st.DrawFn) -> tuple[list[int], list[int], list[bool]]:
    n = draw(st.integers(2, 60))
    groups = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    if len(set(groups)) < 2:
        groups[0] = (groups[0] + 1) % 10 if groups[0] == groups[1] else groups[0]
        groups[1] = (groups[0] + 1) % 10
    scores = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    missing = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return scores, groups, missing


@given(run=clustered_runs(), confidence=st.floats(0.5, 0.999))
def test_estimate_inside_interval(
    run: tuple[list[int], list[int], list[bool]], confidence: float
) -> None:
    scores, groups, missing = run
    interval = clustered_proportion(scores, groups, confidence=confidence, missing=missing).interval
    assert 0.0 <= interval.low <= interval.estimate <= interval.high <= 1.0


@given(run=clustered_runs(), a=st.floats(0.5, 0.999), b=st.floats(0.5, 0.999))
def test_higher_confidence_never_narrows(
    run: tuple[list[int], list[int], list[bool]], a: float, b: float
) -> None:
    scores, groups, missing = run
    lo_conf, hi_conf = sorted((a, b))
    narrow = clustered_proportion(scores, groups, confidence=lo_conf, missing=missing).interval
    wide = clustered_proportion(scores, groups, confidence=hi_conf, missing=missing).interval
    assert wide.low <= narrow.low + 1e-12
    assert wide.high >= narrow.high - 1e-12


# --- issue 10: monotone, and nominal at high pass rates with strong clustering -----------------

GROUPS_30_BY_20 = [g for g in range(30) for _ in range(20)]


def test_a_perfect_run_never_gets_a_lower_bound_below_a_run_with_a_failure() -> None:
    # 30 groups of 20: svyciprop gave the perfect 600/600 a lower bound of 0.884 (each group one
    # trial) and 599/600 0.990, so under `min: 0.95` the run with a failure PASSed and the perfect
    # one did not.
    perfect = clustered_proportion([1] * 600, GROUPS_30_BY_20, confidence=0.95)
    one_failure = clustered_proportion([0] + [1] * 599, GROUPS_30_BY_20, confidence=0.95)
    assert perfect.interval.low == pytest.approx(0.025 ** (1 / 30)) == perfect.ceiling
    assert one_failure.interval.low <= perfect.interval.low
    assert one_failure.interval.low < 0.95 and perfect.interval.low < 0.95  # neither PASSes min 0.95
    svyciprop_low, _ = _at_the_data([0] + [1] * 599, [str(g) for g in GROUPS_30_BY_20], 0.95)
    assert svyciprop_low > 0.98  # the bound at the data alone, before the monotone envelope


@given(run=clustered_runs())
def test_no_run_gets_a_lower_bound_above_a_perfect_run(run: tuple[list[int], list[int], list[bool]]) -> None:
    scores, groups, _ = run
    result = clustered_proportion(scores, groups, confidence=0.95)
    assert result.interval.low <= result.ceiling + 1e-12
    assert result.ceiling == pytest.approx(0.025 ** (1 / result.n_clusters))


@given(run=clustered_runs(), data=st.data(), confidence=st.sampled_from([0.8, 0.95, 0.99]))
def test_turning_a_failure_into_a_pass_never_lowers_either_bound(
    run: tuple[list[int], list[int], list[bool]], data: st.DataObject, confidence: float
) -> None:
    scores, groups, missing = run
    failed = [i for i, (s, m) in enumerate(zip(scores, missing, strict=True)) if s == 0 or m]
    if not failed:
        return
    i = data.draw(st.sampled_from(failed))
    better_scores = [1 if j == i else s for j, s in enumerate(scores)]
    better_missing = [False if j == i else m for j, m in enumerate(missing)]
    before = clustered_proportion(scores, groups, confidence=confidence, missing=missing).interval
    after = clustered_proportion(better_scores, groups, confidence=confidence, missing=better_missing).interval
    assert after.low >= before.low - 1e-12
    assert after.high >= before.high - 1e-12


def test_concentrated_failures_get_fewer_degrees_of_freedom() -> None:
    # 60 groups of 10, 30 failures: spread one per group in 30 groups the Kish count is 30 (df 29);
    # all in 3 groups it is 3, floored at df 5, so the interval is wider than svyciprop's (df 59).
    groups = [g for g in range(60) for _ in range(10)]
    spread = [0 if i % 10 == 0 and i < 300 else 1 for i in range(600)]
    concentrated = [0 if i < 30 else 1 for i in range(600)]
    assert clustered_proportion(spread, groups, confidence=0.95).df == 29
    tight = clustered_proportion(concentrated, groups, confidence=0.95)
    assert tight.df == 5
    svy_low, _ = _svyciprop_beta(concentrated, [str(g) for g in groups], 0.95)
    assert tight.interval.low < svy_low - 0.01


def _svyciprop_lower_from_counts(failures: np.ndarray, sizes: np.ndarray) -> float:
    n, g, total = sizes.sum(), sizes.size, failures.sum()
    if total == 0:
        return 0.025 ** (1 / g)
    p = 1 - total / n
    variance = g / (g - 1) * np.sum((sizes * total / n - failures) ** 2) / n**2
    n_eff = min(p * (1 - p) / variance, n) if variance > 0 else n
    n_eff *= (stats.t.ppf(0.025, n - 1) / stats.t.ppf(0.025, g - 1)) ** 2
    return float(special.betaincinv(n_eff * p, n_eff * (1 - p) + 1, 0.025))


@pytest.mark.parametrize(
    ("groups", "icc", "rate", "trials", "seed"),
    [(50, 0.4, 0.9, 2000, 11), (100, 0.4, 0.95, 2000, 12)],
)
def test_lower_bound_error_at_high_rates_with_strong_clustering(groups: int, icc: float, rate: float, trials: int, seed: int) -> None:
    """Beta-binomial groups of 5–35 cases: svyciprop's one-sided error is about 5% here.

    The gate's lower bound (the same function clustered_proportion uses for it) must hold the
    nominal 2.5%; the plain svyciprop bound on the same runs must not (both one-sided binomial
    tests on the counts). See benchmarks/clustered_coverage.py for the full grid.
    """
    rng = np.random.default_rng(seed)
    spread = 1 / icc - 1
    gate_misses = svy_misses = 0
    for _ in range(trials):
        sizes = rng.integers(5, 36, groups).astype(float)
        failures = sizes - rng.binomial(sizes.astype(int), rng.beta(rate * spread, (1 - rate) * spread, groups))
        gate_misses += _korn_graubard_lower(failures, sizes, 0.025)[0] > rate
        svy_misses += _svyciprop_lower_from_counts(failures, sizes) > rate
    assert stats.binomtest(gate_misses, trials, 0.025, alternative="greater").pvalue > 0.01
    assert stats.binomtest(svy_misses, trials, 0.025, alternative="greater").pvalue < 0.01


def test_without_the_dual_bound_the_envelope_is_looser_but_still_below_enumeration(monkeypatch: pytest.MonkeyPatch) -> None:
    # Very large designs skip the dual bound (clustered._DUAL_CELLS); the separable bound alone
    # must still be a valid (lower) envelope.
    import oloproof.stats.clustered as clustered

    low, high = _envelope_by_enumeration(SCORES, GROUPS, 0.025)
    monkeypatch.setattr(clustered, "_DUAL_CELLS", 0)
    loose = clustered_proportion(SCORES, GROUPS, confidence=0.95).interval
    assert loose.low <= low + 1e-12 and loose.high >= high - 1e-12
