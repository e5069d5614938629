"""Coverage of the clustered paired interval, by regime (STATISTICS.md §4b, docs/statistics.md).

One command: ``python benchmarks/grouped_paired_coverage.py [--trials 1000] [--seed 2026]``
(``--part common|rare|gap`` runs one table, to spread the grid over processes).

Each of G groups draws its own probabilities of a regression (old right, new wrong) and of an
improvement (the reverse) from a Dirichlet distribution with means (r, i) and concentration
κ = 1/ICC − 1, so two cases of one group move together with correlation ICC (ICC 0: every group
has the means). Its cases then move independently at those probabilities. The true difference
new − old is i − r, set equal to −max_drop: the guard must not PASS (lower bound ≥ −max_drop)
more than 2.5% of the time. Group sizes: all 5, all 20, uniform on 2–50, or "skewed" (2–50, most
groups small and a few large: sizes 2 + ⌊48·u³⌋), or "giant" (one group holding 200 cases beside
G − 1 single cases: the audit of issue 17).

The column "gate PASS" is what the gate does: a false PASS needs the lower limit above the truth
*and* enough groups to decide (at least 30, counted and by size: ``too_few_groups``); the other
columns measure the limit alone.

For each regime it prints how often the 95% lower limit lies above the truth (a false PASS of
the guard; ``--trials``) and the upper limit below it (``--melded-trials``, fewer: it is slow),
for the clustered interval's limits (``oloproof.stats.clustered_paired.effective_limit``: what
the gate ships is their hull with the case-level melded interval, which can only be wider, so its
errors are at most these); for the plain cluster-robust t interval (CR1, Kish df), measured and
not shipped; and for the melded interval that ignores the groups (the method before issue 17).
``<<`` flags an error significantly above 2.5% (one-sided binomial test, p < 0.01).

The second table is the gap: dev and holdout both grouped (G groups of 5 each), the same true
movement on both (true fit 0), and the two-sided coverage of the MOVER fit interval from the
clustered intervals as shipped (``clustered_paired_difference``, with the hull) and from the
case-level Tango intervals (what the gap used before); ``--melded-trials`` trials.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

import numpy as np
from scipy import special, stats

from oloproof.stats.clustered import groups_by_size, too_few_groups
from oloproof.stats.clustered_paired import cluster_t, clustered_paired_difference, effective_limit
from oloproof.stats.gap import mover_difference
from oloproof.stats.interval import Interval
from oloproof.stats.paired import paired_difference

TAIL = 0.025
SIZES = ("5", "20", "2-50", "skewed", "giant")


def sizes_for(kind: str, groups: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "2-50":
        return rng.integers(2, 51, groups)
    if kind == "skewed":
        return 2 + np.floor(48 * rng.random(groups) ** 3).astype(np.int64)
    if kind == "giant":
        return np.array([200] + [1] * (groups - 1))
    return np.full(groups, int(kind))


def draw(
    groups: int, kind: str, icc: float, r: float, i: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Per-case differences (−1, 0, +1) and group codes."""
    sizes = sizes_for(kind, groups, rng)
    if icc > 0:
        kappa = 1 / icc - 1
        probs = rng.dirichlet(kappa * np.array([r, i, 1 - r - i]), groups)
    else:
        probs = np.tile([r, i, 1 - r - i], (groups, 1))
    codes = np.repeat(np.arange(groups), sizes)
    u = rng.random(codes.size)
    p = probs[codes]
    d = np.where(u < p[:, 0], -1, np.where(u < p[:, 0] + p[:, 1], 1, 0))
    return d, codes


def t_limits(d: np.ndarray, codes: np.ndarray, groups: int) -> tuple[float, float, float]:
    """The plain cluster-robust t interval (CR1, Kish df): measured, not shipped."""
    mean, se, df = cluster_t(d.tolist(), codes.tolist(), groups)
    t = float(-special.stdtrit(df, TAIL))
    return mean, mean - t * se, mean + t * se


def shipped(d: np.ndarray, codes: np.ndarray, groups: int, *, upper: bool) -> float:
    return effective_limit(d.tolist(), codes.tolist(), groups, confidence=0.95, upper=upper)


