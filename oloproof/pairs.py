"""Two versions' outcomes on the same cases: the paired table, its intervals, the cases that moved.

One computation for the gate's regression guard (``decide.decide_regression``), ``oloproof
compare`` and ``oloproof gap`` (STATISTICS.md §4), so the three never disagree about a pair.

Missing outputs never help the newer version: the low end of every interval comes from the table
that counts a missing output against it (``impute="conservative"``), the high end from the table
that counts it in its favour (``impute="optimistic"``), so missing outputs alone can neither PASS
nor FAIL a comparison. With no missing output the two tables are one. The estimate, McNemar's p
and the lists of cases that regressed or improved use the cases both versions answered.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from oloproof.errors import UsageError
from oloproof.evaluators.base import EvalContext
from oloproof.evaluators.registry import kind_of
from oloproof.inert import inert
from oloproof.measures.registry import measure_of
from oloproof.stats.caveats import JUDGE_GRADED, clustered_paired_caveat
from oloproof.stats.clustered_paired import ClusteredPaired, clustered_paired_difference
from oloproof.stats.interval import Interval, interval_json
from oloproof.stats.paired import PairedCounts, mcnemar_exact_p, paired_counts, paired_difference
from oloproof.stats.resolution import paired_mdd
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.result import RuleResult
    from oloproof.runstore import RunRecord, RunStore
    from oloproof.testset import TestSet

# The discordance floor of the resolution: an all-agreeing pair still gets a finite answer.
MIN_DISCORDANCE = 0.01


@dataclass(frozen=True, slots=True, kw_only=True)
class Pairing:
    """The paired comparison of an old and a new version on ``n`` shared cases (new minus old).

    ``b``/``c`` are the conservative table's (``b``: only the new version right, ``c``: only the
    old one); ``regressed``/``improved`` are the indices of answered cases that moved (old right
    and new wrong / the reverse); ``missing`` the indices where either version has no output.
    """

    n: int
    low_table: PairedCounts
    high_table: PairedCounts
    exact: Interval  # Fay–Lumbard melded (exact)
    tango: Interval  # Tango's score interval (approximate)
    mcnemar_p: float | None  # exact two-sided, on the answered cases; None when none were answered
    resolution: float | None  # the smallest paired difference this set resolves (about 80% power)
    discordance: float  # ψ, the share of cases on which the two versions disagree
    regressed: tuple[int, ...]
    improved: tuple[int, ...]
    missing: tuple[int, ...]
    # The set declares groups: the clustered interval (approximate) is the one that decides.
    clustered: ClusteredPaired | None = None
    # Both versions were graded by a judge: every interval is judge-graded and decides nothing.
    judged: bool = False

    @property
    def decisive(self) -> Interval:
        """The interval a decision reads: exact (melded), or clustered when the set declares groups."""
        return self.exact if self.clustered is None else self.clustered.interval

    @property
    def approximate(self) -> Interval:
        """The interval a MOVER combination reads: Tango's, or clustered when the set declares groups."""
        return self.tango if self.clustered is None else self.clustered.interval

    @property
    def b(self) -> int:
        return self.low_table.b

    @property
    def c(self) -> int:
        return self.low_table.c

    @property
    def discordant(self) -> int:
        return self.low_table.discordant

    @property
    def estimate(self) -> float:
        return self.exact.estimate

    def interval(self, *, exact: bool = True) -> Interval:
        return self.exact if exact else self.tango

    def intervals_json(self) -> dict[str, Any]:
        """``exact`` (null on a grouped set: the case-level ones ignore the groups) and ``approximate``."""
        return {
            "exact": interval_json(self.exact) if self.clustered is None and not self.judged else None,
            "approximate": interval_json(self.approximate),
        }

    def to_json(self, ids: Sequence[str] | None = None) -> dict[str, Any]:
        """The pair as data; with ``ids`` (the cases' ids, dev set only) the cases that moved."""
        data: dict[str, Any] = {
            "n": self.n,
            "b": self.b,
            "c": self.c,
            "discordant": self.discordant,
            "difference": self.estimate,
            **self.intervals_json(),
            "clustered": None
            if self.clustered is None
            else {
                "groups": self.clustered.n_clusters,
                "groups_by_size": self.clustered.by_size,
                "se": self.clustered.se if math.isfinite(self.clustered.se) else None,
                "df": self.clustered.df,
                "n_eff": self.clustered.n_eff,
                "few_clusters": self.clustered.few_clusters,
            },
            "judge_graded": self.judged,
            "decides": not self.judged,
            "mcnemar_exact_p": self.mcnemar_p,
            "discordance": self.discordance,
            "resolution": self.resolution,
            "missing": len(self.missing),
            "regressed": len(self.regressed),
            "improved": len(self.improved),
        }
        if ids is not None:
            data["regressed_ids"] = [ids[i] for i in self.regressed]
            data["improved_ids"] = [ids[i] for i in self.improved]
            data["missing_ids"] = [ids[i] for i in self.missing]
        return data


