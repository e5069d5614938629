"""The classification report of each ``label_match`` criterion (issue 18 §3): the confusion matrix
and per-class precision, recall and F1 with intervals, as scikit-learn's classification_report
computes the values. Attached to the criterion's outcome (``details["classification"]``), so the
JSON report carries it and the Markdown and terminal (-v) reports render it; nothing is gated on it
(rules gate recall and precision with ``where:``)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from oloproof.evaluators.label_match import LabelMatch
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


def _key(value: Any) -> str:
    """One text per JSON-equal label: 1 and 1.0 together, "1" and 1 apart, true apart from 1."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


class _Keys:
    """``_key`` with a memory for hashable scalars (by type and value, so 1, 1.0 and true stay
    apart before ``_key`` joins 1 and 1.0)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[type, Any], str] = {}

    def __call__(self, value: Any) -> str:
        if isinstance(value, (str, int, float, bool)) or value is None:
            slot = (type(value), value)
            found = self.seen.get(slot)
            if found is None:
                found = self.seen[slot] = _key(value)
            return found
        return _key(value)


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
    truth_values: list[Any] = []
    predicted_values: list[Any] = []
    for case in testset.cases:
        if covered is not None and case.id not in covered:
            continue
        truth_values.append(case.expected.get(evaluator.expected_field, _ABSENT))
        output = outputs.get(case.id)
        predicted_values.append(_ABSENT if output is None else output.get(evaluator.field, _ABSENT))
    # Each value's key once (a test set of 10^5 cases has a handful of distinct labels: the JSON
    # text is computed per distinct scalar, not per case; the gate's cost per case depends on it).
    keyed = _Keys()
    truth_keys = [None if value is _ABSENT else keyed(value) for value in truth_values]
    predicted_keys = [None if value is _ABSENT else keyed(value) for value in predicted_values]
    labels: dict[str, Any] = {}
    for key, value in zip((*truth_keys, *predicted_keys), (*truth_values, *predicted_values), strict=True):
        if key is not None:
            labels.setdefault(key, value)
    if not labels or any(key is None for key in truth_keys):
        return {"omitted": "no case has an expected label to report on"}
    if len(labels) > MAX_CLASSES:
        return {
            "omitted": f"{len(labels)} distinct labels (more than {MAX_CLASSES}): these are not classes, so no "
            "classification report is made"
        }
    ordered = _order(list(labels.values()))
    index = {_key(value): i for i, value in enumerate(ordered)}
    truth = np.array([index[key] for key in truth_keys if key is not None], dtype=np.int64)
    predicted = np.array([-1 if key is None else index[key] for key in predicted_keys], dtype=np.int64)
    policy = release.policy
    report = classification_report(
        truth, predicted, len(ordered), confidence=policy.confidence, seed=policy.seed, replicates=REPLICATES
    )
    return _as_json(report, ordered, policy.confidence)


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