def melded(d: np.ndarray) -> Interval:
    b, c = int((d == 1).sum()), int((d == -1).sum())
    return paired_difference(b, c, d.size, confidence=0.95, method="melded")


def flag(count: int, trials: int) -> str:
    p = stats.binomtest(count, trials, TAIL, alternative="greater").pvalue if trials else 1.0
    return " <<" if p < 0.01 else ""


def guard_table(trials: int, melded_trials: int, rng: np.random.Generator, regimes: list[tuple[float, float]]) -> None:
    print(
        "| r, i | groups | sizes | ICC | false PASS (low > Δ) | gate PASS | upper miss (high < Δ) | t: false PASS "
        "| melded, groups ignored: false PASS |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (r, i), groups, kind, icc in itertools.product(regimes, (10, 30, 40, 100), SIZES, (0.0, 0.1, 0.25, 0.5)):
        truth = i - r
        low_miss = gate_miss = high_miss = t_miss = melded_miss = 0
        for trial in range(trials):
            d, codes = draw(groups, kind, icc, r, i, rng)
            above = shipped(d, codes, groups, upper=False) > truth
            low_miss += above
            gate_miss += above and not too_few_groups(groups, groups_by_size(np.bincount(codes)))
            t_miss += t_limits(d, codes, groups)[1] > truth
            if trial < melded_trials:
                high_miss += shipped(d, codes, groups, upper=True) < truth
                melded_miss += melded(d).low > truth
        print(
            f"| {r:.2f}, {i:.2f} | {groups} | {kind} | {icc:g} | {low_miss / trials:.3f}{flag(low_miss, trials)} | "
            f"{gate_miss / trials:.3f}{flag(gate_miss, trials)} | "
            f"{high_miss / melded_trials:.3f}{flag(high_miss, melded_trials)} | {t_miss / trials:.3f} | "
            f"{melded_miss / melded_trials:.3f} |"
        )
        sys.stdout.flush()


def gap_table(trials: int, rng: np.random.Generator) -> None:
    print("| groups × 5, both sets | ICC | MOVER coverage, clustered | MOVER coverage, Tango (before) |")
    print("|---|---|---|---|")
    r, i = 0.10, 0.15
    for groups, icc in itertools.product((30, 40, 100), (0.0, 0.25, 0.5)):
        covered = {"clustered": 0, "tango": 0}
        for _ in range(trials):
            sides = {"clustered": [], "tango": []}
            for _ in range(2):
                d, codes = draw(groups, "5", icc, r, i, rng)
                old, new = (d == -1).tolist(), (d == 1).tolist()  # d = 0: both wrong (either way the same)
                floor = melded(d)
                sides["clustered"].append(
                    clustered_paired_difference(old, new, codes.tolist(), confidence=0.95, floor=floor).interval
                )
                b, c = int((d == 1).sum()), int((d == -1).sum())
                sides["tango"].append(paired_difference(b, c, d.size, confidence=0.95, method="tango"))
            for name, (dev, hold) in sides.items():
                fit = mover_difference(dev, hold, confidence=0.95)
                covered[name] += fit.low <= 0.0 <= fit.high
        print(f"| {groups} | {icc:g} | {covered['clustered'] / trials:.3f} | {covered['tango'] / trials:.3f} |")
        sys.stdout.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--melded-trials", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument(
        "--part",
        choices=("all", "common", "rare", "gap"),
        default="all",
        help="one table only: regressions 10%% vs improvements 5%% (common), 6%% vs 1%% (rare), or the gap",
    )
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.time()
    print(f"seed {args.seed}, {args.trials} trials per regime (melded: {args.melded_trials}); true Δ = i − r")
    regimes = {"common": [(0.10, 0.05)], "rare": [(0.06, 0.01)], "all": [(0.10, 0.05), (0.06, 0.01)]}
    if args.part in regimes:
        guard_table(args.trials, args.melded_trials, rng, regimes[args.part])
        print()
    if args.part in ("all", "gap"):
        gap_table(args.melded_trials, rng)
    print(f"\n{time.time() - started:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
