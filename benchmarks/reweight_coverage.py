"""Coverage of the reweighted intervals of ``oloproof gap``, by regime (STATISTICS.md §5, docs/statistics.md).

One command: ``python benchmarks/reweight_coverage.py [--trials 2000] [--seed 2026]``

Each regime fixes strata (their sizes in the set, their weights, and their true rates). Per
trial, every stratum's cases are drawn — binomial passes for a rate; a multinomial paired table
(b, c, rest) for a movement — and the reweighted interval is computed at 95% with the method
``gap`` uses (``oloproof.stats.reweight``: Wilson with continuity correction, or Tango, per
stratum, MOVER across strata) and, for comparison, with plain Wilson per stratum (considered and
not chosen) and with the method it replaced (post-stratified Wald with thin strata pooled,
``oloproof.stats.gap``). The target is the weighted truth Σ w_h θ_h. It prints, per regime and
method, the coverage and each side's miss rate (nominal 2.5% each), flagging ``<<`` a side whose
miss rate is significantly above 2.5% (one-sided binomial test, p < 0.01). The fit (dev movement
− holdout movement, MOVER of two reweighted movements) and the level gap (one version's level on
the dev set minus on the holdout, raw and reweighted) are simulated in the last two blocks.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from dataclasses import dataclass

import numpy as np
from pooled_wald import reweighted_paired_difference, reweighted_rate
from scipy import stats

from oloproof.stats.interval import Interval
from oloproof.stats.paired import PairedCounts, paired_difference
from oloproof.stats.reweight import mover_combination, wilson_interval

LEVEL = 0.95
TAIL = (1 - LEVEL) / 2


@dataclass(frozen=True)
class Regime:
    name: str
    sizes: tuple[int, ...]
    weights: tuple[float, ...]
    first: tuple[float, ...]  # a rate: the pass rate; a movement: P(only the current version passes)
    second: tuple[float, ...] = ()  # a movement: P(only the baseline passes)


RATES = (
    Regime("4 x 50, rates .70-.90, equal weights", (50, 50, 50, 50), (1, 1, 1, 1), (0.7, 0.8, 0.85, 0.9)),
    Regime("3/5/80/200, equal weights (thin strata heavy)", (3, 5, 80, 200), (1, 1, 1, 1), (0.5, 0.8, 0.9, 0.95)),
    Regime("10/30/100, rates near 1, weights .5/.3/.2", (10, 30, 100), (0.5, 0.3, 0.2), (0.98, 0.99, 0.97)),
    Regime("10/30/100, rates near 0, weights .5/.3/.2", (10, 30, 100), (0.5, 0.3, 0.2), (0.02, 0.05, 0.01)),
    Regime("3 + 200, rates .90/.70, equal weights", (3, 200), (1, 1), (0.9, 0.7)),
    Regime(
        "10 strata of 3-8, rates .60-.95, unequal weights",
        (3, 4, 5, 6, 7, 8, 3, 5, 7, 8),
        (3, 1, 2, 1, 3, 1, 2, 1, 4, 2),
        (0.6, 0.7, 0.8, 0.9, 0.95, 0.65, 0.75, 0.85, 0.9, 0.95),
    ),
    Regime("20/60/200, rates .60/.90/.99, weights .6/.3/.1", (20, 60, 200), (0.6, 0.3, 0.1), (0.6, 0.9, 0.99)),
    Regime("5 x 3, all rates 1.0 (boundary)", (3, 3, 3, 3, 3), (1, 2, 3, 4, 5), (1.0, 1.0, 1.0, 1.0, 1.0)),
    Regime("3/4/200, rates near 0, thin strata 70% of the weight", (3, 4, 200), (0.4, 0.3, 0.3), (0.02, 0.05, 0.01)),
    Regime("6 x 200, rates .93-.99, equal weights", (200,) * 6, (1,) * 6, (0.93, 0.95, 0.97, 0.98, 0.99, 0.99)),
    Regime(
        "the chapter's holdout strata, rates .70-.85",
        (12, 17, 24, 29, 38),
        (12, 17, 24, 29, 38),
        (0.7, 0.8, 0.75, 0.8, 0.6),
    ),
)

MOVES = (
    Regime("4 x 50, +5 points", (50, 50, 50, 50), (1, 1, 1, 1), (0.1,) * 4, (0.05,) * 4),
    Regime(
        "3/5/80/200, equal weights (thin strata heavy)",
        (3, 5, 80, 200),
        (1, 1, 1, 1),
        (0.1, 0.2, 0.05, 0.08),
        (0.05, 0.0, 0.02, 0.03),
    ),
    Regime("10/30/100, rare discordance", (10, 30, 100), (0.5, 0.3, 0.2), (0.02, 0.01, 0.03), (0.01, 0.0, 0.01)),
    Regime("no change anywhere, 10/30/100", (10, 30, 100), (0.5, 0.3, 0.2), (0.05, 0.05, 0.05), (0.05, 0.05, 0.05)),
    Regime(
        "10 strata of 3-8, unequal weights",
        (3, 4, 5, 6, 7, 8, 3, 5, 7, 8),
        (3, 1, 2, 1, 3, 1, 2, 1, 4, 2),
        (0.15, 0.1, 0.2, 0.1, 0.05, 0.1, 0.15, 0.1, 0.2, 0.1),
        (0.05, 0.05, 0.0, 0.1, 0.05, 0.02, 0.05, 0.1, 0.05, 0.0),
    ),
    Regime(
        "the chapter's holdout strata, +3.3 points",
        (12, 17, 24, 29, 38),
        (12, 17, 24, 29, 38),
        (0.075,) * 5,
        (0.042,) * 5,
    ),
    Regime("80 + 120, no discordance at all", (80, 120), (0.4, 0.6), (0.0, 0.0), (0.0, 0.0)),
)


@functools.cache
def _wilson(passes: int, n: int, continuity: bool = True) -> Interval:
    return wilson_interval(passes, n, confidence=LEVEL, continuity=continuity)


@functools.cache
def _tango(b: int, c: int, n: int) -> Interval:
    return paired_difference(b, c, n, confidence=LEVEL, method="tango")


def _table(b: int, c: int, n: int) -> PairedCounts:
    return PairedCounts(n=n, b=b, c=c, both=n - b - c, neither=0, missing=0)


def draw_rate(regime: Regime, rng: np.random.Generator) -> dict[str, tuple[int, int]]:
    passes = rng.binomial(regime.sizes, regime.first)
    return {f"s{i}": (int(x), n) for i, (x, n) in enumerate(zip(passes, regime.sizes, strict=True))}


def draw_move(regime: Regime, rng: np.random.Generator) -> dict[str, PairedCounts]:
    out = {}
    for i, (n, pb, pc) in enumerate(zip(regime.sizes, regime.first, regime.second, strict=True)):
        b, c, _ = rng.multinomial(n, (pb, pc, 1 - pb - pc))
        out[f"s{i}"] = _table(int(b), int(c), n)
    return out


def weights(regime: Regime) -> dict[str, float]:
    return {f"s{i}": float(w) for i, w in enumerate(regime.weights)}


def new_rate(data: dict[str, tuple[int, int]], w: dict[str, float], continuity: bool = True) -> Interval:
    total = sum(w.values())
    parts = [(w[k] / total, _wilson(*data[k], continuity)) for k in sorted(w)]
    return mover_combination(parts, confidence=LEVEL, method="m")


def new_move(data: dict[str, PairedCounts], w: dict[str, float]) -> Interval:
    total = sum(w.values())
    parts = [(w[k] / total, _tango(data[k].b, data[k].c, data[k].n)) for k in sorted(w)]
    return mover_combination(parts, confidence=LEVEL, method="m")


def old_rate(data: dict[str, tuple[int, int]], w: dict[str, float]) -> Interval:
    return reweighted_rate({k: (float(x), n) for k, (x, n) in data.items()}, w, confidence=LEVEL)


def old_move(data: dict[str, PairedCounts], w: dict[str, float]) -> Interval:
    return reweighted_paired_difference(data, w, confidence=LEVEL)


def truth(regime: Regime) -> float:
    total = sum(regime.weights)
    if not regime.second:
        return sum(w * p for w, p in zip(regime.weights, regime.first, strict=True)) / total
    return sum(w * (b - c) for w, b, c in zip(regime.weights, regime.first, regime.second, strict=True)) / total


def flag(misses: int, trials: int) -> str:
    p = stats.binomtest(misses, trials, TAIL, alternative="greater").pvalue
    return "<<" if p < 0.01 else "  "


def row(name: str, method: str, lows: int, highs: int, trials: int) -> str:
    cover = 1 - (lows + highs) / trials
    return (
        f"| {name} | {method} | {cover:.3f} | {lows / trials:.3f}{flag(lows, trials)} | "
        f"{highs / trials:.3f}{flag(highs, trials)} |"
    )


def simulate(regimes: tuple[Regime, ...], kind: str, trials: int, rng: np.random.Generator) -> list[str]:
    lines = [f"| {kind} regime | method | coverage | truth below | truth above |", "|---|---|---|---|---|"]
    for regime in regimes:
        target, w = truth(regime), weights(regime)
        counts = {"new": [0, 0], "plain": [0, 0], "old": [0, 0]}
        for _ in range(trials):
            if regime.second:
                moves = draw_move(regime, rng)
                got = {"new": new_move(moves, w), "old": old_move(moves, w)}
            else:
                rates = draw_rate(regime, rng)
                got = {"new": new_rate(rates, w), "plain": new_rate(rates, w, False), "old": old_rate(rates, w)}
            for method, interval in got.items():
                counts[method][0] += target < interval.low - 1e-12
                counts[method][1] += target > interval.high + 1e-12
        now = "Tango + MOVER (now)" if regime.second else "Wilson-cc + MOVER (now)"
        lines.append(row(regime.name, now, *counts["new"], trials))
        if not regime.second:
            lines.append(row(regime.name, "plain Wilson + MOVER (not chosen)", *counts["plain"], trials))
        lines.append(row(regime.name, "pooled Wald (before)", *counts["old"], trials))
    return lines


def simulate_fit(trials: int, rng: np.random.Generator) -> list[str]:
    """Fit = dev movement − holdout movement, both reweighted onto the holdout's mix."""
    lines = ["| fit regime | coverage | truth below | truth above |", "|---|---|---|---|"]
    cases = (
        ("the chapter: dev 20-60/stratum +17, holdout 12-38 +3.3", (20, 30, 40, 50, 60), (0.18,) * 5, (0.01,) * 5),
        ("dev thin strata 3-8, holdout 12-38, no fit", (3, 4, 5, 6, 8), (0.075,) * 5, (0.042,) * 5),
        (
            "dev 100-200/stratum, near-ceiling gain +4, holdout 12-38",
            (100, 120, 150, 180, 200),
            (0.05,) * 5,
            (0.01,) * 5,
        ),
    )
    hold = Regime("holdout", (12, 17, 24, 29, 38), (12, 17, 24, 29, 38), (0.075,) * 5, (0.042,) * 5)
    for name, dev_sizes, pb, pc in cases:
        dev = Regime("dev", dev_sizes, hold.weights, pb, pc)
        target = truth(dev) - truth(hold)
        w = weights(hold)
        lows = highs = 0
        for _ in range(trials):
            d, h = new_move(draw_move(dev, rng), w), new_move(draw_move(hold, rng), w)
            fit = mover_combination([(1.0, d), (-1.0, h)], confidence=LEVEL, method="m")
            lows += target < fit.low - 1e-12
            highs += target > fit.high + 1e-12
        cover = 1 - (lows + highs) / trials
        lines.append(
            f"| {name} | {cover:.3f} | {lows / trials:.3f}{flag(lows, trials)} | {highs / trials:.3f}"
            f"{flag(highs, trials)} |"
        )
    return lines


