"""The gap chapter's composition point, made as it is stated: one version's level on both sets,
raw and reweighted, and the sentence that says how much of the raw gap is composition.

Raw levels are each set's own score (Wilson with continuity correction); the raw gap is their
difference (MOVER: the sets are independent). Reweighted levels recombine each set's per-stratum
scores under one shared set of weights (``oloproof.stats.reweight``); their gap likewise. The
difference between the two gaps is what composition accounts for. All approximate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof.stats.interval import Interval, interval_json
from oloproof.stats.reweight import mover_combination, wilson_interval

# Below half a point (what reports print at one decimal), two gaps are the same gap.
SAME = 0.005


@dataclass(frozen=True, slots=True, kw_only=True)
class Level:
    """One version's level on both sets: raw, and (when computed) reweighted."""

    version: str
    raw_dev: Interval
    raw_holdout: Interval
    raw_gap: Interval
    dev: Interval | None  # reweighted; None when the reweighting was refused
    holdout: Interval | None
    gap: Interval | None
    sentence: str | None  # for the week-0 version: how much of the raw gap is composition

    def to_json(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "raw": {
                "dev": interval_json(self.raw_dev),
                "holdout": interval_json(self.raw_holdout),
                "gap": interval_json(self.raw_gap),
            },
            "reweighted": None
            if self.dev is None
            else {
                "dev": interval_json(self.dev),
                "holdout": interval_json(self.holdout),
                "gap": interval_json(self.gap),
            },
            "composition_share": None if self.gap is None else self.raw_gap.estimate - self.gap.estimate,
            "sentence": self.sentence,
        }


def _pts(value: float) -> str:
    return f"{100 * value:+.1f}"


def _range(interval: Interval) -> str:
    return f"{interval.level:.0%} [{_pts(interval.low)}, {_pts(interval.high)}]"


def composition_sentence(version: str, raw: Interval, reweighted: Interval, dev: Interval, hold: Interval) -> str:
    """What the week-0 version's two gaps say about composition (dev minus holdout, in points). When
    the raw gap itself lies within noise, the reading is said to be only that: a best reading, not
    a finding (the red team of issue 17: 1 + 2 cases per set got "the gap is composition")."""
    sentence = _composition(version, raw, reweighted, dev, hold)
    claims = not sentence.startswith("composition explains none")  # that one says nothing to doubt
    if claims and raw.low <= 0.0 <= raw.high and abs(raw.estimate) >= SAME:
        sentence += (
            f" (the raw gap itself lies within noise, {_range(raw)}: this is the best reading of these sets, not a "
            "finding)"
        )
    return sentence


def _composition(version: str, raw: Interval, reweighted: Interval, dev: Interval, hold: Interval) -> str:
    share = raw.estimate - reweighted.estimate
    holds_zero = reweighted.low <= 0.0 <= reweighted.high
    levels = (
        f"recombined under one mix, {version} scores {dev.estimate:.3f} on the dev set and {hold.estimate:.3f} on the "
        "holdout"
    )
    if abs(share) < SAME:
        if holds_zero:
            return (
                f"composition explains none of the raw gap of {_pts(raw.estimate)} points (the two mixes differ too "
                f"little to matter: {levels}), and what there is lies within noise ({_range(reweighted)})"
            )
        return (
            f"composition explains none of the raw gap of {_pts(raw.estimate)} points: {levels}, "
            f"{_pts(reweighted.estimate)} points apart ({_range(reweighted)}) — the sets differ within strata "
            "(difficulty, or the measuring apparatus: see drift)"
        )
    if abs(reweighted.estimate) > abs(raw.estimate) + SAME:
        noise = (
            "within noise"
            if holds_zero
            else "not within noise: the sets differ within strata (difficulty, or the measuring apparatus: see drift)"
        )
        return (
            f"composition hides a gap rather than explains one: the raw gap is {_pts(raw.estimate)} points, but "
            f"{levels}, {_pts(reweighted.estimate)} points apart ({_range(reweighted)}), {noise}"
        )
    if holds_zero and abs(reweighted.estimate) < SAME:
        return f"the apparent gap of {_pts(raw.estimate)} points between the sets is composition: {levels}"
    if holds_zero:
        return (
            f"{_pts(share)} of the apparent {_pts(raw.estimate)} points between the sets is composition: {levels}, "
            f"and the {_pts(reweighted.estimate)} points left lie within noise ({_range(reweighted)})"
        )
    return (
        f"composition accounts for {_pts(share)} of the {_pts(raw.estimate)} points between the sets; the "
        f"{_pts(reweighted.estimate)} points left ({_range(reweighted)}) are not composition: {levels}, so the sets "
        "differ within strata (difficulty, or the measuring apparatus: see drift)"
    )


def level(
    version: str,
    dev_passes: Mapping[str, tuple[float, int]],
    hold_passes: Mapping[str, tuple[float, int]],
    *,
    dev: Interval | None,
    holdout: Interval | None,
    confidence: float,
    explain: bool,
) -> Level:
    """``dev_passes``/``hold_passes``: (passes, n) per stratum; ``dev``/``holdout`` the reweighted
    rates (None when refused). ``explain``: add the composition sentence (the week-0 version)."""

    def raw(by_stratum: Mapping[str, tuple[float, int]]) -> Interval:
        passes = sum(int(p) for p, _ in by_stratum.values())
        n = sum(n for _, n in by_stratum.values())
        return wilson_interval(passes, n, confidence=confidence)

    raw_dev, raw_hold = raw(dev_passes), raw(hold_passes)
    raw_gap = mover_combination([(1.0, raw_dev), (-1.0, raw_hold)], confidence=confidence, method="wilson-cc-mover")
    gap = None
    sentence = None
    if dev is not None and holdout is not None:
        gap = mover_combination([(1.0, dev), (-1.0, holdout)], confidence=confidence, method="wilson-cc-mover")
        if explain:
            sentence = composition_sentence(version, raw_gap, gap, dev, holdout)
    return Level(
        version=version,
        raw_dev=raw_dev,
        raw_holdout=raw_hold,
        raw_gap=raw_gap,
        dev=dev,
        holdout=holdout,
        gap=gap,
        sentence=sentence,
    )
