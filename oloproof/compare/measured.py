"""``oloproof compare REF_A REF_B --criterion auc|mae``: a built-in measure with a paired form,
both runs on the same dev cases (issue 18, point 4).

The measure's keys (``score``/``positive`` for the AUC, ``field``/``bound`` for the MAE) and its
interval's method and permission (``method: delong``, ``approximate: allow``) come from the rule of
release.yaml on that criterion: its regression guard if it has one, else its first rule (rules on
one built-in measure read the same keys: ``oloproof.measures.spec.check_output_rules``). The
interval of B − A is the guard's own (``oloproof.measures.paired.paired_interval``), and a verdict
asked with ``--max-drop D`` is the guard's own decision (``decide_paired``) with ``max_drop: D``:
for the AUC, PASS iff the lower bound is at least −D; for the MAE (lower is better, a drop is the
error rising) PASS iff the upper bound is at most +D, D in the field's units. ``--min-gain G`` asks
the mirror question (AUC: lower bound at least +G; MAE: upper bound at most −G), decided by the
same function with the threshold's sign turned. Criteria with no paired form (rmse, a quantile)
are refused with a usage error naming what compare can pair.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from oloproof.compare.runs import Decision, run_notes, run_pair
from oloproof.errors import UsageError
from oloproof.evaluators.base import EvalContext
from oloproof.identity import checker_identity
from oloproof.inert import inert
from oloproof.measures.outputs import output_outcome
from oloproof.measures.paired import decide_paired, paired_interval
from oloproof.measures.spec import AUC, BUILT_IN, PAIRED, reads_outputs
from oloproof.stats.interval import interval_json
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Rule
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.stats.interval import Interval
    from oloproof.testset import TestSet

MEASURE_SCHEMA = "oloproof.compare.measure/1"


def names_a_measure(release: Release, criterion: str | None) -> bool:
    """Whether ``criterion`` names a built-in measure or a quantile rule's output key (not an evaluator)."""
    if criterion is None or criterion in release.criteria():
        return False
    return criterion in BUILT_IN or any(r.criterion == criterion and reads_outputs(r) for r in release.policy.rules)


def _what_pairs(release: Release) -> str:
    from oloproof.evaluators.registry import kind_of  # lazy: start-up

    plain = [e.criterion for e in release.evaluators if not kind_of(e).needs_variants]
    measured = [m for m in PAIRED if any(r.criterion == m for r in release.policy.rules)]
    listed = [*plain, *measured]
    return (
        f"compare pairs the pass/fail criteria of evaluators and the built-in measures {' and '.join(PAIRED)} (given "
        f"a rule on them); here: {', '.join(listed) or 'none'}"
    )


