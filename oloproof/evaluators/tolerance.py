"""within_tolerance: |output - expected| <= tolerance (regression)."""

from __future__ import annotations

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
    exact_number,
    expected_value,
    require_output_key,
)
from oloproof.schema import Obj, Prop, Scalar


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

        require_output_key(ctx, self.field, self.where)
        cases = ctx.testset.cases
        values = np.empty(len(cases))
        notes: dict[str, str] = {}
        tolerance = Decimal(repr(self.tolerance))
        for index, case in enumerate(cases):
            expected = exact_number(expected_value(ctx, index, self.expected_field, where=self.where))
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
            got = exact_number(output.get(self.field))
            if got is None:
                values[index] = np.nan
                notes[case.id] = f"output '{self.field}' is missing or not a finite number"
                continue
            values[index] = 1.0 if abs(got - expected) <= tolerance else 0.0
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
    pass_fail=True,
)
