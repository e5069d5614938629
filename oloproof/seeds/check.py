"""The recipe across seeds (SPEC §6): is the way of training good, or was one seed lucky?

k checkpoints trained with k seeds each have a run on the same test set. Their per-case
outcomes form an n × k matrix; the recipe's pass rate (a new seed on a new case) gets the
crossed cases × seeds interval of STATISTICS.md §3, which is approximate: without
``allow_approximate_methods: true`` the answer is MANUAL_REVIEW. Fewer than three seeds are
INSUFFICIENT_EVIDENCE (``too_few_seeds``); a failed seed (its run failed: the command exited
non-zero, crashed or timed out, whatever it answered) is kept, every case counting as a failure
for the lower bound and a pass for the upper.

From the policy it reads only the confidence, that permission and the judge thresholds. It does
not read ``leakage: required``: the released checkpoint is gated on its own run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from oloproof.checks import GateCheck, GateContext
from oloproof.config import Release, require_criterion
from oloproof.decide import INVALIDATING, interval_text, side_of, unfit_for_review
from oloproof.evaluators.base import EvalContext
from oloproof.evaluators.registry import kind_of
from oloproof.inert import inert
from oloproof.measures.registry import measure_of
from oloproof.pairs import judge_only
from oloproof.policy import allows_approximate
from oloproof.result import CheckReport, RuleResult
from oloproof.run import describe_problems
from oloproof.seeds.copies import count_seeds, counted_details, seed_notes
from oloproof.seeds.runs import Checkpoint, resolve_refs, run_pending
from oloproof.seeds.spec import SeedsSpec
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    import numpy as np

    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Policy, Rule
    from oloproof.runstore import RunStore
    from oloproof.stats.seeds import RecipeResult
    from oloproof.testset import TestSet

MIN_SEEDS = 3


def limitations(k: int) -> tuple[str, ...]:
    """What the recipe's verdict cannot tell (the guide's "What this cannot tell you"), for k seeds."""
    return (
        "How the checkpoints were trained: whether the seeds were fixed in advance, failed trainings kept, and the "
        "seed the only difference.",
        f"Failures rarer than about once in {k} seeds: a recipe that fails one training in {max(2 * k, 10)} may "
        f"pass all {k}.",
    )


SEEDS_COMMAND_LIMITATION = (
    "Leakage in the seed runs: `oloproof seeds` does not read `leakage: required` (the released checkpoint's own run "
    "does)."
)


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
                    "command": cp.command,
                    "run": cp.origin,
                    "notes": list(cp.notes),
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
            "limitations": list(self.limitations),
        }

    @property
    def limitations(self) -> tuple[str, ...]:
        return (*limitations(len(self.checkpoints)), SEEDS_COMMAND_LIMITATION)


def gather_checkpoints(
    spec: SeedsSpec,
    release: Release,
    testset: TestSet,
    store: RunStore,
    *,
    rerun: bool = False,
    on_batch: Callable[[int, int], None] | None = None,
    on_start: Callable[[Checkpoint], None] | None = None,
) -> tuple[Checkpoint, ...]:
    """Every checkpoint's run: refs resolved first, then each command checkpoint run or reused."""
    resolved = resolve_refs(spec, release, store, testset)
    return run_pending(spec, release, testset, store, resolved, rerun=rerun, on_batch=on_batch, on_start=on_start)


