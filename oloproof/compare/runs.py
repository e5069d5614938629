"""``oloproof compare REF_A REF_B``: two stored runs of the dev set, paired case by case.

REF_A is the older version (the baseline), REF_B the newer one; every difference is B minus A.
The comparison is the 2×2 table of their outcomes on the same cases (``oloproof.pairs``): b cases
only B gets right, c cases only A gets right, the difference (b − c)/n with the Fay–Lumbard exact
interval (and Tango's, labelled approximate), McNemar's exact p, the smallest difference the set
resolves, and the ids of the dev cases that regressed and improved. On a set that declares groups
the interval is the clustered one (``oloproof.stats.clustered_paired``, approximate), which decides
only under ``allow_approximate_methods`` and on 30 groups or more (MANUAL_REVIEW otherwise). Runs
are dev-set runs only (holdout reads are never stored as runs, so no holdout case id can appear
here).

With ``max_drop`` (or ``min_gain``) it also decides, exactly as a ``baseline``/``max_drop`` rule of
the gate does: PASS when the exact interval's lower bound is at least −max_drop (at least
min_gain), FAIL when even its upper bound is below that, INSUFFICIENT_EVIDENCE otherwise or when
a run failed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from oloproof.decide import INVALIDATING, side_of, unfit_for_review
from oloproof.errors import UsageError
from oloproof.identity import checker_identity
from oloproof.pairs import (
    Pairing,
    case_groups,
    caveat,
    grouped_review,
    judge_graded,
    judge_review,
    pair,
    paired_criterion,
    run_outcomes,
)
from oloproof.runstore import RefScope, resolve_ref
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.policy import Policy
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.testset import TestSet

COMPARE_SCHEMA = "oloproof.compare/1"


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    """The verdict asked for with ``--max-drop`` or ``--min-gain``."""

    kind: Literal["max_drop", "min_gain"]
    threshold: float
    verdict: Verdict
    reasons: tuple[str, ...]
    sentence: str
    caveats: tuple[str, ...] = ()  # each its own sentence (the judge's, a measured error above the nominal)


@dataclass(frozen=True, slots=True, kw_only=True)
class Comparison:
    release: str  # release.yaml as shown
    criterion: str
    confidence: float
    testset_path: str
    testset_digest: str
    old_ref: str
    new_ref: str
    old: RunRecord
    new: RunRecord
    ids: tuple[str, ...]  # dev case ids, in the set's order
    old_passes: int  # among the cases each run answered
    new_passes: int
    pairing: Pairing
    reasons: tuple[str, ...]
    notes: tuple[str, ...]
    decision: Decision | None

    @property
    def exit_code(self) -> int:
        return 0 if self.decision is None else int(self.decision.verdict.exit_code)

    def regressed_ids(self) -> list[str]:
        return [self.ids[i] for i in self.pairing.regressed]

    def improved_ids(self) -> list[str]:
        return [self.ids[i] for i in self.pairing.improved]

    def to_json(self) -> dict[str, Any]:
        def run(ref: str, record: RunRecord, passes: int) -> dict[str, Any]:
            return {
                "ref": ref,
                "run_id": record.run_id,
                "version": record.version,
                "status": record.status,
                "failure": record.failure,
                "imported": record.imported,
                "started_at": record.started_at,
                "n_outputs": record.n_outputs,
                "passes": passes,
                "score": passes / len(self.ids),
                "checker": record.checker,
            }

        decision = self.decision
        return {
            "schema": COMPARE_SCHEMA,
            "exit_code": self.exit_code,
            "config": self.release,
            "criterion": self.criterion,
            "confidence": self.confidence,
            "set": {"kind": "dev", "path": self.testset_path, "digest": self.testset_digest, "n": len(self.ids)},
            "a": run(self.old_ref, self.old, self.old_passes),
            "b": run(self.new_ref, self.new, self.new_passes),
            "paired": self.pairing.to_json(self.ids),
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


def compare_runs(
    release: Release,
    testset: TestSet,
    store: RunStore,
    old_ref: str,
    new_ref: str,
    *,
    criterion: str | None = None,
    max_drop: float | None = None,
    min_gain: float | None = None,
) -> Comparison:
    """Pair the runs ``old_ref`` (A) and ``new_ref`` (B) on ``testset`` (the dev set, as loaded by
    the caller). Refs resolve as everywhere (``oloproof.runstore``)."""
    if max_drop is not None and min_gain is not None:
        raise UsageError("--max-drop and --min-gain ask two different questions; give one")
    name = paired_criterion(release, criterion, what="compare")
    old, new = run_pair(testset, store, old_ref, new_ref)
    old_values, old_reasons = run_outcomes(release, testset, store, old, name, ref=old_ref)
    new_values, new_reasons = run_outcomes(release, testset, store, new, name, ref=new_ref)
    judged = judge_graded(release, name)
    paired = pair(
        old_values, new_values, confidence=release.policy.confidence, groups=case_groups(testset), judged=judged
    )
    reasons = list(dict.fromkeys((*old_reasons, *new_reasons, *(["judge_graded"] if judged else []))))
    if paired.missing:
        reasons.insert(0, "missing_outputs")
    notes = run_notes(old_ref, old, new_ref, new)
    decision = None
    if max_drop is not None:
        decision = _decide("max_drop", -max_drop, max_drop, paired, reasons, release.policy)
    elif min_gain is not None:
        decision = _decide("min_gain", min_gain, min_gain, paired, reasons, release.policy)
    return Comparison(
        release=release.path,
        criterion=name,
        confidence=release.policy.confidence,
        testset_path=testset.path,
        testset_digest=testset.digest,
        old_ref=old_ref,
        new_ref=new_ref,
        old=old,
        new=new,
        ids=tuple(case.id for case in testset.cases),
        old_passes=sum(1 for value in old_values if value),
        new_passes=sum(1 for value in new_values if value),
        pairing=paired,
        reasons=tuple(reasons),
        notes=notes,
        decision=decision,
    )


def run_pair(testset: TestSet, store: RunStore, old_ref: str, new_ref: str) -> tuple[RunRecord, RunRecord]:
    """The two stored runs ``old_ref`` (A) and ``new_ref`` (B): two different runs made on one test set."""
    records = [record for record in store.records() if record.kind == "system"]  # one scan of the store
    scope = RefScope.of(testset)  # refs count the runs on this dev set
    old, new = (resolve_ref(ref, records, refused=store.refused, scope=scope) for ref in (old_ref, new_ref))
    if old.run_id == new.run_id:
        raise UsageError(f"'{old_ref}' and '{new_ref}' are the same run ({old.run_id}): compare two runs")
    if old.testset_digest != new.testset_digest:
        raise UsageError(
            f"'{old_ref}' (run {old.run_id}) and '{new_ref}' (run {new.run_id}) were made on different test sets "
            f"({old.testset_digest[:19]}… and {new.testset_digest[:19]}…): a paired comparison needs both versions "
            "on the same cases"
        )
    return old, new


def run_notes(old_ref: str, old: RunRecord, new_ref: str, new: RunRecord) -> tuple[str, ...]:
    notes: list[str] = []
    if old.version == new.version:
        notes.append(
            f"both runs are of version {old.version}: the difference measures run-to-run variation (a re-measurement), "
            "not a change of version"
        )
    if old.checker != new.checker:
        notes.append(
            f"the checker changed between the two runs (oloproof {old.checker.get('version')} "
            f"{old.checker.get('source_digest', '')[:19]}… then, {new.checker.get('version')} "
            f"{new.checker.get('source_digest', '')[:19]}… now): part of a difference may be the measuring apparatus"
        )
    for ref, record in ((old_ref, old), (new_ref, new)):
        if record.failure is not None:
            notes.append(
                f"'{ref}' (run {record.run_id}) failed: {record.failure}; its missing outputs count against it"
            )
        if record.imported:
            notes.append(f"'{ref}' (run {record.run_id}) holds outputs imported from {record.imported_from}")
    return tuple(notes)


def _decide(
    kind: Literal["max_drop", "min_gain"],
    floor: float,
    threshold: float,
    paired: Pairing,
    reasons: list[str],
    policy: Policy,
) -> Decision:
    interval = paired.decisive
    said = caveat(paired, policy.confidence)
    wanted = f"a drop of at most {threshold:g}" if kind == "max_drop" else f"a gain of at least {threshold:g}"
    invalid = [code for code in reasons if code in INVALIDATING]
    if invalid:
        return Decision(
            kind=kind,
            threshold=threshold,
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=tuple(reasons),
            sentence=f"the evidence is invalid ({', '.join(invalid)}): it cannot show {wanted}",
            caveats=(said,) if paired.judged else (),
        )
    review = judge_review(paired, reasons=reasons, unfit_for_review=unfit_for_review) or grouped_review(
        paired, allow_approximate=policy.allow_approximate_methods, reasons=reasons
    )
    if review is not None:
        verdict, codes, why = review
        caveats = (said,) if paired.judged else ()
        return Decision(
            kind=kind, threshold=threshold, verdict=verdict, reasons=tuple(codes), sentence=why, caveats=caveats
        )
    side = side_of("min", floor, interval)  # both questions are "is B − A at least the floor?"
    if side == "clears":
        verdict, code = Verdict.PASS, "interval_clears_threshold"
        sentence = f"the lower bound {interval.low:+.3f} shows {wanted}"
    elif side == "misses":
        verdict, code = Verdict.FAIL, "interval_misses_threshold"
        sentence = f"even the upper bound {interval.high:+.3f} falls short of {wanted}"
    else:
        verdict, code = Verdict.INSUFFICIENT_EVIDENCE, "interval_straddles_threshold"
        resolution = "" if paired.resolution is None else f" (this set resolves about {paired.resolution:.3f})"
        sentence = (
            f"the interval [{interval.low:+.3f}, {interval.high:+.3f}] contains {floor:+g}: it cannot tell whether "
            f"the change is {wanted}{resolution}; add {'groups' if paired.clustered else 'cases'} to settle it"
        )
    caveats = (said,) if said and verdict is Verdict.PASS else ()
    return Decision(
        kind=kind, threshold=threshold, verdict=verdict, reasons=(code, *reasons), sentence=sentence, caveats=caveats
    )
