"""Holm's step-down and the exact one-sided binomial p-values of per: rows (issue 18 §2).

Reference values were computed in a scratch venv (statsmodels 0.14.4, scipy 1.17.1, numpy 2.4.6),
not a dependency of this project:

    from statsmodels.stats.multitest import multipletests
    multipletests(ps, alpha=0.05, method="holm")
    scipy.stats.binom.sf(x - 1, n, 0.8), scipy.stats.binom.cdf(x, n, 0.8)
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from oloproof.stats.holm import holm_adjust, holm_reject, row_p_values

PS = [0.01, 0.04, 0.03, 0.005, 0.2, 0.0125, 0.5, 0.049, 0.001, 0.026]
# multipletests(PS, alpha=0.05, method="holm")
SM_REJECT = [False, False, False, True, False, False, False, False, True, False]
SM_ADJUSTED = [0.08, 0.16, 0.156, 0.045, 0.4, 0.08750000000000001, 0.5, 0.16, 0.01, 0.156]

ROWS = [(58, 60), (70, 80), (45, 50), (30, 40), (95, 100)]
# scipy: (binom.sf(x - 1, n, 0.8), binom.cdf(x, n, 0.8))
SCIPY_P = [
    (0.00019405224786214374, 0.9999754800713462),
    (0.0564609044589468, 0.9712824327140029),
    (0.04802721937073359, 0.9815039849397906),
    (0.8392308520023821, 0.26822288570851555),
    (1.8680066300324318e-05, 0.9999962968269427),
]
# multipletests([min of each pair], alpha=0.05, method="holm")
SM_ROWS_ADJUSTED = [
    0.000776208991448575,
    0.14408165811220078,
    0.14408165811220078,
    0.26822288570851555,
    9.340033150162158e-05,
]


def test_holm_adjusted_p_values_and_rejections_equal_statsmodels() -> None:
    assert holm_adjust(PS) == pytest.approx(SM_ADJUSTED, rel=1e-12)
    assert list(holm_reject(PS, alpha=0.05)) == SM_REJECT


def test_row_p_values_equal_scipy_and_their_holm_equals_statsmodels() -> None:
    claims = [row_p_values(x, n, threshold=0.8, kind="min") for x, n in ROWS]
    assert [(c.pass_p, c.fail_p) for c in claims] == [pytest.approx(pair, rel=1e-12) for pair in SCIPY_P]
    assert holm_adjust([c.p for c in claims]) == pytest.approx(SM_ROWS_ADJUSTED, rel=1e-12)
    assert [c.claim for c in claims] == ["PASS", "PASS", "PASS", "FAIL", "PASS"]


def test_missing_outputs_count_against_each_claim() -> None:
    # 50 passes of 60 with 5 missing: PASS is judged on 50/60, FAIL on 55/60.
    claim = row_p_values(50, 60, missing=5, threshold=0.8, kind="min")
    assert claim.pass_p == pytest.approx(float(stats.binom.sf(49, 60, 0.8)))
    assert claim.fail_p == pytest.approx(float(stats.binom.cdf(55, 60, 0.8)))
    # A max rule mirrors it: PASS needs few passes even with the missing counted as passes.
    mirror = row_p_values(5, 60, missing=2, threshold=0.2, kind="max")
    assert mirror.pass_p == pytest.approx(float(stats.binom.cdf(7, 60, 0.2)))
    assert mirror.fail_p == pytest.approx(float(stats.binom.sf(4, 60, 0.2)))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: row_p_values(5, 4, threshold=0.5, kind="min"), r"passes \+ missing must be <= n, got 5 \+ 0 > 4"),
        (lambda: row_p_values(1, 0, threshold=0.5, kind="min"), "n must be >= 1, got 0"),
        (lambda: holm_adjust([0.1, 1.5]), r"p_values\[1\] must lie in \[0, 1\], got 1.5"),
    ],
)
def test_bad_input_is_named(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_holm_properties(ps: list[float]) -> None:
    adjusted = holm_adjust(ps)
    assert all(p <= a <= 1.0 for p, a in zip(ps, adjusted, strict=True))  # never below the raw p-value
    bonferroni = [min(1.0, p * len(ps)) for p in ps]
    assert all(a <= b + 1e-15 for a, b in zip(adjusted, bonferroni, strict=True))  # never worse than Bonferroni
    order = np.argsort(ps, kind="stable")
    assert all(adjusted[order[i]] <= adjusted[order[i + 1]] for i in range(len(ps) - 1))  # monotone


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 80), st.data())
def test_more_passes_never_weaken_a_pass_claim(n: int, data: st.DataObject) -> None:
    x = data.draw(st.integers(0, n - 1))
    t = data.draw(st.floats(0.05, 0.95))
    assert row_p_values(x + 1, n, threshold=t, kind="min").pass_p <= row_p_values(x, n, threshold=t, kind="min").pass_p


def _family_errors(m: int, n: int, t: float, reps: int, alpha: float, *, holm: bool, seed: int) -> tuple[int, int]:
    """Families (of ``m`` rows of ``n`` cases, each at true rate ``t``, exactly the threshold)
    with at least one row decided PASS or FAIL, and with at least one row decided PASS."""
    rng = np.random.default_rng(seed)
    x = rng.binomial(n, t, size=(reps, m))
    pass_p = stats.binom.sf(x - 1, n, t)
    fail_p = stats.binom.cdf(x, n, t)
    p = np.minimum(pass_p, fail_p)
    tail = alpha / 2  # each side of a two-sided interval at 1 - alpha
    if holm:
        ranked = np.sort(p, axis=1)
        steps = tail / (m - np.arange(m))
        ok = np.cumprod(ranked <= steps, axis=1).astype(bool)
        cut = np.where(ok.any(axis=1), ranked[np.arange(reps), ok.sum(axis=1) - 1], -1.0)
        decided = p <= cut[:, None]
    else:
        decided = p <= tail
    passed = decided & (pass_p <= fail_p)
    return int(decided.any(axis=1).sum()), int(passed.any(axis=1).sum())


def test_ten_rows_at_the_threshold_holm_keeps_family_wise_error_at_alpha() -> None:
    # Every row's true rate is the threshold, so every PASS or FAIL of a row is an error.
    reps, alpha = 4000, 0.05
    any_claim, any_pass = _family_errors(10, 60, 0.8, reps, alpha, holm=True, seed=18)
    assert stats.binomtest(any_claim, reps, alpha, alternative="greater").pvalue > 0.01
    assert any_pass <= any_claim


def test_ten_rows_at_the_threshold_without_holm_err_about_one_minus_one_minus_alpha_to_the_ten() -> None:
    reps, alpha, n, t = 4000, 0.05, 60, 0.8
    any_claim, _ = _family_errors(10, n, t, reps, alpha, holm=False, seed=19)
    # The exact per-row error of one test at level alpha (the binomial is discrete, so below alpha):
    x = np.arange(n + 1)
    pmf = stats.binom.pmf(x, n, t)
    per_row = float(pmf[np.minimum(stats.binom.sf(x - 1, n, t), stats.binom.cdf(x, n, t)) <= alpha / 2].sum())
    family = 1 - (1 - per_row) ** 10
    assert stats.binomtest(any_claim, reps, family).pvalue > 0.01
    assert any_claim / reps > 5 * alpha  # several times what one row promises


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 60), st.data())
def test_a_min_rule_mirrors_a_max_rule_on_the_complement(n: int, data: st.DataObject) -> None:
    # Passes x against min t is failures n - x against max 1 - t: the same two claims.
    x = data.draw(st.integers(0, n))
    t = data.draw(st.floats(0.05, 0.95))
    at_min = row_p_values(x, n, threshold=t, kind="min")
    at_max = row_p_values(n - x, n, threshold=1 - t, kind="max")
    assert at_min.pass_p == pytest.approx(at_max.pass_p, rel=1e-9, abs=1e-300)
    assert at_min.fail_p == pytest.approx(at_max.fail_p, rel=1e-9, abs=1e-300)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12), st.floats(0.001, 0.2))
def test_holm_rejects_a_subset_of_the_uncorrected_tests_and_a_superset_of_bonferroni(
    ps: list[float], alpha: float
) -> None:
    holm = holm_reject(ps, alpha=alpha)
    assert all(p <= alpha for p, rejected in zip(ps, holm, strict=True) if rejected)
    assert all(rejected for p, rejected in zip(ps, holm, strict=True) if p * len(ps) <= alpha)
