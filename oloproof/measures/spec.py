"""The rule keys of the built-in measures over outputs, and their checks.

Besides criteria that evaluators produce, a rule may read the outputs directly:

- ``{criterion: auc, score: KEY, min: 0.8}``: the AUC of output ``KEY`` against ``expected.label``
  (0/1 or false/true; 1 is the positive class);
- ``{criterion: mae, field: KEY, max: 5}`` and ``criterion: rmse``: the mean absolute (root mean
  squared) error of output ``KEY`` against ``expected.KEY``, optionally with ``bound:``, the
  largest absolute error the team declares possible (it makes the interval exact);
- ``{criterion: KEY, quantile: 0.95, max: 800}``: the 0.95-quantile of the numeric output ``KEY``.

A rate or an AUC takes ``min``/``max`` in (0, 1) (the checks pass-rate rules always had); an
error or a quantile takes the output's units.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from oloproof.errors import ConfigError
from oloproof.schema import Document, Obj, Prop, Scalar


class Rule(Protocol):
    """What these checks read of ``oloproof.policy.Rule`` (which imports this module)."""

    @property
    def id(self) -> str: ...
    @property
    def criterion(self) -> str: ...
    @property
    def quantile(self) -> float | None: ...
    @property
    def score(self) -> str | None: ...
    @property
    def field(self) -> str | None: ...
    @property
    def bound(self) -> float | None: ...
    @property
    def positive(self) -> str | int | float | bool | None: ...
    @property
    def source(self) -> str: ...
    @property
    def line(self) -> int | None: ...
    @property
    def key_path(self) -> str: ...


AUC = "auc"
ERRORS = ("mae", "rmse")
BUILT_IN = (AUC, *ERRORS)  # criterion names that are measures, not evaluators
PAIRED = (AUC, "mae")  # built-in measures with a paired interval (a regression guard may use them)

MEASURE_KEYS: dict[str, Prop] = {
    "quantile": Prop(
        Scalar("number", exclusive_minimum=0.0, exclusive_maximum=1.0),
        doc="Decide on this quantile (e.g. 0.95) of the numeric output key the criterion names (exact "
        "order-statistic interval); min/max are in the output's units.",
    ),
    "score": Prop(
        Scalar("str", nonempty=True),
        doc="criterion: auc only: the output key holding the score (higher: more likely expected.label 1).",
    ),
    "positive": Prop(
        Scalar("value"),
        doc="criterion: auc only: the value of expected.label that is the positive class (e.g. malignant); "
        "every other value is negative. Default: expected.label must be 0/1 or false/true, 1 positive.",
    ),
    "field": Prop(
        Scalar("str", nonempty=True),
        doc="criterion: mae or rmse only: the numeric output key compared with expected.<field>.",
    ),
    "accepted": Prop(
        Obj(
            {
                "by": Prop(Scalar("str", nonempty=True), required=True, doc="Who accepts the system's own figures."),
                "reason": Prop(
                    Scalar("str", nonempty=True),
                    required=True,
                    doc="Why they can be trusted (shown beside the verdict).",
                ),
            }
        ),
        doc="A latency_ms quantile rule only: a person accepts the latency_ms the system reports itself where "
        "oloproof's measured wall time per case (start-up included) does not bear it out; the rule then decides on "
        "the reported figures, and every report names who accepted them and why.",
    ),
    "bound": Prop(
        Scalar("number", exclusive_minimum=0.0),
        doc="criterion: mae or rmse only: the largest absolute error possible, in the field's units; makes the "
        "interval exact. An observed error above it makes the rule INSUFFICIENT_EVIDENCE (bound_exceeded).",
    ),
}

# The range messages pass-rate rules always had (tests pin them).
WHY = {
    "min": "min: 0 could never fail, and no finite set's lower bound reaches 1, so min: 1 could never pass",
    "max": "max: 1 could never fail, and no finite set's upper bound reaches 0, so max: 0 could never pass",
    "max_drop": "max_drop: 1 could never fail, and the paired interval's lower bound is below 0 even for two "
    "identical versions, so max_drop: 0 could never pass",
}


def is_output_measure(raw: dict[str, Any]) -> bool:
    """Whether a rule reads the outputs itself (no evaluator): a built-in criterion or a quantile."""
    return raw["criterion"] in BUILT_IN or raw.get("quantile") is not None


def check_measure_rule(doc: Document, raw: dict[str, Any], key_path: str, kind: str) -> None:
    """Refuse keys that do not fit the rule's measure, and thresholds out of its range."""
    criterion = raw["criterion"]
    quantile = raw.get("quantile") is not None

    def refuse(key: str, message: str) -> None:
        raise doc.error(f"{key_path}.{key}", message)

    if quantile and criterion in BUILT_IN:
        refuse("quantile", f"quantile applies to a numeric output key; '{criterion}' is a built-in measure")
    if raw.get("score") is not None and criterion != AUC:
        refuse("score", f"score names the output key of criterion: auc; this rule's criterion is '{criterion}'")
    if raw.get("positive") is not None and criterion != AUC:
        refuse("positive", f"positive names the positive class of criterion: auc; this rule reads '{criterion}'")
    for key in ("field", "bound"):
        if raw.get(key) is not None and criterion not in ERRORS:
            refuse(key, f"{key} applies to criterion: mae or rmse; this rule's criterion is '{criterion}'")
    if raw.get("accepted") is not None and not (quantile and criterion == "latency_ms"):
        refuse(
            "accepted",
            "accepted: on a rule applies to a latency_ms quantile rule (the system's self-reported latency); a "
            "declared transform's accepted: goes on the transform",
        )
    if criterion == AUC and raw.get("score") is None:
        refuse("criterion", "criterion: auc needs score: the output key holding the score (e.g. score: score)")
    if criterion in ERRORS and raw.get("field") is None:
        refuse("criterion", f"criterion: {criterion} needs field: the numeric output key (e.g. field: value)")
    if is_output_measure(raw):
        allowed = ("exact", "delong") if criterion == AUC else ("exact",)
        if raw.get("method", "exact") not in allowed:
            refuse(
                "method",
                "criterion: auc takes method exact (block betting) or delong (approximate)"
                if criterion == AUC
                else f"method applies to evaluator criteria; '{criterion}' has its own interval",
            )
        if raw.get("measure") is not None:
            refuse("measure", "measure applies to judge criteria only")
        if kind == "max_drop" and criterion not in PAIRED:
            what = f"the {raw['quantile']} quantile" if quantile else criterion
            refuse(
                "baseline",
                f"no paired interval is implemented for {what}, so it cannot guard against a regression; "
                "use min or max",
            )
    elif raw.get("method") == "delong":
        refuse("method", "method delong applies to criterion: auc only")
    if criterion in ERRORS and kind == "min":
        refuse("min", f"an error ({criterion}) is gated from above: use max")
    if (criterion in ERRORS or quantile) and kind in ("min", "max"):
        return
    value = float(raw[kind])
    if criterion in ERRORS and not value > 0.0:  # max_drop of an error, in its units
        refuse(kind, f"expected a number > 0, got {value:g}: max_drop: 0 could never pass")
    if criterion not in ERRORS:
        if not 0.0 < value < 1.0:
            shown = str(int(value)) if value.is_integer() and abs(value) < 1e20 else f"{value:g}"
            refuse(kind, f"expected a number in (0, 1), got {shown}: {WHY[kind]}")


