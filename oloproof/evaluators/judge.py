"""judge: a command grades outputs; its rules estimate people's grade, with the judge's errors.

The judge receives, per answered case, ``{"id", "input", "output", "expected"}`` as JSONL on
stdin and answers ``{"id", "grade"}`` per line, where a grade is true/false, 0/1 or a score
in [0, 1]. A rule on its criterion is about *people's* pass rate (grade >= pass_threshold), or
their mean grade with ``measure: mean_grade``, estimated from the judge on every case and the
human-labelled file (``{"id", "grade", "output_sha256"}`` per line) where it has a grade of this
run's output (``oloproof.evaluators.judge_labels``: a label of another output is stale and not
used; one that names no output is refused unless the policy allows it), as ``oloproof.judged``
and ``oloproof.stats.judged`` compute; the outcome carries people's grades for that (``judged``).
The judge is used at all only when its agreement with the labels meets the policy's ``judges``
thresholds: at least ``min_labels`` labelled cases, the lower bound of the agreement interval at
least ``min_agreement``, and the lower bounds of its agreement on the cases people passed and on
those they failed at least ``min_pass_agreement`` and ``min_fail_agreement`` (so a judge that
always says "pass" is refused, however few cases people fail; too few human-failed labels to
show it is itself a reason, with how many more are needed). Otherwise every rule on its
criterion is INSUFFICIENT_EVIDENCE with ``judge_untrusted``. Agreement is measured on pass/fail
(grade >= pass_threshold), with Cohen's kappa reported beside it, as diagnostics.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.errors import ConfigError
from oloproof.evaluators.base import (
    CriterionOutcome,
    EvalContext,
    EvaluatorKind,
    JudgedEvidence,
    SpecError,
    Where,
    criterion_prop,
)
from oloproof.evaluators.judge_labels import Bound, bind, read_labels
from oloproof.process import CommandNotFound, run_batches
from oloproof.schema import AnyOf, Obj, Prop, Scalar, Seq


def parse_grade(value: Any) -> float | None:
    """A grade as a number in [0, 1], or None when it is not one."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if math.isfinite(number) and 0.0 <= number <= 1.0:
            return number
    return None


