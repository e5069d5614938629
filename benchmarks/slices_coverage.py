"""Coverage of the issue-18 §1-3 methods, by regime (docs/statistics.md, "Subsets, slices and
classification reports").

One command: ``python benchmarks/slices_coverage.py [--trials 4000] [--seed 18]``

1. Precision (``where: {output.KEY: VALUE}``): cases i.i.d. over three classes with a confusion
   model; the Clopper–Pearson interval over the cases predicted as class 1 against the true
   P(truth 1 | predicted 1). Coverage overall and conditional on small selection sizes.
2. ``per:`` rows: m rows of n cases, every row's true rate exactly the threshold (so each row's
   PASS or FAIL is an error); family-wise error with Holm (``fwer: holm``) and without
   (``fwer: none``), against 1 − (1 − e)^m, e the exact one-row error of the discrete test.
3. F1 of one class: the percentile bootstrap (2000 replicates, as the report uses) against the
   true F1 of the cell probabilities.
Regimes whose coverage is significantly below nominal (binomial test p < 0.01) are flagged ``<<``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import stats

from oloproof.stats.binomial import cp_lower, cp_upper
from oloproof.stats.classification import f1_bootstrap

TAIL = 0.025


def flag(covered: int, total: int, nominal: float) -> str:
    return "<<" if total and stats.binomtest(covered, total, nominal, alternative="less").pvalue < 0.01 else ""


def precision_grid(trials: int, rng: np.random.Generator) -> None:
    print("## precision, Clopper-Pearson conditional on the cases predicted as the class (nominal 0.95)\n")
    print("| n | prior of class | its accuracy | precision | mean selected | coverage | coverage at n_sel <= 5 | |")
    print("|--:|--:|--:|--:|--:|--:|--:|---|")
    for n in (20, 60, 200):
        for prior1, right1 in ((0.1, 0.9), (0.3, 0.7), (0.3, 0.95)):
            prior = np.array([0.6 - prior1 / 2, prior1, 0.4 - prior1 / 2])
            right = np.array([0.85, right1, 0.8])
            truth = rng.choice(3, size=(trials, n), p=prior)
            wrong = (truth + rng.integers(1, 3, size=(trials, n))) % 3
            predicted = np.where(rng.random((trials, n)) < right[truth], truth, wrong)
            joint = prior1 * right1
            called_p = joint + (prior[0] * (1 - right[0]) + prior[2] * (1 - right[2])) / 2
            precision = joint / called_p
            called = (predicted == 1).sum(axis=1)
            hits = ((predicted == 1) & (truth == 1)).sum(axis=1)
            has = called > 0
            low, high = cp_lower(hits[has], called[has], TAIL), cp_upper(hits[has], called[has], TAIL)
            covered = (low <= precision) & (precision <= high)
            small = called[has] <= 5
            small_cov = f"{covered[small].mean():.3f} ({int(small.sum())})" if small.sum() >= 50 else "-"
            print(
                f"| {n} | {prior1} | {right1} | {precision:.3f} | {called[has].mean():.1f} | {covered.mean():.4f} | "
                f"{small_cov} | {flag(int(covered.sum()), int(has.sum()), 0.95)} |"
            )
    print()


def family_error(m: int, n: int, t: float, trials: int, rng: np.random.Generator, holm: bool) -> tuple[float, float]:
    x = rng.binomial(n, t, size=(trials, m))
    pass_p, fail_p = stats.binom.sf(x - 1, n, t), stats.binom.cdf(x, n, t)
    p = np.minimum(pass_p, fail_p)
    if holm:
        ranked = np.sort(p, axis=1)
        ok = np.cumprod(ranked <= TAIL / (m - np.arange(m)), axis=1).astype(bool)
        cut = np.where(ok.any(axis=1), ranked[np.arange(trials), ok.sum(axis=1) - 1], -1.0)
        decided = p <= cut[:, None]
    else:
        decided = p <= TAIL
    passed = decided & (pass_p <= fail_p)
    return float(decided.any(axis=1).mean()), float(passed.any(axis=1).mean())


def holm_grid(trials: int, rng: np.random.Generator) -> None:
    print("## per: rows at the threshold, family-wise error (alpha = 0.05)\n")
    print(
        "| rows | n per row | threshold | one row's exact error | 1-(1-e)^m | fwer: none | fwer: none, false PASS "
        "| fwer: holm | fwer: holm, false PASS | |"
    )
    print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|")
    for m, n, t in ((3, 60, 0.8), (10, 60, 0.8), (10, 200, 0.9), (30, 40, 0.7), (50, 100, 0.95)):
        x = np.arange(n + 1)
        e = float(
            stats.binom.pmf(x, n, t)[np.minimum(stats.binom.sf(x - 1, n, t), stats.binom.cdf(x, n, t)) <= TAIL].sum()
        )
        none_any, none_pass = family_error(m, n, t, trials, rng, holm=False)
        holm_any, holm_pass = family_error(m, n, t, trials, rng, holm=True)
        bad = flag(round((1 - holm_any) * trials), trials, 0.95)
        print(
            f"| {m} | {n} | {t} | {e:.4f} | {1 - (1 - e) ** m:.3f} | {none_any:.3f} | {none_pass:.3f} | "
            f"{holm_any:.4f} | {holm_pass:.4f} | {bad} |"
        )
    print()


def f1_grid(trials: int, rng: np.random.Generator) -> None:
    print("## F1 of one class, percentile bootstrap over cases, 2000 replicates (nominal 0.95; approximate)\n")
    print("| n | TP, FP, FN shares | true F1 | coverage | below | above | |")
    print("|--:|---|--:|--:|--:|--:|---|")
    runs = max(200, trials // 8)
    for n in (30, 100, 300, 1000):
        for cells in ((0.2, 0.05, 0.05), (0.05, 0.03, 0.02), (0.45, 0.02, 0.03)):
            probs = np.array([*cells, 1 - sum(cells)])
            true_f1 = 2 * cells[0] / (2 * cells[0] + cells[1] + cells[2])
            below = above = 0
            for _ in range(runs):
                tp, fp, fn, _rest = (int(v) for v in rng.multinomial(n, probs))
                interval = f1_bootstrap(tp, fp, fn, n, confidence=0.95, rng=rng)
                below += true_f1 < interval.low
                above += true_f1 > interval.high
            covered = runs - below - above
            print(
                f"| {n} | {cells} | {true_f1:.3f} | {covered / runs:.3f} | {below / runs:.3f} | {above / runs:.3f} | "
                f"{flag(covered, runs, 0.95)} |"
            )
    print()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=18)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    precision_grid(args.trials, rng)
    holm_grid(args.trials, rng)
    f1_grid(args.trials, rng)
    print(f"(trials {args.trials}, seed {args.seed}, {time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
