"""Near copies of numbers (``--tolerance KEY=X``): the other compared keys equal after normalisation
(and --round), every toleranced number within its tolerance. Built from the test set only."""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

from oloproof.leakage.normalise import MISSING, normalise_case_value, normalise_text, normalise_value
from oloproof.leakage.plan import MatchPlan, lookup_candidates, resolve


class NearTable:
    """Cases with a number at a key that has a tolerance: the other keys equal after normalisation
    (and --round), every toleranced number within its tolerance."""

    def __init__(self, leaves_of: list[dict[str, Any]], tolerance: dict[str, float], plan: MatchPlan) -> None:
        self.tolerance = tolerance
        self.plan = plan
        self.groups: dict[
            tuple[tuple[str, ...], tuple[str, ...]], dict[tuple[Any, ...], list[tuple[int, tuple[float, ...]]]]
        ] = {}
        for index, leaves in enumerate(leaves_of):
            near = tuple(sorted(key for key, value in leaves.items() if key in tolerance and number(value) is not None))
            if not near:
                continue
            others = tuple(sorted(key for key in leaves if key not in near))
            if any(key in plan.image_keys for key in others):
                continue
            exact = tuple(normalise_case_value(leaves[key], plan.digits, plan.domain) for key in others)
            values = tuple(float(leaves[key]) for key in near)
            bucket = self._bucket(values[0], tolerance[near[0]])
            self.groups.setdefault((others, near), {}).setdefault((*exact, bucket), []).append((index, values))
        self.places = {name: lookup_candidates(name) for others, near in self.groups for name in (*others, *near)}

    @staticmethod
    def _bucket(value: float, tol: float) -> Hashable:
        return value if tol == 0 else math.floor(value / tol)

    def scan(self, row: dict[str, Any]) -> list[tuple[int, float]]:
        found: list[tuple[int, float]] = []
        normalise = normalise_text if self.plan.domain == "text" else normalise_value
        for (others, near), index in self.groups.items():
            exact = []
            for name in others:
                value = resolve(row, self.places[name])
                if value is MISSING:
                    break
                exact.append(normalise(value, self.plan.digits))
            else:
                values = [number(resolve(row, self.places[name])) for name in near]
                if any(value is None for value in values):
                    continue
                first, tol0 = values[0], self.tolerance[near[0]]
                assert first is not None
                buckets = [first] if tol0 == 0 else [math.floor(first / tol0) + step for step in (-1, 0, 1)]
                for bucket in buckets:
                    for case, theirs in index.get((*exact, bucket), ()):
                        worst = 0.0
                        for name, mine, their in zip(near, values, theirs, strict=True):
                            tol = self.tolerance[name]
                            assert mine is not None
                            gap = abs(mine - their)
                            if gap > tol * (1 + 1e-12):
                                break
                            worst = max(worst, gap / tol if tol else 0.0)
                        else:
                            found.append((case, worst))
        return found


def number(value: Any) -> float | None:
    """A finite number (a CSV cell holding one too); booleans are not numbers."""
    if type(value) is bool or value is None:
        return None
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None
    else:
        return None
    return number if math.isfinite(number) else None