@dataclass(frozen=True, slots=True)
class Judge:
    command: str | tuple[str, ...]
    labels: str
    criterion: str
    timeout_s: float
    batch_size: int
    pass_threshold: float
    where: Where
    type: str = "judge"

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        import numpy as np  # lazy: start-up

        cases = ctx.testset.cases
        # Read the human labels first: a typo in them must not cost a full run of the judge.
        bound = self._labels(ctx)
        labels = bound.current
        requests = [
            {"id": case.id, "input": case.inputs, "output": ctx.outputs[case.id], "expected": case.expected}
            for case in cases
            if case.id in ctx.outputs
        ]
        try:
            collected = run_batches(
                self.command, requests, cwd=ctx.base_dir, timeout_s=self.timeout_s, batch_size=self.batch_size
            )
        except CommandNotFound as exc:
            raise ConfigError(self.where.file, self.where.line, f"{self.where.key_path}.command", str(exc)) from None
        values = np.full(len(cases), np.nan)
        notes: dict[str, str] = {}
        fractional = False
        for index, case in enumerate(cases):
            if case.id not in ctx.outputs:
                continue
            answer = collected.outputs.get(case.id)
            if answer is None:
                notes[case.id] = f"judge: {collected.case_errors.get(case.id, 'no grade')}"
                continue
            grade = parse_grade(answer.get("grade"))
            if grade is None:
                notes[case.id] = "judge: 'grade' must be true/false or a number in [0, 1]"
                continue
            fractional = fractional or grade not in (0.0, 1.0)
            values[index] = grade
        agreement = self._agreement(ctx, values, labels)
        human = np.full(len(cases), np.nan)
        stale = np.zeros(len(cases), dtype=bool)
        stale_ids = set(bound.stale)
        for index, case in enumerate(cases):
            if case.id in labels:
                human[index] = labels[case.id][0]
            elif case.id in stale_ids:
                # Still a labelled case (the labels stay a random sample), with people's grade unknown.
                human[index], stale[index] = 0.0, True
        answered = np.array([case.id in ctx.outputs for case in cases], dtype=bool)
        agreement.update(bound.details())
        reasons: list[str] = []
        problems: list[str] = []
        if collected.failure is not None:
            reasons.append("judge_failed")
            problems.append(f"{self.where}: the judge command failed ({collected.failure})")
        # People graded every answered case (none stale): the rule decides on their grades alone
        # (Clopper–Pearson, or the betting interval for a mean grade), and the judge adds nothing,
        # so its trust is a diagnostic, not a reason to withhold the verdict.
        everyone = bool(answered.any()) and all(case.id in labels for case in cases if case.id in ctx.outputs)
        if not agreement["trusted"] and everyone:
            problems.append(
                f"{self.where}: {agreement['why']} (not needed: people graded every answered case, and the rule "
                "decides on their grades)"
            )
        elif not agreement["trusted"]:
            reasons.append("judge_untrusted")
            problems.append(f"{self.where}: {agreement['why']}")
        problems.extend(f"{self.where}: {text}" for text in bound.problems(self.labels))
        if bound.stale:
            reasons.append("stale_labels")
        if bound.unbound:
            reasons.append("unbound_labels")
        return CriterionOutcome(
            criterion=self.criterion,
            kind="score" if fractional else "binary",
            values=values,
            notes=notes,
            reasons=tuple(reasons),
            problems=tuple(problems),
            details={"judge": agreement},
            judged=JudgedEvidence(
                human=human,
                answered=answered,
                pass_threshold=self.pass_threshold,
                stale=stale,
                unbound=len(bound.unbound),
                no_output=len(bound.no_output),
                labels_file=self.labels,
            ),
        )

    def _labels(self, ctx: EvalContext) -> Bound:
        path = (ctx.base_dir / self.labels) if not Path(self.labels).is_absolute() else Path(self.labels)
        known = {case.id for case in ctx.testset.cases}
        # The labels file grades the dev set's cases. On a holdout read none of it applies: a
        # holdout case may share a dev case's id and even its output, and a dev grade must never
        # stand for a holdout one (found by the red team of issue 17: 0 of 120 judged passes
        # scored 1.000 from dev grades). The holdout's judge is then untrusted, and says so.
        labels = (
            {}
            if ctx.holdout
            else read_labels(path, shown=self.labels, known=known, testset=ctx.testset.path, parse_grade=parse_grade)
        )
        return bind(
            labels,
            ctx.outputs,
            shown=self.labels,
            allow_unbound=ctx.policy.judges.unbound_labels == "allow",
            outputs_of=ctx.outputs_of,
        )

    def _agreement(self, ctx: EvalContext, values: Any, labels: dict[str, tuple[float, int]]) -> dict[str, Any]:
        from oloproof.stats.agreement import judge_agreement  # lazy: start-up

        policy = ctx.policy.judges
        index: dict[str, int] = {case.id: i for i, case in enumerate(ctx.testset.cases)}
        judge_pass: list[bool] = []
        human_pass: list[bool] = []
        ungraded = 0
        for case_id, (grade, _) in labels.items():
            human = grade >= self.pass_threshold
            value = values[index[case_id]]
            if math.isnan(value):
                if case_id not in ctx.outputs:
                    continue  # the system gave no output: there was nothing for the judge to grade
                # The judge skipped (or garbled) a labelled case it was shown: a disagreement, so a
                # judge can never earn trust by leaving out the cases it would get wrong.
                ungraded += 1
                judge_pass.append(not human)
            else:
                judge_pass.append(bool(value >= self.pass_threshold))
            human_pass.append(human)
        n = len(judge_pass)
        result: dict[str, Any] = {
            "labels_file": self.labels,
            "n_labels": len(labels),
            "n_compared": n,
            "min_labels": policy.min_labels,
            "min_agreement": policy.min_agreement,
            "min_pass_agreement": policy.min_pass_agreement,
            "min_fail_agreement": policy.min_fail_agreement,
            "ungraded_labelled": ungraded,
        }
        if n == 0:
            result.update(
                trusted=False,
                why="no label of this run's outputs was graded by the judge, so its agreement with people is unknown",
            )
            return result
        measured = judge_agreement(judge_pass, human_pass, confidence=ctx.policy.confidence)
        result.update(
            agreement=measured.agreement.estimate,
            agreement_low=measured.agreement.low,
            agreement_high=measured.agreement.high,
            kappa=measured.kappa,
            # No kappa interval when kappa is undefined (judge and people used one same grade throughout).
            kappa_low=measured.kappa_interval.low if measured.kappa_interval is not None else None,
            kappa_high=measured.kappa_interval.high if measured.kappa_interval is not None else None,
        )
        problems: list[str] = []
        if n < policy.min_labels:
            problems.append(
                f"only {n} labelled case(s) compared; the policy needs at least {policy.min_labels} before a judge can "
                "be trusted"
            )
        if measured.agreement.low < policy.min_agreement:
            problems.append(
                f"judge agrees with people on {measured.agreement.estimate:.1%} of {n} labelled cases, but the lower "
                "bound "
                f"{measured.agreement.low:.1%} is below min_agreement {policy.min_agreement:.0%}"
            )
        for human, side, threshold in (
            (True, "pass", policy.min_pass_agreement),
            (False, "fail", policy.min_fail_agreement),
        ):
            problem = _class_problem(measured, human, side, threshold, n, ctx.policy.confidence, result)
            if problem:
                problems.append(problem)
        result.update(trusted=not problems, why="; ".join(problems))
        return result


