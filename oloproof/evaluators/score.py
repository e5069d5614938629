"""score: a numeric output field in [0, 1] is the case's score (criterion ``score``).

For systems that grade themselves against a fixed contract (an environment's reward, a
checker's partial credit). The criterion is always a score, so rules on it use the bounded-mean
interval (exact betting by default). An output that is not a finite number in [0, 1] (a
string, a bool, NaN, 1.5) is never clamped or coerced: the case counts as missing, with a note.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from oloproof.evaluators.base import (
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    Where,
    criterion_prop,
    require_output_key,
)
from oloproof.schema import Obj, Prop, Scalar

SCORE_FIELD = Prop(
    Scalar("str", nonempty=True), required=True, doc="Output key holding the case's score, a number in [0, 1]."
)


def unit_score(value: Any) -> float | None:
    """``value`` as a float when it is a finite JSON number in [0, 1]; otherwise None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None


@dataclass(frozen=True, slots=True)
class Score:
    field: str
    criterion: str
    where: Where
    type: str = "score"

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up

        require_output_key(ctx, self.field, self.where)
        cases = ctx.testset.cases
        values = np.full(len(cases), np.nan)
        notes: dict[str, str] = {}
        for index, case in enumerate(cases):
            output = ctx.outputs.get(case.id)
            if output is None:
                continue
            if self.field not in output:
                notes[case.id] = f"output has no '{self.field}'"
                continue
            score = unit_score(output[self.field])
            if score is None:
                notes[case.id] = f"output '{self.field}' must be a number in [0, 1], got {_shown(output[self.field])}"
                continue
            values[index] = score
        return CriterionOutcome(criterion=self.criterion, kind="score", values=values, notes=notes)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _build(values: dict[str, Any], where: Where) -> Score:
    return Score(field=values["field"], criterion=values["criterion"], where=where)


KIND = EvaluatorKind(
    name="score",
    schema=Obj(
        {"field": SCORE_FIELD, "criterion": criterion_prop("score")},
        doc="The output's numeric field in [0, 1] is the case's score (a bounded-mean criterion).",
    ),
    build=_build,
)
