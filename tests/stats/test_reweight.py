"""Issue 17, point 4: reweighting by stratum — score intervals per stratum combined by MOVER, every
weighted stratum keeps its weight, bounds never jump, and coverage is measured.

Reference values (pinned below) were computed in a scratch venv, outside the project, with
statsmodels 0.15.0 and scipy:
* Wilson: ``statsmodels.stats.proportion.proportion_confint(x, n, alpha=0.05, method="wilson")``.
* Wilson with continuity correction: the roots of |x/n − p| − 1/(2n) = z·√(p(1 − p)/n), found by
  ``scipy.optimize.brentq`` (an independent computation of Newcombe's 1998 method 4 closed form).
* Newcombe's hybrid score interval for p1 − p2 (the MOVER of two Wilson intervals):
  ``statsmodels.stats.proportion.confint_proportions_2indep(x1, n1, x2, n2, method="newcomb")``.
* Tango's paired score interval: T(Δ) = ±z solved by ``brentq`` on Tango's (1998) closed-form
  restricted MLE, coded independently of ``oloproof.stats.paired``.
* MOVER of a weighted sum: L = Σw·p̂ − √Σ(w(p̂ − l))², U = Σw·p̂ + √Σ(w(u − p̂))² on those limits.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oloproof.stats.paired import PairedCounts
from oloproof.stats.reweight import (
    THIN_WIDTH,
    NotReweighted,
    mover_combination,
    reweight_paired,
    reweight_rate,
    wilson_interval,
)

TOL = 1e-12


def table(b: int, c: int, n: int) -> PairedCounts:
    return PairedCounts(n=n, b=b, c=c, both=n - b - c, neither=0, missing=0)


# ----------------------------------------------------------------------------- exact values


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        (3, 3, 0.43850296824495444, 1.0),
        (0, 5, 0.0, 0.43448246478317487),
        (45, 60, 0.6276792992295218, 0.8422347746994333),
        (180, 200, 0.8505941875672826, 0.9343295513309041),
    ],
)
def test_wilson_equals_statsmodels(x: int, n: int, low: float, high: float) -> None:
    got = wilson_interval(x, n, confidence=0.95, continuity=False)
    assert got.method == "wilson" and got.approximate
    assert got.low == pytest.approx(low, abs=TOL) and got.high == pytest.approx(high, abs=TOL)


@pytest.mark.parametrize(
    ("x", "n", "low", "high"),
    [
        (3, 3, 0.30998810644195657, 1.0),
        (0, 5, 0.0, 0.5370560174675232),
        (1, 3, 0.01765279427865349, 0.8746655280897366),
        (45, 60, 0.6187728591143218, 0.8489442764767748),
        (180, 200, 0.8477033379568885, 0.9363370552295204),
        (36, 40, 0.7540413502268423, 0.9674737029866393),
        (52, 80, 0.5344449806360402, 0.7510084239576252),
    ],
)
def test_continuity_corrected_wilson_equals_the_roots_of_its_score_equation(
    x: int, n: int, low: float, high: float
) -> None:
    got = wilson_interval(x, n, confidence=0.95)
    assert got.method == "wilson-cc" and got.approximate
    assert got.low == pytest.approx(low, abs=1e-12) and got.high == pytest.approx(high, abs=1e-12)


def test_mover_of_two_wilson_intervals_is_newcombes_interval_in_statsmodels() -> None:
    for (x1, n1, x2, n2), (low, high) in {
        (75, 100, 70, 100): (-0.07339608028600593, 0.17142623768171028),
        (3, 7, 9, 11): (-0.6897891764665386, 0.046443167157007026),
    }.items():
        first = wilson_interval(x1, n1, confidence=0.95, continuity=False)
        second = wilson_interval(x2, n2, confidence=0.95, continuity=False)
        got = mover_combination([(1.0, first), (-1.0, second)], confidence=0.95, method="newcombe")
        assert got.estimate == pytest.approx(x1 / n1 - x2 / n2, abs=TOL)
        assert got.low == pytest.approx(low, abs=TOL) and got.high == pytest.approx(high, abs=TOL)


def test_reweighted_rate_is_the_mover_of_the_strata_score_intervals() -> None:
    passes = {"a": (3, 3), "b": (0, 5), "c": (45, 60), "d": (180, 200)}
    weights = {"a": 1, "b": 2, "c": 3, "d": 4}  # counts work: only the ratios matter
    got = reweight_rate(passes, weights, confidence=0.95)
    assert got.interval.method == "wilson-cc-mover" and got.interval.approximate
    assert got.interval.estimate == pytest.approx(0.685, abs=TOL)
    assert got.interval.low == pytest.approx(0.6028501047127602, abs=TOL)
    assert got.interval.high == pytest.approx(0.797381159343725, abs=TOL)
    # Every stratum keeps its weight, the thin ones too: nothing is pooled.
    assert [(p.name, round(p.weight, 12), p.n) for p in got.parts] == [
        ("a", 0.1, 3),
        ("b", 0.2, 5),
        ("c", 0.3, 60),
        ("d", 0.4, 200),
    ]
    assert [p.name for p in got.parts if p.thin] == ["a"]  # 3 of 3: [0.31, 1.0], wider than 0.6


def test_reweighted_movement_is_the_mover_of_the_strata_tango_intervals() -> None:
    counts = {"x": table(5, 1, 30), "y": table(0, 0, 8), "z": table(9, 5, 120)}
    got = reweight_paired(counts, {"x": 0.3, "y": 0.2, "z": 0.5}, confidence=0.95)
    assert got.interval.method == "tango-mover" and got.interval.approximate
    tango = {p.name: (p.interval.low, p.interval.high) for p in got.parts}
    assert tango["x"] == pytest.approx((-0.03420717559121755, 0.31188033200544213), abs=1e-9)
    assert tango["y"] == pytest.approx((-0.3244075648838803, 0.32440756488388023), abs=1e-9)
    assert tango["z"] == pytest.approx((-0.030957730035194173, 0.10180065098079155), abs=1e-9)
    assert got.interval.estimate == pytest.approx(0.05666666666666667, abs=TOL)
    assert got.interval.low == pytest.approx(-0.031476568610819836, abs=1e-9)
    assert got.interval.high == pytest.approx(0.1474998483171443, abs=1e-9)


def test_the_chapters_composition_numbers() -> None:
    # Dev: supply 36/40, other 39/60 (0.750); holdout: supply 18/20, other 52/80 (0.700). Under the
    # holdout's mix (0.2 / 0.8) both come to 0.700: the apparent gap is composition.
    weights = {"supply": 20, "other": 80}
    dev = reweight_rate({"supply": (36, 40), "other": (39, 60)}, weights, confidence=0.95).interval
    hold = reweight_rate({"supply": (18, 20), "other": (52, 80)}, weights, confidence=0.95).interval
    assert dev.estimate == pytest.approx(0.7, abs=TOL) and hold.estimate == pytest.approx(0.7, abs=TOL)
    assert (dev.low, dev.high) == pytest.approx((0.5882866062010148, 0.7934066689714111), abs=TOL)
    assert (hold.low, hold.high) == pytest.approx((0.5966294574258204, 0.7824736059909052), abs=TOL)


# ----------------------------------------------------------------------------- refusals and weights


def test_a_weighted_stratum_with_no_case_is_refused_not_filled_in() -> None:
    with pytest.raises(NotReweighted) as caught:
        reweight_rate({"a": (3, 4), "b": (0, 0)}, {"a": 1, "b": 1}, confidence=0.95, what="the holdout")
    assert str(caught.value) == (
        "stratum b carries weight 0.500 but has no case in the holdout: its rate there is unknown, so this set is "
        "not reweighted (declare its weight 0 with --weights to leave it out of both sets)"
    )
    with pytest.raises(NotReweighted, match=r"stratum b carries weight 0\.250"):
        reweight_paired({"a": table(1, 0, 5)}, {"a": 3, "b": 1}, confidence=0.95)
    # Weight 0 leaves it out entirely.
    got = reweight_rate({"a": (3, 4), "b": (0, 0)}, {"a": 1, "b": 0}, confidence=0.95)
    assert [p.name for p in got.parts] == ["a"] and got.interval.estimate == 0.75


@pytest.mark.parametrize(
    ("weights", "error", "message"),
    [
        ({"a": 1}, ValueError, "weights has no entry for stratum 'b'"),
        ({"a": 1, "b": -1}, ValueError, "weights['b'] must be finite and >= 0, got -1"),
        ({"a": 0, "b": 0}, ValueError, "weights must add up to a positive, finite number"),
        ({"a": 1, "b": True}, TypeError, "weights['b'] must be a number, got bool"),
        ({"a": 1e308, "b": 1e308}, ValueError, "weights must add up to a positive, finite number"),
    ],
)
def test_bad_weights(weights: dict[str, float], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")):
        reweight_rate({"a": (1, 2), "b": (1, 2)}, weights, confidence=0.95)


# ----------------------------------------------------------------------------- no jumps


@pytest.mark.parametrize(
    ("thin", "big"),
    [
        # Before issue 17 a degenerate stratum (11 of 11) was pooled into the others at its sample
        # share (5%, not its weight of 50%): [0.066, 0.147]. One more failing case made it its own
        # stratum again and both bounds jumped, to [0.404, 0.563].
        ((11, 11), (10, 200)),
        ((4, 4), (140, 200)),  # under 5 cases: pooled, then not
    ],
)
def test_one_more_failure_in_a_thin_stratum_lowers_both_bounds(thin: tuple[int, int], big: tuple[int, int]) -> None:
    weights = {"thin": 1, "big": 1}
    before = reweight_rate({"thin": thin, "big": big}, weights, confidence=0.95).interval
    after = reweight_rate({"thin": (thin[0], thin[1] + 1), "big": big}, weights, confidence=0.95).interval
    assert after.low <= before.low and after.high <= before.high
    assert after.estimate < before.estimate
    assert before.estimate == pytest.approx(0.5 * thin[0] / thin[1] + 0.5 * big[0] / big[1])  # its weight kept


@st.composite
def strata(draw: st.DrawFn) -> tuple[dict[str, tuple[int, int]], dict[str, float]]:
    k = draw(st.integers(1, 6))
    passes: dict[str, tuple[int, int]] = {}
    weights: dict[str, float] = {}
    for i in range(k):
        n = draw(st.integers(1, 200))
        passes[f"s{i}"] = (draw(st.integers(0, n)), n)
        weights[f"s{i}"] = draw(st.floats(0.01, 10.0))
    return passes, weights


@settings(max_examples=300, deadline=None)
@given(data=strata(), pick=st.data(), confidence=st.sampled_from([0.8, 0.95, 0.99]))
def test_monotone_in_each_strata_passes(
    data: tuple[dict[str, tuple[int, int]], dict[str, float]], pick: st.DataObject, confidence: float
) -> None:
    passes, weights = data
    name = pick.draw(st.sampled_from(sorted(passes)))
    x, n = passes[name]
    before = reweight_rate(passes, weights, confidence=confidence).interval
    assert 0.0 <= before.low <= before.estimate <= before.high <= 1.0
    changed = [  # (what, the stratum's new (passes, n), +1: more evidence of passing, -1: of failing)
        ("a failure turned into a pass", (x + 1, n), +1),
        ("one more passing case", (x + 1, n + 1), +1),
        ("a pass turned into a failure", (x - 1, n), -1),
        ("one more failing case", (x, n + 1), -1),
    ]
    for what, (new_x, new_n), sign in changed:
        if not 0 <= new_x <= new_n:
            continue
        after = reweight_rate({**passes, name: (new_x, new_n)}, weights, confidence=confidence).interval
        assert sign * (after.low - before.low) >= -TOL and sign * (after.high - before.high) >= -TOL, what


@st.composite
def paired_strata(draw: st.DrawFn) -> tuple[dict[str, PairedCounts], dict[str, float]]:
    k = draw(st.integers(1, 5))
    counts: dict[str, PairedCounts] = {}
    weights: dict[str, float] = {}
    for i in range(k):
        n = draw(st.integers(1, 120))
        b = draw(st.integers(0, n))
        c = draw(st.integers(0, n - b))
        counts[f"s{i}"] = table(b, c, n)
        weights[f"s{i}"] = draw(st.floats(0.01, 10.0))
    return counts, weights


@settings(max_examples=200, deadline=None)
@given(data=paired_strata(), pick=st.data())
def test_movement_monotone_in_the_current_versions_passes(
    data: tuple[dict[str, PairedCounts], dict[str, float]], pick: st.DataObject
) -> None:
    counts, weights = data
    name = pick.draw(st.sampled_from(sorted(counts)))
    t = counts[name]
    before = reweight_paired(counts, weights, confidence=0.95).interval
    assert -1.0 <= before.low <= before.estimate <= before.high <= 1.0
    rest = t.n - t.b - t.c
    better = [table(t.b + 1, t.c, t.n)] if rest else []  # neither → only the current version passes
    better += [table(t.b, t.c - 1, t.n)] if t.c else []  # only the baseline → both pass
    worse = [table(t.b - 1, t.c, t.n)] if t.b else []
    for new in better:
        after = reweight_paired({**counts, name: new}, weights, confidence=0.95).interval
        assert after.low >= before.low - 1e-9 and after.high >= before.high - 1e-9
    for new in worse:
        after = reweight_paired({**counts, name: new}, weights, confidence=0.95).interval
        assert after.low <= before.low + 1e-9 and after.high <= before.high + 1e-9


@settings(max_examples=100, deadline=None)
@given(data=strata())
def test_symmetry_passes_and_failures(data: tuple[dict[str, tuple[int, int]], dict[str, float]]) -> None:
    passes, weights = data
    before = reweight_rate(passes, weights, confidence=0.95).interval
    mirrored = reweight_rate({k: (n - x, n) for k, (x, n) in passes.items()}, weights, confidence=0.95).interval
    assert mirrored.low == pytest.approx(1 - before.high, abs=1e-9)
    assert mirrored.high == pytest.approx(1 - before.low, abs=1e-9)


def test_thin_is_defined_by_the_strata_own_interval() -> None:
    assert THIN_WIDTH == 0.6
    assert wilson_interval(4, 9, confidence=0.95).width > THIN_WIDTH  # 9 cases at about 50%
    assert wilson_interval(5, 10, confidence=0.95).width < THIN_WIDTH
    assert wilson_interval(4, 4, confidence=0.95).width > THIN_WIDTH > wilson_interval(5, 5, confidence=0.95).width


# ----------------------------------------------------------------------------- coverage (small; the grid is in
# benchmarks/reweight_coverage.py and docs/statistics.md)


def _coverage(
    sizes: tuple[int, ...], weights: tuple[float, ...], rates: tuple[float, ...], trials: int
) -> tuple[int, int]:
    rng = np.random.default_rng(17)
    w = {f"s{i}": weight for i, weight in enumerate(weights)}
    truth = sum(weight * rate for weight, rate in zip(weights, rates, strict=True)) / sum(weights)
    below = above = 0
    for _ in range(trials):
        drawn = rng.binomial(sizes, rates)
        passes = {f"s{i}": (int(x), n) for i, (x, n) in enumerate(zip(drawn, sizes, strict=True))}
        interval = reweight_rate(passes, w, confidence=0.95).interval
        below += truth < interval.low
        above += truth > interval.high
    return below, above


@pytest.mark.parametrize(
    ("sizes", "weights", "rates"),
    [
        ((3, 5, 80, 200), (1, 1, 1, 1), (0.5, 0.8, 0.9, 0.95)),  # thin strata carrying half the weight
        ((10, 30, 100), (0.5, 0.3, 0.2), (0.98, 0.99, 0.97)),  # rates near 1, unequal weights
        ((3, 200), (1, 1), (0.9, 0.7)),  # the old pooled interval covered 0.07 here
    ],
)
def test_coverage_of_the_reweighted_rate(
    sizes: tuple[int, ...], weights: tuple[float, ...], rates: tuple[float, ...]
) -> None:
    trials = 600
    below, above = _coverage(sizes, weights, rates, trials)
    # Two-sided: the misses are not significantly above 5% (binomial test, p > 0.01).
    assert stats.binomtest(below + above, trials, 0.05, alternative="greater").pvalue > 0.01, (below, above)


@settings(max_examples=150, deadline=None)
@given(dev=strata(), hold=strata(), pick=st.data())
def test_the_level_gap_rises_with_a_dev_pass_and_falls_with_a_holdout_pass(
    dev: tuple[dict[str, tuple[int, int]], dict[str, float]],
    hold: tuple[dict[str, tuple[int, int]], dict[str, float]],
    pick: st.DataObject,
) -> None:
    weights = dev[1]
    hold_passes = {name: hold[0].get(name, (1, 2)) for name in weights}  # the same strata on both sets

    def gap(d: dict[str, tuple[int, int]], h: dict[str, tuple[int, int]]) -> tuple[float, float]:
        parts = [(1.0, reweight_rate(d, weights, confidence=0.95).interval)]
        parts.append((-1.0, reweight_rate(h, weights, confidence=0.95).interval))
        interval = mover_combination(parts, confidence=0.95, method="gap")
        return interval.low, interval.high

    before = gap(dev[0], hold_passes)
    name = pick.draw(st.sampled_from(sorted(weights)))
    x, n = dev[0][name]
    if x < n:
        after = gap({**dev[0], name: (x + 1, n)}, hold_passes)
        assert after[0] >= before[0] - TOL and after[1] >= before[1] - TOL
    y, m = hold_passes[name]
    if y < m:
        after = gap(dev[0], {**hold_passes, name: (y + 1, m)})
        assert after[0] <= before[0] + TOL and after[1] <= before[1] + TOL


@settings(max_examples=100, deadline=None)
@given(data=strata())
def test_a_higher_level_never_narrows_and_one_stratum_is_its_own_interval(
    data: tuple[dict[str, tuple[int, int]], dict[str, float]],
) -> None:
    passes, weights = data
    narrow, wide = (reweight_rate(passes, weights, confidence=level).interval for level in (0.9, 0.99))
    assert wide.low <= narrow.low + TOL and wide.high >= narrow.high - TOL
    name, (x, n) = next(iter(passes.items()))
    alone = reweight_rate({name: (x, n)}, {name: 3.0}, confidence=0.95).interval
    own = wilson_interval(x, n, confidence=0.95)
    assert (alone.estimate, alone.low, alone.high) == pytest.approx((own.estimate, own.low, own.high), abs=TOL)
