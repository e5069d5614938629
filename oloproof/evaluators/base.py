"""The evaluator interface: a run in, one outcome per case out, under a named criterion."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from oloproof.errors import ConfigError, DataError
from oloproof.inert import inert
from oloproof.schema import Obj, Prop, Scalar

if TYPE_CHECKING:
    import numpy as np

    from oloproof.policy import Policy
    from oloproof.testset import TestSet

# What people said about the cases a transform changed (oloproof.metamorphic.labels decides it).
LabelState = Literal["declared", "accepted", "validated", "unlabelled", "changes_meaning"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelStatus:
    state: LabelState
    file: str | None  # the labels path as declared, or None
    preserved: tuple[str, ...] = ()
    changed_meaning: tuple[str, ...] = ()  # labelled preserved: false
    unlabelled: tuple[str, ...] = ()  # changed cases with no current label (stale and unbound ones included)
    stale: tuple[str, ...] = ()  # labelled, but on another original/transformed pair
    unbound: tuple[str, ...] = ()  # labelled without a digest: not bound to any pair a person saw
    unused: int = 0  # labels for cases the transform did not change (or not in the test set)
    file_exists: bool = True  # False: the declared labels file does not exist yet (every changed case unlabelled)
    # A declared transform the team accepted (``accepted: {by, reason}``): its flip rate decides.
    accepted_by: str | None = None
    accepted_reason: str | None = None

    @property
    def reasons(self) -> tuple[str, ...]:
        if self.state == "declared":
            return ("transform_declared",)
        if self.state == "accepted":
            return ("transform_accepted",)
        codes: list[str] = []
        if self.changed_meaning:
            codes.append("transform_changes_meaning")
        if self.unlabelled:
            codes.append("transform_unlabelled")
        return tuple(codes)

    def to_json(self, limit: int = 50) -> dict[str, object]:
        return {
            "file": self.file,
            "preserved": len(self.preserved),
            "changed_meaning": len(self.changed_meaning),
            "changed_meaning_ids": list(self.changed_meaning[:limit]),
            "unlabelled": len(self.unlabelled),
            "unlabelled_ids": list(self.unlabelled[:limit]),
            "stale": len(self.stale),
            "stale_ids": list(self.stale[:limit]),
            "unbound": len(self.unbound),
            "unbound_ids": list(self.unbound[:limit]),
            "unused": self.unused,
            "file_exists": None if self.file is None else self.file_exists,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class VariantRun:
    """The stored run of the system on a transform's changed cases."""

    run_id: str
    status: str
    failure: str | None
    testset_digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Variant:
    """One declared transform applied to the test set, with the system's outputs on the cases it
    changed. The metamorphic runtime (``oloproof.metamorphic.variants``) fills it in; a
    ``metamorphic_relation`` evaluator reads it. Plain data, so the evaluator needs nothing of the
    runtime."""

    name: str  # the transform's name in release.yaml
    kind: str  # its perturb kind (numeric_noise, blur, ...)
    family: str  # tabular | image | text
    input_field: str
    description: str
    params: Mapping[str, Any]
    validated: bool  # image and text transforms can be validated by human labels; tabular ones are only declared
    applicable: tuple[str, ...]  # ids of the cases the transform changed, in test-set order
    not_applicable: Mapping[str, str]  # case id -> why the transform left it as it was
    n_cases: int  # cases in the test set the transform was applied to
    outputs: Mapping[str, dict[str, Any]]  # case id -> output on the transformed copy
    run: VariantRun | None  # None when the transform changed no case (nothing to run)
    reused: bool
    labels: LabelStatus


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
    # Whose outputs these are, for messages ("" for the gated run; e.g. "of checkpoint seed_1 (run …)").
    outputs_of: str = ""
    # False where the outputs must be scored whatever they hold (a holdout read, spent once the
    # system has seen the cases): outputs without the key are then that many missing outputs.
    refuse_key_mismatch: bool = True
    # The cases are a holdout, not the dev set the config's files were written for: a judge's
    # labels file (the dev set's grades) is not read at all.
    holdout: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgedEvidence:
    """What a rule on a judge criterion needs beyond the judge's grades (``values``): people's
    grades where they exist and which cases the system answered, aligned with ``values``."""

    human: np.ndarray  # human grade per case, NaN where unlabelled
    answered: np.ndarray  # bool: the system gave an output for the case
    pass_threshold: float  # grade at or above which a case is a pass (judge's and people's)
    # Labelled cases whose labels graded another output than this run's: people's grade unknown.
    stale: np.ndarray | None = None
    unbound: int = 0  # labels taken as grades of this run's outputs without saying so (policy: allow)
    no_output: int = 0  # labels of cases this run did not answer
    labels_file: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CriterionOutcome:
    """Per-case outcomes of one criterion, aligned with ``testset.cases``.

    ``values[i]`` is 1.0 (pass), 0.0 (fail), a score in [0, 1], or NaN when the case has no
    usable output (it then counts as a failure for the lower bound and a pass for the upper).
    """

    criterion: str
    kind: str  # the measure that reads the values (oloproof.measures.registry): "binary", "score", ...
    values: np.ndarray
    notes: Mapping[str, str] = field(default_factory=dict)  # case id -> why it is missing/odd
    reasons: tuple[str, ...] = ()  # reason codes that apply to every rule on this criterion
    problems: tuple[str, ...] = ()  # sentences for the report
    details: Mapping[str, Any] = field(default_factory=dict)  # e.g. judge agreement, for reports
    # When set, values[i] belongs to case_ids[i], a subset of the test set in its order (e.g. the
    # cases a metamorphic transform changed); otherwise values align with testset.cases.
    case_ids: tuple[str, ...] | None = None
    # Set by a judge: its rules estimate people's grade from the judge and the labels together.
    judged: JudgedEvidence | None = None
    # A ranking measure's binary labels (1.0 positive, 0.0 negative), aligned with values.
    labels: np.ndarray | None = None


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
    # What the rest of the code asks of a kind, instead of testing its type string:
    pass_fail: bool = False  # every outcome is 1.0 or 0.0 (never a graded score)
    judged: bool = False  # a judge grades the outputs: rules on it estimate people's grade with the labels
    needs_variants: bool = False  # it compares outputs on transformed copies: it cannot score a single run


