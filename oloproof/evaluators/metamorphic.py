"""metamorphic_relation: compare each case's output with its output on the transformed copy.

``relation: same_label`` flips when the output field differs (JSON equality, as label_match);
``relation: same_score_within`` flips when a numeric output moves by more than ``tolerance``.
With ``passes_when: flipped`` (the default) the criterion ``flips_under_<transform>`` is the flip
rate, read by a ``max`` rule; with ``passes_when: unchanged`` it is ``stable_under_<transform>``.

Only the cases the transform changed count (``case_ids`` of the outcome); a case without an
output on either side is missing (NaN). The outcome carries the transform's evidence status as
reason codes: ``transform_declared`` (tabular), ``transform_unlabelled``,
``transform_changes_meaning`` — each makes every rule on it INSUFFICIENT_EVIDENCE.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.evaluators.base import (
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    SpecError,
    Where,
    exact_number,
    require_output_key,
)
from oloproof.evaluators.label_match import same_value
from oloproof.schema import Obj, Prop, Scalar

if TYPE_CHECKING:
    from oloproof.evaluators.base import Variant

LIST_LIMIT = 50  # ids listed per category in reports; counts are always whole

_MISSING = object()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


@dataclass(frozen=True, slots=True)
class MetamorphicRelation:
    relation: str  # same_label | same_score_within
    transform: str
    field: str
    passes_when: str  # flipped | unchanged
    tolerance: float | None
    criterion: str
    where: Where
    type: str = "metamorphic_relation"

    def flipped(self, before: Any, after: Any) -> bool | None:
        """Did the output change under the transform? None when it cannot be compared."""

        if self.relation == "same_label":
            return not same_value(before, after)
        a, b = exact_number(before), exact_number(after)
        if a is None or b is None:
            return None
        assert self.tolerance is not None
        # Exact decimals, as within_tolerance: a change of exactly the tolerance is not a flip.
        return abs(a - b) > Decimal(repr(self.tolerance))

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up

        if ctx.variants is None:
            raise UsageError(
                f"criterion '{self.criterion}' compares outputs on original and transformed cases; only `oloproof "
                f"gate` "
                "reads it (not holdout reads or the seeds check)"
            )
        require_output_key(ctx, self.field, self.where)
        variant = ctx.variants(self.transform)
        require_output_key(
            ctx,
            self.field,
            self.where,
            outputs=variant.outputs,
            whose=f" on the copies transformed by {self.transform}",
        )
        ids = variant.applicable
        values = np.empty(len(ids))
        notes: dict[str, str] = {}
        flipped_ids: list[str] = []
        for index, case_id in enumerate(ids):
            original, changed = ctx.outputs.get(case_id), variant.outputs.get(case_id)
            before = _MISSING if original is None else original.get(self.field, _MISSING)
            after = _MISSING if changed is None else changed.get(self.field, _MISSING)
            if before is _MISSING or after is _MISSING:
                values[index] = np.nan
                side = "original" if before is _MISSING else "transformed"
                notes[case_id] = f"no output '{self.field}' on the {side} case"
                continue
            flipped = self.flipped(before, after)
            if flipped is None:
                values[index] = np.nan
                notes[case_id] = f"output '{self.field}' is not a finite number on both sides"
                continue
            if flipped:
                flipped_ids.append(case_id)
            values[index] = 1.0 if flipped == (self.passes_when == "flipped") else 0.0
        reasons = list(variant.labels.reasons)
        if variant.run is not None and variant.run.failure is not None:
            reasons.append("run_failed")
        return CriterionOutcome(
            criterion=self.criterion,
            kind="binary",
            values=values,
            notes=notes,
            reasons=tuple(reasons),
            problems=tuple(self._problems(variant)),
            details={"metamorphic": self._details(variant, values, flipped_ids)},
            case_ids=ids,
        )

    def _details(self, variant: Variant, values: Any, flipped_ids: list[str]) -> dict[str, Any]:
        import numpy as np  # lazy: start-up

        missing = int(np.isnan(values).sum())
        answered = len(values) - missing
        flips = len(flipped_ids)
        why = Counter(variant.not_applicable.values())
        run = variant.run
        return {
            "transform": variant.name,
            "kind": variant.kind,
            "family": variant.family,
            "input_field": variant.input_field,
            "description": variant.description,
            "params": dict(variant.params),
            "relation": self.relation,
            "output_field": self.field,
            "passes_when": self.passes_when,
            "tolerance": self.tolerance,
            "status": variant.labels.state,
            "flip_rate": flips / answered if answered else None,
            "flips": flips,
            "answered": answered,
            "missing": missing,
            "applicable": len(values),
            "not_applicable": len(variant.not_applicable),
            "not_applicable_ids": list(variant.not_applicable)[:LIST_LIMIT],
            "not_applicable_reasons": dict(why.most_common()),
            "flipped_ids": flipped_ids[:LIST_LIMIT],
            "labels": variant.labels.to_json(LIST_LIMIT) if variant.validated else None,
            "accepted": None
            if variant.labels.state != "accepted"
            else {
                "transform": variant.name,
                "by": variant.labels.accepted_by,
                "reason": variant.labels.accepted_reason,
            },
            "run": None
            if run is None
            else {
                "run_id": run.run_id,
                "reused": variant.reused,
                "status": run.status,
                "testset_digest": run.testset_digest,
            },
        }

    def _problems(self, variant: Variant) -> list[str]:
        labels = variant.labels
        name = f"{self.criterion} ({variant.name}: {variant.kind})"
        problems: list[str] = []
        if not variant.applicable:
            top = Counter(variant.not_applicable.values()).most_common(1)
            why = f"; most often: {top[0][0]}" if top else ""
            problems.append(
                f"{name}: the transform changed none of the {variant.n_cases} cases{why}, so there is no rate to judge."
            )
        if labels.state == "declared":
            problems.append(
                f"{name} is a declared transform: nobody can confirm it keeps each case's meaning, so its flip rate is "
                "reported but cannot decide a rule (transform_declared)."
            )
        if labels.changed_meaning:
            shown = ", ".join(labels.changed_meaning[:10]) + (", …" if len(labels.changed_meaning) > 10 else "")
            problems.append(
                f"{name}: people labelled {len(labels.changed_meaning)} changed case(s) as changing meaning "
                f"({shown}), so the rate "
                "does not measure robustness and the rule does not decide: declare a milder change "
                "(transform_changes_meaning)."
            )
        if labels.unlabelled:
            count = f"{name}: {len(labels.unlabelled)} of {len(variant.applicable)} changed case(s) have no human label"
            if labels.file is not None and not labels.file_exists:
                problems.append(f"{count}: {missing_file_sentence(labels.file, variant.name)} (transform_unlabelled).")
                return problems
            why = ""
            if labels.stale:
                why += f", {len(labels.stale)} of them labelled on a different change (stale)"
            if labels.unbound:
                why += (
                    f", {len(labels.unbound)} of them labelled without a digest (not bound to what the person saw; if "
                    f"a "
                    f"person judged the current pairs, `oloproof metamorphic stamp {variant.name} --confirm` binds "
                    f"them)"
                )
            where = (
                f"add them to {labels.file}"
                if labels.file
                else f"declare the exported file as labels: of transform '{variant.name}'"
            )
            problems.append(
                f"{count}{why}: label them with `oloproof metamorphic label {variant.name}` and {where} "
                f"(transform_unlabelled)."
            )
        return problems


def missing_file_sentence(file: str, transform: str) -> str:
    """What to do when the declared labels file does not exist yet."""
    return (
        f"{file} does not exist yet: make it with `oloproof metamorphic label {transform}` (a page to label each "
        f"changed "
        f"case in a browser) and save the exported file as {file}"
    )


def _build(values: dict[str, Any], where: Where) -> MetamorphicRelation:
    relation, tolerance = values["relation"], values["tolerance"]
    if relation == "same_score_within" and tolerance is None:
        raise SpecError(
            "tolerance", "same_score_within needs a tolerance: the largest change of the score that is not a flip"
        )
    if relation == "same_label" and tolerance is not None:
        raise SpecError("tolerance", "tolerance applies to relation same_score_within only")
    prefix = "flips_under_" if values["passes_when"] == "flipped" else "stable_under_"
    return MetamorphicRelation(
        relation=relation,
        transform=values["transform"],
        field=values["field"],
        passes_when=values["passes_when"],
        tolerance=None if tolerance is None else float(tolerance),
        criterion=values["criterion"] or prefix + values["transform"],
        where=where,
    )


KIND = EvaluatorKind(
    name="metamorphic_relation",
    schema=Obj(
        {
            "relation": Prop(
                Scalar("str", enum=("same_label", "same_score_within")),
                required=True,
                doc=(
                    "same_label: the output field is unchanged; same_score_within: a numeric output moves by at most "
                    "tolerance."
                ),
            ),
            "transform": Prop(
                Scalar("str", nonempty=True), required=True, doc="Name of a transform under metamorphic.transforms."
            ),
            "field": Prop(
                Scalar("str", nonempty=True),
                required=True,
                doc="Output key compared between original and transformed case.",
            ),
            "passes_when": Prop(
                Scalar("str", enum=("flipped", "unchanged")),
                default="flipped",
                doc="flipped: the criterion is the flip rate (flips_under_<transform>, for a max rule); "
                "unchanged: the stable rate (stable_under_<transform>, for a min rule).",
            ),
            "tolerance": Prop(
                Scalar("number", minimum=0.0), doc="same_score_within: the largest change that is not a flip."
            ),
            "criterion": Prop(
                Scalar("str", nonempty=True),
                doc=(
                    "Name rules use (default flips_under_<transform>, or stable_under_<transform> with passes_when: "
                    "unchanged)."
                ),
            ),
        },
        doc="Compare outputs on each case and its transformed copy (metamorphic check).",
    ),
    build=_build,
    pass_fail=True,
    needs_variants=True,
)


def rule_note(outcome: CriterionOutcome) -> str:
    """One clause for a rule's sentence saying why a transform's evidence cannot decide it."""
    info = outcome.details.get("metamorphic")
    if not isinstance(info, dict):
        return ""
    name, labels = info["transform"], info.get("labels") or {}
    notes: list[str] = []
    if "transform_declared" in outcome.reasons:
        notes.append(
            f"'{name}' is a declared {info['kind']} transform: its rate is reported, but nobody can confirm it keeps "
            f"meaning."
        )
    if "transform_changes_meaning" in outcome.reasons:
        count = labels.get("changed_meaning", 0)
        ids = ", ".join(labels.get("changed_meaning_ids", [])[:5]) + (", …" if count > 5 else "")
        notes.append(f"People labelled {count} changed case(s) as changing meaning ({ids}).")
    if "transform_unlabelled" in outcome.reasons:
        if labels.get("file_exists") is False:
            notes.append(
                f"{labels.get('unlabelled')} changed case(s) have no human label: "
                f"{missing_file_sentence(labels['file'], name)}."
            )
        else:
            notes.append(
                f"{labels.get('unlabelled')} changed case(s) have no human label: `oloproof metamorphic label {name}`."
            )
    return " ".join(notes)
