"""The one result type every interval method returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class Interval:
    """A two-sided interval for a proportion, mean or difference.

    ``level`` is the two-sided confidence (0.95 means 2.5% per side). ``approximate`` is
    True for every method whose coverage is not guaranteed for all true values; such an
    interval decides a rule only when the policy allows approximate methods. ``seed`` is the
    seed of any randomness the method used (the betting interval's random orders), None for
    deterministic methods; reports print it.
    """

    estimate: float
    low: float
    high: float
    level: float
    method: str
    approximate: bool
    seed: int | None = None

    @property
    def width(self) -> float:
        return self.high - self.low


def interval_json(interval: Interval | None) -> dict[str, Any] | None:
    """The one JSON shape of an interval, in every report and record: estimate, low, high, level,
    method, approximate, seed (null for deterministic methods)."""
    if interval is None:
        return None
    return {
        "estimate": interval.estimate,
        "low": interval.low,
        "high": interval.high,
        "level": interval.level,
        "method": interval.method,
        "approximate": interval.approximate,
        "seed": interval.seed,
    }
