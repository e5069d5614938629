"""The recipe across seeds (SPEC §6): is the way of training good, or was one seed lucky?

k checkpoints trained with k seeds each have a run on the same test set. Their per-case
outcomes form an n × k matrix; the recipe's pass rate (a new seed on a new case) gets the
crossed cases × seeds interval of STATISTICS.md §3, which is approximate: without
``allow_approximate_methods: true`` the answer is MANUAL_REVIEW. Fewer than three seeds are
INSUFFICIENT_EVIDENCE (``too_few_seeds``); a failed seed is kept, its unanswered cases counting
as failures for the lower bound and passes for the upper.

From the policy it reads only the confidence, that permission and the judge thresholds. It does
not read ``leakage: required``: the released checkpoint is gated on its own run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.checks import CheckReport, GateCheck, GateContext
from oloproof.decide import INVALIDATING, side_of
from oloproof.errors import StoreError, UsageError
from oloproof.policy import RULE
from oloproof.schema import Document, MapOf, Obj, Prop, Scalar, validate_text
from oloproof.verdicts import RuleResult, Verdict

if TYPE_CHECKING:
    import numpy as np

    from oloproof.config import Release
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.stats.seeds import RecipeResult
    from oloproof.testset import TestSet

MIN_SEEDS = 3

SEEDS = Obj(
    {
        "recipe": Prop(Scalar("str", nonempty=True), required=True, doc="Name of the training recipe."),
        "checkpoints": Prop(
            MapOf(Scalar("str", nonempty=True), min_items=1),
            required=True, doc="Checkpoint name -> run ref (latest~N, version:NAME, a run id), one per seed.",
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
    from oloproof.policy import build_rule

    data = doc.data if not prefix else doc.data[prefix]
    rule = build_rule(doc, data["rule"], f"{prefix + '.' if prefix else ''}rule")
    if rule.kind == "regression":
        raise doc.error(f"{prefix + '.' if prefix else ''}rule", "the recipe rule takes min or max, not a baseline")
    return SeedsSpec(recipe=data["recipe"], checkpoints=tuple(data["checkpoints"].items()), rule=rule, source=doc.path)


def load_seeds_file(path: Path, shown: str) -> SeedsSpec:
    from oloproof.config import read_text

    return parse_seeds(validate_text(read_text(path, shown), SEEDS, path=shown, empty_message="the seeds file is empty"))


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    name: str
    ref: str
    run: RunRecord | None
    problem: str | None  # why the run cannot be used


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedsResult:
    spec: SeedsSpec
    testset: TestSet
    checkpoints: tuple[Checkpoint, ...]
    rule: RuleResult
    recipe: RecipeResult | None
    matrix: Any  # n × k outcomes (NaN = missing) of the usable checkpoints, or None

    def to_json(self) -> dict[str, Any]:
        from oloproof.report.jsonreport import rule_json

        recipe = self.recipe
        ids = [case.id for case in self.testset.cases]
        usable = [cp for cp in self.checkpoints if cp.problem is None]
        return {
            "schema": "oloproof.seeds/1",
            "recipe": self.spec.recipe,
            "testset": {"set": "dev", "path": self.testset.path, "digest": self.testset.digest, "n_cases": len(self.testset)},
            "checkpoints": [
                {
                    "name": cp.name, "ref": cp.ref, "run_id": cp.run.run_id if cp.run else None,
                    "version": cp.run.version if cp.run else None, "status": cp.run.status if cp.run else None,
                    "problem": cp.problem,
                    "pass_rate": recipe.seed_pass_rates[usable.index(cp)] if recipe and cp in usable else None,
                    "missing": recipe.seed_missing[usable.index(cp)] if recipe and cp in usable else None,
                }
                for cp in self.checkpoints
            ],
            "rule": rule_json(self.rule),
            "unstable_case_ids": [ids[i] for i in recipe.unstable_cases] if recipe else [],
        }


def resolve_checkpoints(spec: SeedsSpec, store: RunStore, testset: TestSet) -> tuple[Checkpoint, ...]:
    """Each checkpoint's run; a test set with groups, or checkpoints on another test set or
    sharing a version, are usage errors (exit 2)."""
    if testset.has_groups:
        raise UsageError(
            f"seeds: {testset.path} declares groups; the crossed cases × seeds interval assumes independent cases, "
            "so a grouped test set cannot judge a recipe"
        )
    records = [record for record in store.records() if record.kind == "system"]
    from oloproof.runstore import resolve_ref

    out: list[Checkpoint] = []
    seen_versions: dict[str, str] = {}
    for name, ref in spec.checkpoints:
        try:
            record = resolve_ref(ref, records)
        except StoreError as exc:
            out.append(Checkpoint(name=name, ref=ref, run=None, problem=str(exc)))
            continue
        if record.testset_digest != testset.digest:
            raise UsageError(
                f"seeds: checkpoint {name} ({ref} = run {record.run_id}) was made on test set {record.testset_digest[:19]}…, "
                f"not on {testset.path} ({testset.digest[:19]}…): every checkpoint must run the same test set"
            )
        if record.version in seen_versions:
            raise UsageError(
                f"seeds: checkpoints {seen_versions[record.version]} and {name} are both version '{record.version}': "
                "each checkpoint must map to its own system version"
            )
        seen_versions[record.version] = name
        out.append(Checkpoint(name=name, ref=ref, run=record, problem=None))
    return tuple(out)


def decide_recipe(
    spec: SeedsSpec, release: Release, policy: Policy, testset: TestSet, store: RunStore,
    checkpoints: tuple[Checkpoint, ...] | None = None,
) -> SeedsResult:
    """Decide the recipe rule; ``checkpoints`` resolved earlier (the gate resolves them before
    its own run, so that run can never shift ``latest~N`` refs) or now."""
    import numpy as np

    from oloproof.config import require_criterion
    from oloproof.decide import interval_text
    from oloproof.evaluators.base import EvalContext
    from oloproof.stats.seeds import recipe_interval

    rule = spec.rule
    evaluator = require_criterion(release.criteria(), rule.criterion, rule.source, rule.line, f"{rule.key_path}.criterion", single_run=True)
    if checkpoints is None:
        checkpoints = resolve_checkpoints(spec, store, testset)
    usable = [cp for cp in checkpoints if cp.problem is None]
    common = dict(rule_id=rule.id, criterion=rule.criterion, kind=rule.kind, threshold=rule.threshold, n=len(testset),
                  source=rule.source, line=rule.line)
    unresolved = [cp for cp in checkpoints if cp.problem is not None]
    if unresolved:
        names = ", ".join(f"{cp.name} ({cp.problem})" for cp in unresolved)
        result = RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=("seed_runs_missing",), interval=None, passes=None, missing=0,
            resolution=None, sentence=f"recipe {spec.recipe}: no run for {names}; run each checkpoint, e.g. "
            "`oloproof run --version NAME --command '...'`.", **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=None)

    outcomes: list[CriterionOutcome] = []
    for cp in usable:
        assert cp.run is not None
        ctx = EvalContext(testset=testset, outputs=store.outputs(cp.run), base_dir=release.base_dir, policy=policy)
        outcomes.append(evaluator.evaluate(ctx))
    matrix = np.column_stack([outcome.values for outcome in outcomes])
    reasons: list[str] = []
    for outcome in outcomes:
        reasons.extend(code for code in outcome.reasons if code not in reasons)
    if any(outcome.kind != "binary" for outcome in outcomes):
        result = RuleResult(
            verdict=Verdict.MANUAL_REVIEW, reasons=("approximate_method", *reasons), interval=None, passes=None,
            missing=int(np.isnan(matrix).sum()), resolution=None,
            sentence=f"recipe {spec.recipe}: {rule.criterion} holds scores, and the seeds interval is for pass/fail outcomes; review by hand.",
            **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=matrix)
    recipe = recipe_interval(matrix, confidence=policy.confidence) if len(usable) >= 2 else None
    result = _verdict(spec, rule, policy, recipe, matrix, reasons, interval_text, common)
    return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=recipe, matrix=matrix)


def _verdict(
    spec: SeedsSpec, rule: Rule, policy: Policy, recipe: RecipeResult | None, matrix: np.ndarray, reasons: list[str],
    interval_text: Any, common: dict[str, Any],
) -> RuleResult:
    import numpy as np

    k = matrix.shape[1]
    missing = int(np.isnan(matrix).sum())
    if missing:
        reasons.append("missing_outputs")
    rates = ", ".join(f"{rate:.1%}" if rate is not None else "failed" for rate in (recipe.seed_pass_rates if recipe else ()))
    head = f"recipe {spec.recipe} across {k} seed(s)"
    if recipe is not None:
        head += f" ({rates}): {rule.criterion} is {recipe.interval.estimate:.3f}, {interval_text(recipe.interval)}"
    details = {"k": k, "unstable_cases": len(recipe.unstable_cases) if recipe else None, "recipe": spec.recipe}
    interval = recipe.interval if recipe else None

    def result(verdict: Verdict, codes: list[str], sentence: str) -> RuleResult:
        return RuleResult(verdict=verdict, reasons=tuple(codes), sentence=sentence, interval=interval, passes=None,
                          missing=missing, resolution=None, details=details, **common)

    if k < MIN_SEEDS:
        return result(Verdict.INSUFFICIENT_EVIDENCE, ["too_few_seeds", *reasons],
                      f"{head}; fewer than {MIN_SEEDS} seeds cannot judge a recipe (about five are needed for any verdict).")
    assert recipe is not None
    if any(code in INVALIDATING for code in reasons):
        return result(Verdict.INSUFFICIENT_EVIDENCE, reasons, f"{head}; the evidence is invalid, so the recipe is not judged.")
    if not policy.allow_approximate_methods:
        return result(Verdict.MANUAL_REVIEW, [*reasons, "approximate_method"],
                      f"{head}; the seeds interval is approximate: set allow_approximate_methods: true to let it decide.")
    threshold, relation = rule.threshold, rule.kind
    side = side_of(rule.kind, threshold, recipe.interval)
    if side == "clears":
        return result(Verdict.PASS, ["interval_clears_threshold", *reasons], f"{head}: it clears {relation} {threshold:g}.")
    if side == "misses":
        return result(Verdict.FAIL, ["interval_misses_threshold", *reasons], f"{head}: it misses {relation} {threshold:g}.")
    return result(Verdict.INSUFFICIENT_EVIDENCE, ["interval_straddles_threshold", *reasons],
                  f"{head} contains {relation} {threshold:g}: more seeds narrow it (seed noise does not shrink with more cases).")


class SeedsCheck(GateCheck):
    """When release.yaml declares ``seeds:``, the gate also decides the recipe rule."""

    name = "seeds"

    def __init__(self) -> None:
        self._checkpoints: tuple[Checkpoint, ...] | None = None

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        spec = ctx.release.seeds
        if spec is None:
            return None
        # Resolved now, before the gate makes its own run: `latest~4 ... latest` must name the
        # seed runs, never the run this gate is about to add.
        self._checkpoints = resolve_checkpoints(spec, ctx.store, ctx.testset)
        return CheckReport(
            name="seeds", title="Recipe across seeds",
            status=f"recipe {spec.recipe}: {len(spec.checkpoints)} checkpoint(s) ({', '.join(name for name, _ in spec.checkpoints)})",
        )

    def rule_results(self, ctx: GateContext, rules: tuple[RuleResult, ...]) -> list[RuleResult]:
        spec = ctx.release.seeds
        if spec is None:
            return []
        result = decide_recipe(spec, ctx.release, ctx.release.policy, ctx.testset, ctx.store, checkpoints=self._checkpoints)
        return [result.rule]


def render_html(result: SeedsResult) -> str:
    """An offline page listing every case under every checkpoint (every case string escaped)."""
    import html

    import numpy as np

    ids = [case.id for case in result.testset.cases]
    usable = [cp for cp in result.checkpoints if cp.problem is None]
    unstable = set(result.recipe.unstable_cases) if result.recipe else set()
    matrix = result.matrix
    head_cells = "".join(f"<th>{html.escape(cp.name)}<br><small>{html.escape(cp.run.version if cp.run else '')}</small></th>" for cp in usable)
    rows: list[str] = []
    for index, case_id in enumerate(ids):
        cells = []
        for column in range(len(usable)):
            value = matrix[index, column] if matrix is not None else np.nan
            text, cls = ("—", "missing") if np.isnan(value) else (("pass", "pass") if value >= 0.5 else ("fail", "fail"))
            cells.append(f'<td class="{cls}">{text}</td>')
        flag = ' class="unstable"' if index in unstable else ""
        rows.append(f"<tr{flag}><th scope=row>{html.escape(case_id)}</th>{''.join(cells)}</tr>")
    rule = result.rule
    interval = rule.interval
    summary = (
        f"{html.escape(rule.verdict.value)} — {html.escape(rule.sentence)}" if interval is None
        else f"{html.escape(rule.verdict.value)}: {interval.estimate:.1%} [{interval.low:.1%}, {interval.high:.1%}] — {html.escape(rule.sentence)}"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>oloproof seeds: {html.escape(result.spec.recipe)}</title>
<style>
body{{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse}} th,td{{border:1px solid #ccc;padding:2px 8px;text-align:center}}
th[scope=row]{{text-align:left;font-weight:normal;font-family:monospace}}
.pass{{background:#e6f4ea}} .fail{{background:#fce8e6}} .missing{{background:#eee;color:#777}}
tr.unstable th{{font-weight:bold}} tr.unstable{{outline:2px solid #f9ab00}}
</style></head><body>
<h1>Recipe {html.escape(result.spec.recipe)} across {len(usable)} seed(s)</h1>
<p>{summary}</p>
<p>dev set {html.escape(result.testset.path)} ({len(ids)} cases, {html.escape(result.testset.digest)}).
Cases whose verdict changes with the seed are outlined ({len(unstable)}).</p>
<table><thead><tr><th>case</th>{head_cells}</tr></thead><tbody>
{os.linesep.join(rows)}
</tbody></table></body></html>
"""
