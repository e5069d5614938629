"""The policy: confidence, permissions, judge thresholds and the rules that decide a release.

It may be a file (``policy: policy.yaml``) or inline in release.yaml. Unknown keys are
errors: a typo must never loosen a gate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from oloproof.measures.spec import MEASURE_KEYS, check_measure_rule
from oloproof.schema import AnyOf, Document, MapOf, Obj, Prop, Scalar, Seq

# A rule id is quoted in step outputs, workflow commands, annotations, Markdown and HTML: letters,
# digits and ``_ . : -`` only, so no id can hold a newline, ``%0A``, a backtick, ``<`` or an ``@mention``.
RULE_ID_PATTERN = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}"
RULE_ID_RULE = (
    "1 to 100 characters, letters, digits, '_', '.', ':' or '-', starting with a letter or a digit (a rule id is "
    "quoted in step outputs, workflow commands, Markdown and HTML)"
)

RULE = Obj(
    {
        "id": Prop(
            Scalar("str", nonempty=True, pattern=RULE_ID_PATTERN, names="rule id", why=RULE_ID_RULE),
            required=True,
            doc="Stable name of the rule, shown in every report: 1 to 100 letters, digits, '_', '.', ':' or '-', "
            "starting with a letter or a digit.",
        ),
        "criterion": Prop(
            Scalar("str", nonempty=True),
            required=True,
            doc="The per-case outcome the rule reads (named by an evaluator).",
        ),
        # min: 0, max: 1 and max_drop: 1 could never fail: a gate with no evidence would PASS.
        # The range is checked per measure (oloproof.measures.spec): a pass rate or an AUC takes (0, 1),
        # an error or a quantile takes the output's own units.
        "min": Prop(
            Scalar("number"),
            doc="PASS needs the interval's lower bound >= min; in (0, 1) for rates and AUC, in the output's units "
            "for a quantile.",
        ),
        "max": Prop(
            Scalar("number"),
            doc="PASS needs the interval's upper bound <= max; in (0, 1) for rates and AUC, in the output's units "
            "for a quantile, mae or rmse.",
        ),
        "baseline": Prop(
            Scalar("str", nonempty=True),
            doc="A run ref (e.g. version:v1) to guard against regression; use with max_drop.",
        ),
        # Its range is checked per measure too (oloproof.measures.spec): (0, 1) for rates and AUC.
        "max_drop": Prop(
            Scalar("number"),
            doc="With baseline: PASS needs the paired difference's lower bound >= -max_drop; in (0, 1) for rates and "
            "AUC; for mae, the largest increase of the error allowed, in the field's units.",
        ),
        "method": Prop(
            Scalar("str", enum=("exact", "t", "bca", "ppi", "delong")),
            default="exact",
            doc="For criteria with scores in [0, 1]: exact (betting) or an approximate method (t, bca); for a judge "
            "criterion: exact (double sampling) or ppi (prediction-powered inference, approximate).",
        ),
        "measure": Prop(
            Scalar("str", enum=("pass_rate", "mean_grade")),
            doc="Judge criteria only: decide on people's pass rate (grades at or above pass_threshold; the default) "
            "or on their mean grade (prediction-powered, approximate).",
        ),
        "description": Prop(Scalar("str"), doc="Free text shown beside the rule."),
        **MEASURE_KEYS,
        # Rules over a subset of cases and per slice (issue 18 §1-2; oloproof.slices).
        "where": Prop(
            MapOf(AnyOf((Scalar("value"), Seq(Scalar("value"), min_items=1)))),
            doc="Decide on the cases whose key equals the value (JSON equality; a list: any of them; several keys: "
            "all of them). Keys: expected.KEY, output.KEY, stratum, group, id or an input key.",
        ),
        "per": Prop(
            Scalar("str", nonempty=True),
            doc="One verdict per value of this case key (stratum, group, expected.KEY or an input key); the rule's "
            "verdict is the worst row.",
        ),
        "fwer": Prop(
            Scalar("str", enum=("holm", "none")),
            doc="With per: Holm's step-down over the rows (holm, the default) or each row at the policy's level "
            "(none).",
        ),
        # Issue 18 §6-7: a permission of one rule, and a rule that is shown but never decides the gate.
        "approximate": Prop(
            Scalar("str", enum=("allow", "refuse")),
            doc="allow: this rule may decide on an approximate interval although the policy allows exact methods "
            "only (every report names the rules that used it); default: the policy's allow_approximate_methods.",
        ),
        "advisory": Prop(
            Scalar("bool"),
            default=False,
            doc="true: the rule's verdict is computed and shown (marked advisory) but never changes the gate's "
            "verdict or exit code.",
        ),
    },
    doc="One rule: exactly one of min, max, or baseline with max_drop.",
)

POLICY = Obj(
    {
        "confidence": Prop(
            # A floor, so a typo such as 0.05 for 0.95 cannot turn intervals into point estimates.
            Scalar("number", minimum=0.8, exclusive_maximum=1.0),
            default=0.95,
            doc="Two-sided interval level in [0.8, 1) (0.95 puts 2.5% in each tail).",
        ),
        "allow_approximate_methods": Prop(
            Scalar("bool"),
            default=False,
            doc="Let approximate intervals (clustered, t, bootstrap, seeds) decide rules; otherwise MANUAL_REVIEW.",
        ),
        "judges": Prop(
            Obj(
                {
                    "min_agreement": Prop(
                        Scalar(
                            "number",
                            exclusive_minimum=0.0,
                            exclusive_maximum=1.0,
                            why="no finite number of labels gives an agreement lower bound of 1, so a judge could "
                            "never be trusted",
                        ),
                        default=0.9,
                        doc="Lower bound of judge-human agreement needed to trust a judge; in (0, 1).",
                    ),
                    "min_labels": Prop(
                        Scalar("int", minimum=1), default=50, doc="Human labels needed before a judge can be trusted."
                    ),
                    # Raw agreement alone trusts a judge that passes everything when people fail few cases.
                    "min_pass_agreement": Prop(
                        Scalar(
                            "number",
                            exclusive_minimum=0.0,
                            exclusive_maximum=1.0,
                            why="no finite number of labels gives an agreement lower bound of 1",
                        ),
                        default=0.7,
                        doc="Lower bound of the share of human-passed cases the judge also passes; in (0, 1).",
                    ),
                    "min_fail_agreement": Prop(
                        Scalar(
                            "number",
                            exclusive_minimum=0.0,
                            exclusive_maximum=1.0,
                            why="no finite number of labels gives an agreement lower bound of 1",
                        ),
                        default=0.7,
                        doc="Lower bound of the share of human-failed cases the judge also fails; in (0, 1).",
                    ),
                    # A label without output_sha256/output may describe another version's output.
                    "unbound_labels": Prop(
                        Scalar("str", enum=("refuse", "allow")),
                        default="refuse",
                        doc="Human labels that do not say which output they graded: refuse (an error naming the "
                        "line) or allow (taken as grades of this run's outputs, and every report says so).",
                    ),
                }
            ),
            default={
                "min_agreement": 0.9,
                "min_labels": 50,
                "min_pass_agreement": 0.7,
                "min_fail_agreement": 0.7,
                "unbound_labels": "refuse",
            },
            doc="When a judge command may grade outputs.",
        ),
        "seed": Prop(
            Scalar("int", minimum=0, maximum=2**63 - 1),
            default=0,
            doc="Seed of every resampling method; printed with the result.",
        ),
        "rules": Prop(
            Seq(RULE, min_items=1, min_message="a policy must hold at least one rule"),
            required=True,
            doc="The rules; the gate's verdict is the worst of theirs.",
        ),
    },
    title="oloproof policy",
    doc="Confidence, permissions and rules of an oloproof gate.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    id: str
    criterion: str
    kind: Literal["min", "max", "regression"]
    threshold: float  # min or max; for regression, max_drop
    baseline: str | None
    method: Literal["exact", "t", "bca", "ppi", "delong"]
    description: str
    source: str  # file the rule was declared in
    line: int | None
    key_path: str
    measure: Literal["pass_rate", "mean_grade"] | None = None  # judge criteria only; None: pass_rate
    # Built-in measures over outputs (oloproof.measures.spec): the quantile of a numeric output key,
    # the AUC's score key, the mae/rmse field, the declared largest absolute error.
    quantile: float | None = None
    score: str | None = None
    field: str | None = None
    bound: float | None = None
    positive: str | int | float | bool | None = None  # criterion: auc: expected.label's positive class
    # Issue 18 §1-2 (oloproof.slices): key path -> accepted values; the key ``per`` slices by; Holm or not.
    where: tuple[tuple[str, tuple[Any, ...]], ...] = ()
    per: str | None = None
    fwer: Literal["holm", "none"] = "holm"
    approximate: Literal["allow", "refuse"] | None = None  # None: the policy's allow_approximate_methods
    advisory: bool = False  # shown, never changes the gate's verdict
    accepted: tuple[str, str] | None = None  # (by, reason): a latency rule's self-reported figures accepted


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgePolicy:
    min_agreement: float
    min_labels: int
    min_pass_agreement: float
    min_fail_agreement: float
    unbound_labels: Literal["refuse", "allow"] = "refuse"


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    confidence: float
    allow_approximate_methods: bool
    judges: JudgePolicy
    seed: int
    rules: tuple[Rule, ...]
    source: str


def build_policy(doc: Document, *, prefix: str = "") -> Policy:
    """Typed policy from a validated document; ``prefix`` locates an inline policy."""
    data = doc.data if not prefix else _dig(doc.data, prefix)
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for index, raw in enumerate(data["rules"]):
        key_path = f"{prefix + '.' if prefix else ''}rules[{index}]"
        if raw["id"] in seen:
            raise doc.error(f"{key_path}.id", f"duplicate rule id '{raw['id']}' (first at {seen[raw['id']]})")
        seen[raw["id"]] = key_path
        rules.append(build_rule(doc, raw, key_path))
    if all(rule.advisory for rule in rules):
        raise doc.error(
            f"{prefix + '.' if prefix else ''}rules",
            "every rule is advisory: a gate needs at least one rule that decides (advisory rules never change the "
            "gate's verdict)",
        )
    judges = data["judges"]
    return Policy(
        confidence=float(data["confidence"]),
        allow_approximate_methods=bool(data["allow_approximate_methods"]),
        judges=JudgePolicy(
            min_agreement=float(judges["min_agreement"]),
            min_labels=int(judges["min_labels"]),
            min_pass_agreement=float(judges["min_pass_agreement"]),
            min_fail_agreement=float(judges["min_fail_agreement"]),
            unbound_labels=judges["unbound_labels"],
        ),
        seed=int(data["seed"]),
        rules=tuple(rules),
        source=doc.path,
    )


def build_rule(doc: Document, raw: dict[str, Any], key_path: str) -> Rule:
    """A typed rule from its validated values; ``key_path`` locates it for errors."""
    kinds = [key for key in ("min", "max", "max_drop") if raw[key] is not None]
    if raw["max_drop"] is not None and raw["baseline"] is None:
        raise doc.error(f"{key_path}.max_drop", "max_drop needs a baseline run ref (e.g. baseline: version:v1)")
    if raw["baseline"] is not None and raw["max_drop"] is None:
        raise doc.error(f"{key_path}.baseline", "a baseline rule needs max_drop (the largest drop allowed, e.g. 0.05)")
    if len(kinds) != 1:
        what = "none" if not kinds else ", ".join(kinds)
        raise doc.error(key_path, f"a rule needs exactly one of min, max, or baseline with max_drop; got {what}")
    kind: Literal["min", "max", "regression"] = "regression" if kinds[0] == "max_drop" else kinds[0]  # type: ignore[assignment]
    where, per = _slicing(doc, raw, key_path, regression=kind == "regression")
    threshold = float(raw[kinds[0]])
    assert not math.isnan(threshold)
    check_measure_rule(doc, raw, key_path, kinds[0])
    return Rule(
        id=raw["id"],
        criterion=raw["criterion"],
        kind=kind,
        threshold=threshold,
        baseline=raw["baseline"],
        method=raw["method"],
        description=raw["description"] or "",
        source=doc.path,
        line=doc.line(key_path),
        key_path=key_path,
        measure=raw["measure"],
        quantile=None if raw["quantile"] is None else float(raw["quantile"]),
        score=raw["score"],
        field=raw["field"],
        bound=None if raw["bound"] is None else float(raw["bound"]),
        positive=raw["positive"],
        where=where,
        per=per,
        fwer=raw["fwer"] or "holm",
        approximate=raw["approximate"],
        advisory=bool(raw["advisory"]),
        accepted=None if raw["accepted"] is None else (raw["accepted"]["by"], raw["accepted"]["reason"]),
    )


def _slicing(
    doc: Document, raw: dict[str, Any], key_path: str, *, regression: bool
) -> tuple[tuple[tuple[str, tuple[Any, ...]], ...], str | None]:
    """``where`` and ``per`` checked for their spelling; whether the keys exist is checked against
    the test set (``oloproof.slices.check_rule_keys``), before the system runs."""
    where_raw: dict[str, Any] = raw["where"] or {}
    per: str | None = raw["per"]
    for key in [*where_raw, *([per] if per is not None else [])]:
        at = f"{key_path}.where.{key}" if key in where_raw else f"{key_path}.per"
        if key.startswith(("expected.", "output.")) and not key.split(".", 1)[1]:
            raise doc.error(at, f"'{key}' names no key: write {key}KEY (e.g. {key}label)")
    if raw["where"] is not None and not where_raw:
        raise doc.error(f"{key_path}.where", "where: needs at least one key (e.g. where: {expected.label: 1})")
    if regression and (where_raw or per is not None):
        which = "where" if where_raw else "per"
        raise doc.error(
            f"{key_path}.{which}",
            f"{which}: is not supported on a baseline rule (max_drop) yet; use it on a min/max rule",
        )
    if per is not None and per.startswith("output."):
        raise doc.error(
            f"{key_path}.per",
            "per: slices by what the case is (stratum, group, expected.KEY or an input key), not by the system's "
            "output: a slice the system chooses is not a fixed population; use where: {output.KEY: VALUE} for "
            "precision",
        )
    if raw["fwer"] is not None and per is None:
        raise doc.error(f"{key_path}.fwer", "fwer: applies to the rows of per:; this rule has no per:")
    where = tuple((key, tuple(value) if isinstance(value, list) else (value,)) for key, value in where_raw.items())
    return where, per


def allows_approximate(rule: Rule, policy: Policy) -> bool:
    """Whether ``rule`` may decide on an approximate interval: its own ``approximate:`` if it says
    one, else the policy's ``allow_approximate_methods``."""
    if rule.approximate is not None:
        return rule.approximate == "allow"
    return policy.allow_approximate_methods


def uses_own_permission(rule: Rule, policy: Policy) -> bool:
    """Whether an approximate interval of ``rule`` decides only by the rule's own ``approximate: allow``."""
    return rule.approximate == "allow" and not policy.allow_approximate_methods


def _dig(data: dict[str, Any], dotted: str) -> dict[str, Any]:
    node: Any = data
    for part in dotted.split("."):
        assert isinstance(node, dict)
        node = node[part]
    assert isinstance(node, dict)
    return node
