"""``mode: publish`` reads the fork's report as hostile input (``oloproof.action.report_check``), yet
every report the gate itself writes must pass: real reports, made by ``oloproof gate --json``
through the CLI, for every kind of rule whose JSON carries more than a plain rule's (advisory,
``approximate: allow``, an accepted transform, ``where:``/``per:``, the seeds recipe, a latency
quantile, a blocked gate)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof.action.report_check import read_untrusted_report
from tests.action.conftest import ActionRun, FakeGitHub, hand_over
from tests.cli.test_rule_permissions import GROUPED, grouped_cases, noise_project
from tests.cli.test_slices import penguins
from tests.conftest import Project, labelled_cases
from tests.measures.conftest import latency_cases, measured
from tests.seeds.test_check import five_seeds


def real_report(project: Project, *extra: str) -> tuple[Path, dict[str, Any]]:
    out = project.root / "gate-report.json"
    project.cli("gate", "--json", str(out), *extra)
    return out, json.loads(out.read_text())


def advisory(project: Project) -> tuple[str, ...]:
    cases = [{"id": f"c{i:05d}", "answer": 1 if i < 98 else 0, "expected": {"label": 1}} for i in range(100)]
    project.write(
        cases=cases,
        rules="  - {id: ok, criterion: correct, min: 0.8}\n"
        "  - {id: stretch, criterion: correct, min: 0.99, advisory: true}\n"
        "  - {id: never, criterion: correct, max: 0.5, advisory: true}",
    )
    return ()


def approximate_allowed(project: Project) -> tuple[str, ...]:
    project.write(
        cases=grouped_cases(),
        rules=(GROUPED % ", approximate: allow")
        + "\n  - {id: strict, criterion: correct, min: 0.8}"
        + "\n  - {id: soft, criterion: correct, min: 0.99, advisory: true, approximate: allow}",
    )
    return ()


def accepted_transform(project: Project) -> tuple[str, ...]:
    noise_project(project.root, "      accepted: {by: Dana Reyes, reason: sensor noise of this size is in the spec}\n")
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(
        text.replace("max: 0.5}", "max: 0.5, advisory: true}")  # the accepted transform's rule FAILs, advisory
    )
    return ()


def sliced(project: Project) -> tuple[str, ...]:
    project.write(
        cases=penguins(wrong={"Chinstrap": 6, "Adelie": 3}),
        rules="    - {id: recall, criterion: correct, min: 0.7, where: {expected.label: Chinstrap}}\n"
        "    - {id: per-species, criterion: correct, min: 0.8, per: expected.label}\n"
        "    - {id: per-strict, criterion: correct, min: 0.95, per: expected.label, advisory: true}",
    )
    return ()


def seeds_recipe(project: Project) -> tuple[str, ...]:
    five_seeds(project)
    (project.root / "seeds.yaml").write_text(
        "recipe: r1\ncheckpoints: {"
        + ", ".join(f"s{k}: 'version:s{k}'" for k in range(1, 6))
        + "}\nrule: {id: recipe_ok, criterion: correct, min: 0.7, approximate: allow}\n"
    )
    project.write(
        extra="seeds: seeds.yaml\n",
        rules="  - {id: accurate, criterion: correct, min: 0.1}\n"
        "  - {id: stretch, criterion: correct, min: 0.99, advisory: true}",
    )
    return ("--run", "version:s1")


def latency(project: Project) -> tuple[str, ...]:
    measured(
        project,
        latency_cases([float(100 + 5 * i) for i in range(94)] + [None] * 6),
        "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 800}\n"
        "  - {id: p50, criterion: latency_ms, quantile: 0.5, max: 400}",
    )
    return ()


def latency_accepted(project: Project) -> tuple[str, ...]:
    measured(
        project,
        latency_cases([1.0] * 75),
        "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 5, accepted: {by: ml-platform, reason: in-process}}",
        batch_size=1,
    )
    return ()


def blocked(project: Project) -> tuple[str, ...]:
    project.write(
        cases=labelled_cases(100, 100),
        extra="leakage: required\n",
        rules="  - {id: ok, criterion: correct, min: 0.8}\n  - {id: soft, criterion: correct, min: 0.5, advisory: true}",
    )
    return ()


GATES: dict[str, Callable[[Project], tuple[str, ...]]] = {
    "advisory": advisory,
    "approximate-allowed": approximate_allowed,
    "accepted-transform": accepted_transform,
    "where-and-per": sliced,
    "seeds": seeds_recipe,
    "latency": latency,
    "latency-accepted": latency_accepted,
    "blocked": blocked,
}


Rules = dict[str, dict[str, Any]]

# What each gate above is meant to make (else its test proves nothing).
MADE: dict[str, Callable[[dict[str, Any], Rules], bool]] = {
    "advisory": lambda report, rules: report["verdict"] == "PASS"
    and rules["stretch"]["verdict"] != "PASS"
    and rules["never"]["verdict"] == "FAIL"
    and rules["never"]["advisory"] is True,
    "approximate-allowed": lambda report, rules: rules["grouped"]["approximate_permission"] is True
    and rules["grouped"]["verdict"] == "PASS",
    "accepted-transform": lambda report, rules: report["verdict"] == "PASS"
    and rules["robust"]["verdict"] == "FAIL"
    and rules["robust"]["accepted"]["by"] == "Dana Reyes",
    "where-and-per": lambda report, rules: bool(rules["per-species"]["details"]["rows"])
    and "subset" in rules["recall"]["details"],
    "seeds": lambda report, rules: rules["recipe_ok"]["verdict"] == "PASS"
    and rules["recipe_ok"]["approximate_permission"] is True,
    # +inf (the missing could be anything) is written as null; passes is a sum of milliseconds
    "latency": lambda report, rules: rules["p95"]["interval"]["high"] is None
    and rules["p50"]["passes"] > rules["p50"]["n"],
    "latency-accepted": lambda report, rules: rules["p95"]["verdict"] == "PASS"
    and rules["p95"]["accepted"] == {"by": "ml-platform", "reason": "in-process"},
    "blocked": lambda report, rules: report["verdict"] == "BLOCKED" and rules["soft"]["advisory"] is True,
}


@pytest.mark.parametrize("name", list(GATES))
def test_every_report_the_gate_writes_is_accepted(project: Project, name: str) -> None:
    """Red team RT-M1: a report with an advisory rule was refused by the publish validator though
    the gate wrote it (an advisory FAIL under a PASS read as a forged verdict)."""
    path, report = real_report(project, *GATES[name](project))
    assert MADE[name](report, {rule["id"]: rule for rule in report["rules"]}), report["rules"]
    read, problems = read_untrusted_report(path, "gate-report.json", within=project.root)
    assert problems == [] and read == report


def test_an_advisory_fail_under_a_pass_is_published_as_the_pass_it_is(
    project: Project, publisher: ActionRun, fake_github: FakeGitHub
) -> None:
    _, report = real_report(project, *advisory(project))
    hand_over(publisher, report)
    result = publisher()
    assert result.code == 0, result.summary
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["conclusion"] == "neutral" and body["output"]["title"].startswith("PASS: reported by")
    assert result.outputs["verdict"] == "PASS"


# ---------------------------------------------------------------- 19-D7: numbers that contradict each other

LOW, HIGH = 0.8237774022599773, 0.9509953107785141  # Clopper-Pearson, 90 of 100 at 95%


@pytest.fixture(scope="module")
def three_rules(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A real FAIL report: ``accurate`` (min 0.8) PASSes, ``strict`` (min 0.97) FAILs, and the
    advisory ``rare`` (max 0.5) FAILs, all on 90 of 100 cases."""
    project = Project(tmp_path_factory.mktemp("three-rules"))
    project.write(
        cases=labelled_cases(100, 90),
        rules="  - {id: accurate, criterion: correct, min: 0.8}\n  - {id: strict, criterion: correct, min: 0.97}\n"
        "  - {id: rare, criterion: correct, max: 0.5, advisory: true}",
    )
    _, report = real_report(project)
    assert [(rule["id"], rule["verdict"]) for rule in report["rules"]] == [
        ("accurate", "PASS"),
        ("strict", "FAIL"),
        ("rare", "FAIL"),
    ]
    assert [(rule["interval"]["low"], rule["interval"]["high"]) for rule in report["rules"]] == [(LOW, HIGH)] * 3
    return report


