"""The metamorphic capability in the gate: the transformed copies a ``metamorphic_relation``
evaluator reads, the note a flip-rate rule carries, and what the transforms tried (or not) cannot
tell. One ``GateCheck`` among the others (``oloproof.gate.registry``), so the gate has no
hand-written metamorphic hooks."""

from __future__ import annotations

from collections.abc import Callable

from oloproof.checks import GateCheck, GateContext
from oloproof.evaluators.base import CriterionOutcome, Variant
from oloproof.evaluators.metamorphic import rule_note
from oloproof.metamorphic.variants import VariantProvider, limitations


class MetamorphicCheck(GateCheck):
    name = "metamorphic"

    def __init__(self) -> None:
        self._variants: VariantProvider | None = None

    def variants(
        self, ctx: GateContext, *, version: str, rerun: bool, imported: bool
    ) -> Callable[[str], Variant] | None:
        """The declared transforms' copies, computed when an evaluator first asks (None: none declared)."""
        if ctx.release.metamorphic is None:
            return None
        self._variants = VariantProvider(
            ctx.release,
            ctx.testset,
            ctx.store,
            version=version,
            rerun=rerun,
            on_batch=ctx.on_batch,
            imported=imported,
        )
        return self._variants

    def rule_note(self, outcome: CriterionOutcome) -> str:
        return rule_note(outcome)

    def limitations(self, ctx: GateContext) -> tuple[str, ...]:
        """Of the declared transforms, only those whose copies the system answered in this gate are
        said to have been tried."""
        if ctx.release.metamorphic is None:
            return ()
        tried = self._variants.tried() if self._variants is not None else ()
        not_run = tuple(name for name in ctx.release.metamorphic.names() if name not in tried)
        return limitations(tried, not_run=not_run)
