"""Outcomes of the built-in measures, read from the outputs themselves (no evaluator): one
``CriterionOutcome`` per criterion, aligned with the test set, NaN where a case has no usable
number (it is then a missing output, bounded both ways by every interval).

- a quantile rule reads the numeric output key its criterion names; when no output holds
  ``latency_ms`` and the run recorded wall times, it reads those instead: each case's batch wall
  time (the command started, fed its batch, read and exited) divided by the batch's number of
  cases, in ms, process start-up and interpreter load included (``oloproof.process``);
- ``criterion: auc`` reads the ``score`` key, with ``expected.label`` (0/1 or false/true) kept
  beside the values in ``labels``;
- ``criterion: mae``/``rmse`` read the absolute error ``|output.field - expected.field|``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from oloproof.errors import ConfigError, DataError
from oloproof.evaluators.base import CriterionOutcome, EvalContext, Where, exact_number, require_output_key
from oloproof.inert import inert
from oloproof.measures.spec import AUC, ERRORS

if TYPE_CHECKING:
    from oloproof.policy import Rule

LATENCY = "latency_ms"
MEASURED = "measured_wall_ms"  # case id -> oloproof's wall time per case, beside a self-reported latency_ms
WALL_TIME = (
    "wall time measured by oloproof: each batch's time from starting the command to its exit, divided by the "
    "batch's number of cases (process start-up included; the system reported no latency_ms)"
)


def output_outcome(
    rule: Rule, ctx: EvalContext, *, wall_ms: Mapping[str, float] | None = None, batch_size: int = 0
) -> CriterionOutcome:
    """The outcome a built-in measure's rule decides on (``oloproof.measures.spec``). ``wall_ms``:
    the run's per-case wall times; ``batch_size``: cases per call of the system when it made them, as
    the run recorded it (never the config's now: a reused run may have been made with another);
    0 (not recorded) leaves the wall times unread."""
    import numpy as np  # lazy: start-up

    where = Where(rule.source, rule.line, rule.key_path, _what(rule))
    key = rule.score if rule.criterion == AUC else rule.field if rule.criterion in ERRORS else rule.criterion
    assert key is not None
    details: dict[str, Any] = {}
    source: Mapping[str, Mapping[str, Any]] = ctx.outputs
    unknown_batches = ""
    if (
        rule.quantile is not None
        and rule.criterion == LATENCY
        and wall_ms
        and not any(LATENCY in output for output in ctx.outputs.values())
    ):
        if batch_size >= 1:
            source = {case_id: {LATENCY: ms} for case_id, ms in wall_ms.items() if case_id in ctx.outputs}
            details["batch_size"] = batch_size  # every case of a batch holds the batch's mean: one observation
        else:  # not which cases shared a call: no observation can be counted (every case is missing)
            source = {case_id: {} for case_id in ctx.outputs}
            unknown_batches = (
                f"rule {rule.id}: the run's wall times were recorded without the batch size they were measured in "
                "(a run made before oloproof kept it), so none is read; run the system again (--rerun)"
            )
        details["source"] = WALL_TIME
    else:
        setting = "score" if rule.criterion == AUC else "field" if rule.criterion in ERRORS else "criterion"
        require_output_key(ctx, key, where, setting=setting)
        if rule.quantile is not None and rule.criterion == LATENCY:
            if wall_ms and batch_size >= 1:
                # The system's own figures are a claim; oloproof's measurement is kept to check it (RT-H6).
                details[MEASURED] = {case_id: ms for case_id, ms in wall_ms.items() if case_id in ctx.outputs}
            else:  # imported outputs, or a run made before wall times were kept: nothing to check against
                details["unmeasured"] = True
    values = np.full(len(ctx.testset.cases), np.nan)
    notes: dict[str, str] = {}
    labels = np.full(len(ctx.testset.cases), np.nan) if rule.criterion == AUC else None
    for index, case in enumerate(ctx.testset.cases):
        if labels is not None:
            labels[index] = _label(ctx, index, where, rule.positive)
        output = source.get(case.id)
        if output is None:
            notes[case.id] = "no output"
            continue
        number = _number(output.get(key))
        if number is None:
            notes[case.id] = f"output '{inert(key)}' is not a finite number" if key in output else f"no '{inert(key)}'"
            continue
        if rule.criterion in ERRORS:
            wanted = _number(_expected(ctx, index, key, where))
            if wanted is None:
                raise DataError(
                    ctx.testset.path, case.line, f"case '{case.id}': expected.{key} is not a number (needed by {where})"
                )
            number = abs(number - wanted)
        values[index] = number
    if labels is not None and rule.positive is not None and len(labels) and not (labels == 1.0).any():
        seen = sorted({_json(case.expected.get("label")) for case in ctx.testset.cases})
        raise ConfigError(
            rule.source,
            rule.line,
            f"{rule.key_path}.positive",
            f"{inert(_json(rule.positive))} is not the expected.label of any case (labels seen: "
            f"{inert(', '.join(seen[:10]))}{', ...' if len(seen) > 10 else ''}); name the positive class as the "
            "test set writes it",
        )
    kind = "quantile" if rule.quantile is not None else rule.criterion
    problems: tuple[str, ...] = (
        (f"{len(notes)} case(s) have no usable '{inert(key)}' for rule {rule.id}",) if notes else ()
    )
    problems += (unknown_batches,) if unknown_batches else ()
    return CriterionOutcome(
        criterion=rule.criterion,
        kind=kind,
        values=values,
        notes=notes,
        problems=problems,
        details=details,
        labels=labels,
    )


def _what(rule: Rule) -> str:
    if rule.quantile is not None:
        return f"quantile {rule.quantile:g} of output '{inert(rule.criterion)}'"
    return f"criterion {rule.criterion}"


def _number(value: Any) -> float | None:
    exact = exact_number(value)
    return None if exact is None or not math.isfinite(float(exact)) else float(exact)


def _expected(ctx: EvalContext, index: int, key: str, where: Where) -> Any:
    case = ctx.testset.cases[index]
    if key not in case.expected:
        raise DataError(ctx.testset.path, case.line, f"case '{case.id}': expected has no '{key}' (needed by {where})")
    return case.expected[key]


def _label(ctx: EvalContext, index: int, where: Where, positive: Any = None) -> float:
    """``expected.label`` as 1.0 (positive) or 0.0: with ``positive`` declared, 1.0 where the label
    equals it as JSON (so "1" is not 1, and true is not 1); otherwise 1/0 or true/false only."""
    value = _expected(ctx, index, "label", where)
    if positive is not None:
        return 1.0 if _same_json(value, positive) else 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int) and value in (0, 1):
        return float(value)
    case = ctx.testset.cases[index]
    raise DataError(
        ctx.testset.path,
        case.line,
        f"case '{case.id}': expected.label is {inert(repr(value))}; {where} needs 0/1 or false/true (1 is the "
        "positive class), or the rule's positive: naming the positive class",
    )


def _json(value: Any) -> str:
    """A label as JSON writes it (true, "1"), for messages: the test set's spelling, not Python's."""
    import json  # lazy: start-up

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _same_json(value: Any, wanted: Any) -> bool:
    if isinstance(value, bool) or isinstance(wanted, bool):
        return isinstance(value, bool) and isinstance(wanted, bool) and value == wanted
    if isinstance(value, (int, float)) and isinstance(wanted, (int, float)):
        return value == wanted
    return type(value) is type(wanted) and value == wanted