def criterion_prop(default: str) -> Prop:
    return Prop(
        Scalar("str", nonempty=True), default=default, doc=f"Name rules use to read this outcome (default {default})."
    )


FIELD = Prop(Scalar("str", nonempty=True), required=True, doc="Output key to read (and, by default, the expected key).")
EXPECTED_FIELD = Prop(
    Scalar("str", nonempty=True), doc="Key of the case's expected object, when it differs from field."
)


def expected_value(ctx: EvalContext, case_index: int, key: str, *, where: Where) -> Any:
    """A case's expected value, or a data error naming the file and line."""

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


def exact_number(value: Any) -> Decimal | None:
    """A JSON number exactly as written: an integer of any size as itself (never rounded through a
    float, where 2**53 + 1 == 2**53), a float as the shortest decimal that reads back as it (so
    ``|1.0 - 1.1| == 0.1`` holds, as the person meant). None for booleans, NaN, infinities and
    anything that is not a number."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(repr(value))
    return None


def require_output_key(
    ctx: EvalContext,
    key: str,
    where: Where,
    *,
    outputs: Mapping[str, Mapping[str, Any]] | None = None,
    whose: str | None = None,
    setting: str = "field",
) -> None:
    """Refuse outputs none of which holds ``key`` (``setting``: the config key that names it,
    ``field`` for an evaluator, ``criterion``/``score`` for a quantile/AUC rule): the evaluator
    reads a key the system does not write (it writes ``species``, the evaluator reads ``label``).
    That is a mismatch between release.yaml and the system, not a set too small to decide: no rule is decided on it (a
    configuration error, exit 2, naming the evaluator's line), whereas some outputs lacking the
    key are missing outputs of those cases. No outputs at all (a run that crashed) is not this."""
    outputs = ctx.outputs if outputs is None else outputs
    whose = ctx.outputs_of if whose is None else whose
    if not ctx.refuse_key_mismatch or not outputs or any(key in output for output in outputs.values()):
        return
    seen = Counter(name for output in outputs.values() for name in output if name != "id")
    shown = ", ".join(inert(name) for name, _ in seen.most_common(8)) + (", …" if len(seen) > 8 else "")
    n = len(outputs)
    have = f" (they have: {shown})" if shown else " (they hold only an id)"
    suggestion = f"make the system write '{inert(key)}'"
    suggestion += f", or name the key it writes in {setting}:" if seen else ""
    raise ConfigError(
        where.file,
        where.line,
        f"{where.key_path}.{setting}",
        f"{n} of {n} outputs{whose} have no '{inert(key)}'{have}: {where.type} reads '{inert(key)}', so no rule on "
        f"it can be decided; {suggestion}",
    )
