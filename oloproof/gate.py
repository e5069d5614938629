"""The gate: from release.yaml to one verdict per rule, and the gate's verdict.

The composition root: it lists the capabilities' checks (``registry``) and orchestrates — load,
precheck, get a run (reuse or execute), evaluate, decide. The result (``oloproof.result``) is
one object that every renderer (terminal, JSON, JUnit, Markdown, annotations) turns into text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from oloproof.checks import GateCheck, GateContext
from oloproof.classification import with_classification
from oloproof.config import Release
from oloproof.decide import decide_regression, decide_rule
from oloproof.devset import load_dev_testset
from oloproof.errors import ConfigError, StoreError, UsageError
from oloproof.evaluators.base import CriterionOutcome, EvalContext
from oloproof.evaluators.registry import kind_of
from oloproof.holdout.check import HoldoutCheck
from oloproof.identity import checker_identity
from oloproof.jsonl import kept_heap
from oloproof.lastgate import note_and_record
from oloproof.leakage.check import LeakageCheck
from oloproof.measures.outputs import output_outcome
from oloproof.measures.paired import decide_paired
from oloproof.measures.spec import reads_outputs
from oloproof.metamorphic.check import MetamorphicCheck
from oloproof.pairs import case_groups
from oloproof.policy import Policy, Rule
from oloproof.result import LIMITATIONS, CheckReport, GateResult, RuleResult, gate_verdict
from oloproof.rulemarks import mark_rules
from oloproof.run import UNDECLARED_FILES, execute, find_reusable, reuse_notes, system_fingerprint
from oloproof.runscores import score_outputs
from oloproof.runstore import RefScope, RunRecord, RunStore
from oloproof.seeds.check import SeedsCheck
from oloproof.slices.rule import decide_sliced
from oloproof.store import utc_stamp
from oloproof.testset import TestSet
from oloproof.verdicts import Verdict


def registry() -> dict[str, GateCheck]:
    """Every gate check, by name, in the order they run: the one list of capabilities (a new one
    is its package and one line here; nothing below the gate imports a capability)."""
    return {
        "leakage": LeakageCheck(),
        "holdout": HoldoutCheck(),
        "seeds": SeedsCheck(),
        "metamorphic": MetamorphicCheck(),
    }


@kept_heap()  # the test set and outputs live as long as the gate: not walked by the collector meanwhile
def run_gate(
    release: Release,
    *,
    run_ref: str | None = None,
    rerun: bool = False,
    quiet: bool = True,
    on_batch: Callable[[int, int], None] | None = None,
    store: RunStore | None = None,
    reports_before: tuple[CheckReport, ...] = (),
    fresh: bool = False,
    previous_gate: Callable[[Path], bytes | None] | None = None,
) -> GateResult:
    """Gate ``release``. ``store``: the runs to use (the action passes one pinned to what a
    pull request's base branch holds); ``reports_before``: reports of the caller's own checks, which
    join the prechecks (a blocking one blocks every rule); ``fresh``: run the released system (and
    its transformed copies) again, while baselines and seed checkpoints may still be reused;
    ``previous_gate``: where this config's last-gate note is read (in a pull request, the base
    commit's copy), instead of the working tree."""
    testset = load_dev_testset(release)
    store = store if store is not None else RunStore(release.base_dir)
    ctx = GateContext(release=release, testset=testset, store=store, quiet=quiet, rerun=rerun, on_batch=on_batch)
    checks = registry()
    reports = reports_before + tuple(report for check in checks.values() if (report := check.precheck(ctx)) is not None)
    generated_at = utc_stamp()

    def result(
        rules: tuple[RuleResult, ...],
        *,
        run: RunRecord | None = None,
        reused: bool = False,
        outcomes: dict[str, CriterionOutcome] | None = None,
        problems: tuple[str, ...] = (),
        notes: tuple[str, ...] = (),
        decided: bool = True,
    ) -> GateResult:
        rules = mark_rules(rules, release, outcomes or {})  # advisory, approximate: allow, accepted
        return GateResult(
            verdict=gate_verdict(rules, reports),
            rules=rules,
            checks=reports,
            release=release,
            testset=testset,
            run=run,
            run_reused=reused,
            outcomes=outcomes or {},
            problems=problems,
            checker=checker_identity(),
            generated_at=generated_at,
            # a blocked gate tried nothing
            limitations=limitations_for(release, checks, ctx) if decided else LIMITATIONS,
            run_notes=notes,
        )

    blocking = [report for report in reports if report.blocks]
    if blocking:
        reasons = (*dict.fromkeys(code for report in blocking for code in report.reasons), "precondition_unmet")
        why = "; ".join(report.sentence for report in blocking)
        rules = tuple(
            RuleResult.undecided(rule, Verdict.BLOCKED, reasons, n=len(testset), sentence=f"Not decided: {why}")
            for rule in (*release.policy.rules, *(r for check in checks.values() for r in check.declared_rules(ctx)))
        )  # a check's own rule (the seeds recipe) too: the rule count does not change with the verdict
        return result(rules, decided=False)

    baselines = _resolve_baselines(release, store, testset)  # before any run: a wrong ref costs nothing
    record, outputs, reused, run_notes = _obtain_run(
        release, testset, store, run_ref=run_ref, rerun=rerun or fresh, on_batch=on_batch
    )
    if reused:
        run_notes = (*run_notes, *reuse_notes(record))
    elif fresh and run_ref is None:
        run_notes = (
            *run_notes,
            f"the system was run fresh: no stored run of version '{release.system.version}' stands in for it here "
            "(stored runs are reused only as baselines and seed checkpoints)",
        )
    if record.imported:
        run_notes = (
            *run_notes,
            f"the run that decides was imported from {record.imported_from} (--run), not made here",
        )
    run_notes = (*run_notes, *_refused_notes(store))

    invalidating = tuple(dict.fromkeys(code for report in reports for code in report.invalidates))
    variants = None
    for check in checks.values():
        variants = variants or check.variants(
            ctx,
            version=record.version,
            rerun=rerun or (fresh and not record.imported),  # imported outputs: their copies are imported too
            imported=record.imported,
        )
    eval_ctx = EvalContext(
        testset=testset,
        outputs=outputs,
        base_dir=release.base_dir,
        policy=release.policy,
        quiet=quiet,
        variants=variants,
    )
    outcomes, problems = _evaluate(release, eval_ctx, record, invalidating)
    outcomes = with_classification(release, testset, outputs, outcomes)  # label_match: per-class report
    decided: list[RuleResult] = []
    for rule in release.policy.rules:
        if rule.kind == "regression":
            decided.append(
                _decide_regression(rule, outcomes[rule.criterion], eval_ctx, store, release, baselines[rule.id], record)
            )
        else:
            decided.append(
                decide_sliced(
                    rule,
                    outcomes[rule.criterion],
                    release.policy,
                    testset,
                    outputs,
                    decide=lambda r, o, p, t: _decide(r, o, p, t, checks),
                )
            )
    rules = tuple(decided)
    for check in checks.values():
        rules += tuple(invalidated(rule, invalidating) for rule in check.rule_results(ctx, rules))
    reports = tuple(
        checks[report.name].final_report(ctx, report) if report.name in checks else report for report in reports
    )
    run_notes = (
        *run_notes,
        *note_and_record(
            release.base_dir,
            release.path,
            testset,
            rules=release.policy.rules,
            outcomes=outcomes,
            version=record.version,
            run_id=record.run_id,
            generated_at=generated_at,
            previous=previous_gate,
        ),
    )  # what left the test set since this config's last gate (issue 16 §6)
    return result(
        rules,
        run=record,
        reused=reused,
        outcomes=outcomes,
        problems=problems,
        notes=run_notes,
    )


def _evaluate(
    release: Release, ctx: EvalContext, record: RunRecord, invalidating: tuple[str, ...]
) -> tuple[dict[str, CriterionOutcome], tuple[str, ...]]:
    """Every criterion a rule reads (and every flip rate, reported even where no rule reads it: a
    declared transform never decides one), with the reasons that invalidate all evidence added."""
    needed = {rule.criterion for rule in release.policy.rules}
    needed |= {evaluator.criterion for evaluator in release.evaluators if kind_of(evaluator).needs_variants}
    outcomes: dict[str, CriterionOutcome] = {}
    problems: list[str] = []
    for evaluator in release.evaluators:
        if evaluator.criterion not in needed:
            continue
        outcome = evaluator.evaluate(ctx)
        if invalidating:
            outcome = _with_reasons(outcome, invalidating)
        if record.failure is not None:
            outcome = _with_reasons(outcome, ("run_failed",))
        outcomes[evaluator.criterion] = outcome
        problems.extend(outcome.problems)
    for rule in release.policy.rules:  # built-in measures read the outputs themselves (oloproof.measures)
        if reads_outputs(rule) and rule.criterion not in outcomes:
            outcome = output_outcome(rule, ctx, wall_ms=record.case_wall_ms, batch_size=record.wall_batch_size)
            codes = (*invalidating, *(("run_failed",) if record.failure is not None else ()))
            outcomes[rule.criterion] = _with_reasons(outcome, codes) if codes else outcome
            problems.extend(outcome.problems)
    return outcomes, tuple(problems)


def _obtain_run(
    release: Release,
    testset: TestSet,
    store: RunStore,
    *,
    run_ref: str | None,
    rerun: bool,
    on_batch: Callable[[int, int], None] | None,
) -> tuple[RunRecord, dict[str, dict[str, Any]], bool, tuple[str, ...]]:
    """The run to gate, whether it was reused, and notes on why a stored run was not: the run
    named, the latest one that can stand in for running the declared system now (same command,
    same system files, not imported, not failed), or a new one.

    Finding and making a run happen under a lock per (version, test set), so two gates started
    together run the system once and the second reuses the first's run.
    """
    if run_ref is not None:
        record = store.resolve(run_ref, scope=RefScope.of(testset))
        if record.testset_digest != testset.digest:
            raise UsageError(
                f"run {record.run_id} (version {record.version}) was made on test set {record.testset_digest[:19]}…, "
                f"but {testset.path} is now {testset.digest[:19]}…: re-run the system on this test set"
            )
        return record, store.outputs(record), True, ()
    system = release.system
    with store.lock(f"{system.version}\0{testset.digest}"):
        current = system_fingerprint(release) if system.command is not None else None  # each file read once
        found, notes = (
            (None, ())
            if rerun
            else find_reusable(
                store.records(),
                version=system.version,
                testset_digest=testset.digest,
                kind="system",
                command=system.command_text,
                current=current,
            )
        )
        if found is not None:
            return found, store.outputs(found), True, ()
        if system.command is None:
            raise UsageError(
                f"no run of version '{system.version}' on {testset.path} ({testset.digest[:19]}…), and "
                "release.yaml declares no system command: import outputs with "
                f"`oloproof run --outputs FILE --version {system.version}`"
            )
        _preflight(release, testset)
        record, outputs = execute(
            release,
            testset,
            store,
            on_batch=on_batch,
            files=current,
            # what `oloproof runs` lists
            scorer=lambda made, wall, batch: score_outputs(release, testset, made, wall_ms=wall, batch_size=batch),
        )
        return record, outputs, False, tuple(f"{note}: the system was run again" for note in notes)


def _refused_notes(store: RunStore, limit: int = 3) -> tuple[str, ...]:
    """Stored runs that are never used (edited, unsealed, or not on the pinned list), and runs read
    from the pin instead of the working tree (in a pull request), said once each."""
    swapped = tuple(f"run {run_id} is {how}" for run_id, how in sorted(store.substituted.items())[:limit])
    items = sorted(store.refused.items())
    notes = swapped + tuple(f"run {run_id} is not used: {why}" for run_id, why in items[:limit])
    more = (
        (f"and {len(items) - limit} more stored run(s) are not used (see `oloproof runs`)",)
        if len(items) > limit
        else ()
    )
    return notes + more


def _preflight(release: Release, testset: TestSet) -> None:
    """Evaluate with no outputs before running the system: a case missing its expected value, a
    per-case pattern that does not compile or a broken labels file is reported before the
    system spends its time (or a paid API's money), not after."""
    ctx = EvalContext(testset=testset, outputs={}, base_dir=release.base_dir, policy=release.policy)
    for evaluator in release.evaluators:
        if not kind_of(evaluator).needs_variants:  # those would run the transformed copies
            evaluator.evaluate(ctx)


def _resolve_baselines(release: Release, store: RunStore, testset: TestSet) -> dict[str, RunRecord]:
    baselines: dict[str, RunRecord] = {}
    for rule in release.policy.rules:
        if rule.baseline is None:
            continue
        try:
            baselines[rule.id] = store.resolve(rule.baseline, scope=RefScope.of(testset))
        except StoreError as exc:
            raise ConfigError(rule.source, rule.line, f"{rule.key_path}.baseline", str(exc)) from None
    return baselines


def _decide_regression(
    rule: Rule,
    now: CriterionOutcome,
    ctx: EvalContext,
    store: RunStore,
    release: Release,
    baseline: RunRecord,
    gated: RunRecord,
) -> RuleResult:
    """Evaluate the baseline run with the same evaluator, then decide on the paired interval."""
    label = f"{rule.baseline} (run {baseline.run_id}, version {baseline.version})"
    if baseline.run_id == gated.run_id or baseline.version == gated.version:
        return RuleResult.undecided(
            rule,
            Verdict.INSUFFICIENT_EVIDENCE,
            ("baseline_is_gated_version",),
            n=len(ctx.testset),
            sentence=f"The baseline {label} is the version being gated (run {gated.run_id}, version {gated.version}): "
            "a regression guard compares two versions; name an earlier version as the baseline.",
        )
    if baseline.testset_digest != ctx.testset.digest:
        return RuleResult.undecided(
            rule,
            Verdict.INSUFFICIENT_EVIDENCE,
            ("baseline_mismatch",),
            n=len(ctx.testset),
            sentence=f"The baseline {label} was made on another test set ({baseline.testset_digest[:19]}…): "
            "a paired comparison needs both versions on the same cases; re-run the baseline on this test set.",
        )
    if reads_outputs(rule):  # a built-in measure with a paired form (oloproof.measures.paired)
        base_outcome = output_outcome(rule, replace(ctx, outputs=store.outputs(baseline)))
        result = decide_paired(rule, now, base_outcome, release.policy, ctx.testset, baseline_label=label)
    else:
        base_outcome = release.criteria()[rule.criterion].evaluate(replace(ctx, outputs=store.outputs(baseline)))
        result = decide_regression(
            rule,
            now,
            base_outcome,
            release.policy,
            baseline_label=label,
            case_ids=[case.id for case in ctx.testset.cases],
            groups=case_groups(ctx.testset),
        )
    if baseline.checker != gated.checker:
        # Drift in the measuring apparatus (SPEC §9): said, not silently compared across.
        return replace(
            result,
            details={**result.details, "checker_changed": True},
            sentence=f"{result.sentence} Note: the baseline was recorded by oloproof {baseline.checker.get('version')} "
            f"({baseline.checker.get('source_digest', '')[:19]}…), the gated run by {gated.checker.get('version')} "
            f"({gated.checker.get('source_digest', '')[:19]}…): the checker changed in between.",
        )
    return result


def limitations_for(release: Release, checks: dict[str, GateCheck], ctx: GateContext) -> tuple[str, ...]:
    """What this gate cannot tell: the gate's own limits, then each check's (the metamorphic check
    says which declared transforms were tried)."""
    found = LIMITATIONS + ((UNDECLARED_FILES,) if release.system.command is not None else ())
    return found + tuple(text for check in checks.values() for text in check.limitations(ctx))


def _decide(
    rule: Rule, outcome: CriterionOutcome, policy: Policy, testset: TestSet, checks: dict[str, GateCheck]
) -> RuleResult:
    """Decide on the cases the outcome covers: every case, or (``case_ids``) those a transform changed."""
    if outcome.case_ids is None:
        return decide_rule(rule, outcome, policy, testset)
    if not outcome.case_ids:
        return RuleResult.undecided(
            rule,
            Verdict.INSUFFICIENT_EVIDENCE,
            tuple(dict.fromkeys(("no_applicable_cases", *outcome.reasons))),
            n=0,
            sentence=f"{rule.criterion}: the transform changed no case, so there is no evidence either way.",
        )
    covered = set(outcome.case_ids)
    cases = tuple(case for case in testset.cases if case.id in covered)
    subset = replace(testset, cases=cases, has_groups=any(case.group is not None for case in cases))
    result = decide_rule(rule, outcome, policy, subset)
    note = " ".join(text for check in checks.values() if (text := check.rule_note(outcome)))
    return replace(result, sentence=f"{result.sentence} {note}") if note else result


def _with_reasons(outcome: CriterionOutcome, codes: tuple[str, ...]) -> CriterionOutcome:
    merged = tuple(dict.fromkeys(outcome.reasons + codes))
    return replace(outcome, reasons=merged)


def invalidated(rule: RuleResult, codes: tuple[str, ...]) -> RuleResult:
    """A check's own rule (the seeds recipe) on a test set whose evidence is invalid (leaked cases):
    INSUFFICIENT_EVIDENCE whatever its method, every reason code kept (SPEC §2)."""
    added = [code for code in codes if code not in rule.reasons]
    if not added or rule.verdict == Verdict.BLOCKED:
        return rule
    decided = ("interval_clears_threshold", "interval_misses_threshold")
    reasons = tuple(code for code in dict.fromkeys((*rule.reasons, *added)) if code not in decided)
    return replace(
        rule,
        verdict=Verdict.INSUFFICIENT_EVIDENCE,
        reasons=reasons,
        sentence=f"{rule.sentence} The evidence is invalid ({', '.join(added)}), so the rule is not decided.",
    )
