"""Coverage of the order-statistic quantile interval by regime (docs/statistics.md).

One command: ``python benchmarks/quantile_coverage.py [--trials 4000] [--seed 2026]``

For each distribution, n and p it draws ``trials`` samples, bounds the p-quantile with the ranks of
``oloproof.stats.quantile.quantile_ranks`` (the interval ``quantile_interval`` returns) at 95%, and
prints how often the lower bound lies above the true quantile and the upper bound below it (each
nominally at most 2.5%), beside the exact error rates computed from the binomial law of the counts
(``P(B(n, F(ξ)) < r)`` and ``P(B(n, F(ξ-)) >= s)``). A regime is flagged ``<<`` when a simulated
side's error is significantly above 2.5% (one-sided binomial test, p < 0.01). ``-`` marks a side
with no finite bound (too few cases for it).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy import stats

from oloproof.stats.quantile import quantile_ranks

TAIL = 0.025


def dists() -> dict[str, tuple[object, object]]:
    """name -> (draw(rng, shape), (F(x), F(x-)) at the p-quantile via a function of p)."""

    def cont(dist):  # type: ignore[no-untyped-def]
        return (lambda rng, shape: dist.rvs(size=shape, random_state=rng), lambda p: (dist.ppf(p), p, p))

    def rounded_exp(rng, shape):  # type: ignore[no-untyped-def]
        return np.round(rng.exponential(3.0, size=shape))

    def rounded_exp_truth(p):  # type: ignore[no-untyped-def]
        k = 0
        while 1 - math.exp(-(k + 0.5) / 3.0) < p:
            k += 1
        below = 0.0 if k == 0 else 1 - math.exp(-(k - 0.5) / 3.0)
        return float(k), 1 - math.exp(-(k + 0.5) / 3.0), below

    return {
        "normal": cont(stats.norm),
        "lognormal (latency-like)": cont(stats.lognorm(1.0, scale=200.0)),
        "cauchy (heavy tail)": cont(stats.cauchy),
        "rounded exponential (ties)": (rounded_exp, rounded_exp_truth),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print("| distribution | n | p | lower > truth (sim) | exact | upper < truth (sim) | exact |")
    print("|---|---|---|---|---|---|---|")
    regimes = [(name, draw, truth) for name, (draw, truth) in dists().items()]
    # F(ξ) = p exactly with an atom at ξ: the worst case of the lower side (two-point law).
    regimes.append(("two-point, atom at the quantile", None, None))
    for name, draw, truth in regimes:
        for n in (20, 50, 100, 400):
            for p in (0.5, 0.9, 0.95, 0.99):
                r, s = quantile_ranks(n, p, confidence=0.95)
                if draw is None:
                    sample = np.sort(np.where(rng.random((args.trials, n)) < p, 0.0, 1.0), axis=1)
                    xi, f_at, f_below = 0.0, p, 0.0
                else:
                    sample = np.sort(draw(rng, (args.trials, n)), axis=1)  # type: ignore[operator]
                    xi, f_at, f_below = truth(p)  # type: ignore[operator]
                cells = []
                for rank, side in ((r, "low"), (s, "high")):
                    if rank is None:
                        cells += ["-", "-"]
                        continue
                    bound = sample[:, rank - 1]
                    errors = int((bound > xi).sum()) if side == "low" else int((bound < xi).sum())
                    exact = (
                        stats.binom.cdf(rank - 1, n, f_at) if side == "low" else stats.binom.sf(rank - 1, n, f_below)
                    )
                    high = stats.binomtest(errors, args.trials, TAIL, alternative="greater").pvalue < 0.01
                    flag = " <<" if high else ""
                    cells += [f"{errors / args.trials:.2%}{flag}", f"{exact:.2%}"]
                print(f"| {name} | {n} | {p:g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
