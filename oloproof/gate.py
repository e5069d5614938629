"""The gate: from release.yaml to one verdict per rule, and the gate's verdict.

Pure orchestration: load, precheck, get a run (reuse or execute), evaluate, decide. The
result is one object that every renderer (terminal, JSON, JUnit, Markdown, annotations)
turns into text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from oloproof.checks import CheckReport, GateContext, registry
from oloproof.config import Release
from oloproof.decide import decide_regression, decide_rule
from oloproof.errors import UsageError
from oloproof.evaluators.base import CriterionOutcome, EvalContext
from oloproof.identity import CheckerIdentity, checker_identity
from oloproof.policy import Policy, Rule
from oloproof.runstore import RunRecord, RunStore
from oloproof.testset import TestSet, load_testset
from oloproof.verdicts import RuleResult, Verdict, worst

GATE_SCHEMA = "oloproof.gate/1"

# What the gate's evidence cannot tell, whatever its verdict (shown in every report).
LIMITATIONS = (
    "The interval covers sampling noise over these test cases only; it says nothing about inputs unlike them "
    "(other populations, later data, an attacker's search).",
    "A clean verdict on a set that tuning decisions were made on measures quality plus fit to that set: "
    "use a holdout read for an independent figure.",
    "Outputs were scored by the declared evaluators only; properties no evaluator checks were not examined.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GateResult:
    verdict: Verdict
    rules: tuple[RuleResult, ...]
    checks: tuple[CheckReport, ...]
    release: Release
    testset: TestSet
    run: RunRecord | None
    run_reused: bool
    outcomes: dict[str, CriterionOutcome]
    problems: tuple[str, ...]
    checker: CheckerIdentity
    generated_at: str
    limitations: tuple[str, ...] = LIMITATIONS
    extra: dict[str, Any] = field(default_factory=dict)


def find_reusable_run(release: Release, testset: TestSet, store: RunStore) -> RunRecord | None:
    """The latest run of this system version on this exact test set (and command), if any."""
    command = release.system.command_text
    for record in reversed(store.records()):
        if record.kind != "system" or record.version != release.system.version:
            continue
        if record.testset_digest != testset.digest:
            continue
        if record.command is not None and command is not None and record.command != command:
            continue
        return record
    return None


def load_dev_testset(release: Release) -> TestSet:
    from oloproof.config import display_path

    path = release.resolve(release.testset_path)
    return load_testset(path, display=display_path(path))


def run_gate(
    release: Release,
    *,
    run_ref: str | None = None,
    rerun: bool = False,
    quiet: bool = True,
    on_batch: Callable[[int, int], None] | None = None,
) -> GateResult:
    from oloproof.run import execute

    testset = load_dev_testset(release)
    store = RunStore(release.base_dir)
    ctx = GateContext(release=release, testset=testset, store=store, quiet=quiet)
    checks = registry()
    reports = tuple(report for check in checks.values() if (report := check.precheck(ctx)) is not None)
    generated_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    common = dict(
        release=release, testset=testset, checks=reports, checker=checker_identity(), generated_at=generated_at,
        limitations=limitations_for(release),
    )

    blocking = [report for report in reports if report.blocks]
    if blocking:
        reasons = (*dict.fromkeys(code for report in blocking for code in report.reasons), "precondition_unmet")
        why = "; ".join(report.sentence for report in blocking)
        rules = tuple(
            RuleResult(
                rule_id=rule.id, criterion=rule.criterion, kind=rule.kind, threshold=rule.threshold,
                verdict=Verdict.BLOCKED, reasons=reasons, sentence=f"Not decided: {why}", interval=None, n=len(testset),
                passes=None, missing=0, resolution=None, source=rule.source, line=rule.line,
            )
            for rule in release.policy.rules
        )
        verdicts = [rule.verdict for rule in rules] + [r.verdict for r in reports if r.verdict is not None]
        return GateResult(verdict=worst(verdicts), rules=rules, run=None, run_reused=False, outcomes={}, problems=(), **common)  # type: ignore[arg-type]

    record: RunRecord | None
    if run_ref is not None:
        record = store.resolve(run_ref)
        if record.testset_digest != testset.digest:
            raise UsageError(
                f"run {record.run_id} (version {record.version}) was made on test set {record.testset_digest[:19]}…, "
                f"but {testset.path} is now {testset.digest[:19]}…: re-run the system on this test set"
            )
        reused = True
    else:
        record = None if rerun else find_reusable_run(release, testset, store)
        reused = record is not None
    if record is None:
        if release.system.command is None:
            raise UsageError(
                f"no run of version '{release.system.version}' on {testset.path} ({testset.digest[:19]}…), and "
                "release.yaml declares no system command: import outputs with "
                f"`oloproof run --outputs FILE --version {release.system.version}`"
            )
        record, outputs = execute(release, testset, store, on_batch=on_batch)
    else:
        outputs = store.outputs(record)

    invalidating = tuple(dict.fromkeys(code for report in reports for code in report.invalidates))
    variants = None
    if release.metamorphic is not None:
        from oloproof.metamorphic.variants import VariantProvider

        variants = VariantProvider(release, testset, store, version=record.version, rerun=rerun, on_batch=on_batch)
    eval_ctx = EvalContext(
        testset=testset, outputs=outputs, base_dir=release.base_dir, policy=release.policy, quiet=quiet, variants=variants,
    )
    needed = {rule.criterion for rule in release.policy.rules}
    # Flip rates are reported even where no rule reads them (a declared transform never decides one).
    needed |= {evaluator.criterion for evaluator in release.evaluators if evaluator.type == "metamorphic_relation"}
    outcomes: dict[str, CriterionOutcome] = {}
    problems: list[str] = []
    for evaluator in release.evaluators:
        if evaluator.criterion not in needed:
            continue
        outcome = evaluator.evaluate(eval_ctx)
        if invalidating:
            outcome = _with_reasons(outcome, invalidating)
        if record.failure is not None:
            outcome = _with_reasons(outcome, ("run_failed",))
        outcomes[evaluator.criterion] = outcome
        problems.extend(outcome.problems)
    decided: list[RuleResult] = []
    for rule in release.policy.rules:
        if rule.kind == "regression":
            decided.append(_decide_regression(rule, outcomes[rule.criterion], eval_ctx, store, release))
        else:
            decided.append(_decide(rule, outcomes[rule.criterion], release.policy, testset))
    rules = tuple(decided)
    for check in checks.values():
        rules += tuple(check.rule_results(ctx, rules))
    verdicts = [rule.verdict for rule in rules] + [report.verdict for report in reports if report.verdict is not None]
    return GateResult(
        verdict=worst(verdicts), rules=rules, run=record, run_reused=reused, outcomes=outcomes,
        problems=tuple(problems), **common,  # type: ignore[arg-type]
    )


def _decide_regression(rule: Rule, now: CriterionOutcome, ctx: EvalContext, store: RunStore, release: Release) -> RuleResult:
    """Evaluate the baseline run with the same evaluator, then decide on the paired interval."""
    from dataclasses import replace

    assert rule.baseline is not None
    baseline = store.resolve(rule.baseline)
    label = f"{rule.baseline} (run {baseline.run_id}, version {baseline.version})"
    if baseline.testset_digest != ctx.testset.digest:
        return RuleResult(
            rule_id=rule.id, criterion=rule.criterion, kind=rule.kind, threshold=rule.threshold,
            verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=("baseline_mismatch",), interval=None, n=len(ctx.testset),
            passes=None, missing=0, resolution=None, source=rule.source, line=rule.line,
            sentence=f"The baseline {label} was made on another test set ({baseline.testset_digest[:19]}…): "
            "a paired comparison needs both versions on the same cases; re-run the baseline on this test set.",
        )
    evaluator = release.criteria()[rule.criterion]
    base_outcome = evaluator.evaluate(replace(ctx, outputs=store.outputs(baseline)))
    return decide_regression(rule, now, base_outcome, release.policy, baseline_label=label)


def limitations_for(release: Release) -> tuple[str, ...]:
    if release.metamorphic is None:
        return LIMITATIONS
    from oloproof.metamorphic import LIMITATIONS as METAMORPHIC_LIMITATIONS

    return LIMITATIONS + METAMORPHIC_LIMITATIONS


def _decide(rule: Rule, outcome: CriterionOutcome, policy: Policy, testset: TestSet) -> RuleResult:
    """Decide on the cases the outcome covers: every case, or (``case_ids``) those a transform changed."""
    from dataclasses import replace

    if outcome.case_ids is None:
        return decide_rule(rule, outcome, policy, testset)
    from oloproof.evaluators.metamorphic import rule_note

    if not outcome.case_ids:
        return RuleResult(
            rule_id=rule.id, criterion=rule.criterion, kind=rule.kind, threshold=rule.threshold,
            verdict=Verdict.INSUFFICIENT_EVIDENCE, reasons=tuple(dict.fromkeys(("no_applicable_cases", *outcome.reasons))),
            sentence=f"{rule.criterion}: the transform changed no case, so there is no evidence either way.",
            interval=None, n=0, passes=None, missing=0, resolution=None, source=rule.source, line=rule.line,
        )
    covered = set(outcome.case_ids)
    cases = tuple(case for case in testset.cases if case.id in covered)
    subset = replace(testset, cases=cases, has_groups=any(case.group is not None for case in cases))
    result = decide_rule(rule, outcome, policy, subset)
    note = rule_note(outcome)
    return replace(result, sentence=f"{result.sentence} {note}") if note else result


def _with_reasons(outcome: CriterionOutcome, codes: tuple[str, ...]) -> CriterionOutcome:
    from dataclasses import replace

    merged = tuple(dict.fromkeys(outcome.reasons + codes))
    return replace(outcome, reasons=merged)
