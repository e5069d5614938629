"""``build.py --report``: what ``oloproof compare`` and ``oloproof gap`` should show on this evidence.

Computed from the files a user gets after ``oloproof init`` (the recorded dev runs, READS.log, the
outcome records, the two sets for their strata) with oloproof's own statistics:
``oloproof.stats.paired`` (Fay–Lumbard exact and Tango intervals, McNemar), ``oloproof.stats.gap``
(MOVER), ``oloproof.stats.reweight`` (reweighting by stratum: score intervals combined by MOVER) and ``oloproof.stats.resolution`` (the smallest paired difference a
set resolves). It is a reference for the real commands, not a replacement for them.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

from builder.evidence import DevRun, aligned_outcomes, canonical_keys, dev_runs, holdout_reads, load_jsonl
from builder.plan import FILES, discordant
from builder.prompts import LINEAGE

BASELINE, CURRENT = "extract-v1", "extract-v6"


def _interval(interval: Any) -> dict[str, Any]:
    return {"estimate": interval.estimate, "low": interval.low, "high": interval.high, "method": interval.method,
            "approximate": interval.approximate}


def paired(old: list[bool], new: list[bool], *, confidence: float = 0.95) -> dict[str, Any]:
    from oloproof.stats.paired import mcnemar_exact_p, paired_difference
    from oloproof.stats.resolution import paired_mdd

    b, c = discordant(old, new)
    n = len(old)
    return {
        "n": n, "b": b, "c": c, "difference": (b - c) / n,
        "exact": _interval(paired_difference(b, c, n, confidence=confidence, method="melded")),
        "tango": _interval(paired_difference(b, c, n, confidence=confidence, method="tango")),
        "mcnemar_exact_p": mcnemar_exact_p(b, c),
        "se_conditional": math.sqrt(b + c) / n,
        "resolution": paired_mdd(n, psi=max((b + c) / n, 0.01), confidence=confidence),
    }


def compute(root: Path) -> dict[str, Any]:
    from oloproof.stats.gap import mover_difference
    from oloproof.stats.paired import paired_counts, paired_difference
    from oloproof.stats.reweight import mover_combination, reweight_paired, reweight_rate

    dev = load_jsonl(root / FILES["dev"])
    hold = load_jsonl(root / FILES["holdout"])
    runs = dev_runs(root)
    reads = holdout_reads(root)
    keys = canonical_keys(root / FILES["holdout"])
    first_run: dict[str, DevRun] = {}
    for run in runs:
        first_run.setdefault(run.version, run)
    dev_correct = {version: run.correct(dev) for version, run in first_run.items()}
    decisions = {iteration.version: ("accepted" if iteration.accepted else "rejected") for iteration in LINEAGE}
    trajectory = [
        {"version": run.version, "passes": sum(run.correct(dev)), "n": len(dev), "decision": decisions.get(run.version, "week 0")}
        for run in runs
    ]
    read_rows = []
    hold_outcomes: dict[str, list[bool | None]] = {}
    for read in reads:
        outcomes = aligned_outcomes(read.record, hold, keys)
        hold_outcomes.setdefault(read.version, outcomes)
        before = {run.version for run in runs if run.started_at[:19] <= read.when[:19]}
        passes = sum(1 for value in outcomes if value)
        dev_score = sum(dev_correct[read.version]) / len(dev) if read.version in dev_correct else None
        read_rows.append({
            "read": read.seq, "when": read.when, "who": read.who, "version": read.version, "reason": read.reason,
            "passes": passes, "n": len(hold), "versions_run_before": len(before), "dev_score": dev_score,
            "gap_points": None if dev_score is None else 100 * (dev_score - passes / len(hold)),
        })
    old_d, new_d = dev_correct[BASELINE], dev_correct[CURRENT]
    old_h = [bool(v) for v in hold_outcomes[BASELINE]]
    new_h = [bool(v) for v in hold_outcomes[CURRENT]]
    compare_dev = paired(old_d, new_d)
    compare_dev["regressed"] = [case["id"] for case, o, w in zip(dev, old_d, new_d, strict=True) if o and not w]
    compare_dev["improved"] = [case["id"] for case, o, w in zip(dev, old_d, new_d, strict=True) if w and not o]
    compare_hold = paired(old_h, new_h)

    confidence = 0.95
    d_dev = paired_difference(compare_dev["b"], compare_dev["c"], len(dev), confidence=confidence, method="tango")
    d_hold = paired_difference(compare_hold["b"], compare_hold["c"], len(hold), confidence=confidence, method="tango")
    fit = mover_difference(d_dev, d_hold, confidence=confidence)

    strata = {name: Counter(case["stratum"] for case in rows) for name, rows in (("dev", dev), ("holdout", hold))}
    weights = {stratum: count / len(hold) for stratum, count in strata["holdout"].items()}  # the holdout's composition

    def by_stratum(rows: list[dict[str, Any]], values: list[bool]) -> dict[str, tuple[float, int]]:
        out: dict[str, tuple[float, int]] = {}
        for case, value in zip(rows, values, strict=True):
            passes, n = out.get(case["stratum"], (0.0, 0))
            out[case["stratum"]] = (passes + float(value), n + 1)
        return out

    def tables(rows: list[dict[str, Any]], old: list[bool], new: list[bool]) -> dict[str, Any]:
        out = {}
        for stratum in sorted({case["stratum"] for case in rows}):
            idx = [i for i, case in enumerate(rows) if case["stratum"] == stratum]
            out[stratum] = paired_counts([old[i] for i in idx], [new[i] for i in idx])
        return out

    def rate(rows: list[dict[str, Any]], values: list[bool]) -> Any:
        counts = {s: (int(p), n) for s, (p, n) in by_stratum(rows, values).items()}
        return reweight_rate(counts, weights, confidence=confidence).interval

    reweighted: dict[str, Any] = {}
    movements = {}
    for name, rows, old, new in (("dev", dev, old_d, new_d), ("holdout", hold, old_h, new_h)):
        movements[name] = reweight_paired(tables(rows, old, new), weights, confidence=confidence).interval
        reweighted[name] = {
            BASELINE: _interval(rate(rows, old)),
            CURRENT: _interval(rate(rows, new)),
            "difference": _interval(movements[name]),
            "per_stratum": {s: {BASELINE: by_stratum(rows, old)[s], CURRENT: by_stratum(rows, new)[s]} for s in sorted(strata[name])},
        }
    parts = [(1.0, movements["dev"]), (-1.0, movements["holdout"])]
    reweighted["fit"] = _interval(mover_combination(parts, confidence=confidence, method="tango-mover"))

    v1_runs = [run for run in runs if run.version == BASELINE]
    v1_reads = [row for row in read_rows if row["version"] == BASELINE]
    checkers = sorted({run.checker.get("source_digest", "") for run in runs} | {r.record["checker"]["source_digest"] for r in reads})
    return {
        "trajectory": trajectory, "reads": read_rows, "compare_dev": compare_dev, "compare_holdout": compare_hold,
        "gap": {"dev": _interval(d_dev), "holdout": _interval(d_hold), "fit": _interval(fit),
                "real_improvement_exact": compare_hold["exact"], "real_improvement_tango": compare_hold["tango"],
                "dev_gain": compare_dev["difference"]},
        "composition": {"counts": {k: dict(sorted(v.items())) for k, v in strata.items()}, "weights": "holdout", **reweighted},
        "drift": {"dev_runs_of_baseline": [sum(r.correct(dev)) for r in v1_runs], "holdout_reads_of_baseline": [r["passes"] for r in v1_reads],
                  "checkers": checkers},
        "sizing": _sizing(compare_hold, len(hold)),
    }


def _sizing(compare_hold: dict[str, Any], n: int) -> dict[str, Any]:
    from scipy import stats

    psi = (compare_hold["b"] + compare_hold["c"]) / n
    z = float(stats.norm.isf(0.025) + stats.norm.ppf(0.8))
    delta = compare_hold["difference"]
    return {"psi": psi, "mdd_points": 100 * z * math.sqrt(psi / n), "cases_for_observed_difference": math.ceil((z * z * psi) / (delta * delta))}


def _pts(x: float) -> str:
    return f"{100 * x:+.1f}"


def _iv(interval: dict[str, Any]) -> str:
    kind = "approximate" if interval["approximate"] else "exact"
    return f"{_pts(interval['estimate'])} points, 95% [{_pts(interval['low'])}, {_pts(interval['high'])}] ({interval['method']}, {kind})"


def render(data: dict[str, Any]) -> str:
    out: list[str] = ["Dev-set runs, in order (the greedy search; every score is on the dev set, data/dev.jsonl):"]
    for number, row in enumerate(data["trajectory"]):
        out.append(f"  {number:2d}  {row['version']:<14} dev {row['passes'] / row['n']:.3f} ({row['passes']}/{row['n']})  {row['decision']}")
    out += ["", "Holdout reads (READS.log), with the versions run on the dev set before each:"]
    for row in data["reads"]:
        dev = "" if row["dev_score"] is None else f"; same version on dev {row['dev_score']:.3f}, gap {row['gap_points']:+.1f} points"
        out.append(f"  read {row['read']}  {row['when']}  {row['who']:<6} {row['version']:<12} holdout {row['passes'] / row['n']:.3f} "
                   f"({row['passes']}/{row['n']})  after {row['versions_run_before']} version(s){dev}  reason: {row['reason']}")
    for label, key in (("dev set, 200 cases", "compare_dev"), ("holdout set, reads of both versions", "compare_holdout")):
        c = data[key]
        out += ["", f"compare {BASELINE} {CURRENT} — {label}:",
                f"  discordant: b = {c['b']} (only {CURRENT} right), c = {c['c']} (only {BASELINE} right), of n = {c['n']}",
                f"  difference {_iv(c['exact'])}", f"             {_iv(c['tango'])}",
                f"  McNemar exact p = {c['mcnemar_exact_p']:.3f}; SE sqrt(b+c)/n = {100 * c['se_conditional']:.2f} points",
                f"  smallest difference this set resolves (80% power, psi = {(c['b'] + c['c']) / c['n']:.3f}): {100 * c['resolution']:.1f} points"]
        if "regressed" in c:
            out.append(f"  regressed ({len(c['regressed'])}): {', '.join(c['regressed'])}")
            out.append(f"  improved ({len(c['improved'])}): {', '.join(c['improved'])}")
    g = data["gap"]
    out += ["", f"gap --baseline version:{BASELINE} (current {CURRENT}):",
            f"  movement on the dev set:     {_iv(g['dev'])}", f"  movement on the holdout set: {_iv(g['holdout'])}",
            f"  fit = dev movement - holdout movement: {_iv(g['fit'])}",
            f"  real improvement (paired on the holdout): {_iv(g['real_improvement_exact'])}",
            f"                                            {_iv(g['real_improvement_tango'])}",
            f"  it replaces the dev-set gain of {_pts(g['dev_gain'])} points"]
    comp = data["composition"]
    out += ["", "composition (cases per stratum; reweighted under the holdout's proportions):"]
    for name in ("dev", "holdout"):
        counts = comp["counts"][name]
        total = sum(counts.values())
        out.append(f"  {name:<8} " + ", ".join(f"{s} {n} ({100 * n / total:.1f}%)" for s, n in counts.items()))
    for name in ("dev", "holdout"):
        r = comp[name]
        out.append(f"  {name} set reweighted: {BASELINE} {100 * r[BASELINE]['estimate']:.1f}%, {CURRENT} {100 * r[CURRENT]['estimate']:.1f}%, "
                   f"movement {_iv(r['difference'])}")
        out.append("    per stratum: " + "; ".join(
            f"{s} {int(v[BASELINE][0])}/{v[BASELINE][1]} -> {int(v[CURRENT][0])}/{v[CURRENT][1]}" for s, v in r["per_stratum"].items()))
    out.append(f"  reweighted fit: {_iv(comp['fit'])}")
    d = data["drift"]
    out += ["", f"drift: {BASELINE} on the dev set: {d['dev_runs_of_baseline']} of 200 per run; on the holdout: "
                f"{d['holdout_reads_of_baseline']} of 120 per read; checker digests seen: {len(d['checkers'])}"]
    s = data["sizing"]
    out += [f"sizing: the holdout resolves {s['mdd_points']:.1f} points (psi {s['psi']:.3f}, 80% power); "
            f"{100 * data['compare_holdout']['difference']:.1f} points would need about {s['cases_for_observed_difference']} reserved cases"]
    return "\n".join(out)
