"""False-PASS probability of a `min` rule decided by Wilson or Jeffreys instead of Clopper–Pearson
(docs/statistics.md, "Why not Wilson or Jeffreys").

One command: ``python benchmarks/wilson_jeffreys_false_pass.py [--n-max 2000]``

Exact enumeration, no simulation (so nothing to seed): a run of n cases at a true pass rate equal
to the rule's ``min`` t has X ~ Binomial(n, t) passes; the rule PASSes when the 95% two-sided
interval's lower bound is at or above t (``oloproof.decide.side_of``). The false-PASS probability
is P(lower(X) >= t | p = t) = P(X >= x*), x* the smallest pass count that clears. Because the
lower bound rises with X, x* is found by a scan from n down. For t = 0.80, 0.90, 0.95, 0.99 and
every n from the smallest at which a perfect run can PASS up to ``--n-max``, it prints the worst
false-PASS probability over n, the n where it occurs, and the worst over the "all-pass" region
(n below the point where a run with one failure can PASS, so only x = n passes). Nominal: 2.5%.

Wilson: the score interval without continuity correction; Jeffreys: the Beta(x + ½, n − x + ½)
quantiles, with the lower bound 0 at x = 0 (Brown, Cai & DasGupta 2001). Clopper–Pearson is
shown as the reference (never above 2.5%).
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from scipy import stats

ALPHA = 0.05
Z = float(stats.norm.isf(ALPHA / 2))


def wilson_low(x: np.ndarray, n: int) -> np.ndarray:
    p = x / n
    centre = p + Z * Z / (2 * n)
    half = Z * np.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    return np.asarray((centre - half) / (1 + Z * Z / n))


def jeffreys_low(x: np.ndarray, n: int) -> np.ndarray:
    low = stats.beta.ppf(ALPHA / 2, x + 0.5, n - x + 0.5)
    return np.asarray(np.where(x == 0, 0.0, low))


def clopper_pearson_low(x: np.ndarray, n: int) -> np.ndarray:
    low = stats.beta.ppf(ALPHA / 2, np.maximum(x, 1), n - x + 1)
    return np.asarray(np.where(x == 0, 0.0, low))


METHODS = {"clopper-pearson": clopper_pearson_low, "wilson": wilson_low, "jeffreys": jeffreys_low}


def false_pass(method: str, n: int, t: float) -> tuple[float, int | None]:
    """P(PASS | p = t) for n cases, and the smallest passing count (None: no run passes)."""
    x = np.arange(n + 1)
    clears = METHODS[method](x, n) >= t
    if not clears.any():
        return 0.0, None
    first = int(np.argmax(clears))
    assert clears[first:].all(), (method, n, t)  # the lower bound rises with x
    return float(stats.binom.sf(first - 1, n, t)), first


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-max", type=int, default=2000)
    parser.add_argument("--thresholds", type=float, nargs="+", default=[0.80, 0.90, 0.95, 0.99])
    args = parser.parse_args(argv)
    print(f"exact false-PASS probability at a true rate = min, 95% two-sided, n up to {args.n_max}")
    print("| min | method | worst over n | at n | worst while only a perfect run passes | at n |")
    print("|---|---|---|---|---|---|")
    for t in args.thresholds:
        start = max(1, math.ceil(math.log(ALPHA / 2) / math.log(t)) - 40)  # Clopper–Pearson's first n, less slack
        for method in METHODS:
            worst, at, worst_perfect, at_perfect = 0.0, 0, 0.0, 0
            for n in range(1, args.n_max + 1):
                if n < start and method == "clopper-pearson":
                    continue
                rate, first = false_pass(method, n, t)
                if rate > worst:
                    worst, at = rate, n
                if first == n and rate > worst_perfect:
                    worst_perfect, at_perfect = rate, n
            perfect = f"{worst_perfect:.2%} | {at_perfect or '-'}"
            print(f"| {t:.2f} | {method} | {worst:.2%} | {at} | {perfect} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