def measure_rule(release: Release, criterion: str) -> Rule:
    """The rule whose keys and method compare reads for ``criterion``: its regression guard if any, else its first."""
    rules = [r for r in release.policy.rules if r.criterion == criterion and reads_outputs(r)]
    if criterion not in PAIRED or any(r.quantile is not None for r in rules):
        what = f"the quantile rule on '{inert(criterion)}'" if criterion not in BUILT_IN else f"'{criterion}'"
        raise UsageError(f"criterion {what} has no paired interval, so compare cannot pair it: {_what_pairs(release)}")
    if not rules:
        keys = "score (and positive)" if criterion == AUC else "field (and bound)"
        raise UsageError(
            f"no rule in {release.path} reads criterion '{criterion}': compare takes its {keys} from such a rule; "
            f"add one (e.g. an advisory rule) or name another criterion ({_what_pairs(release)})"
        )
    # compare pairs every dev case: a min/max rule's where:/per: (a guard has none) is not applied
    return replace(next((r for r in rules if r.kind == "regression"), rules[0]), where=(), per=None)


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredComparison:
    release: str
    criterion: str
    rule: Rule  # the rule the keys, method and permission come from
    confidence: float
    testset_path: str
    testset_digest: str
    old_ref: str
    new_ref: str
    old: RunRecord
    new: RunRecord
    n: int
    old_estimate: float | None  # the measure on the cases each run answered (None: none to measure)
    new_estimate: float | None
    old_missing: int
    new_missing: int
    interval: Interval | None  # B − A, the guard's paired interval
    why: str  # why there is no interval ("" when there is one)
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    decision: Decision | None

    @property
    def lower_is_better(self) -> bool:
        return self.criterion != AUC

    @property
    def exit_code(self) -> int:
        return 0 if self.decision is None else int(self.decision.verdict.exit_code)

    def keys(self) -> dict[str, Any]:
        rule = self.rule
        if self.criterion == AUC:
            return {"score": rule.score, "positive": rule.positive, "method": rule.method}
        return {"field": rule.field, "bound": rule.bound}

    def to_json(self) -> dict[str, Any]:
        def run(ref: str, record: RunRecord, estimate: float | None, missing: int) -> dict[str, Any]:
            return {
                "ref": ref,
                "run_id": record.run_id,
                "version": record.version,
                "status": record.status,
                "failure": record.failure,
                "imported": record.imported,
                "started_at": record.started_at,
                "n_outputs": record.n_outputs,
                "estimate": estimate,
                "missing": missing,
                "checker": record.checker,
            }

        decision = self.decision
        return {
            "schema": MEASURE_SCHEMA,
            "exit_code": self.exit_code,
            "config": self.release,
            "criterion": self.criterion,
            "rule": self.rule.id,
            "keys": self.keys(),
            "lower_is_better": self.lower_is_better,
            "confidence": self.confidence,
            "set": {"kind": "dev", "path": self.testset_path, "digest": self.testset_digest, "n": self.n},
            "a": run(self.old_ref, self.old, self.old_estimate, self.old_missing),
            "b": run(self.new_ref, self.new, self.new_estimate, self.new_missing),
            "difference": interval_json(self.interval),
            "no_interval": self.why or None,
            "reasons": list(self.reasons),
            "notes": list(self.notes),
            "decision": None
            if decision is None
            else {
                "kind": decision.kind,
                "threshold": decision.threshold,
                "verdict": decision.verdict.value,
                "reasons": list(decision.reasons),
                "sentence": decision.sentence,
                "caveats": list(decision.caveats),
            },
            "checker": checker_identity().to_json(),
        }


def compare_measure(
    release: Release,
    testset: TestSet,
    store: RunStore,
    old_ref: str,
    new_ref: str,
    *,
    criterion: str,
    max_drop: float | None = None,
    min_gain: float | None = None,
) -> MeasuredComparison:
    """Pair runs ``old_ref`` (A) and ``new_ref`` (B) on a built-in measure with a paired form."""
    if max_drop is not None and min_gain is not None:
        raise UsageError("--max-drop and --min-gain ask two different questions; give one")
    rule = measure_rule(release, criterion)
    old, new = run_pair(testset, store, old_ref, new_ref)
    old_outcome, new_outcome = (_outcome(release, testset, store, rule, record) for record in (old, new))
    interval, why = paired_interval(rule, new_outcome, old_outcome, release.policy, testset)
    reasons = tuple(dict.fromkeys((*old_outcome.reasons, *new_outcome.reasons)))
    decision = None
    label = f"A ({inert(old_ref)}, run {old.run_id}, version {inert(old.version)})"
    if max_drop is not None:
        decision = _decide("max_drop", max_drop, rule, new_outcome, old_outcome, release, testset, label)
    elif min_gain is not None:
        decision = _decide("min_gain", min_gain, rule, new_outcome, old_outcome, release, testset, label)
    return MeasuredComparison(
        release=release.path,
        criterion=criterion,
        rule=rule,
        confidence=release.policy.confidence,
        testset_path=testset.path,
        testset_digest=testset.digest,
        old_ref=old_ref,
        new_ref=new_ref,
        old=old,
        new=new,
        n=len(testset.cases),
        old_estimate=_estimate(old_outcome),
        new_estimate=_estimate(new_outcome),
        old_missing=_missing(old_outcome),
        new_missing=_missing(new_outcome),
        interval=interval,
        why=why,
        reasons=reasons,
        notes=run_notes(old_ref, old, new_ref, new),
        decision=decision,
    )