def as_outcomes(values: Any) -> list[bool | None]:
    """Binary criterion values (1/0, NaN or None = no usable output) as pass/fail/None."""
    out: list[bool | None] = []
    for value in values:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            out.append(None)
        else:
            number = float(value)
            out.append(None if math.isnan(number) else number >= 0.5)
    return out


def case_groups(testset: TestSet) -> list[str] | None:
    """Each case's group (a case without one is a group of its own), or None when none declares one."""
    if not testset.has_groups:
        return None
    return [case.group if case.group is not None else f"\0{case.id}" for case in testset.cases]


def pair(
    old: Sequence[bool | None],
    new: Sequence[bool | None],
    *,
    confidence: float,
    groups: Sequence[str | int] | None = None,
    judged: bool = False,
) -> Pairing:
    """Pair two versions' outcomes case by case (``old[i]`` and ``new[i]`` are the same case).

    With ``groups`` (one label per case, from a set that declares groups) the decisive interval is
    the clustered one (``oloproof.stats.clustered_paired``, approximate) and the resolution counts
    the design effect. ``judged`` (both versions graded by a judge): every interval is relabelled
    judge-graded and approximate, and ``judge_review`` keeps it from deciding."""
    low_table = paired_counts(old, new, impute="conservative")
    high_table = paired_counts(old, new, impute="optimistic")
    n = low_table.n
    if n == 0:
        raise ValueError("a paired comparison needs at least one case")
    regressed = tuple(i for i, (o, w) in enumerate(zip(old, new, strict=True)) if o is True and w is False)
    improved = tuple(i for i, (o, w) in enumerate(zip(old, new, strict=True)) if o is False and w is True)
    missing = tuple(i for i, (o, w) in enumerate(zip(old, new, strict=True)) if o is None or w is None)
    answered = n - len(missing)
    point = (len(improved) - len(regressed)) / answered if answered else 0.0

    def combined(method: str) -> Interval:
        low = paired_difference(low_table.b, low_table.c, n, confidence=confidence, method=method)  # type: ignore[arg-type]
        high = paired_difference(high_table.b, high_table.c, n, confidence=confidence, method=method)  # type: ignore[arg-type]
        return Interval(
            estimate=min(max(point, low.low), high.high),
            low=low.low,
            high=high.high,
            level=low.level,
            method=f"{JUDGE_GRADED} {low.method}" if judged else low.method,
            approximate=low.approximate or judged,
        )

    discordance = low_table.discordant / n
    exact = combined("melded")
    clustered = None
    effective = n
    if groups is not None:
        clustered = clustered_paired_difference(old, new, groups, confidence=confidence, floor=exact)
        if judged:
            relabelled = replace(clustered.interval, method=f"{JUDGE_GRADED} {clustered.interval.method}")
            clustered = replace(clustered, interval=relabelled)
        effective = max(1, int(clustered.n_eff))
    return Pairing(
        n=n,
        low_table=low_table,
        high_table=high_table,
        exact=exact,
        tango=combined("tango"),
        mcnemar_p=mcnemar_exact_p(len(improved), len(regressed)) if answered else None,
        resolution=_resolution(effective, discordance, confidence),
        discordance=discordance,
        regressed=regressed,
        improved=improved,
        missing=missing,
        clustered=clustered,
        judged=judged,
    )


def _resolution(n: int, discordance: float, confidence: float) -> float | None:
    """The paired minimum detectable difference, or None when it is 1 or more (a set too small to
    resolve any difference: two cases "resolve" 280 points otherwise)."""
    mdd = paired_mdd(n, psi=max(discordance, MIN_DISCORDANCE), confidence=confidence)
    return mdd if mdd < 1.0 else None


