"""The classification report of each ``label_match`` criterion (issue 18 §3): the confusion matrix
and per-class precision, recall and F1 with intervals, as scikit-learn's classification_report
computes the values. Attached to the criterion's outcome (``details["classification"]``), so the
JSON report carries it and the Markdown and terminal (-v) reports render it; nothing is gated on it
(rules gate recall and precision with ``where:``)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oloproof.evaluators.label_match import LabelMatch
from oloproof.jsonl import bulk
from oloproof.slices.select import json_safe
from oloproof.stats.interval import interval_json

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.stats.classification import ClassReport
    from oloproof.testset import TestSet

MAX_CLASSES = 200  # more and the "classes" are most likely free text: no report, and it says so
MATRIX_CLASSES = 30  # the JSON report's confusion matrix; the Markdown and terminal show fewer
REPLICATES = 2000
_ABSENT = object()
_SCALARS = frozenset({str, int, float, bool})


def _key(value: Any) -> str:
    """One text per JSON-equal label: 1 and 1.0 together, "1" and 1 apart, true apart from 1."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


def _order(values: list[Any]) -> list[Any]:
    """scikit-learn's order where it has one (sorted numbers, sorted strings); else by JSON text."""
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return sorted(values)
    if all(isinstance(v, str) for v in values):
        return sorted(values)
    return sorted(values, key=lambda v: (type(v).__name__, _key(v)))


def with_classification(
    release: Release,
    testset: TestSet,
    outputs: Mapping[str, Mapping[str, Any]],
    outcomes: dict[str, CriterionOutcome],
) -> dict[str, CriterionOutcome]:
    """``outcomes`` with each label_match criterion's classification report in its details."""
    found = dict(outcomes)
    for evaluator in release.evaluators:
        if not isinstance(evaluator, LabelMatch) or evaluator.criterion not in outcomes:
            continue
        outcome = outcomes[evaluator.criterion]
        report = classification(evaluator, testset, outputs, outcome, release)
        found[evaluator.criterion] = replace(outcome, details={**outcome.details, "classification": report})
    return found


def classification(
    evaluator: LabelMatch,
    testset: TestSet,
    outputs: Mapping[str, Mapping[str, Any]],
    outcome: CriterionOutcome,
    release: Release,
) -> dict[str, Any]:
    import numpy as np  # lazy: start-up

    from oloproof.stats.classification import classification_report  # lazy: start-up

    covered = set(outcome.case_ids) if outcome.case_ids is not None else None
    cases = testset.cases if covered is None else [case for case in testset.cases if case.id in covered]
    truth_field, field = evaluator.expected_field, evaluator.field
    truth_values = [case.expected.get(truth_field, _ABSENT) for case in cases]
    predicted_values = [
        _ABSENT if (output := outputs.get(case.id)) is None else output.get(field, _ABSENT) for case in cases
    ]
    coded = _codes(truth_values, predicted_values)
    if coded is None:
        return {"omitted": "no case has an expected label to report on"}
    if isinstance(coded, str):
        return {"omitted": coded}
    ordered, truth_codes, predicted_codes = coded
    truth = np.array(truth_codes, dtype=np.int64)
    predicted = np.array(predicted_codes, dtype=np.int64)
    policy = release.policy
    report = classification_report(
        truth, predicted, len(ordered), confidence=policy.confidence, seed=policy.seed, replicates=REPLICATES
    )
    return _as_json(report, ordered, policy.confidence)


def _codes(truth_values: list[Any], predicted_values: list[Any]) -> tuple[list[Any], list[int], list[int]] | str | None:
    """The classes in scikit-learn's order and each case's class index (-1: no output), or None when
    a case has no expected label, or why there is no report (too many labels).

    The labels of 10^5 cases are a handful of distinct values: each distinct (type, value) is keyed
    once, and the per-case work is C's (``dict.fromkeys``, ``map``), not a Python call per case
    (the gate's cost per case depends on it). A label that is an array or object (unhashable) takes
    the general path, which gives the same answer."""
    types = {*map(type, truth_values), *map(type, predicted_values)} - {object}  # object: _ABSENT's type
    if len(types) == 1 and types <= _SCALARS:
        # One scalar type (the common case): values stand for themselves, 1 and true cannot meet.
        return _coded(truth_values, predicted_values, _ABSENT, lambda value: value)
    try:
        with bulk():  # 2 x 10^5 small tuples: no collection walking the test set's objects meanwhile
            truth_pairs = list(zip(map(type, truth_values), truth_values, strict=True))
            predicted_pairs = list(zip(map(type, predicted_values), predicted_values, strict=True))
            return _coded(truth_pairs, predicted_pairs, (object, _ABSENT), lambda pair: pair[1])
    except TypeError:  # an array or object label
        return _codes_general(truth_values, predicted_values)