def _class_problem(
    measured: Any, human: bool, side: str, threshold: float, n: int, confidence: float, result: dict[str, Any]
) -> str:
    """Why the judge's agreement on the cases people ``side``-ed falls short of ``threshold`` ("" if it does not).

    ``side`` is "pass" or "fail". Records the count of such labels and the exact interval of the
    judge's agreement on them in ``result`` (``n_human_failed``, ``fail_agreement``,
    ``fail_agreement_low``, ``fail_agreement_high``), and ``more_human_failed_needed`` when there
    are too few such labels for even a judge that agrees on all of them to show the threshold.
    """
    from oloproof.stats.binomial import min_cases_to_pass  # lazy: start-up

    past, third, key = f"{side}ed", f"{side}es" if side == "pass" else f"{side}s", f"min_{side}_agreement"
    count = measured.human_counts.get(human, 0)
    interval = measured.by_human_label.get(human)
    result.update(
        {
            f"n_human_{past}": count,
            f"{side}_agreement": interval.estimate if interval is not None else None,
            f"{side}_agreement_low": interval.low if interval is not None else None,
            f"{side}_agreement_high": interval.high if interval is not None else None,
        }
    )
    if threshold >= 1.0:
        return f"{key} 1 can never be shown: no finite number of labels gives a lower bound of 1"
    needed = min_cases_to_pass(threshold, confidence=confidence)
    if count < needed:
        result[f"more_human_{past}_needed"] = needed - count
        return (
            f"only {count} of the {n} labelled cases are ones people {past}; even a judge that {third} every one of "
            "them "
            f"needs {needed} such labels to show that it {third} at least {threshold:.0%} of what people {side}: "
            f"label at least {needed - count} more case(s) that people {side}"
        )
    assert interval is not None
    if interval.low < threshold:
        return (
            f"judge {third} {round(interval.estimate * count)} of the {count} labelled cases people {past} "
            f"({interval.estimate:.1%}), but the lower bound {interval.low:.1%} is below {key} {threshold:.0%}"
        )
    return ""


def _build(values: dict[str, Any], where: Where) -> Judge:

    command = values["command"]
    if isinstance(command, str):
        try:
            shlex.split(command)
        except ValueError as exc:
            raise SpecError("command", f"cannot split the command: {exc}") from None
    return Judge(
        command=command if isinstance(command, str) else tuple(command),
        labels=values["labels"],
        criterion=values["criterion"],
        timeout_s=float(values["timeout_s"]),
        batch_size=int(values["batch_size"]),
        pass_threshold=float(values["pass_threshold"]),
        where=where,
    )


KIND = EvaluatorKind(
    name="judge",
    schema=Obj(
        {
            "command": Prop(
                AnyOf((Scalar("str", nonempty=True), Seq(Scalar("str"), min_items=1))),
                required=True,
                doc="Grading command (split like a shell would, but never run through one).",
            ),
            "labels": Prop(
                Scalar("str", nonempty=True),
                required=True,
                doc="JSONL of human grades: {id, grade, output_sha256 (or output)} per line, each bound to the output "
                "it graded.",
            ),
            "criterion": criterion_prop("judge_pass"),
            "timeout_s": Prop(
                Scalar("number", exclusive_minimum=0.0), default=600.0, doc="Time allowed for one batch."
            ),
            "batch_size": Prop(Scalar("int", minimum=1), default=100, doc="Cases per judge call."),
            "pass_threshold": Prop(
                Scalar(
                    "number",
                    exclusive_minimum=0.0,
                    maximum=1.0,
                    why="pass_threshold 0 counts every grade, even 0, as a pass, so no rule on the judge could fail",
                ),
                default=0.5,
                doc="Grade at or above which a case counts as a pass, for people and the judge alike; in (0, 1].",
            ),
        },
        doc="Grades from a command, trusted only when they agree with human labels.",
    ),
    build=_build,
    judged=True,
)
