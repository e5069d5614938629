"""Coverage of the judge-corrected intervals by regime (issue 17; docs/statistics.md).

One command: ``python benchmarks/judge_coverage.py [--trials 2000] [--seed 17]``

Each trial draws N test cases whose human verdict passes with probability p, a judge verdict per
case from the judge's bias (sens = P(judge passes | people pass), fpr = P(judge passes | people
fail)), and labels on a simple random sample of n of the N cases. For each regime it prints the
one-sided errors (lower bound above p, upper bound below p; nominal 2.5% each) and the mean width
of: the exact double-sampling interval (the default), PPI++ (``method: ppi``, approximate), and the
interval main used before issue 17 (Clopper–Pearson on the judge's own verdicts), for contrast.
"""

from __future__ import annotations

import argparse
import itertools
import sys

import numpy as np

from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.judged import double_sampling, ppi_mean

JUDGES = {  # name: (sens, fpr)
    "perfect": (1.0, 0.0),
    "lenient": (1.0, 0.2),
    "harsh": (0.8, 0.0),
    "noisy": (0.9, 0.1),
    "useless": (0.5, 0.5),
}
LABELS = (50, 100, 300)
RATES = (0.5, 0.8, 0.95)
N_CASES = 1000


def trial(
    rng: np.random.Generator, n_cases: int, n_labels: int, p: float, sens: float, fpr: float
) -> tuple[np.ndarray, np.ndarray]:
    """Judge verdicts (N) and human verdicts (NaN where unlabelled), one simulated project."""
    human = rng.random(n_cases) < p
    judge = np.where(human, rng.random(n_cases) < sens, rng.random(n_cases) < fpr).astype(float)
    labels = np.full(n_cases, np.nan)
    chosen = rng.choice(n_cases, size=n_labels, replace=False)
    labels[chosen] = human[chosen]
    return judge, labels


def regime(
    rng: np.random.Generator, trials: int, n_cases: int, n_labels: int, p: float, sens: float, fpr: float
) -> dict[str, tuple[int, int, float]]:
    """Per method: (lower bound above p, upper bound below p, mean width) over ``trials``."""
    counts = {name: [0, 0, 0.0] for name in ("double-sampling", "ppi++", "judge-only")}
    answered = np.ones(n_cases, dtype=bool)
    for _ in range(trials):
        judge, human = trial(rng, n_cases, n_labels, p, sens, fpr)
        labelled = ~np.isnan(human)
        intervals = {
            "double-sampling": double_sampling(judge, human, answered, confidence=0.95).interval,
            "ppi++": ppi_mean(human[labelled], judge[labelled], judge[~labelled], confidence=0.95)[0],
            "judge-only": clopper_pearson(int(judge.sum()), n_cases, confidence=0.95),
        }
        for name, interval in intervals.items():
            counts[name][0] += interval.low > p
            counts[name][1] += interval.high < p
            counts[name][2] += interval.width
    return {name: (int(low), int(high), width / trials) for name, (low, high, width) in counts.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=17)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(f"N = {N_CASES} cases, {args.trials} trials per regime, seed {args.seed}; errors are one-sided, nominal 2.5%")
    print(
        "| judge (sens, fpr) | labels | p | double sampling low/high err, width | PPI++ low/high err, width "
        "| judge only low/high err |"
    )
    print("|---|---|---|---|---|---|")
    for (name, (sens, fpr)), n_labels, p in itertools.product(JUDGES.items(), LABELS, RATES):
        result = regime(rng, args.trials, N_CASES, n_labels, p, sens, fpr)

        def cell(method: str, width: bool = True, result: dict[str, tuple[int, int, float]] = result) -> str:
            low, high, mean_width = result[method]
            text = f"{low / args.trials:.1%} / {high / args.trials:.1%}"
            return f"{text}, {mean_width:.3f}" if width else text

        print(
            f"| {name} ({sens:g}, {fpr:g}) | {n_labels} | {p:g} | {cell('double-sampling')} | {cell('ppi++')} "
            f"| {cell('judge-only', width=False)} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
