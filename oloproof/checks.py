"""Gate checks: the capabilities that plug into ``oloproof gate`` besides the rules.

Each capability (leakage, holdout, seeds) has a ``check`` module that exposes a ``GateCheck``; the
gate, the composition root, lists them (``oloproof.gate.registry``) and calls each at two points:

- ``precheck``: before the system runs. A check may BLOCK the gate (a precondition is not
  met), invalidate the evidence of every rule (reason codes such as ``leaked_cases``), or
  only report its status.
- ``rule_results``: after the rules are decided, a check may add rows of its own (e.g. the
  recipe rule of the seeds check), which join the gate's verdict.
- ``final_report``: then, a check may complete its precheck report with what it learnt deciding
  them (which runs it made or reused, what its verdict cannot tell).
- ``variants``, ``rule_note``, ``limitations``: a check that gives evaluators more outputs to read
  (the metamorphic check's transformed copies), adds a clause to a rule's sentence, or says what
  the gate's evidence cannot tell.

Adding a capability is adding its package and one line in ``oloproof.gate.registry()``; this
module never imports a capability.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from oloproof.config import Release
from oloproof.evaluators.base import CriterionOutcome, Variant
from oloproof.policy import Rule
from oloproof.result import CheckReport, RuleResult
from oloproof.runstore import RunStore
from oloproof.testset import TestSet


@dataclass(frozen=True, slots=True, kw_only=True)
class GateContext:
    release: Release
    testset: TestSet
    store: RunStore
    quiet: bool = True
    rerun: bool = False  # run every declared command again, even where a stored run could stand in
    on_batch: Callable[[int, int], None] | None = None  # progress of a run a check makes


class GateCheck:
    """Base with no-op hooks; a check overrides what it needs."""

    name = ""

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        return None

    def rule_results(self, ctx: GateContext, rules: tuple[RuleResult, ...]) -> list[RuleResult]:
        return []

    def declared_rules(self, ctx: GateContext) -> list[Rule]:
        """The rules ``rule_results`` would decide: shown BLOCKED when a check blocks the gate."""
        return []

    def final_report(self, ctx: GateContext, report: CheckReport) -> CheckReport:
        return report

    def variants(
        self, ctx: GateContext, *, version: str, rerun: bool, imported: bool
    ) -> Callable[[str], Variant] | None:
        """Outputs on transformed copies, for evaluators that compare with them (None: this check has none)."""
        return None

    def rule_note(self, outcome: CriterionOutcome) -> str:
        """A clause for the sentence of a rule decided on ``outcome`` ("" for none)."""
        return ""

    def limitations(self, ctx: GateContext) -> tuple[str, ...]:
        """What the gate's evidence cannot tell because of (or despite) this check, once it ran."""
        return ()
