"""The gate's view of the holdout: its budget and log, reported; never a block (a read is a
separate, explicit act)."""

from __future__ import annotations

from oloproof.checks import GateCheck, GateContext
from oloproof.errors import OloproofError
from oloproof.holdout.budget import budget_status, other_reads, refusal
from oloproof.holdout.cases import open_log
from oloproof.holdout.log import entry_json, entry_score, printable, short
from oloproof.result import CheckReport


class HoldoutCheck(GateCheck):
    """Reports the holdout's budget and log in the gate. It never blocks the gate: the gate decides
    on the dev set, and a holdout read is a separate, explicit act (`oloproof holdout run`)."""

    name = "holdout"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        release = ctx.release
        spec = release.holdout
        if spec is None:
            return None
        try:
            state = open_log(release).state()
            others = other_reads(release, state)  # the register: refused when it is a link or too large
        except (OloproofError, OSError) as exc:
            return CheckReport(
                name=self.name,
                title="holdout",
                status=f"log {spec.log} unreadable: {exc}",
                source=release.path,
                line=spec.line,
            )
        last = state.reads[-1] if state.reads else None
        budget = budget_status(
            spec, state, n=last.fields.n if last else None, confidence=release.policy.confidence, others=others
        )
        reasons: tuple[str, ...] = ()
        sentence = ""
        why = refusal(spec, state, others)
        if why is not None:
            reasons, sentence = why[0], f"Holdout reads are refused: {why[1]}"
        log_words = "log intact" if state.intact else f"log TAMPERED ({len(state.problems)} problem(s))"
        lines: list[str] = []
        if last is not None:
            lines.append(
                f"last read {last.seq} ({last.when}, version {printable(last.fields.version)}): holdout score "
                f"{entry_score(last)} "
                f"on holdout set {short(last.fields.set_digest)}"
            )
        lines.extend(str(problem) for problem in state.problems[:5])
        return CheckReport(
            name=self.name,
            title="holdout",
            status=f"{budget.text()}; {log_words} ({spec.log})",
            reasons=reasons,
            sentence=sentence,
            lines=tuple(lines),
            source=release.path,
            line=spec.line,
            data={
                "log": spec.log,
                "intact": state.intact,
                "problems": [str(p) for p in state.problems],
                "budget": budget.to_json(),
                "last_read": None if last is None else entry_json(last),
            },
        )
