"""One-sided error of the clustered lower bound, by regime (STATISTICS.md §2, docs/statistics.md).

One command: ``python benchmarks/clustered_coverage.py [--trials 1000] [--seed 2024]``

Groups are beta-binomial: each of G groups draws its pass rate from a beta distribution with
mean p and intra-cluster correlation ICC (a + b = 1/ICC − 1), then its cases pass independently
at that rate. Group sizes are all 5, all 20, or drawn uniformly from 5–35. For each regime it
prints how often the lower bound at 95% lies above the true rate p (nominal 2.5%), for the
gate's method (``oloproof.stats.clustered``: Kish degrees of freedom and the monotone envelope)
and for plain svyciprop(method = "beta") (Korn–Graubard with G − 1 degrees of freedom, as
before issue 10), with the mean distance from the estimate to each lower bound. A regime is
flagged ``<<`` when the gate's error is significantly above 2.5% (one-sided binomial test,
p < 0.01). Only the lower bound is simulated: the construction is symmetric, so the upper
bound's error at rate p is the lower bound's at 1 − p.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
from scipy import special, stats

from oloproof.stats.clustered import _korn_graubard_lower

TAIL = 0.025


def svyciprop_lower(failures: np.ndarray, sizes: np.ndarray) -> float:
    """survey::svyciprop(method = "beta") lower bound at 95%; each group one trial if none failed."""
    n, g = float(sizes.sum()), sizes.size
    total = float(failures.sum())
    if total == 0:
        return TAIL ** (1 / g)
    if total == n:
        return 0.0
    p = 1 - total / n
    residual = sizes * (total / n) - failures
    variance = g / (g - 1) * float(np.sum(residual**2)) / n**2
    n_eff = min(p * (1 - p) / variance, n) if variance > 0 else n
    n_eff *= (special.stdtrit(n - 1, TAIL) / special.stdtrit(g - 1, TAIL)) ** 2
    return float(special.betaincinv(n_eff * p, n_eff * (1 - p) + 1, TAIL))


def regime(groups: int, size: int, icc: float, rate: float, trials: int, rng: np.random.Generator) -> dict[str, float]:
    spread = 1 / max(icc, 1e-9) - 1
    a, b = rate * spread, (1 - rate) * spread
    misses = {"gate": 0, "svyciprop": 0}
    distance = {"gate": 0.0, "svyciprop": 0.0}
    for _ in range(trials):
        sizes = np.full(groups, size) if size else rng.integers(5, 36, groups)
        rates = rng.beta(a, b, groups) if icc > 0 else np.full(groups, rate)
        failures = (sizes - rng.binomial(sizes, rates)).astype(np.float64)
        estimate = 1 - failures.sum() / sizes.sum()
        for name, low in (
            ("gate", _korn_graubard_lower(failures, sizes.astype(np.float64), TAIL)[0]),
            ("svyciprop", svyciprop_lower(failures, sizes.astype(np.float64))),
        ):
            misses[name] += low > rate
            distance[name] += estimate - low
    return {
        "gate": misses["gate"] / trials,
        "gate_p": float(stats.binomtest(misses["gate"], trials, TAIL, alternative="greater").pvalue),
        "svyciprop": misses["svyciprop"] / trials,
        "gate_distance": distance["gate"] / trials,
        "svyciprop_distance": distance["svyciprop"] / trials,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--groups", type=int, nargs="+", default=[30, 50, 100])
    parser.add_argument("--sizes", type=int, nargs="+", default=[5, 20, 0], help="0: uniform 5-35")
    parser.add_argument("--iccs", type=float, nargs="+", default=[0.0, 0.05, 0.2, 0.4])
    parser.add_argument("--rates", type=float, nargs="+", default=[0.7, 0.8, 0.9, 0.95, 0.98])
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(
        f"one-sided error of the 95% lower bound (nominal {TAIL:.1%}), {args.trials} trials per regime, seed "
        f"{args.seed}"
    )
    print("groups size  icc  rate | gate  (distance) | svyciprop (distance)")
    start = time.perf_counter()
    worst = 0.0
    for groups, size, icc, rate in itertools.product(args.groups, args.sizes, args.iccs, args.rates):
        r = regime(groups, size, icc, rate, args.trials, rng)
        worst = max(worst, r["gate"])
        flag = " <<" if r["gate_p"] < 0.01 else ""
        shown = f"{size:>4}" if size else "5-35"
        print(
            f"{groups:>6} {shown} {icc:4.2f} {rate:5.2f} | {r['gate']:5.3f} ({r['gate_distance']:.4f}) |"
            f" {r['svyciprop']:5.3f}     ({r['svyciprop_distance']:.4f}){flag}",
            flush=True,
        )
    print(f"worst gate error {worst:.3f}; {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
