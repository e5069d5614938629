"""label_match: the output field equals the expected field (criterion ``correct``)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from oloproof.evaluators.base import (
    EXPECTED_FIELD,
    FIELD,
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    Where,
    criterion_prop,
    expected_value,
    require_output_key,
)
from oloproof.schema import Obj


def same_value(a: Any, b: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1 and "1" is not 1, also inside arrays and objects."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    # Python's == would call [true] equal to [1]: compare containers element by element.
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[key], b[key]) for key in a)
    return bool(a == b)


@dataclass(frozen=True, slots=True)
class LabelMatch:
    field: str
    expected_field: str
    criterion: str
    where: Where
    type: str = "label_match"

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up

        require_output_key(ctx, self.field, self.where)
        cases = ctx.testset.cases
        scored: list[float] = []  # one per case, made an array once (numpy's per-item store is slow)
        score = scored.append
        notes: dict[str, str] = {}
        outputs = ctx.outputs
        key, exp_key = self.field, self.expected_field
        typed = TypeTally()
        nan = float("nan")
        for index, case in enumerate(cases):
            expected = case.expected.get(exp_key, _MISSING)
            if expected is _MISSING:
                expected = expected_value(ctx, index, exp_key, where=self.where)
            output = outputs.get(case.id)
            if output is None:
                score(nan)
                continue
            got = output.get(key, _MISSING)
            if got is _MISSING:
                score(nan)
                notes[case.id] = f"output has no '{key}'"
                continue
            typed.answered += 1
            kind = type(got)
            if kind is type(expected) and kind in _PLAIN:
                score(1.0 if got == expected else 0.0)  # the common case, without a call
                continue
            typed.add(case.id, got, expected)
            score(1.0 if same_value(got, expected) else 0.0)
        values = np.array(scored, dtype=float)
        note = typed.note(key, exp_key)
        return CriterionOutcome(
            criterion=self.criterion, kind="binary", values=values, notes=notes, details={"note": note} if note else {}
        )


def json_type(value: Any) -> str:
    """The JSON type of a parsed value: "1" is a string, 1 and 1.0 are numbers, true is a boolean."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object" if isinstance(value, dict) else "null"


def _text(value: Any) -> str | None:
    """A value as loose text: true, 1, 1.0 and "1" as "true", "1", "1", "1" (None for lists,
    objects and null)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    return value.strip().lower() if isinstance(value, str) else None


def _alike(got: Any, expected: Any) -> bool:
    """Values of different JSON types that a person would read as the same (1 and true, "1" and 1)."""
    if got == expected:  # Python: True == 1 == 1.0
        return True
    text = _text(got)
    return text is not None and text == _text(expected)


class TypeTally:
    """How many answered cases compare an output and an expected value of different JSON types (a
    model that answers "1" where the test set says 1 fails every case, and should be told why)."""

    def __init__(self) -> None:
        self.answered = 0
        self.differ = 0
        self.alike = 0  # of those, values a person reads as the same: 1 and true, "1" and 1
        self.example: tuple[str, Any, Any] | None = None
        self.alike_example: tuple[str, Any, Any] | None = None

    def add(self, case_id: str, got: Any, expected: Any) -> None:
        """An answered case whose values are not both a str, int or float of one Python type (those
        are of one JSON type; the caller counts every answered case in ``answered``)."""
        if json_type(got) != json_type(expected):
            self.differ += 1
            self.example = self.example or (case_id, got, expected)
            if _alike(got, expected):
                self.alike += 1
                self.alike_example = self.alike_example or (case_id, got, expected)

    def note(self, key: str, exp_key: str) -> str:
        """A sentence when some answered cases fail only by JSON type (1 against true, "1" against
        1), or most answered cases differ in type ("" otherwise). A test set that mixes 1 and true
        fails half its cases on type alone: that is said whatever the share (18-D4)."""

        def shown(value: Any) -> str:
            text = json.dumps(value, ensure_ascii=False)
            return text if len(text) <= 40 else text[:37] + "..."

        if self.alike and self.alike_example:
            case_id, got, expected = self.alike_example
            return (
                f"On {self.alike} of {self.answered} answered cases output.{key} and expected.{exp_key} hold the same "
                f"value in different JSON types (case {case_id}: output {shown(got)}, a {json_type(got)}; expected "
                f"{shown(expected)}, a {json_type(expected)}), so those cases fail: label_match compares JSON values, "
                'so "1" is not 1 and 1 is not true; write both as the same type.'
            )
        if not self.example or self.differ * 2 <= self.answered:
            return ""
        case_id, got, expected = self.example
        return (
            f"On {self.differ} of {self.answered} answered cases output.{key} and expected.{exp_key} differ in JSON "
            f"type (case {case_id}: output {shown(got)}, a {json_type(got)}; expected {shown(expected)}, a "
            f'{json_type(expected)}): label_match compares JSON values, so "1" is not 1; write both as the same '
            "type."
        )


_MISSING = object()
_PLAIN = frozenset({str, int, float})  # one Python type of these is one JSON type


def _build(values: dict[str, Any], where: Where) -> LabelMatch:
    return LabelMatch(
        field=values["field"],
        expected_field=values["expected_field"] or values["field"],
        criterion=values["criterion"],
        where=where,
    )


KIND = EvaluatorKind(
    name="label_match",
    schema=Obj(
        {"field": FIELD, "expected_field": EXPECTED_FIELD, "criterion": criterion_prop("correct")},
        doc="Pass when the output's field equals the expected value (classification).",
    ),
    build=_build,
    pass_fail=True,
)