# Why a paired comparison on a judge criterion decides nothing (docs/statistics.md, "Judges").
JUDGE_PAIRED_CAVEAT = (
    "Both versions were graded by the judge, not by people: a judge's errors shrink the differences between "
    "versions (one that passes every success and a fifth of the failures shows only four fifths of a drop), and no "
    "paired interval that carries them is implemented, so the judge-graded interval is shown and decides nothing: "
    "gate on human-graded outcomes or review the change by hand."
)


def caveat(paired: Pairing, confidence: float) -> str:
    """The caveat a paired comparison carries ("" when none): the judge's, or the clustered interval's."""
    if paired.judged:
        return JUDGE_PAIRED_CAVEAT
    return clustered_paired_caveat(confidence) if paired.clustered is not None else ""


# Why a recipe's seeds interval on a judge criterion decides nothing (the same reason as a pair's).
JUDGE_SEEDS_CAVEAT = (
    "Every checkpoint was graded by the judge, not by people: the seeds interval does not carry the judge's errors "
    "(which may differ from checkpoint to checkpoint, and bias the rate), so it is shown and decides nothing: judge "
    "the recipe on human-graded outcomes or review it by hand."
)


def judge_only(result: RuleResult, unfit_for_review: Callable[[Sequence[str]], str]) -> RuleResult:
    """A rule read from a judge's verdicts alone (a recipe's seeds): never PASS or FAIL.

    A PASS or FAIL becomes MANUAL_REVIEW (INSUFFICIENT_EVIDENCE where the evidence is invalid or
    incomplete, as ``unfit_for_review`` says); every verdict gains ``judge_graded`` and the caveat."""
    decided = ("interval_clears_threshold", "interval_misses_threshold")
    codes = [code for code in dict.fromkeys([*result.reasons, "judge_graded"]) if code not in decided]
    verdict, sentence = result.verdict, result.sentence
    if verdict in (Verdict.PASS, Verdict.FAIL):
        unfit = unfit_for_review(codes)
        verdict = Verdict.INSUFFICIENT_EVIDENCE if unfit else Verdict.MANUAL_REVIEW
        sentence += " It is not decided: these are the judge's verdicts, not people's" + (
            f", and {unfit}." if unfit else "; review the recipe by hand."
        )
    return replace(
        result, verdict=verdict, reasons=tuple(codes), sentence=sentence, caveats=(*result.caveats, JUDGE_SEEDS_CAVEAT)
    )


def judge_review(
    paired: Pairing, *, reasons: list[str], unfit_for_review: Callable[[Sequence[str]], str]
) -> tuple[Verdict, list[str], str] | None:
    """Why a pair graded by a judge is not decided (None when it is not judge-graded): MANUAL_REVIEW,
    or INSUFFICIENT_EVIDENCE where the evidence is invalid or incomplete anyway."""
    if not paired.judged:
        return None
    codes = list(dict.fromkeys([*reasons, "judge_graded"]))
    unfit = unfit_for_review(codes)
    why = "the comparison is of the judge's verdicts on both versions, which cannot decide it"
    if unfit:
        return Verdict.INSUFFICIENT_EVIDENCE, codes, f"{why}, and {unfit}, so it is not decided"
    return Verdict.MANUAL_REVIEW, codes, f"{why}: review the change by hand or gate on human-graded outcomes"


