"""Gate checks: the capabilities that plug into ``oloproof gate`` besides the rules.

Each check (leakage, holdout, and later metamorphic and seeds) is one module that exposes a
``GateCheck``; the gate calls every registered check at two points:

- ``precheck``: before the system runs. A check may BLOCK the gate (a precondition is not
  met), invalidate the evidence of every rule (reason codes such as ``leaked_cases``), or
  only report its status.
- ``rule_results``: after the rules are decided, a check may add rows of its own (e.g. the
  recipe rule of the seeds check), which join the gate's verdict.

Adding a capability is adding a module and one line in ``registry()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from oloproof.verdicts import RuleResult, Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.runstore import RunStore
    from oloproof.testset import TestSet


@dataclass(frozen=True, slots=True, kw_only=True)
class GateContext:
    release: Release
    testset: TestSet
    store: RunStore
    quiet: bool = True


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


class GateCheck:
    """Base with no-op hooks; a check overrides what it needs."""

    name = ""

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        return None

    def rule_results(self, ctx: GateContext, rules: tuple[RuleResult, ...]) -> list[RuleResult]:
        return []


def registry() -> dict[str, GateCheck]:
    """Every gate check, by name, in the order they run. Imports stay lazy for start-up time."""
    from oloproof.holdout import HoldoutCheck
    from oloproof.leakage import LeakageCheck
    from oloproof.seeds import SeedsCheck

    checks: dict[str, GateCheck] = {"leakage": LeakageCheck(), "holdout": HoldoutCheck(), "seeds": SeedsCheck()}
    return checks
