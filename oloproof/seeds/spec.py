"""The ``seeds:`` section of release.yaml, or a seeds file: the recipe, its checkpoints, its rule."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oloproof.files import read_text
from oloproof.policy import RULE, Rule, build_rule
from oloproof.schema import Document, MapOf, Obj, Prop, Scalar, validate_text

SEEDS = Obj(
    {
        "recipe": Prop(Scalar("str", nonempty=True), required=True, doc="Name of the training recipe."),
        "checkpoints": Prop(
            MapOf(Scalar("str", nonempty=True), min_items=1),
            required=True,
            doc="Checkpoint name -> run ref (latest~N, version:NAME, a run id), one per seed.",
        ),
        "rule": Prop(RULE, required=True, doc="The recipe's rule: a min or max on one pass/fail criterion."),
    },
    title="oloproof seeds",
    doc="The recipe check across seeds.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedsSpec:
    recipe: str
    checkpoints: tuple[tuple[str, str], ...]  # (name, ref) in the order written
    rule: Rule
    source: str


def parse_seeds(doc: Document, prefix: str = "") -> SeedsSpec:
    data = doc.data if not prefix else doc.data[prefix]
    rule = build_rule(doc, data["rule"], f"{prefix + '.' if prefix else ''}rule")
    if rule.kind == "regression":
        raise doc.error(f"{prefix + '.' if prefix else ''}rule", "the recipe rule takes min or max, not a baseline")
    return SeedsSpec(recipe=data["recipe"], checkpoints=tuple(data["checkpoints"].items()), rule=rule, source=doc.path)


def load_seeds_file(path: Path, shown: str) -> SeedsSpec:
    return parse_seeds(
        validate_text(read_text(path, shown), SEEDS, path=shown, empty_message="the seeds file is empty")
    )
