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

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.checks import GateCheck, GateContext
from oloproof.config import Release, require_criterion
from oloproof.decide import INVALIDATING, interval_text, side_of
from oloproof.errors import StoreError, UsageError
from oloproof.evaluators.base import EvalContext
from oloproof.result import CheckReport, RuleResult
from oloproof.runstore import resolve_ref
from oloproof.seeds.spec import SeedsSpec
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.stats.seeds import RecipeResult
    from oloproof.testset import TestSet

MIN_SEEDS = 3


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
        recipe = self.recipe
        ids = [case.id for case in self.testset.cases]
        usable = [cp for cp in self.checkpoints if cp.problem is None]
        return {
            "schema": "oloproof.seeds/1",
            "recipe": self.spec.recipe,
            "testset": {
                "set": "dev",
                "path": self.testset.path,
                "digest": self.testset.digest,
                "n_cases": len(self.testset),
            },
            "checkpoints": [
                {
                    "name": cp.name,
                    "ref": cp.ref,
                    "run_id": cp.run.run_id if cp.run else None,
                    "version": cp.run.version if cp.run else None,
                    "status": cp.run.status if cp.run else None,
                    "problem": cp.problem,
                    "pass_rate": recipe.seed_pass_rates[usable.index(cp)] if recipe and cp in usable else None,
                    "missing": recipe.seed_missing[usable.index(cp)] if recipe and cp in usable else None,
                }
                for cp in self.checkpoints
            ],
            "rule": self.rule.to_json(),
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
                f"seeds: checkpoint {name} ({ref} = run {record.run_id}) was made on test set "
                f"{record.testset_digest[:19]}…, "
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
    spec: SeedsSpec,
    release: Release,
    policy: Policy,
    testset: TestSet,
    store: RunStore,
    checkpoints: tuple[Checkpoint, ...] | None = None,
) -> SeedsResult:
    """Decide the recipe rule; ``checkpoints`` resolved earlier (the gate resolves them before
    its own run, so that run can never shift ``latest~N`` refs) or now."""
    import numpy as np  # lazy: start-up

    from oloproof.stats.seeds import recipe_interval  # lazy: start-up (scipy)

    rule = spec.rule
    evaluator = require_criterion(
        release.criteria(), rule.criterion, rule.source, rule.line, f"{rule.key_path}.criterion", single_run=True
    )
    if checkpoints is None:
        checkpoints = resolve_checkpoints(spec, store, testset)
    usable = [cp for cp in checkpoints if cp.problem is None]
    common = dict(
        rule_id=rule.id,
        criterion=rule.criterion,
        kind=rule.kind,
        threshold=rule.threshold,
        n=len(testset),
        source=rule.source,
        line=rule.line,
    )
    unresolved = [cp for cp in checkpoints if cp.problem is not None]
    if unresolved:
        names = ", ".join(f"{cp.name} ({cp.problem})" for cp in unresolved)
        result = RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=("seed_runs_missing",),
            interval=None,
            passes=None,
            missing=0,
            resolution=None,
            sentence=f"recipe {spec.recipe}: no run for {names}; run each checkpoint, e.g. "
            "`oloproof run --version NAME --command '...'`.",
            **common,  # type: ignore[arg-type]
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
            verdict=Verdict.MANUAL_REVIEW,
            reasons=("approximate_method", *reasons),
            interval=None,
            passes=None,
            missing=int(np.isnan(matrix).sum()),
            resolution=None,
            sentence=(
                f"recipe {spec.recipe}: {rule.criterion} holds scores, and the seeds interval is for pass/fail "
                "outcomes; review by hand."
            ),
            **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=matrix)
    recipe = recipe_interval(matrix, confidence=policy.confidence) if len(usable) >= 2 else None
    result = _verdict(spec, rule, policy, recipe, matrix, reasons, interval_text, common)
    return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=recipe, matrix=matrix)


def _verdict(
    spec: SeedsSpec,
    rule: Rule,
    policy: Policy,
    recipe: RecipeResult | None,
    matrix: np.ndarray,
    reasons: list[str],
    interval_text: Any,
    common: dict[str, Any],
) -> RuleResult:
    import numpy as np  # lazy: start-up

    k = matrix.shape[1]
    missing = int(np.isnan(matrix).sum())
    if missing:
        reasons.append("missing_outputs")
    rates = ", ".join(
        f"{rate:.1%}" if rate is not None else "failed" for rate in (recipe.seed_pass_rates if recipe else ())
    )
    head = f"recipe {spec.recipe} across {k} seed(s)"
    if recipe is not None:
        head += f" ({rates}): {rule.criterion} is {recipe.interval.estimate:.3f}, {interval_text(recipe.interval)}"
    details = {"k": k, "unstable_cases": len(recipe.unstable_cases) if recipe else None, "recipe": spec.recipe}
    interval = recipe.interval if recipe else None

    def result(verdict: Verdict, codes: list[str], sentence: str) -> RuleResult:
        return RuleResult(
            verdict=verdict,
            reasons=tuple(codes),
            sentence=sentence,
            interval=interval,
            passes=None,
            missing=missing,
            resolution=None,
            details=details,
            **common,
        )

    if k < MIN_SEEDS:
        return result(
            Verdict.INSUFFICIENT_EVIDENCE,
            ["too_few_seeds", *reasons],
            f"{head}; fewer than {MIN_SEEDS} seeds cannot judge a recipe (about five are needed for any verdict).",
        )
    assert recipe is not None
    if any(code in INVALIDATING for code in reasons):
        return result(
            Verdict.INSUFFICIENT_EVIDENCE, reasons, f"{head}; the evidence is invalid, so the recipe is not judged."
        )
    if not policy.allow_approximate_methods:
        return result(
            Verdict.MANUAL_REVIEW,
            [*reasons, "approximate_method"],
            f"{head}; the seeds interval is approximate: set allow_approximate_methods: true to let it decide.",
        )
    threshold, relation = rule.threshold, rule.kind
    side = side_of(rule.kind, threshold, recipe.interval)
    if side == "clears":
        return result(
            Verdict.PASS, ["interval_clears_threshold", *reasons], f"{head}: it clears {relation} {threshold:g}."
        )
    if side == "misses":
        return result(
            Verdict.FAIL, ["interval_misses_threshold", *reasons], f"{head}: it misses {relation} {threshold:g}."
        )
    if rule.kind == "min" and recipe.ceiling < threshold:
        return result(
            Verdict.INSUFFICIENT_EVIDENCE,
            ["interval_straddles_threshold", *reasons, "set_too_small"],
            f"{head} contains min {threshold:g}; with {k} seeds on these cases even a perfect recipe's lower bound is "
            f"{recipe.ceiling:.3f}, so min {threshold:g} can never be cleared: add seeds.",
        )
    return result(
        Verdict.INSUFFICIENT_EVIDENCE,
        ["interval_straddles_threshold", *reasons],
        f"{head} contains {relation} {threshold:g}: more seeds narrow it (seed noise does not shrink with more cases).",
    )


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
            name="seeds",
            title="Recipe across seeds",
            status=(
                f"recipe {spec.recipe}: {len(spec.checkpoints)} checkpoint(s) "
                f"({', '.join(name for name, _ in spec.checkpoints)})"
            ),
        )

    def rule_results(self, ctx: GateContext, rules: tuple[RuleResult, ...]) -> list[RuleResult]:
        spec = ctx.release.seeds
        if spec is None:
            return []
        result = decide_recipe(
            spec, ctx.release, ctx.release.policy, ctx.testset, ctx.store, checkpoints=self._checkpoints
        )
        return [result.rule]
