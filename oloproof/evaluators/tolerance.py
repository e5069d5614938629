"""within_tolerance: |output - expected| <= tolerance (regression)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from oloproof.errors import DataError
from oloproof.evaluators.base import (
    EXPECTED_FIELD,
    FIELD,
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    Where,
    criterion_prop,
    expected_value,
)
from oloproof.schema import Obj, Prop, Scalar


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _decimal(number: float) -> Decimal:
    # repr is the shortest decimal that reads back as this float, i.e. the number as written
    # in the JSON or YAML. Comparing in decimal keeps |diff| == tol a pass: in binary,
    # |1.0 - 1.1| is 0.10000000000000009 > 0.1.
    return Decimal(repr(number))


@dataclass(frozen=True, slots=True)
class WithinTolerance:
    field: str
    expected_field: str
    tolerance: float
    criterion: str
    where: Where
    type: str = "within_tolerance"

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up

        cases = ctx.testset.cases
        values = np.empty(len(cases))
        notes: dict[str, str] = {}
        tolerance = _decimal(self.tolerance)
        for index, case in enumerate(cases):
            expected = _number(expected_value(ctx, index, self.expected_field, where=self.where))
            if expected is None:
                raise DataError(
                    ctx.testset.path,
                    case.line,
                    f"case '{case.id}': expected '{self.expected_field}' must be a finite number",
                )
            output = ctx.outputs.get(case.id)
            if output is None:
                values[index] = np.nan
                continue
            got = _number(output.get(self.field))
            if got is None:
                values[index] = np.nan
                notes[case.id] = f"output '{self.field}' is missing or not a finite number"
                continue
            values[index] = 1.0 if abs(_decimal(got) - _decimal(expected)) <= tolerance else 0.0
        return CriterionOutcome(criterion=self.criterion, kind="binary", values=values, notes=notes)


def _build(values: dict[str, Any], where: Where) -> WithinTolerance:
    return WithinTolerance(
        field=values["field"],
        expected_field=values["expected_field"] or values["field"],
        tolerance=float(values["tolerance"]),
        criterion=values["criterion"],
        where=where,
    )


KIND = EvaluatorKind(
    name="within_tolerance",
    schema=Obj(
        {
            "field": FIELD,
            "expected_field": EXPECTED_FIELD,
            "tolerance": Prop(
                Scalar("number", minimum=0.0), required=True, doc="Largest |output - expected| that passes."
            ),
            "criterion": criterion_prop("within_tolerance"),
        },
        doc="Pass when a numeric output lies within tolerance of the expected value (regression).",
    ),
    build=_build,
)
