"""Evaluators: one per ``type:`` in release.yaml, registered here by name."""

from __future__ import annotations

from oloproof.evaluators import judge, label_match, metamorphic, score, text, tolerance
from oloproof.evaluators.base import CriterionOutcome, EvalContext, Evaluator, EvaluatorKind, SpecError

REGISTRY: dict[str, EvaluatorKind] = {
    kind.name: kind
    for kind in (label_match.KIND, tolerance.KIND, text.REGEX, text.CONTAINS, judge.KIND, metamorphic.KIND, score.KIND)
}

__all__ = ["REGISTRY", "CriterionOutcome", "EvalContext", "Evaluator", "EvaluatorKind", "SpecError"]
