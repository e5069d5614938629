"""regex and contains on text outputs.

Patterns run under the third-party ``regex`` engine with a per-match timeout and a total
budget per evaluator, so a catastrophic-backtracking pattern such as ``(a+)+$`` on a long
input cannot hang the gate: the cases it could not decide are reported and counted as
missing (a failure for the lower bound, a pass for the upper), with reason ``regex_timeout``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from oloproof.errors import DataError
from oloproof.evaluators.base import (
    EXPECTED_FIELD,
    FIELD,
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    SpecError,
    Where,
    criterion_prop,
    expected_value,
    require_output_key,
)
from oloproof.schema import Obj, Prop, Scalar

MAX_PATTERN_CHARS = 2000


@dataclass(frozen=True, slots=True)
class TextMatch:
    type: str  # "regex" or "contains"
    field: str
    pattern: str | None  # fixed pattern / substring, or None when taken from expected
    expected_field: str | None
    ignore_case: bool
    passes_when_found: bool
    criterion: str
    timeout_s: float
    budget_s: float
    where: Where

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up
        import regex  # lazy: start-up

        require_output_key(ctx, self.field, self.where)
        cases = ctx.testset.cases
        values = np.empty(len(cases))
        notes: dict[str, str] = {}
        flags = regex.IGNORECASE if self.ignore_case else 0
        fixed = self._compile(self.pattern, flags) if self.pattern is not None else None
        compiled: dict[str, Any] = {}
        deadline = time.monotonic() + self.budget_s
        timeouts = 0  # matches over the per-match limit
        budget_cut = 0  # cases not decided because the total budget ran out
        budget_spent = False
        for index, case in enumerate(cases):
            matcher = fixed
            if matcher is None:
                assert self.expected_field is not None
                wanted = expected_value(ctx, index, self.expected_field, where=self.where)
                if not isinstance(wanted, str):
                    raise DataError(
                        ctx.testset.path,
                        case.line,
                        f"case '{case.id}': expected '{self.expected_field}' must be a string",
                    )
                matcher = compiled.get(wanted)
                if matcher is None:
                    try:
                        matcher = compiled[wanted] = self._compile(wanted, flags)
                    except SpecError as err:
                        raise DataError(ctx.testset.path, case.line, f"case '{case.id}': {err.message}") from None
            output = ctx.outputs.get(case.id)
            if output is None:
                values[index] = np.nan
                continue
            text = output.get(self.field)
            if not isinstance(text, str):
                values[index] = np.nan
                notes[case.id] = f"output '{self.field}' is missing or not a string"
                continue
            remaining = deadline - time.monotonic()
            if budget_spent or remaining <= 0:
                budget_spent = True
                budget_cut += 1
                values[index] = np.nan
                notes[case.id] = "not evaluated: the evaluator's time budget was spent"
                continue
            allowed = min(self.timeout_s, remaining)
            try:
                found = matcher.search(text, timeout=allowed) is not None
            except TimeoutError:
                values[index] = np.nan
                if allowed < self.timeout_s:  # cut short by the total budget, not by the per-match limit
                    budget_spent = True
                    budget_cut += 1
                    notes[case.id] = "not decided: the evaluator's time budget ran out during the match"
                else:
                    timeouts += 1
                    notes[case.id] = f"pattern timed out after {self.timeout_s:g} s"
                continue
            values[index] = 1.0 if found == self.passes_when_found else 0.0
        reasons: tuple[str, ...] = ()
        problems: list[str] = []
        if timeouts or budget_spent:
            reasons = ("regex_timeout",)
            undecided = timeouts + budget_cut
            problems.append(
                f"{self.where}: {undecided} case(s) could not be decided in time "
                f"({timeouts} match(es) over {self.timeout_s:g} s, total budget {self.budget_s:g} s); "
                "simplify the pattern (nested quantifiers such as (a+)+ backtrack catastrophically)"
            )
        return CriterionOutcome(
            criterion=self.criterion,
            kind="binary",
            values=values,
            notes=notes,
            reasons=reasons,
            problems=tuple(problems),
        )

    def _compile(self, pattern: str, flags: int) -> Any:
        import regex  # lazy: start-up

        if self.type == "contains":
            return regex.compile(regex.escape(pattern), flags)
        if len(pattern) > MAX_PATTERN_CHARS:
            raise SpecError("pattern", f"pattern is longer than {MAX_PATTERN_CHARS} characters")
        try:
            return regex.compile(pattern, flags)
        except regex.error as exc:
            raise SpecError("pattern", f"invalid regular expression: {exc}") from None


def _builder(kind: str) -> Any:
    def build(values: dict[str, Any], where: Where) -> TextMatch:
        value_key = "pattern" if kind == "regex" else "value"
        fixed = values[value_key]
        if (fixed is None) == (values["expected_field"] is None):
            raise SpecError(value_key, f"give exactly one of '{value_key}' (fixed) or 'expected_field' (per case)")
        evaluator = TextMatch(
            type=kind,
            field=values["field"],
            pattern=fixed,
            expected_field=values["expected_field"],
            ignore_case=values["ignore_case"],
            passes_when_found=values["passes_when"] in ("match", "found"),
            criterion=values["criterion"],
            timeout_s=values["timeout_ms"] / 1000.0,
            budget_s=float(values["budget_s"]),
            where=where,
        )
        if fixed is not None:
            import regex  # lazy: start-up

            evaluator._compile(fixed, regex.IGNORECASE if values["ignore_case"] else 0)
        return evaluator

    return build


def _common(value_key: str, value_doc: str, passes: tuple[str, str], criterion: str) -> dict[str, Prop]:
    return {
        "field": FIELD,
        value_key: Prop(Scalar("str", nonempty=True), doc=value_doc),
        "expected_field": EXPECTED_FIELD,
        "ignore_case": Prop(Scalar("bool"), default=False, doc="Match case-insensitively."),
        "passes_when": Prop(Scalar("str", enum=passes), default=passes[0], doc="Which outcome counts as a pass."),
        "criterion": criterion_prop(criterion),
        "timeout_ms": Prop(
            Scalar("number", exclusive_minimum=0.0, maximum=10000.0), default=100.0, doc="Time allowed for one match."
        ),
        "budget_s": Prop(
            Scalar("number", exclusive_minimum=0.0), default=10.0, doc="Total time allowed for this evaluator."
        ),
    }


REGEX = EvaluatorKind(
    name="regex",
    schema=Obj(
        _common(
            "pattern",
            "Regular expression (Python `regex` syntax) searched in the output.",
            ("match", "no_match"),
            "matches",
        ),
        doc="Pass when the pattern is (or is not) found in a text output; runs under a time budget.",
    ),
    build=_builder("regex"),
    pass_fail=True,
)

CONTAINS = EvaluatorKind(
    name="contains",
    schema=Obj(
        _common("value", "Substring searched in the output.", ("found", "absent"), "contains"),
        doc="Pass when the text output contains (or lacks) a substring.",
    ),
    build=_builder("contains"),
    pass_fail=True,
)
