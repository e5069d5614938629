"""The ``metamorphic:`` section of release.yaml: declared transforms, checked and typed.

Each transform has a ``name`` (criteria ``flips_under_<name>`` / ``stable_under_<name>``), the
input ``field`` it changes (dotted paths reach inside objects), a ``perturb: {kind: ...}`` and,
for image and text kinds, an optional ``labels`` file of human judgements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from oloproof.errors import ConfigError
from oloproof.evaluators.metamorphic import MetamorphicRelation
from oloproof.schema import Obj, Prop, Scalar, Seq, Tagged, did_you_mean
from oloproof.transforms.base import Family, SpecError, Transform, is_validated, params_digest, split_path
from oloproof.transforms.registry import REGISTRY

if TYPE_CHECKING:
    from oloproof.evaluators.base import Evaluator
    from oloproof.policy import Policy
    from oloproof.schema import Document

NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")

TRANSFORM = Obj(
    {
        "name": Prop(
            Scalar("str", nonempty=True),
            required=True,
            doc="Names the transform (letters, digits, _ and -): evaluators refer to it, and its criteria are "
            "flips_under_<name> or stable_under_<name>.",
        ),
        "field": Prop(
            Scalar("str", nonempty=True),
            required=True,
            doc="Input key the transform changes; a dotted path reaches inside objects (features.income).",
        ),
        "perturb": Prop(
            Tagged("kind", {name: kind.schema for name, kind in REGISTRY.items()}),
            required=True,
            doc="The change: kind plus its parameters.",
        ),
        "labels": Prop(
            Scalar("str", nonempty=True),
            doc="Image and text transforms: JSONL of human labels, {id, preserved: true|false} per changed case "
            "(write it with `oloproof metamorphic label NAME`). Without labels for every changed case the "
            "transform's rules do not decide.",
        ),
        "accepted": Prop(
            Obj(
                {
                    "by": Prop(Scalar("str", nonempty=True), required=True, doc="Who accepts the transform."),
                    "reason": Prop(
                        Scalar("str", nonempty=True),
                        required=True,
                        doc="Why the change keeps each case's meaning (shown beside the verdict).",
                    ),
                }
            ),
            doc="Tabular (declared) transforms: a person accepts that the change keeps each case's meaning, so "
            "its flip rate decides rules; who and why are printed beside the verdict in every report.",
        ),
    },
    doc="One declared transform.",
)

METAMORPHIC = Obj(
    {
        "transforms": Prop(
            Seq(TRANSFORM, min_items=1, min_message="declare at least one transform"),
            required=True,
            doc="The declared transforms; each case gets a transformed copy and the system runs on the copies.",
        ),
    },
    doc="Metamorphic checks: predictions under declared change (docs/metamorphic.md).",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformSpec:
    name: str
    field: str
    path: tuple[str, ...]
    kind: str
    family: Family
    transform: Transform
    labels: str | None  # as written in release.yaml (relative to it)
    digest: str  # of kind, parameters and field: names the output directory of image files
    line: int | None
    key_path: str
    accepted: tuple[str, str] | None = None  # (by, reason) of a declared transform the team accepted

    @property
    def validated(self) -> bool:
        """Image and text transforms can be validated by human labels; tabular ones are only declared."""
        return is_validated(self.family)


@dataclass(frozen=True, slots=True, kw_only=True)
class MetamorphicSpec:
    transforms: tuple[TransformSpec, ...]

    def names(self) -> list[str]:
        return [spec.name for spec in self.transforms]

    def get(self, name: str) -> TransformSpec | None:
        return next((spec for spec in self.transforms if spec.name == name), None)


def build_metamorphic(doc: Document, evaluators: tuple[Evaluator, ...], policy: Policy) -> MetamorphicSpec | None:
    """Typed transforms from a validated release document; cross-checks evaluators and rules."""

    section = doc.data.get("metamorphic")
    specs: list[TransformSpec] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(section["transforms"] if section else ()):
        key_path = f"metamorphic.transforms[{index}]"
        name = raw["name"]
        if not NAME.match(name):
            raise doc.error(
                f"{key_path}.name",
                f"'{name}' may hold only letters, digits, _ and - (it names criteria and a directory)",
            )
        if name in seen:
            raise doc.error(f"{key_path}.name", f"duplicate transform name '{name}' (first at {seen[name]})")
        seen[name] = key_path
        path = split_path(raw["field"])
        if any(not part for part in path):
            raise doc.error(
                f"{key_path}.field", f"'{raw['field']}' is not a key path (write features.income, not features..income)"
            )
        perturb = raw["perturb"]
        kind = REGISTRY[perturb["kind"]]
        params = {key: value for key, value in perturb.items() if key != "kind"}
        try:
            transform = kind.build(params)
        except SpecError as err:
            raise doc.error(f"{key_path}.perturb.{err.key}", err.message) from None
        if raw["labels"] is not None and not is_validated(kind.family):
            raise doc.error(
                f"{key_path}.labels",
                f"{kind.name} is a declared transform: a person cannot judge whether it keeps a case's meaning, so "
                "labels do not apply (its rules are INSUFFICIENT_EVIDENCE with transform_declared)",
            )
        accepted = raw["accepted"]
        if accepted is not None and is_validated(kind.family):
            raise doc.error(
                f"{key_path}.accepted",
                f"{kind.name} is a {kind.family} transform: people confirm it keeps meaning with labels "
                "(labels: FILE); accepted applies to declared (tabular) transforms only",
            )
        specs.append(
            TransformSpec(
                name=name,
                field=raw["field"],
                path=path,
                kind=kind.name,
                family=kind.family,
                transform=transform,
                labels=raw["labels"],
                digest=params_digest(kind.name, {"field": raw["field"], **transform.params()}),
                line=doc.line(key_path),
                key_path=key_path,
                accepted=None if accepted is None else (accepted["by"], accepted["reason"]),
            )
        )
    declared = [spec.name for spec in specs]
    relation_criteria: set[str] = set()
    for evaluator in evaluators:
        if not isinstance(evaluator, MetamorphicRelation):
            continue
        relation_criteria.add(evaluator.criterion)
        if evaluator.transform not in seen:
            where = f"{evaluator.where.key_path}.transform"
            if not declared:
                raise doc.error(
                    where, f"no transform named '{evaluator.transform}': declare it under metamorphic.transforms"
                )
            raise doc.error(
                where,
                f"no transform named '{evaluator.transform}'{did_you_mean(evaluator.transform, declared)}; declared: "
                f"{', '.join(declared)}",
            )
    for rule in policy.rules:
        if rule.kind == "regression" and rule.criterion in relation_criteria:
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.baseline",
                f"'{rule.criterion}' compares one version's outputs on original and transformed cases; a baseline "
                "comparison of it is not supported: use max (or min) on the rate",
            )
    return MetamorphicSpec(transforms=tuple(specs)) if specs else None