def decide_recipe(
    spec: SeedsSpec,
    release: Release,
    policy: Policy,
    testset: TestSet,
    store: RunStore,
    checkpoints: tuple[Checkpoint, ...],
) -> SeedsResult:
    """Decide the recipe rule on ``checkpoints`` (``gather_checkpoints``; the gate resolves refs
    before its own run, so that run can never shift ``latest~N`` refs)."""
    import numpy as np  # lazy: start-up

    from oloproof.stats.seeds import recipe_interval  # lazy: start-up (scipy)

    rule = spec.rule
    evaluator = require_criterion(
        release.criteria(), rule.criterion, rule.source, rule.line, f"{rule.key_path}.criterion", single_run=True
    )
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
            sentence=f"recipe {spec.recipe}: no run for {names}; declare each checkpoint by its command "
            "(seed_1: {command: ...}) or run it, e.g. `oloproof run --version NAME --command '...'`.",
            **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=None)

    outcomes: list[CriterionOutcome] = []
    for cp in usable:
        assert cp.run is not None
        ctx = EvalContext(
            testset=testset,
            outputs=store.outputs(cp.run),
            base_dir=release.base_dir,
            policy=policy,
            outputs_of=f" of checkpoint {inert(cp.name)} (run {cp.run.run_id})",
        )
        outcomes.append(evaluator.evaluate(ctx))
    matrix = np.column_stack([outcome.values for outcome in outcomes]).astype(float)
    # A checkpoint whose run failed (its command exited non-zero, crashed or timed out) is a failed
    # seed, however many cases it answered: none of its outputs is its answer, so every case counts
    # as a failure for the lower bound and a pass for the upper.
    failed = [cp for cp in usable if cp.run is not None and cp.run.status == "failed"]
    for index, cp in enumerate(usable):
        if cp in failed:
            matrix[:, index] = np.nan
    # One seed per checkpoint, counted by its files (oloproof.seeds.copies): byte-identical files are
    # one seed under two names; distinct checkpoints answering alike stay separate seeds. Failed
    # seeds are each a failure of their own, never copies of each other.
    ok = [cp for cp in usable if cp not in failed]
    counted = count_seeds(
        [cp.name for cp in ok],
        [cp.run for cp in ok if cp.run is not None],
        matrix[:, [cp not in failed for cp in usable]],
    )
    dropped = {cp.name for index, cp in enumerate(ok) if index not in counted.kept}
    distinct = matrix[:, [index for index, cp in enumerate(usable) if cp.name not in dropped]]
    reasons: list[str] = ["duplicate_seeds"] if dropped else []
    if counted.deterministic:
        reasons.append("deterministic_seeds")
    if failed:
        reasons.append("seed_failed")
    for outcome in outcomes:
        reasons.extend(code for code in outcome.reasons if code not in reasons)
    missing = int(np.isnan(matrix).sum())
    if not all(measure_of(outcome.kind).pass_fail for outcome in outcomes):
        codes = list(dict.fromkeys(["approximate_method", *reasons, *(["missing_outputs"] if missing else [])]))
        unfit = unfit_for_review(codes)
        result = RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE if unfit else Verdict.MANUAL_REVIEW,
            reasons=tuple(codes),
            interval=None,
            passes=None,
            missing=missing,
            resolution=None,
            sentence=(
                f"recipe {spec.recipe}: {rule.criterion} holds scores, and the seeds interval is for pass/fail "
                + (f"outcomes; {unfit}, so the recipe is not judged." if unfit else "outcomes; review by hand.")
            ),
            **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=matrix)
    if len(testset) < 2 or missing == matrix.size:
        # No crossed interval exists: one case has no case-to-case variation, and a matrix with no
        # answered cell has no pass rate at all (every checkpoint failed, crashed or answered nothing).
        why = (
            f"no checkpoint has a usable output (failed: {', '.join(cp.name for cp in failed) or 'none'})"
            if missing == matrix.size
            else "the test set has one case, and a recipe's interval needs at least two"
        )
        codes = list(dict.fromkeys([*reasons, *(["missing_outputs"] if missing else [])]))
        result = RuleResult(
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=tuple(codes),
            interval=None,
            passes=None,
            missing=missing,
            resolution=None,
            sentence=f"recipe {spec.recipe}: {why}, so the recipe is not judged.",
            details={"k": len(usable), "recipe": spec.recipe, "failed_checkpoints": [cp.name for cp in failed]},
            **common,  # type: ignore[arg-type]
        )
        return SeedsResult(spec=spec, testset=testset, checkpoints=checkpoints, rule=result, recipe=None, matrix=matrix)
    recipe = recipe_interval(matrix, confidence=policy.confidence) if len(usable) >= 2 else None
    decided = recipe
    if dropped:
        decided = recipe_interval(distinct, confidence=policy.confidence) if distinct.shape[1] >= 2 else None
    result = _verdict(spec, rule, policy, decided, distinct, reasons, interval_text, common)
    if kind_of(evaluator).judged:  # the judge's verdicts alone never decide (oloproof.pairs.judge_only)
        result = judge_only(result, unfit_for_review)
    result = replace(
        result,
        sentence=f"{result.sentence}{seed_notes(counted)}",
        details={**result.details, **counted_details(counted)},
    )
    if failed:
        what = ", ".join(f"{cp.name} ({cp.run.failure})" for cp in failed if cp.run is not None)
        result = replace(
            result,
            sentence=f"{result.sentence} The run of {what} failed: a failed seed, none of its outputs is used; each "
            "case counts as a failure for the lower bound and a pass for the upper.",
            details={**result.details, "failed_checkpoints": [cp.name for cp in failed]},
        )
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
    if not allows_approximate(rule, policy) and missing:
        return result(
            Verdict.INSUFFICIENT_EVIDENCE,
            [*reasons, "approximate_method"],
            f"{head}; {unfit_for_review(reasons)}: a manual review needs every output, so the recipe is not judged.",
        )
    if not allows_approximate(rule, policy):
        return result(
            Verdict.MANUAL_REVIEW,
            [*reasons, "approximate_method"],
            f"{head}; the seeds interval is approximate: set approximate: allow on the recipe rule (or "
            "allow_approximate_methods: true in the policy) to let it decide.",
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
        f"{head} contains {relation} {threshold:g}: "
        + (
            "more cases narrow it (these checkpoints do not vary, so the cases set its width)."
            if "deterministic_seeds" in reasons
            else "more seeds narrow it (seed noise does not shrink with more cases)."
        ),
    )


