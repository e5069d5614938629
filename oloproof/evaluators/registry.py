"""Every evaluator kind, by its ``type:`` in release.yaml (a new kind is a module and one entry)."""

from __future__ import annotations

from oloproof.evaluators import judge, label_match, metamorphic, score, text, tolerance
from oloproof.evaluators.base import Evaluator, EvaluatorKind

REGISTRY: dict[str, EvaluatorKind] = {
    kind.name: kind
    for kind in (label_match.KIND, tolerance.KIND, text.REGEX, text.CONTAINS, judge.KIND, metamorphic.KIND, score.KIND)
}


def kind_of(evaluator: Evaluator) -> EvaluatorKind:
    """The declared kind of ``evaluator``: ask it (``pass_fail``, ``judged``, ``needs_variants``)
    rather than compare type strings."""
    return REGISTRY[evaluator.type]