def _outcome(release: Release, testset: TestSet, store: RunStore, rule: Rule, record: RunRecord) -> CriterionOutcome:
    ctx = EvalContext(
        testset=testset,
        outputs=store.outputs(record),
        base_dir=release.base_dir,
        policy=release.policy,
        quiet=True,
        outputs_of=f" of run {record.run_id} (version {inert(record.version)})",
    )
    if record.testset_digest != testset.digest:
        raise UsageError(
            f"run {record.run_id} (version {inert(record.version)}) was made on test set "
            f"{record.testset_digest[:19]}…, but {testset.path} is now {testset.digest[:19]}…: a paired comparison "
            "needs both runs on the same cases; re-run that version on this set"
        )
    outcome = output_outcome(rule, ctx)
    if record.failure is not None:  # a failed run's evidence decides nothing, as in the gate
        outcome = replace(outcome, reasons=tuple(dict.fromkeys((*outcome.reasons, "run_failed"))))
    return outcome


def _missing(outcome: CriterionOutcome) -> int:
    import numpy as np  # lazy: start-up

    return int(np.isnan(outcome.values).sum())


def _estimate(outcome: CriterionOutcome) -> float | None:
    import numpy as np  # lazy: start-up

    from oloproof.stats.auc import auc_estimate  # lazy: start-up

    answered = ~np.isnan(outcome.values)
    if not answered.any():
        return None
    if outcome.labels is None:
        return float(np.mean(outcome.values[answered]))
    labels = outcome.labels[answered]
    if not (labels == 1.0).any() or not (labels == 0.0).any():
        return None
    return auc_estimate(outcome.values, outcome.labels)


def _decide(
    kind: Literal["max_drop", "min_gain"],
    threshold: float,
    rule: Rule,
    new: CriterionOutcome,
    old: CriterionOutcome,
    release: Release,
    testset: TestSet,
    label: str,
) -> Decision:
    """The guard's decision (``decide_paired``) with ``max_drop: threshold``; a gain of G is the
    guard's question with max_drop −G. Only the sentence is compare's."""
    signed = threshold if kind == "max_drop" else -threshold
    guard = replace(rule, kind="regression", threshold=signed, baseline=label)
    result = decide_paired(guard, new, old, release.policy, testset, baseline_label=label)
    error = rule.criterion != AUC
    if kind == "max_drop":
        wanted = (
            f"a rise of the error of at most {threshold:g} (a drop of {rule.criterion} is its error rising)"
            if error
            else f"a drop of at most {threshold:g}"
        )
    else:
        wanted = f"a fall of the error of at least {threshold:g}" if error else f"a gain of at least {threshold:g}"
    interval = result.interval
    code = result.reasons[0] if result.reasons else ""
    if interval is None or code not in DECIDED:
        sentence = result.sentence.rstrip(".")
    elif code == "interval_clears_threshold":
        bound = f"upper bound {interval.high:+.3f}" if error else f"lower bound {interval.low:+.3f}"
        sentence = f"the {bound} shows {wanted}"
    elif code == "interval_misses_threshold":
        bound = f"lower bound {interval.low:+.3f}" if error else f"upper bound {interval.high:+.3f}"
        sentence = f"even the {bound} falls short of {wanted}"
    else:
        limit = signed if error else -signed
        sentence = (
            f"the interval [{interval.low:+.3f}, {interval.high:+.3f}] contains {limit:+g}: it cannot tell whether "
            f"the change is {wanted}; add cases to settle it"
        )
    verdict = Verdict(result.verdict)
    return Decision(kind=kind, threshold=threshold, verdict=verdict, reasons=result.reasons, sentence=sentence)


DECIDED = ("interval_clears_threshold", "interval_misses_threshold", "interval_straddles_threshold")