def simulate_level_gap(trials: int, rng: np.random.Generator) -> list[str]:
    """Reweighted level gap (dev − holdout, both under the holdout's mix) and the raw gap (each set's own mix)."""
    lines = ["| level-gap regime | gap | coverage | truth below | truth above |", "|---|---|---|---|---|"]
    cases = (
        ("the chapter's composition: dev 40/60, holdout 20/80, rates .90/.65", (40, 60), (20, 80), (0.9, 0.65)),
        ("dev 3/100, holdout 6/100, rates .95/.70", (3, 100), (6, 100), (0.95, 0.7)),
        ("dev 30/30/140, holdout 60/60/80, rates .98/.60/.85", (30, 30, 140), (60, 60, 80), (0.98, 0.6, 0.85)),
    )
    for name, dev_sizes, hold_sizes, rates in cases:
        w = {f"s{i}": float(n) for i, n in enumerate(hold_sizes)}
        dev = Regime("dev", dev_sizes, hold_sizes, rates)
        hold = Regime("hold", hold_sizes, hold_sizes, rates)
        raw_truth = sum(n * p for n, p in zip(dev_sizes, rates, strict=True)) / sum(dev_sizes) - truth(hold)
        misses = {"reweighted": [0, 0], "raw": [0, 0]}
        for _ in range(trials):
            d, h = draw_rate(dev, rng), draw_rate(hold, rng)
            rw = mover_combination([(1.0, new_rate(d, w)), (-1.0, new_rate(h, w))], confidence=LEVEL, method="m")
            pooled = [_wilson(sum(x for x, _ in s.values()), sum(n for _, n in s.values())) for s in (d, h)]
            raw = mover_combination([(1.0, pooled[0]), (-1.0, pooled[1])], confidence=LEVEL, method="m")
            for key, interval, target in (("reweighted", rw, 0.0), ("raw", raw, raw_truth)):
                misses[key][0] += target < interval.low - 1e-12
                misses[key][1] += target > interval.high + 1e-12
        for key, (lows, highs) in misses.items():
            cover = 1 - (lows + highs) / trials
            lines.append(
                f"| {name} | {key} | {cover:.3f} | {lows / trials:.3f}{flag(lows, trials)} | "
                f"{highs / trials:.3f}{flag(highs, trials)} |"
            )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    print(f"reweighted intervals at 95%, {args.trials} trials per regime, seed {args.seed}\n")
    print("\n".join(simulate(RATES, "rate", args.trials, rng)))
    print()
    print("\n".join(simulate(MOVES, "movement", args.trials, rng)))
    print()
    print("\n".join(simulate_fit(args.trials, rng)))
    print()
    print("\n".join(simulate_level_gap(args.trials, rng)))
    print(f"\n({time.perf_counter() - started:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
