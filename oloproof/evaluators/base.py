"""The evaluator interface: a run in, one outcome per case out, under a named criterion."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from oloproof.schema import Obj, Prop, Scalar

if TYPE_CHECKING:
    import numpy as np

    from oloproof.metamorphic.variants import Variant
    from oloproof.policy import Policy
    from oloproof.testset import TestSet


@dataclass(frozen=True, slots=True, kw_only=True)
class EvalContext:
    testset: TestSet
    outputs: Mapping[str, dict[str, Any]]  # case id -> output object, only for answered cases
    base_dir: Path  # where relative paths in the config are resolved
    policy: Policy
    quiet: bool = True
    # Metamorphic relations: the transform name -> the system's outputs on the transformed copies,
    # computed lazily (the gate runs the system on a transform only when an evaluator asks).
    variants: Callable[[str], Variant] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CriterionOutcome:
    """Per-case outcomes of one criterion, aligned with ``testset.cases``.

    ``values[i]`` is 1.0 (pass), 0.0 (fail), a score in [0, 1], or NaN when the case has no
    usable output (it then counts as a failure for the lower bound and a pass for the upper).
    """

    criterion: str
    kind: Literal["binary", "score"]
    values: np.ndarray
    notes: Mapping[str, str] = field(default_factory=dict)  # case id -> why it is missing/odd
    reasons: tuple[str, ...] = ()  # reason codes that apply to every rule on this criterion
    problems: tuple[str, ...] = ()  # sentences for the report
    details: Mapping[str, Any] = field(default_factory=dict)  # e.g. judge agreement, for reports
    # When set, values[i] belongs to case_ids[i], a subset of the test set in its order (e.g. the
    # cases a metamorphic transform changed); otherwise values align with testset.cases.
    case_ids: tuple[str, ...] | None = None


class Evaluator(Protocol):
    @property
    def criterion(self) -> str: ...

    @property
    def type(self) -> str: ...

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome: ...


@dataclass(frozen=True, slots=True)
class Where:
    """Where an evaluator was declared, for messages that send a person to the line."""

    file: str
    line: int | None
    key_path: str
    type: str

    def __str__(self) -> str:
        return f"{self.key_path} ({self.type})"


@dataclass(frozen=True, slots=True)
class EvaluatorKind:
    """How one ``type:`` of evaluator is declared (schema) and built (typed)."""

    name: str
    schema: Obj
    build: Callable[[dict[str, Any], Where], Evaluator]  # (validated values, where declared) -> evaluator


def criterion_prop(default: str) -> Prop:
    return Prop(Scalar("str", nonempty=True), default=default, doc=f"Name rules use to read this outcome (default {default}).")


FIELD = Prop(Scalar("str", nonempty=True), required=True, doc="Output key to read (and, by default, the expected key).")
EXPECTED_FIELD = Prop(Scalar("str", nonempty=True), doc="Key of the case's expected object, when it differs from field.")


def expected_value(ctx: EvalContext, case_index: int, key: str, *, where: Where) -> Any:
    """A case's expected value, or a data error naming the file and line."""
    from oloproof.errors import DataError

    case = ctx.testset.cases[case_index]
    if key not in case.expected:
        raise DataError(ctx.testset.path, case.line, f"case '{case.id}': expected has no '{key}' (needed by {where})")
    return case.expected[key]


class SpecError(Exception):
    """Raised by an evaluator's build step; the loader adds file, line and key path."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message
