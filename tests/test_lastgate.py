"""The last-gate note's failing cases (computed with numpy on the gate's hot path) are exactly the
ones a plain case-by-case reading of the rules gives."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof import testset as testsets
from oloproof.evaluators.base import CriterionOutcome
from oloproof.lastgate import failed_cases
from oloproof.policy import Rule
from oloproof.testset import Case, CaseId


def reference(ids: list[str], rules: list[Rule], outcomes: dict[str, CriterionOutcome]) -> set[str]:
    failed: set[str] = set()
    for rule in rules:
        outcome = outcomes.get(rule.criterion)
        if rule.kind == "regression" or outcome is None:
            continue
        binary = outcome.kind == "binary"
        for case_id, raw in zip(outcome.case_ids or ids, outcome.values, strict=False):
            value = float(raw)
            if math.isnan(value):
                failed.add(case_id)
            elif rule.kind == "min" and value < (1.0 if binary else rule.threshold):
                failed.add(case_id)
            elif rule.kind == "max" and value > (0.0 if binary else rule.threshold):
                failed.add(case_id)
    return failed


def rule(kind: Any, criterion: str, threshold: float) -> Rule:
    return Rule(
        id=f"{criterion}-{kind}",
        criterion=criterion,
        kind=kind,
        threshold=threshold,
        baseline=None,
        method="exact",
        description="",
        source="release.yaml",
        line=1,
        key_path="policy.rules[0]",
    )


value = st.sampled_from([0.0, 1.0, 0.5, 0.25, 0.75, math.nan])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(value, min_size=0, max_size=12),
    st.lists(value, min_size=0, max_size=12),
    st.booleans(),
    st.lists(st.tuples(st.sampled_from(["min", "max", "regression"]), st.sampled_from(["a", "b", "c"])), max_size=4),
    st.sampled_from([0.0, 0.5, 0.7, 1.0]),
)
def test_failed_cases_equal_the_case_by_case_reading(
    a: list[float], b: list[float], subset: bool, kinds: list[tuple[str, str]], threshold: float
) -> None:
    ids = [f"case-{i}" for i in range(len(a))]
    testset = testsets.TestSet(
        path="t.jsonl",
        cases=tuple(Case(CaseId(i), {}, {}, None, None, n) for n, i in enumerate(ids, 1)),
        digest="sha256:x",
        has_groups=False,
    )
    outcomes = {
        "a": CriterionOutcome(
            criterion="a", kind="binary", values=np.array([v if v in (0, 1) or v != v else 1.0 for v in a])
        ),
        "b": CriterionOutcome(
            criterion="b",
            kind="score",
            values=np.array(b[: len(ids)] if not subset else b[:3]),
            case_ids=tuple(ids[:3]) if subset else None,
        ),
    }
    rules = [rule(kind, criterion, threshold) for kind, criterion in kinds]
    found = failed_cases(testset, rules, outcomes)
    assert set(found) == reference(ids, rules, outcomes)
    assert list(found) == [case_id for case_id in ids if case_id in set(found)]  # in test-set order, once each