class SeedsCheck(GateCheck):
    """When release.yaml declares ``seeds:``, the gate also decides the recipe rule."""

    name = "seeds"

    def __init__(self) -> None:
        self._checkpoints: tuple[Checkpoint, ...] = ()
        self._result: SeedsResult | None = None

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        spec = ctx.release.seeds
        if spec is None:
            return None
        # Refs are resolved now, before the gate makes its own run: `latest~4 ... latest` must
        # name the seed runs, never the run this gate is about to add. Command checkpoints run
        # only once nothing blocks the gate (rule_results).
        self._checkpoints = resolve_refs(spec, ctx.release, ctx.store, ctx.testset)
        return CheckReport(
            name="seeds",
            title="Recipe across seeds",
            status=f"recipe {spec.recipe}: {len(spec.checkpoints)} checkpoint(s) ({', '.join(spec.names)})",
        )

    def rule_results(self, ctx: GateContext, rules: tuple[RuleResult, ...]) -> list[RuleResult]:
        spec = ctx.release.seeds
        if spec is None:
            return []
        self._checkpoints = run_pending(
            spec, ctx.release, ctx.testset, ctx.store, self._checkpoints, rerun=ctx.rerun, on_batch=ctx.on_batch
        )
        self._result = decide_recipe(
            spec, ctx.release, ctx.release.policy, ctx.testset, ctx.store, checkpoints=self._checkpoints
        )
        return [self._result.rule]

    def declared_rules(self, ctx: GateContext) -> list[Rule]:
        return [ctx.release.seeds.rule] if ctx.release.seeds is not None else []

    def final_report(self, ctx: GateContext, report: CheckReport) -> CheckReport:
        """The precheck's report, with where each checkpoint's run came from and what the recipe
        cannot tell (once the recipe was decided)."""
        if self._result is None:
            return report
        made = [cp for cp in self._checkpoints if cp.origin == "new"]
        reused = [cp for cp in self._checkpoints if cp.origin == "reused"]
        parts = [f"{len(made)} run now"] if made else []
        parts += [f"{len(reused)} reused"] if reused else []
        named = len(self._checkpoints) - len(made) - len(reused)
        parts += [f"{named} named by ref"] if named else []
        return replace(
            report,
            status=f"{report.status}: {', '.join(parts)}",
            lines=checkpoint_lines(self._checkpoints),
            data={"checkpoints": self._result.to_json()["checkpoints"]},
            limitations=limitations(len(self._checkpoints)),
        )


def checkpoint_lines(checkpoints: tuple[Checkpoint, ...]) -> tuple[str, ...]:
    """One line per checkpoint: its run and whether it was made now, reused or named by a ref;
    why a stored run was not reused; what went wrong in a run made now."""
    lines: list[str] = []
    for cp in checkpoints:
        if cp.run is None:
            lines.append(f"{cp.name}: no run ({cp.problem})")
            continue
        run = cp.run
        how = {"new": "made now", "reused": "reused"}.get(cp.origin, f"(version {run.version}) named by {cp.ref}")
        lines.append(f"{cp.name}: run {run.run_id} {how} ({run.status}, {run.n_outputs}/{run.n_cases} outputs)")
        lines.extend(f"  {note}" for note in cp.notes)
        if cp.origin == "new":
            lines.extend(f"  {problem}" for problem in describe_problems(run, limit=3))
    if any(cp.origin == "ref" and (cp.ref or "").startswith("latest") for cp in checkpoints):
        lines.append(
            "latest~N names whatever runs are newest on this test set (besides the released system's): a run of "
            "another experiment made since shifts them; name each seed by version:NAME to pin it"
        )
    return tuple(lines)
