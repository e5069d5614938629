"""Coverage of the AUC, MAE, RMSE and paired intervals by regime (docs/statistics.md, issue 18 §4).

One command: ``python benchmarks/measures_coverage.py [--trials 1000] [--seed 18] [--only auc]``

For each regime it draws ``--trials`` data sets from a distribution whose true value is known
exactly, computes each method's 95% interval and prints the one-sided errors in percent —
``low>θ``: the lower limit above the truth (what makes a ``min:`` rule pass wrongly), ``high<θ``:
the upper limit below the truth (what makes a ``max:`` rule pass wrongly), nominal 2.5% each —
the two-sided coverage and the mean width. AUC regimes condition on the class sizes (m positives,
n negatives), as the intervals do.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable

import numpy as np
from scipy import stats

from oloproof.stats.auc import auc_interval, auc_interval_exact, paired_auc_difference, paired_auc_difference_exact
from oloproof.stats.bounded import bounded_mean_t
from oloproof.stats.interval import Interval
from oloproof.stats.regression_error import mae_interval, paired_mae_difference, rmse_interval

LEVEL = 0.95

Draw = Callable[[np.random.Generator], tuple[np.ndarray, ...]]


def binormal(m: int, n: int, auc: float) -> tuple[Draw, float]:
    """Scores N(δ, 1) for positives and N(0, 1) for negatives: AUC = Φ(δ/√2)."""
    delta = math.sqrt(2.0) * float(stats.norm.ppf(auc))
    labels = np.repeat([1, 0], [m, n])

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        return rng.normal(delta * labels, 1.0), labels

    return draw, auc


def ordinal(m: int, n: int, p_pos: list[float], p_neg: list[float]) -> tuple[Draw, float]:
    """Scores in a few categories (heavy ties): AUC = Σ p⁺_i p⁻_j [i > j] + ½ Σ p⁺_i p⁻_i."""
    labels = np.repeat([1, 0], [m, n])
    k = len(p_pos)
    truth = sum(p_pos[i] * p_neg[j] for i in range(k) for j in range(k) if i > j)
    truth += 0.5 * sum(p_pos[i] * p_neg[i] for i in range(k))

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        pos = rng.choice(k, size=m, p=p_pos)
        neg = rng.choice(k, size=n, p=p_neg)
        return np.concatenate([pos, neg]).astype(float), labels

    return draw, truth


def paired_binormal(m: int, n: int, auc_a: float, auc_b: float, rho: float) -> tuple[Draw, float]:
    """Two scores on the same cases, correlated noise ρ: difference Φ(δ_b/√2) − Φ(δ_a/√2)."""
    da = math.sqrt(2.0) * float(stats.norm.ppf(auc_a))
    db = math.sqrt(2.0) * float(stats.norm.ppf(auc_b))
    labels = np.repeat([1, 0], [m, n])

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        e1 = rng.normal(size=m + n)
        e2 = rng.normal(size=m + n)
        return da * labels + e1, db * labels + rho * e1 + math.sqrt(1 - rho**2) * e2, labels

    return draw, auc_b - auc_a


def scaled_beta(n: int, a: float, b: float, bound: float) -> tuple[Draw, float, float]:
    """Absolute errors bound·Beta(a, b): mean and root mean square known exactly."""
    mean = a / (a + b)
    second = a * (a + 1) / ((a + b) * (a + b + 1))

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        return (bound * rng.beta(a, b, n),)

    return draw, bound * mean, bound * math.sqrt(second)


def two_point(n: int, p_top: float, low: float, bound: float) -> tuple[Draw, float, float]:
    """Errors at the bound with probability p_top, else ``low`` (concentrated at the bound)."""

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        return (np.where(rng.random(n) < p_top, bound, low),)

    mean = p_top * bound + (1 - p_top) * low
    rms = math.sqrt(p_top * bound**2 + (1 - p_top) * low**2)
    return draw, mean, rms


def bimodal(n: int, bound: float) -> tuple[Draw, float, float]:
    """Half the errors near 0 (bound·Beta(2, 20)), half near the bound (bound·Beta(20, 2))."""

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        near = rng.random(n) < 0.5
        return (bound * np.where(near, rng.beta(2, 20, n), rng.beta(20, 2, n)),)

    m1, m2 = 2 / 22, 20 / 22
    s1, s2 = 2 * 3 / (22 * 23), 20 * 21 / (22 * 23)
    return draw, bound * (m1 + m2) / 2, bound * math.sqrt((s1 + s2) / 2)


def lognormal(n: int) -> tuple[Draw, float, float]:
    """Unbounded, heavy-tailed errors exp(N(0, 1)): mean e^½, root mean square e^1."""

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        return (rng.lognormal(0.0, 1.0, n),)

    return draw, math.exp(0.5), math.exp(1.0)


def paired_errors(n: int, bound: float) -> tuple[Draw, float]:
    """Old errors bound·Beta(2, 5), new = old·U(0.5, 1.0) (correlated): difference −¼·E old."""

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, ...]:
        old = bound * rng.beta(2, 5, n)
        return old, old * rng.uniform(0.5, 1.0, n)

    return draw, -0.25 * bound * 2 / 7


def t_mean(values: np.ndarray) -> Interval:
    top = float(values.max())
    iv = bounded_mean_t(values / top, confidence=LEVEL)
    return Interval(
        estimate=iv.estimate * top, low=iv.low * top, high=iv.high * top, level=LEVEL, method="t", approximate=True
    )


def run(
    name: str,
    draw: Draw,
    truth: float,
    methods: dict[str, Callable[..., Interval]],
    trials: int,
    rng: np.random.Generator,
) -> None:
    counts = {key: [0, 0, 0.0] for key in methods}
    for _ in range(trials):
        data = draw(rng)
        for key, method in methods.items():
            iv = method(*data)
            counts[key][0] += iv.low > truth
            counts[key][1] += iv.high < truth
            counts[key][2] += iv.high - iv.low
    for key, (above, below, width) in counts.items():
        cover = 100 * (1 - (above + below) / trials)
        print(
            f"| {name} | {truth:.3f} | {key} | {100 * above / trials:.1f} | {100 * below / trials:.1f} "
            f"| {cover:.1f} | {width / trials:.3f} |"
        )
    sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=18)
    parser.add_argument("--only", choices=["auc", "paired-auc", "mae", "rmse", "paired-mae"])
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"trials per regime: {args.trials}, seed {args.seed}, confidence {LEVEL}; errors in % (nominal 2.5 each)")
    print("| regime | truth | method | low>θ % | high<θ % | coverage % | mean width |")
    print("|---|---|---|---|---|---|---|")
    auc_methods: dict[str, Callable[..., Interval]] = {
        "delong": lambda s, y: auc_interval(s, y, confidence=LEVEL),
        "exact": lambda s, y: auc_interval_exact(s, y, confidence=LEVEL, seed=int(rng.integers(2**32))),
    }
    if args.only in (None, "auc"):
        for name, (draw, truth) in {
            "binormal m=n=50": binormal(50, 50, 0.75),
            "binormal m=n=200 AUC .9": binormal(200, 200, 0.9),
            "heavy ties (3 levels) m=n=30": ordinal(30, 30, [0.2, 0.3, 0.5], [0.5, 0.3, 0.2]),
            "AUC near 1 (.98) m=n=30": binormal(30, 30, 0.98),
            "AUC near 1 (.99) m=10 n=100": binormal(10, 100, 0.99),
            "tiny: 5 pos, 50 neg, AUC .8": binormal(5, 50, 0.8),
            "imbalanced 1:50 (10 pos, 500 neg) AUC .85": binormal(10, 500, 0.85),
            "imbalanced 1:50 (40 pos, 2000 neg) AUC .85": binormal(40, 2000, 0.85),
        }.items():
            run(f"AUC {name}", draw, truth, auc_methods, args.trials, rng)
    paired_methods: dict[str, Callable[..., Interval]] = {
        "delong": lambda a, b, y: paired_auc_difference(a, b, y, confidence=LEVEL),
        "exact": lambda a, b, y: paired_auc_difference_exact(a, b, y, confidence=LEVEL, seed=int(rng.integers(2**32))),
    }
    if args.only in (None, "paired-auc"):
        for name, (draw, truth) in {
            "m=n=50, .75 vs .80, ρ .7": paired_binormal(50, 50, 0.75, 0.80, 0.7),
            "5 pos, 50 neg, .75 vs .85, ρ .5": paired_binormal(5, 50, 0.75, 0.85, 0.5),
            "m=n=30 near 1, .97 vs .99, ρ .5": paired_binormal(30, 30, 0.97, 0.99, 0.5),
        }.items():
            run(f"ΔAUC {name}", draw, truth, paired_methods, args.trials, rng)
    bound = 10.0
    regression: dict[str, tuple[Draw, float, float]] = {
        "Beta(2,5)·10, n=20": scaled_beta(20, 2, 5, bound),
        "Beta(2,5)·10, n=100": scaled_beta(100, 2, 5, bound),
        "at the bound 5%, else 0.1, n=50": two_point(50, 0.05, 0.1, bound),
        # Rare large errors in small sets: the sample often holds none of them (0.95^20 = 36%).
        "at the bound 5%, else 0.1, n=20": two_point(20, 0.05, 0.1, bound),
        "at the bound 2%, else 0.1, n=50": two_point(50, 0.02, 0.1, bound),
        "at the bound 10%, else 0.1, n=10": two_point(10, 0.10, 0.1, bound),
        "at the bound 90%, else 0, n=30": two_point(30, 0.9, 0.0, bound),
        "bimodal (near 0 / near bound), n=40": bimodal(40, bound),
    }
    seeds = lambda: int(rng.integers(2**32))  # noqa: E731
    if args.only in (None, "mae"):
        for name, (draw, mean, _) in regression.items():
            run(
                f"MAE {name}",
                draw,
                mean,
                {
                    "betting (bound 10)": lambda e: mae_interval(e, confidence=LEVEL, bound=bound, seed=seeds()),
                    "bca (no bound)": lambda e: mae_interval(e, confidence=LEVEL, seed=seeds()),
                    "t (no bound)": t_mean,
                },
                args.trials,
                rng,
            )
        for n in (20, 100):
            draw, mean, _ = lognormal(n)
            run(
                f"MAE lognormal (unbounded), n={n}",
                draw,
                mean,
                {
                    "bca (no bound)": lambda e: mae_interval(e, confidence=LEVEL, seed=seeds()),
                    "t (no bound)": t_mean,
                },
                args.trials,
                rng,
            )
    if args.only in (None, "rmse"):
        for name, (draw, _, rms) in regression.items():
            run(
                f"RMSE {name}",
                draw,
                rms,
                {
                    "betting (bound 10)": lambda e: rmse_interval(e, confidence=LEVEL, bound=bound, seed=seeds()),
                    "bca (no bound)": lambda e: rmse_interval(e, confidence=LEVEL, seed=seeds()),
                },
                args.trials,
                rng,
            )
        draw, _, rms = lognormal(100)
        run(
            "RMSE lognormal (unbounded), n=100",
            draw,
            rms,
            {
                "bca (no bound)": lambda e: rmse_interval(e, confidence=LEVEL, seed=seeds()),
            },
            args.trials,
            rng,
        )
    if args.only in (None, "paired-mae"):
        for n in (20, 100):
            draw, truth = paired_errors(n, bound)
            run(
                f"ΔMAE new=old·U(.5,1), n={n}",
                draw,
                truth,
                {
                    "betting (bound 10)": lambda a, b: paired_mae_difference(
                        a, b, confidence=LEVEL, bound=bound, seed=seeds()
                    ),
                    "bca (no bound)": lambda a, b: paired_mae_difference(a, b, confidence=LEVEL, seed=seeds()),
                },
                args.trials,
                rng,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