def reads_outputs(rule: Rule) -> bool:
    """Whether a typed rule reads the outputs itself (no evaluator produces its criterion)."""
    return rule.criterion in BUILT_IN or rule.quantile is not None


def check_output_rules(rules: Sequence[Rule], by_criterion: Mapping[str, object]) -> None:
    """A built-in criterion or a quantile's output key that an evaluator also names is ambiguous, and
    two rules on one built-in criterion must read the same keys (their outcome is one per criterion)."""
    first: dict[str, Rule] = {}
    for rule in rules:
        if not reads_outputs(rule):
            continue
        if rule.criterion in by_criterion:
            what = "is a built-in measure" if rule.criterion in BUILT_IN else "is read as a numeric output key here"
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.criterion",
                f"criterion '{rule.criterion}' {what}, but an evaluator also produces it; give the evaluator "
                "another criterion",
            )
        seen = first.setdefault(rule.criterion, rule)
        if (seen.score, seen.field, seen.bound, seen.positive) != (rule.score, rule.field, rule.bound, rule.positive):
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.criterion",
                f"rule '{rule.id}' reads '{rule.criterion}' with other keys (score, field, bound, positive) than rule "
                f"'{seen.id}' ({seen.key_path}); one criterion is one outcome: give them the same keys",
            )