def grouped_review(
    paired: Pairing, *, allow_approximate: bool, reasons: list[str]
) -> tuple[Verdict, list[str], str] | None:
    """Why a grouped pair cannot be decided on its interval (None when it can, or is not grouped).

    The clustered interval is approximate: it decides only under ``allow_approximate_methods``
    (MANUAL_REVIEW otherwise) and only on ``MIN_CLUSTERS`` groups or more (``few_clusters``), as
    the clustered pass-rate rule does; a manual review needs every output (INSUFFICIENT_EVIDENCE).
    """
    from oloproof.stats.clustered import few_groups_text  # lazy: start-up

    grouped = paired.clustered
    if grouped is None:
        return None
    codes = [*reasons, *(["few_clusters"] if grouped.few_clusters else [])]
    if allow_approximate and not grouped.few_clusters:
        reasons[:] = codes
        return None
    if not allow_approximate:
        codes.append("approximate_method")
    if "missing_outputs" in codes:
        return (
            Verdict.INSUFFICIENT_EVIDENCE,
            codes,
            "the evidence is incomplete (missing_outputs): a manual review needs every output, so the rule is not "
            "decided; make the system answer every case",
        )
    if not allow_approximate:
        return (
            Verdict.MANUAL_REVIEW,
            codes,
            f"the test set declares groups ({grouped.n_clusters}), so only an approximate (clustered) paired "
            "interval exists: set allow_approximate_methods: true in the policy to let it decide, or review by hand",
        )
    return (
        Verdict.MANUAL_REVIEW,
        codes,
        f"{few_groups_text(grouped.n_clusters, grouped.by_size)}, the clustered paired interval is not trustworthy: "
        "review by hand or add groups",
    )


def listed(ids: Sequence[str], *, limit: int = 10) -> str:
    """``a, b, c`` or ``a, b, … and N more``."""
    shown = ", ".join(ids[:limit])
    return shown if len(ids) <= limit else f"{shown} and {len(ids) - limit} more"


def paired_criterion(release: Release, criterion: str | None, *, what: str) -> str:
    """The criterion a paired comparison reads: ``criterion`` if given, else the one plain
    criterion of release.yaml (or the first regression guard's, or the first rule's). It must be a
    pass/fail criterion of an evaluator that reads the run's own outputs."""
    plain = [e.criterion for e in release.evaluators if not kind_of(e).needs_variants]
    if criterion is None:
        # (an auc or mae guard reads no evaluator: compare does not read built-in measures)
        rules = release.policy.rules
        guards = [rule.criterion for rule in rules if rule.kind == "regression" and rule.criterion in plain]
        ruled = [rule.criterion for rule in release.policy.rules if rule.criterion in plain]
        candidates = [plain[0]] if len(plain) == 1 else guards or ruled or plain
        if not candidates:
            raise UsageError(f"{release.path}: declares no evaluator whose criterion {what} could compare")
        criterion = candidates[0]
    evaluators = release.criteria()
    if criterion not in evaluators:
        raise UsageError(
            f"criterion '{criterion}' is not declared in {release.path} (declared: {', '.join(evaluators) or 'none'})"
        )
    if criterion not in plain:
        raise UsageError(
            f"criterion '{criterion}' compares transformed copies of the cases (a metamorphic relation); {what} "
            f"compares the plain outputs of two runs: name another with --criterion ({', '.join(plain) or 'none'})"
        )
    return criterion


def judge_graded(release: Release, criterion: str) -> bool:
    """Whether ``criterion``'s outcomes are a judge's verdicts (not people's, not a fixed check's)."""
    return kind_of(release.criteria()[criterion]).judged


def run_outcomes(
    release: Release, testset: TestSet, store: RunStore, record: RunRecord, criterion: str, *, ref: str
) -> tuple[list[bool | None], tuple[str, ...]]:
    """Score the stored run ``record`` (named ``ref``) on ``testset`` under ``criterion``: one
    pass/fail/None per case in the set's order, and the reason codes of the evaluation (a failed
    run adds ``run_failed``). The run must have been made on this very set."""
    if record.testset_digest != testset.digest:
        raise UsageError(
            f"ref '{ref}' is run {record.run_id} (version {record.version}), made on test set "
            f"{record.testset_digest[:19]}…, but {testset.path} is now {testset.digest[:19]}…: a paired comparison "
            "needs both runs on the same cases; re-run that version on this set"
        )
    evaluator = release.criteria()[criterion]
    ctx = EvalContext(
        testset=testset,
        outputs=store.outputs(record),
        base_dir=release.base_dir,
        policy=release.policy,
        quiet=True,
        outputs_of=f" of run {record.run_id} (version {inert(record.version)})",
    )
    outcome = evaluator.evaluate(ctx)
    if not measure_of(outcome.kind).paired:
        raise UsageError(
            f"criterion '{criterion}' is a graded score; paired comparisons are implemented for pass/fail criteria "
            "only (no paired interval for scores yet)"
        )
    reasons = outcome.reasons + (("run_failed",) if record.failure is not None else ())
    return as_outcomes(outcome.values), tuple(dict.fromkeys(reasons))
