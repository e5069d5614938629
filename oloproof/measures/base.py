"""The interface of a measure: what one kind of per-case outcome means to a rule.

A measure is named by the ``kind`` of a ``CriterionOutcome`` (``"binary"``, ``"score"``, ...); that
name is also what READS.log and the holdout outcome records store, so a measure's name never
changes once logs hold it. Each measure says:

- ``reads``: what ``outcome.values[i]`` holds (NaN always means "no usable output");
- ``interval``: the interval a rule decides on, with its method's exact/approximate label, extra
  details for reports and method reason codes (``None`` with ``details["no_method"]`` when no
  interval exists);
- ``count``: how the evidence is counted in a sentence ("17/20", "mean of 20 scores");
- ``stored``: one case's value as a record stores it;
- ``paired``: whether a paired (two versions on the same cases) form exists for compare and the
  regression guard, and ``pass_fail`` whether values are 0/1 outcomes (the seeds recipe and the
  paired table need that);
- ``proportion``: whether thresholds are proportions in (0, 1) (the sizing advice, "a perfect
  result needs N cases", only applies then);
- ``failing``: which cases count against a ``min``/``max`` rule (the last-gate note names them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

IntervalResult = tuple["Interval | None", dict[str, object], list[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Measure:
    name: str  # the outcome kind, as stored in logs and records
    reads: str  # what values[i] holds, for docs and messages
    interval: Callable[[CriterionOutcome, Rule, Policy, TestSet], IntervalResult]
    count: Callable[[float, int], str]  # (sum of values among answered cases, answered) -> text
    stored: Callable[[float], Any]  # one answered case's value, as a record stores it
    failing: Callable[[np.ndarray, str, float], np.ndarray]  # (values, "min"|"max", threshold) -> bool mask
    pass_fail: bool = False  # values are 0/1 outcomes
    paired: bool = False  # a paired interval of (new - old) exists
    proportion: bool = True  # thresholds are proportions in (0, 1)


def restrict(outcome: CriterionOutcome, positions: Sequence[int], case_ids: Sequence[str]) -> CriterionOutcome:
    """``outcome`` on a subset of its cases (``positions`` into its values, ``case_ids`` theirs, in
    test-set order): every per-case array sliced alike (values, and an AUC's labels), so a rule over
    a subset (``where:``, ``per:``) reads the same measure on fewer cases."""
    import numpy as np  # lazy: start-up

    index = np.asarray(list(positions), dtype=int)
    labels = None if outcome.labels is None else outcome.labels[index]
    return replace(outcome, values=outcome.values[index], labels=labels, case_ids=tuple(case_ids))