def edited(report: dict[str, Any], index: int, interval: dict[str, Any] | None = None, **change: Any) -> dict[str, Any]:
    copy: dict[str, Any] = json.loads(json.dumps(report))
    copy["rules"][index].update(change)
    if interval is not None:
        copy["rules"][index]["interval"].update(interval)
    return copy


def as_text(report: dict[str, Any], number: str) -> str:
    """The report with the first rule's estimate written as ``number``, verbatim (NaN, Infinity, 1e400)."""
    return json.dumps(edited(report, 0, estimate=12345.5)).replace("12345.5", number, 1)


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (
            lambda r: edited(r, 0, interval={"low": 0.96}),
            f"$.rules[0] (accurate): its interval's low 0.96 is above its high {HIGH!r}",
        ),
        (
            lambda r: edited(r, 2, estimate=0.99),  # an advisory rule's numbers are its numbers too
            f"$.rules[2] (rare): its estimate 0.99 lies outside its interval [{LOW!r}, {HIGH!r}]",
        ),
        (
            lambda r: edited(r, 0, estimate=0.5),
            f"$.rules[0] (accurate): its estimate 0.5 lies outside its interval [{LOW!r}, {HIGH!r}]",
        ),
        (
            lambda r: edited(r, 0, passes=101.0),
            "$.rules[0] (accurate): 101.0 passes among 100 cases (a pass rate's passes are counted among its cases)",
        ),
        (
            lambda r: edited(r, 0, threshold=0.85),
            f"$.rules[0] (accurate): PASS, but its lower bound {LOW!r} does not clear min 0.85 (a min rule passes "
            "only when the interval's low is at least the threshold)",
        ),
        (
            lambda r: edited(r, 0, interval={"low": None}),
            "$.rules[0] (accurate): PASS, but its lower bound null (unbounded) does not clear min 0.8",
        ),
        (
            lambda r: {**r, "rules": [{**r["rules"][0], "interval": None}, *r["rules"][1:]]},
            "$.rules[0] (accurate): PASS with no interval (a min rule passes only when the interval's low is at least "
            "the threshold)",
        ),
        (
            lambda r: edited(r, 1, threshold=0.9),
            f"$.rules[1] (strict): FAIL, but its upper bound {HIGH!r} does not miss min 0.9 (a min rule fails only "
            "when the interval's high is below the threshold)",
        ),
        (
            lambda r: edited(r, 0, kind="max", threshold=0.93),
            f"$.rules[0] (accurate): PASS, but its upper bound {HIGH!r} does not clear max 0.93 (a max rule passes "
            "only when the interval's high is at most the threshold)",
        ),
        (
            lambda r: edited(r, 2, threshold=0.85),
            f"$.rules[2] (rare): FAIL, but its lower bound {LOW!r} does not miss max 0.85 (a max rule fails only "
            "when the interval's low is above the threshold)",
        ),
        (lambda r: as_text(r, "NaN"), "holds NaN, which is not a JSON number (NaN and Infinity are refused)"),
        (lambda r: as_text(r, "Infinity"), "holds Infinity, which is not a JSON number (NaN and Infinity are refused)"),
        (lambda r: as_text(r, "-Infinity"), "holds -Infinity, which is not a JSON number"),
        (lambda r: as_text(r, "1e400"), "holds a number too large for a float (NaN and Infinity are refused)"),
    ],
)
def test_a_report_whose_numbers_contradict_each_other_is_refused(
    three_rules: dict[str, Any], publisher: ActionRun, fake_github: FakeGitHub, make: Any, said: str
) -> None:
    """Red team 19-D7: publish accepted an interval whose low is above its high, an estimate outside
    its interval, NaN (Python's json reads it), more passes than cases, and a PASS (FAIL) whose
    deciding bound does not clear (miss) the threshold."""
    artifact = hand_over(publisher, make(three_rules))
    read, problems = read_untrusted_report(artifact, "artifact/oloproof-report.json", within=publisher.workspace)
    assert read is None and len(problems) == 1, problems
    assert problems[0].startswith(f"artifact/oloproof-report.json: {said}"), problems
    result = publisher(comment="true")
    assert result.code == 2 and result.outputs["verdict"] == "ERROR"
    body = next(r for r in fake_github.requests if r.path.endswith("/check-runs")).body
    assert body["conclusion"] == "failure" and body["output"]["title"] == "ERROR: the gate job's report is missing or invalid"
    assert fake_github.comments == {}


def test_the_untouched_report_is_published(three_rules: dict[str, Any], publisher: ActionRun) -> None:
    hand_over(publisher, three_rules)
    result = publisher()
    assert result.code == 1 and result.outputs["verdict"] == "FAIL"  # the base of the forgeries above is valid


def test_more_passes_than_cases_is_a_contradiction_only_for_a_pass_rate(three_rules: dict[str, Any]) -> None:
    """A latency rule's passes are a sum of milliseconds (above): only a pass rate counts cases."""
    from oloproof.action.report_check import numbers

    report = edited(three_rules, 0, passes=101.0)
    assert numbers(report) and numbers({**report, "criteria": {"correct": {"kind": "quantile"}}}) == []
    assert numbers({**report, "criteria": {}}) == []  # without the criterion's kind nothing follows
