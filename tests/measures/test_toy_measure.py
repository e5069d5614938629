"""A new measure is one module: this test is that module. It declares a toy measure (the median
of a numeric output, on the exact order-statistic interval) and an evaluator kind producing its
outcomes, registers both at run time, and finds the rule in every report — terminal, JSON,
Markdown, JUnit — with no renderer knowing of it (issue 18, "make room")."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from oloproof.config import RELEASE
from oloproof.errors import ExitCode
from oloproof.evaluators.base import CriterionOutcome, EvalContext, EvaluatorKind, Where, criterion_prop
from oloproof.evaluators.registry import REGISTRY
from oloproof.measures.base import IntervalResult, Measure
from oloproof.measures.registry import MEASURES, measure_of
from oloproof.schema import Obj, Prop, Scalar
from oloproof.stats.quantile import quantile_interval
from tests.conftest import Project
from tests.measures.conftest import measured


def toy_interval(outcome: CriterionOutcome, rule: Any, policy: Any, testset: Any) -> IntervalResult:
    found = quantile_interval(outcome.values, 0.5, confidence=policy.confidence)
    return found, {"count": f"toy median of {int((~np.isnan(outcome.values)).sum())} widths"}, []


TOY = Measure(
    name="toy_median",
    reads="a width per case; the rule reads their median",
    interval=toy_interval,
    count=lambda total, answered: f"{answered} widths",
    stored=float,
    failing=lambda values, side, threshold: np.isnan(values) | (values > threshold),
    proportion=False,
)


@dataclass(frozen=True)
class Widths:
    field: str
    criterion: str
    type: str = "toy_widths"

    def evaluate(self, ctx: EvalContext) -> CriterionOutcome:
        values = np.full(len(ctx.testset.cases), np.nan)
        for index, case in enumerate(ctx.testset.cases):
            output = ctx.outputs.get(case.id)
            if output is not None and isinstance(output.get(self.field), (int, float)):
                values[index] = float(output[self.field])
        return CriterionOutcome(criterion=self.criterion, kind=TOY.name, values=values)


def _build(values: dict[str, Any], where: Where) -> Widths:
    return Widths(field=values["field"], criterion=values["criterion"])


KIND = EvaluatorKind(
    name="toy_widths",
    schema=Obj({"field": Prop(Scalar("str"), required=True), "criterion": criterion_prop("width")}),
    build=_build,
)


@pytest.fixture
def toy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(MEASURES, TOY.name, TOY)
    monkeypatch.setitem(REGISTRY, KIND.name, KIND)
    variants = RELEASE.props["evaluators"].node.items.variants  # type: ignore[attr-defined]
    monkeypatch.setitem(variants, KIND.name, KIND.schema)


def test_a_measure_registered_at_run_time_reaches_every_report(
    toy: None, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    assert measure_of("toy_median") is TOY
    cases = [{"id": f"c{i:03d}", "out": {"width": float(10 + i % 9)}, "expected": {}} for i in range(60)]
    measured(
        project,
        cases,
        "  - {id: narrow, criterion: width, max: 0.9}",
        evaluators="  - {type: toy_widths, field: width}",
    )
    out = project.root
    capsys.readouterr()
    code = project.cli(
        "gate", "--json", str(out / "r.json"), "--markdown", str(out / "r.md"), "--junit", str(out / "r.xml")
    )
    terminal = capsys.readouterr().out
    assert code == ExitCode.FAIL  # every width is at least 10: the median's lower bound misses max 0.9
    rule = json.loads((out / "r.json").read_text())["rules"][0]
    assert rule["interval"]["method"] == "order statistics (binomial)" and rule["verdict"] == "FAIL"
    assert "(toy median of 60 widths)" in rule["sentence"]
    assert json.loads((out / "r.json").read_text())["criteria"]["width"]["kind"] == "toy_median"
    shown = f"{rule['estimate']:.3f}"
    assert shown in terminal and "toy median of 60 widths" in terminal
    markdown = (out / "r.md").read_text()
    assert "narrow" in markdown and shown in markdown and "FAIL" in markdown
    junit = ET.parse(out / "r.xml").getroot()
    case = next(iter(junit.iter("testcase")))
    assert case.get("name", "").startswith("narrow")
    assert any("toy median of 60 widths" in (node.text or "") + (node.get("message") or "") for node in case)


def test_restrict_slices_every_per_case_array() -> None:
    from oloproof.measures.base import restrict

    outcome = CriterionOutcome(
        criterion="auc", kind="auc", values=np.array([0.1, 0.9, np.nan, 0.4]), labels=np.array([0.0, 1.0, 1.0, 0.0])
    )
    part = restrict(outcome, [1, 3], ["b", "d"])
    assert part.values.tolist() == [0.9, 0.4] and part.labels is not None and part.labels.tolist() == [1.0, 0.0]
    assert part.case_ids == ("b", "d") and part.kind == "auc"
