"""What the gate decides, as records every renderer reads: one rule's result, one check's report,
and the gate's whole result. Renderers (``oloproof.report``) import this, never the gate itself."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from oloproof.config import Release
from oloproof.evaluators.base import CriterionOutcome
from oloproof.identity import CheckerIdentity
from oloproof.inert import inert
from oloproof.policy import Rule
from oloproof.runstore import RunRecord
from oloproof.stats.interval import Interval, interval_json
from oloproof.testset import TestSet
from oloproof.verdicts import Verdict, worst

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
class RuleResult:
    rule_id: str
    criterion: str
    kind: str  # min | max | regression | precondition
    threshold: float | None
    verdict: Verdict
    reasons: tuple[str, ...]
    sentence: str  # one sentence a person can act on
    interval: Interval | None
    n: int  # cases the interval counts (missing included)
    passes: float | None  # passes (or sum of scores) among answered cases
    missing: int
    resolution: float | None  # smallest distance from the threshold this set can resolve
    source: str  # file where the rule is declared
    line: int | None
    details: dict[str, Any] = field(default_factory=dict)
    # What the interval cannot promise where the rule is decided on it (an assumption, a measured
    # error above the nominal one): each a sentence, shown under the verdict table once.
    caveats: tuple[str, ...] = ()
    # Issue 18 §6-7 (``oloproof.rulemarks``): shown, never changes the gate's verdict; decided on an
    # approximate interval by the rule's own ``approximate: allow``; a declared transform a person
    # accepted ({transform, by, reason}: untrusted text, every renderer makes it inert).
    advisory: bool = False
    approximate_permission: bool = False
    accepted: dict[str, str] | None = None

    @property
    def marks(self) -> tuple[str, ...]:
        """What every report says beside this rule's verdict (plain text; renderers escape it)."""
        found: list[str] = []
        if self.advisory:
            found.append("advisory: shown, never changes the gate's verdict or exit code")
        if self.approximate_permission:
            found.append("approximate: allow: decided on an approximate interval by this rule's own permission")
        if self.accepted is not None:
            found.append(accepted_text(self.accepted))
        return tuple(found)

    @property
    def full_sentence(self) -> str:
        """The sentence with its caveats, for a renderer that shows one text per rule."""
        return " ".join((self.sentence, *(f"[{mark}]" for mark in self.marks), *self.caveats))

    @classmethod
    def undecided(
        cls,
        rule: Rule,
        verdict: Verdict,
        reasons: tuple[str, ...],
        *,
        n: int,
        sentence: str,
        missing: int = 0,
        interval: Interval | None = None,
        details: dict[str, Any] | None = None,
    ) -> RuleResult:
        """A rule that gets no verdict from an interval (blocked, invalid, no method)."""
        return cls(
            rule_id=rule.id,
            criterion=rule.criterion,
            kind=rule.kind,
            threshold=rule.threshold,
            verdict=verdict,
            reasons=reasons,
            sentence=sentence,
            interval=interval,
            n=n,
            passes=None,
            missing=missing,
            resolution=None,
            source=rule.source,
            line=rule.line,
            details=details or {},
        )

    def to_json(self) -> dict[str, Any]:
        """This rule's object in every JSON report (``rules[]`` of ``oloproof.gate/1``, ``rule`` of seeds)."""
        return {
            "id": self.rule_id,
            "criterion": self.criterion,
            "kind": self.kind,
            "threshold": self.threshold,
            "verdict": self.verdict.value,
            "reasons": list(self.reasons),
            "sentence": self.full_sentence,
            "caveats": list(self.caveats),
            "estimate": self.interval.estimate if self.interval else None,
            "interval": interval_json(self.interval),
            "n": self.n,
            "passes": self.passes,
            "missing": self.missing,
            "resolution": self.resolution,
            "source": self.source,
            "line": self.line,
            "details": self.details,
            "advisory": self.advisory,
            "approximate_permission": self.approximate_permission,
            "accepted": self.accepted,
        }


def shared_caveats(rules: tuple[RuleResult, ...] | list[RuleResult]) -> list[tuple[list[str], str]]:
    """Each distinct caveat of ``rules`` once, with the ids of the rules it applies to, in rule order."""
    seen: dict[str, list[str]] = {}
    for rule in rules:
        for text in rule.caveats:
            ids = seen.setdefault(text, [])
            if rule.rule_id not in ids:
                ids.append(rule.rule_id)
    return [(ids, text) for text, ids in seen.items()]


def accepted_text(accepted: Mapping[str, object]) -> str:
    """Who accepted a declared transform (or a latency rule's self-reported figures) and why, made
    inert (people's text: it never acts)."""
    shown = {key: inert(accepted.get(key, "")) for key in ("transform", "by", "reason")}
    if not shown["transform"]:
        return f"self-reported latency_ms accepted by {shown['by']}: {shown['reason']}"
    return f"transform '{shown['transform']}' accepted by {shown['by']}: {shown['reason']}"


def gate_verdict(rules: tuple[RuleResult, ...], checks: tuple[CheckReport, ...]) -> Verdict:
    """The gate's verdict: the worst of its deciding rules (advisory ones are shown, never counted)
    and of its checks; a check that blocks the gate (leakage, holdout tampering) blocks it whatever
    its rules are."""
    verdicts = [rule.verdict for rule in rules if not rule.advisory]
    verdicts += [report.verdict for report in checks if report.verdict is not None]
    verdicts += [Verdict.BLOCKED for report in checks if report.blocks]
    return worst(verdicts)


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckReport:
    """What one check says about this gate, for every renderer."""

    name: str  # stable key: "leakage", "holdout", ...
    title: str  # heading in reports
    status: str  # one short phrase, e.g. "clean (350 cases, 5000 rows)"
    verdict: Verdict | None = None  # a row of its own in the verdict table, when it decides something
    reasons: tuple[str, ...] = ()
    sentence: str = ""
    blocks: bool = False  # the gate is BLOCKED and no rule is decided
    invalidates: tuple[str, ...] = ()  # reason codes added to every rule's evidence
    lines: tuple[str, ...] = ()  # further detail lines for reports
    data: dict[str, Any] = field(default_factory=dict)  # for the JSON report
    source: str | None = None  # config file and line the check was declared at (annotations)
    line: int | None = None
    limitations: tuple[str, ...] = ()  # what this check's evidence cannot tell (joins the gate's)


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
    # Why the run that decides is the one it is: a stored run of this version not reused (its
    # system files changed, it was imported, a pull request added it), said in every report.
    run_notes: tuple[str, ...] = ()

    @property
    def cannot_tell(self) -> tuple[str, ...]:
        """Everything this evidence cannot tell: the gate's ``limitations`` and each check's, once each."""
        items = [*self.limitations, *(item for report in self.checks for item in report.limitations)]
        return tuple(dict.fromkeys(items))

    @property
    def specific_limitations(self) -> tuple[str, ...]:
        """``cannot_tell`` without the sentences every gate carries: what the checks this gate ran
        cannot tell (the terminal shows these)."""
        return tuple(item for item in self.cannot_tell if item not in LIMITATIONS)

    @property
    def version(self) -> str:
        """The system version the verdict is about: the gated run's (``--run`` may name another
        version than release.yaml declares; every renderer says so)."""
        return self.run.version if self.run is not None else self.release.system.version

    @property
    def version_differs(self) -> bool:
        return self.version != self.release.system.version
