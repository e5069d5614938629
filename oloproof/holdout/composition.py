"""The gap's composition check: do the two sets hold the same mix of strata, and what if not?

Cases per ``stratum`` on the dev set (from the cases) and on the holdout (from the reads' outcome
records, in hash order: counts only). Each set's scores are then post-stratified onto one shared
set of weights — declared (``--weights``: production's mix, say), or else the holdout's — and the
fit is recomputed from the two reweighted paired differences (STATISTICS.md §5). Every stratum
with a positive weight keeps it (``oloproof.stats.reweight``: a score interval per stratum,
combined by MOVER); nothing is pooled. A weighted stratum with no case in a set leaves its rate
there unknown: the reweighting is then refused, with the reason. A stratum whose own interval is
wider than half of [0, 1] is named as thin. The week-0 version's level on both sets, raw and
reweighted, says how much of the raw gap is composition. A case without a stratum counts under
``(none)``. A holdout stratum of fewer than 5 cases shows its count but not its
passes: with one or two cases, "1 → 1 of 1" would be a holdout case's outcome under both versions.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.holdout.levels import Level, level
from oloproof.stats.interval import interval_json
from oloproof.stats.paired import PairedCounts, paired_counts
from oloproof.stats.reweight import (
    THIN_WIDTH,
    NotReweighted,
    mover_combination,
    reweight_paired,
    reweight_rate,
    wilson_interval,
)

if TYPE_CHECKING:
    from oloproof.holdout.history import Reading
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

NO_STRATUM = "(none)"
# A holdout stratum of fewer cases shows its count but not its passes.
MIN_STRATUM_SIZE = 5
# Thin strata named one by one in the notes; the rest are counted (the JSON lists them all).
MAX_THIN_NOTES = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class StratumRow:
    name: str
    dev_n: int
    holdout_n: int
    weight: float
    dev_passes: tuple[int, int]  # baseline, current
    holdout_passes: tuple[int, int] | None  # None: withheld, the stratum is too small to show

    def to_json(self) -> dict[str, Any]:
        return {
            "stratum": self.name,
            "dev_n": self.dev_n,
            "holdout_n": self.holdout_n,
            "weight": self.weight,
            "dev_passes": {"baseline": self.dev_passes[0], "current": self.dev_passes[1]},
            "holdout_passes": None
            if self.holdout_passes is None
            else {"baseline": self.holdout_passes[0], "current": self.holdout_passes[1]},
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Reweighted:
    baseline: Interval
    current: Interval
    movement: Interval

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": interval_json(self.baseline),
            "current": interval_json(self.current),
            "movement": interval_json(self.movement),
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Composition:
    available: bool
    why: str | None  # why it could not be checked
    weights_source: str  # "holdout" or the declared file
    rows: tuple[StratumRow, ...] = ()
    dev_n: int = 0
    holdout_n: int = 0
    largest: tuple[str, float, float] | None = None  # stratum, dev share, holdout share
    dev: Reweighted | None = None
    holdout: Reweighted | None = None
    fit: Interval | None = None
    levels: tuple[Level, ...] = ()  # the week-0 version's, then the current version's
    refused: str | None = None  # why the sets were not reweighted (a weighted stratum with no case)
    thin: tuple[tuple[str, str, int], ...] = ()  # (set, stratum, cases): its own interval is wider than THIN_WIDTH
    notes: tuple[str, ...] = ()  # sentences: strata left out, thin strata

    def to_json(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "why": self.why,
            "weights": self.weights_source,
            "strata": [row.to_json() for row in self.rows],
            "largest_share_difference": None
            if self.largest is None
            else {"stratum": self.largest[0], "dev_share": self.largest[1], "holdout_share": self.largest[2]},
            "dev": None if self.dev is None else self.dev.to_json(),
            "holdout": None if self.holdout is None else self.holdout.to_json(),
            "fit": None if self.fit is None else interval_json(self.fit),
            "levels": [item.to_json() for item in self.levels],
            "refused": self.refused,
            "thin": [{"set": where, "stratum": name, "n": n} for where, name, n in self.thin],
            "thin_width": THIN_WIDTH,
            "notes": list(self.notes),
        }


def _by_stratum(
    labels: Sequence[str | None], old: Sequence[bool | None], new: Sequence[bool | None]
) -> tuple[dict[str, tuple[float, int]], dict[str, tuple[float, int]], dict[str, PairedCounts]]:
    """Per stratum: (passes, n) of each version (a missing output is not a pass) and the paired table."""
    index: dict[str, list[int]] = {}
    for i, label in enumerate(labels):
        index.setdefault(label if label is not None else NO_STRATUM, []).append(i)
    old_rates: dict[str, tuple[float, int]] = {}
    new_rates: dict[str, tuple[float, int]] = {}
    tables: dict[str, PairedCounts] = {}
    for name, members in index.items():
        o, w = [old[i] for i in members], [new[i] for i in members]
        old_rates[name] = (float(sum(1 for v in o if v)), len(members))
        new_rates[name] = (float(sum(1 for v in w if v)), len(members))
        tables[name] = paired_counts(o, w)
    return old_rates, new_rates, tables


def composition(
    testset: TestSet,
    old_dev: Sequence[bool | None],
    new_dev: Sequence[bool | None],
    *,
    holdout_reads: tuple[Reading, Reading] | None,
    weights: Mapping[str, float] | None,
    weights_source: str | None,
    confidence: float,
) -> Composition:
    source = weights_source or "holdout"
    dev_labels = [case.stratum for case in testset.cases]
    if holdout_reads is None:
        return Composition(available=False, why="no pair of holdout reads to compare with", weights_source=source)
    old_read, new_read = holdout_reads
    hold_labels = old_read.strata if old_read.strata is not None else new_read.strata
    if all(label is None for label in dev_labels) or hold_labels is None or all(v is None for v in hold_labels):
        where = "the dev set" if all(label is None for label in dev_labels) else "the holdout reads"
        return Composition(
            available=False,
            why=f"no stratum recorded for {where}: give each case a `stratum` (e.g. its document type) to check "
            "whether the two sets hold the same mix",
            weights_source=source,
        )
    assert old_read.outcomes is not None and new_read.outcomes is not None
    dev_old, dev_new, dev_tables = _by_stratum(dev_labels, old_dev, new_dev)
    hold_old, hold_new, hold_tables = _by_stratum(hold_labels, old_read.outcomes, new_read.outcomes)
    dev_counts = Counter(label if label is not None else NO_STRATUM for label in dev_labels)
    hold_counts = Counter(label if label is not None else NO_STRATUM for label in hold_labels)
    names = sorted(set(dev_counts) | set(hold_counts))
    left_out: list[str] = []
    if weights is None:
        shared = {name: float(hold_counts.get(name, 0)) for name in names}
        left_out = [name for name in names if not hold_counts.get(name)]
    else:
        shared = dict(weights)
        unknown = [name for name in names if name not in shared]
        if unknown:
            raise UsageError(
                f"the weights ({source}) name no weight for stratum '{unknown[0]}': every stratum of either set "
                "needs one (give 0 to leave it out)"
            )
        stray = sorted(set(shared) - set(names))
        if stray:
            raise UsageError(
                f"the weights ({source}) name stratum '{stray[0]}', which neither set holds (strata here: "
                f"{', '.join(names)}): a misspelt stratum would be merged into another"
            )
    total = sum(shared.values())
    if not math.isfinite(total) or total <= 0:
        raise UsageError(f"the weights ({source}) must add up to a positive, finite number (they add up to {total})")
    dev_n, hold_n = len(dev_labels), len(hold_labels)
    rows = tuple(
        StratumRow(
            name=name,
            dev_n=dev_counts.get(name, 0),
            holdout_n=hold_counts.get(name, 0),
            weight=shared[name] / total,
            dev_passes=(int(dev_old.get(name, (0, 0))[0]), int(dev_new.get(name, (0, 0))[0])),
            holdout_passes=None
            if hold_counts.get(name, 0) < MIN_STRATUM_SIZE
            else (int(hold_old.get(name, (0, 0))[0]), int(hold_new.get(name, (0, 0))[0])),
        )
        for name in names
    )
    largest = max(
        ((name, dev_counts.get(name, 0) / dev_n, hold_counts.get(name, 0) / hold_n) for name in names),
        key=lambda item: (abs(item[1] - item[2]), item[0]),
    )
    shares = {name: weight / total for name, weight in shared.items()}
    dev, hold, refused = _reweight(
        (dev_old, dev_new, dev_tables), (hold_old, hold_new, hold_tables), shares, confidence=confidence
    )
    notes = [
        f"stratum {name} has no holdout case: the holdout's mix gives it weight 0, so its {dev_counts[name]} dev "
        "case(s) are left out of the reweighting"
        for name in left_out
    ]
    thin = _thin(("dev", dev_old), ("holdout", hold_old), shares=shares, confidence=confidence)
    notes += [_thin_sentence(where, name, n, shares[name], confidence) for where, name, n in thin[:MAX_THIN_NOTES]]
    if len(thin) > MAX_THIN_NOTES:
        notes.append(
            f"and {len(thin) - MAX_THIN_NOTES} more thin strata, each keeping its weight (all are listed under "
            "composition.thin in the --json report)"
        )
    fit = None
    if dev is not None and hold is not None:
        fit = mover_combination(
            [(1.0, dev.movement), (-1.0, hold.movement)], confidence=confidence, method="tango-mover"
        )
    levels = tuple(
        level(
            version,
            dev_rates,
            hold_rates,
            dev=None if dev is None else getattr(dev, which),
            holdout=None if hold is None else getattr(hold, which),
            confidence=confidence,
            explain=which == "baseline",
        )
        for version, which, dev_rates, hold_rates in (
            (old_read.version, "baseline", dev_old, hold_old),
            (new_read.version, "current", dev_new, hold_new),
        )
    )
    return Composition(
        available=True,
        why=None,
        weights_source=source,
        rows=rows,
        dev_n=dev_n,
        holdout_n=hold_n,
        largest=largest,
        dev=dev,
        holdout=hold,
        fit=fit,
        levels=levels,
        refused=refused,
        thin=thin,
        notes=tuple(notes),
    )


Sides = tuple[dict[str, tuple[float, int]], dict[str, tuple[float, int]], dict[str, PairedCounts]]


def _reweight(
    dev: Sides, hold: Sides, shares: Mapping[str, float], *, confidence: float
) -> tuple[Reweighted | None, Reweighted | None, str | None]:
    """Both sets reweighted, or neither, with the reason (a weighted stratum one set lacks)."""
    out: list[Reweighted] = []
    try:
        for what, (old, new, tables) in (("the dev set", dev), ("the holdout", hold)):
            out.append(
                Reweighted(
                    baseline=_rate(old, shares, confidence, what),
                    current=_rate(new, shares, confidence, what),
                    movement=reweight_paired(tables, shares, confidence=confidence, what=what).interval,
                )
            )
    except NotReweighted as exc:
        return None, None, str(exc)
    return out[0], out[1], None


def _rate(
    by_stratum: dict[str, tuple[float, int]], shares: Mapping[str, float], confidence: float, what: str
) -> Interval:
    counts = {name: (int(passes), n) for name, (passes, n) in by_stratum.items()}
    return reweight_rate(counts, shares, confidence=confidence, what=what).interval


def _thin(
    *sets: tuple[str, dict[str, tuple[float, int]]], shares: Mapping[str, float], confidence: float
) -> tuple[tuple[str, str, int], ...]:
    """(set, stratum, cases) for each weighted stratum whose week-0 rate interval is wider than THIN_WIDTH."""
    out: list[tuple[str, str, int]] = []
    for where, by_stratum in sets:
        for name in sorted(shares):
            passes, n = by_stratum.get(name, (0, 0))
            if shares[name] > 0 and n > 0 and wilson_interval(int(passes), n, confidence=confidence).width > THIN_WIDTH:
                out.append((where, name, n))
    return tuple(out)


def _thin_sentence(where: str, name: str, n: int, weight: float, confidence: float) -> str:
    return (
        f"stratum {name} has {n} case(s) on the {'dev set' if where == 'dev' else 'holdout'}: too thin to say much "
        f"about its rate there (its {confidence:.0%} interval is wider than {100 * THIN_WIDTH:.0f} points); "
        f"it keeps its weight {weight:.3f}, and its width is carried into the reweighted intervals"
    )