def _coded(
    truth: list[Any], predicted: list[Any], absent: Any, value_of: Callable[[Any], Any]
) -> tuple[list[Any], list[int], list[int]] | str | None:
    """``_codes`` over hashable stand-ins of the labels (``value_of`` gives the label back)."""
    truth_distinct = dict.fromkeys(truth)  # in order of first appearance, as labels are met
    if absent in truth_distinct:
        return None
    distinct = {**truth_distinct, **dict.fromkeys(predicted)}
    keys = {item: _key(value_of(item)) for item in distinct if item != absent}
    labels: dict[str, Any] = {}
    for item, key in keys.items():
        labels.setdefault(key, value_of(item))
    if not labels:
        return None
    if len(labels) > MAX_CLASSES:
        return _too_many(len(labels))
    ordered = _order(list(labels.values()))
    index = {_key(value): i for i, value in enumerate(ordered)}
    code = {item: index[key] for item, key in keys.items()}
    code[absent] = -1
    return ordered, list(map(code.__getitem__, truth)), list(map(code.__getitem__, predicted))


def _codes_general(
    truth_values: list[Any], predicted_values: list[Any]
) -> tuple[list[Any], list[int], list[int]] | str | None:
    """``_codes`` for labels of any JSON value (arrays and objects too), one key per case."""
    truth_keys = [None if value is _ABSENT else _key(value) for value in truth_values]
    predicted_keys = [None if value is _ABSENT else _key(value) for value in predicted_values]
    labels: dict[str, Any] = {}
    for key, value in zip((*truth_keys, *predicted_keys), (*truth_values, *predicted_values), strict=True):
        if key is not None:
            labels.setdefault(key, value)
    if not labels or any(key is None for key in truth_keys):
        return None
    if len(labels) > MAX_CLASSES:
        return _too_many(len(labels))
    ordered = _order(list(labels.values()))
    index = {_key(value): i for i, value in enumerate(ordered)}
    return (
        ordered,
        [index[key] for key in truth_keys if key is not None],
        [-1 if key is None else index[key] for key in predicted_keys],
    )


def _too_many(count: int) -> str:
    return (
        f"{count} distinct labels (more than {MAX_CLASSES}): these are not classes, so no classification report is made"
    )


def _as_json(report: ClassReport, labels: list[Any], confidence: float) -> dict[str, Any]:
    k = len(labels)
    per_class = [
        {
            "label": json_safe(labels[row.index]),
            "support": row.support,
            "predicted": row.predicted,
            "tp": row.tp,
            "missing": row.missing,
            "precision": row.precision,
            "precision_defined": row.precision_defined,
            "precision_interval": interval_json(row.precision_interval),
            "recall": row.recall,
            "recall_defined": row.recall_defined,
            "recall_interval": interval_json(row.recall_interval),
            "f1": row.f1,
            "f1_interval": interval_json(row.f1_interval),
        }
        for row in report.rows
    ]
    matrix = None
    if k <= MATRIX_CLASSES:
        matrix = {
            "labels": [json_safe(label) for label in labels],
            "rows": [[int(x) for x in report.matrix[i, :k]] for i in range(k)],
            "no_output": [int(report.matrix[i, k]) for i in range(k)],
        }
    names = ("precision", "recall", "f1")
    return {
        "n": report.n,
        "confidence": confidence,
        "accuracy": report.accuracy,
        "macro_avg": dict(zip(names, report.macro, strict=True)),
        "weighted_avg": dict(zip(names, report.weighted, strict=True)),
        "per_class": per_class,
        "matrix": matrix,
        "matrix_omitted": None if matrix is not None else f"{k} classes: more than {MATRIX_CLASSES}",
        "intervals": (
            "recall and precision: exact Clopper-Pearson (precision conditional on the number predicted); "
            f"F1: {report.replicates}-replicate percentile bootstrap over cases, seed {report.seed}, approximate, "
            "shown only, never gated"
        ),
    }
