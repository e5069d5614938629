"""A judge's errors reach the interval (issue 17, points 1 and 2), through the CLI.

The rule on a judge criterion estimates people's pass rate from the judge on every case and the
human labels where they exist. On today's main these projects PASS: a lenient judge clears every
trust threshold and the rule was decided on the judge's own grades; a judge that grades every
failure 0.49 turned a 77% pass rate into a 0.884 mean.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof.errors import ExitCode
from tests.conftest import FIXTURES, Project, config_error, judge_label, report

JUDGE = FIXTURES / "judge_system.py"


def judged_project(
    project: Project,
    says: list[Any],
    humans: dict[int, Any],
    *,
    rule: str = "{id: judged, criterion: judge_pass, min: 0.8}",
    approximate: bool = False,
) -> Project:
    cases = [
        {"id": f"c{i:04d}", "answer": 1, "judge_says": grade, "expected": {"label": 1}} for i, grade in enumerate(says)
    ]
    labels = project.root / "data" / "labels.jsonl"
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text(
        "".join(json.dumps(judge_label(f"c{i:04d}", g)) + "\n" for i, g in humans.items()), encoding="utf-8"
    )
    command = json.dumps([sys.executable, str(JUDGE)])
    policy = "  allow_approximate_methods: true\n" if approximate else ""
    return project.write(
        cases=cases,
        policy_extra=policy,
        rules=f"  - {rule}",
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl, batch_size: 500}}",
    )


def lenient(n: int = 1000) -> tuple[list[bool], dict[int, bool]]:
    """The audit's lenient judge at a true pass rate equal to min 0.8: people fail every fifth case
    (200 of 1000); the judge passes every human pass and 40 of the 200 failures (20%). Every other
    case is labelled: 500 labels, 100 human failures of which the judge passes 20, so it clears
    every default trust threshold (agreement 480/500, lower bound 0.939 >= 0.9; fail agreement
    80/100, lower bound 0.708 >= 0.7). Its own pass rate, 840/1000, has Clopper–Pearson lower bound
    0.816 >= 0.8: deciding on the judge PASSes."""
    human = [i % 5 != 4 for i in range(n)]
    says = [h or (i // 5) % 5 == 0 for i, h in enumerate(human)]
    return says, {i: human[i] for i in range(0, n, 2)}


def test_a_lenient_judge_at_a_true_pass_rate_equal_to_min_does_not_pass(project: Project) -> None:
    says, humans = lenient()
    judged_project(project, says, humans)
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["trusted"] is True and judge["fail_agreement_low"] >= 0.7 and judge["agreement_low"] >= 0.9
    rule = data["rules"][0]
    # Values from an independent computation (scipy beta quantiles, tests/stats/test_judged.py).
    assert rule["interval"]["method"] == "judge-double-sampling-clopper-pearson-bonferroni"
    assert rule["interval"]["approximate"] is False
    assert rule["interval"]["estimate"] == pytest.approx(0.8)
    assert rule["interval"]["low"] == pytest.approx(0.74430174941731, abs=1e-9)
    assert rule["interval"]["high"] == pytest.approx(0.8539060487856424, abs=1e-9)
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    assert rule["passes"] == 840  # the judge's own passes, kept for the report
    assert rule["details"]["n_labelled"] == 500 and rule["details"]["n_cases"] == 1000
    assert rule["details"]["lower"]["people_passed_of_those"] == 400
    assert rule["details"]["lower"]["labelled_judge_passed"] == 420
    assert rule["sentence"].startswith(
        "judge_pass is 0.800 (pass rate people would give, from the judge on 1000 cases and 500 human labels), "
        "95% interval [0.744, 0.854] (judge-double-sampling-clopper-pearson-bonferroni, exact) contains min 0.8"
    )
    assert rule["sentence"].endswith(
        "contains min 0.8: its width comes mostly from the human labels: label more cases, drawn at random from the "
        "test set, to settle it. The interval assumes the labelled cases are a random sample of the test cases."
    )
    assert rule["resolution"] is None  # a case-count resolution would not describe a judge's interval


@pytest.mark.parametrize("method", ["exact", "ppi"])
def test_a_lenient_judge_does_not_pass_under_any_method_or_permission(project: Project, method: str) -> None:
    says, humans = lenient()
    judged_project(
        project,
        says,
        humans,
        rule=f"{{id: judged, criterion: judge_pass, min: 0.8, method: {method}}}",
        approximate=True,
    )
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["interval"]["low"] < 0.8 <= rule["interval"]["high"]
    assert rule["verdict"] != "PASS" and code != ExitCode.PASS


def test_ppi_is_approximate_and_reviews_by_hand_under_an_exact_policy(project: Project) -> None:
    says = [True] * 950 + [False] * 50
    humans = {i: says[i] for i in range(0, 1000, 2)}
    judged_project(project, says, humans, rule="{id: judged, criterion: judge_pass, min: 0.8, method: ppi}")
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["interval"]["method"] == "ppi++-mean-clt" and rule["interval"]["approximate"] is True
    assert rule["interval"]["low"] > 0.8
    assert rule["verdict"] == "MANUAL_REVIEW" and "approximate_method" in rule["reasons"]
    assert rule["caveats"] == [
        "The interval assumes the labelled cases are a random sample of the test cases; it is approximate: its "
        "one-sided error was measured up to 31% with 50 labels, 19% with 100 and 10% with 300 (the worst regime of "
        "each: a lenient judge at a pass rate of 0.95; docs/statistics.md), against a nominal 2.5%."
    ]
    assert rule["sentence"].endswith(rule["caveats"][0])
    judged_project(project, says, humans, rule="{id: judged, criterion: judge_pass, min: 0.8, method: ppi}", approximate=True)
    code, data = report(project)
    assert data["rules"][0]["verdict"] == "PASS" and code == ExitCode.PASS


def test_a_judge_grading_every_failure_0_49_is_binarised_and_does_not_pass(project: Project) -> None:
    # 77% of 600 cases pass for people; the judge grades them 1.0 and every failure 0.49: kappa 1 at
    # pass_threshold 0.5, and a mean grade of 0.883 (main PASSed on it with the betting interval).
    human = [i % 100 < 77 for i in range(600)]
    says = [1.0 if h else 0.49 for h in human]
    humans = {i: human[i] for i in range(0, 600, 2)}
    judged_project(project, says, humans)
    code, data = report(project)
    assert data["criteria"]["judge_pass"]["details"]["judge"]["kappa"] == pytest.approx(1.0)
    rule = data["rules"][0]
    assert rule["interval"]["estimate"] == pytest.approx(0.77)
    assert rule["interval"]["high"] < 0.85 and rule["verdict"] != "PASS" and code != ExitCode.PASS


def test_a_mean_grade_rule_carries_the_human_vs_judge_difference(project: Project) -> None:
    human = [i % 100 < 77 for i in range(600)]
    says = [1.0 if h else 0.49 for h in human]
    humans = {i: human[i] for i in range(0, 600, 2)}
    rule = "{id: judged, criterion: judge_pass, min: 0.8, measure: mean_grade}"
    judged_project(project, says, humans, rule=rule, approximate=True)
    code, data = report(project)
    result = data["rules"][0]
    assert result["interval"]["method"] == "ppi++-mean-clt" and result["interval"]["approximate"] is True
    # People's mean grade is 0.77, not the judge's 0.883: the labelled residuals take the 0.49s back.
    assert result["interval"]["estimate"] == pytest.approx(0.77, abs=0.002)
    assert result["interval"]["low"] < 0.8 < result["interval"]["high"] < 0.85
    assert result["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    judged_project(project, says, humans, rule=rule)
    code, data = report(project)
    assert data["rules"][0]["verdict"] == "MANUAL_REVIEW"


def test_every_case_labelled_decides_on_the_human_grades(project: Project) -> None:
    # The judge is lenient, but people graded every case: Clopper–Pearson on their 80/100.
    human = [i % 5 != 4 for i in range(100)]
    judged_project(project, [True] * 100, dict(enumerate(human)), rule="{id: judged, criterion: judge_pass, min: 0.6}")
    _, data = report(project)
    rule = data["rules"][0]
    assert rule["interval"]["method"] == "clopper-pearson" and rule["interval"]["estimate"] == pytest.approx(0.8)
    assert rule["details"]["method_note"].startswith("every case is labelled")


def test_measure_takes_only_pass_rate_or_mean_grade(
    project: Project, run_cli: Any, capsys: Any, monkeypatch: Any
) -> None:
    judged_project(project, [True] * 3, {0: True}, rule="{id: judged, criterion: judge_pass, min: 0.8, measure: mean}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err.startswith("oloproof: error: release.yaml:") and "policy.rules[0].measure: " in err
    assert "pass_rate" in err and "mean_grade" in err


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            "method: ppi",
            "policy.rules[0].method: method ppi applies to judge criteria only; 'correct' (label_match) has no judge",
        ),
        (
            "measure: mean_grade",
            "policy.rules[0].measure: measure mean_grade applies to judge criteria only; 'correct' (label_match) has no judge",
        ),
        (
            "measure: pass_rate",
            "policy.rules[0].measure: measure pass_rate applies to judge criteria only; 'correct' (label_match) has no judge",
        ),
    ],
)
def test_judge_only_keys_on_a_criterion_without_a_judge_are_config_errors(
    project: Project, run_cli: Any, capsys: Any, monkeypatch: Any, extra: str, message: str
) -> None:
    project.write(rules=f"  - {{id: r, criterion: correct, min: 0.5, {extra}}}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == f"oloproof: error: release.yaml:12: {message}\n"


@pytest.mark.parametrize("method", ["t", "bca"])
def test_score_methods_that_ignore_the_judges_errors_are_refused(
    project: Project, run_cli: Any, capsys: Any, monkeypatch: Any, method: str
) -> None:
    judged_project(
        project, [0.9] * 3, {0: 1}, rule=f"{{id: judged, criterion: judge_pass, min: 0.8, method: {method}}}"
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == (
        f"oloproof: error: release.yaml:12: policy.rules[0].method: method {method} does not carry a judge's errors; a "
        "rule on 'judge_pass' (judge) takes method exact (double sampling) or ppi (prediction-powered, approximate)\n"
    )


def test_pass_threshold_0_is_refused(project: Project, run_cli: Any, capsys: Any, monkeypatch: Any) -> None:
    # Every grade, even people's 0, would be a pass: no rule on the judge could ever fail.
    judged_project(project, [0.0] * 3, {0: 0})
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace("batch_size: 500}", "batch_size: 500, pass_threshold: 0}"))
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == (
        "oloproof: error: release.yaml:8: evaluators[0].pass_threshold: expected a number in (0, 1], got 0: "
        "pass_threshold 0 counts every grade, even 0, as a pass, so no rule on the judge could fail\n"
    )


def test_a_judge_that_treats_labelled_cases_differently_invalidates_the_evidence(project: Project) -> None:
    # A judge that can read the labels file: honest on the 300 labelled cases (people pass 80% of them), it
    # passes every unlabelled one. Labelled and unlabelled cases then differ in the judge's pass
    # rate far beyond chance; the same symptom shows labels picked from the easy cases.
    human = [i % 10 < 7 for i in range(600)]
    says = [human[i] if i % 2 == 0 else True for i in range(600)]
    judged_project(
        project, says, {i: human[i] for i in range(0, 600, 2)}, rule="{id: judged, criterion: judge_pass, min: 0.6}"
    )
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "labels_not_representative" in rule["reasons"]
    assert rule["details"]["labels_vs_rest"]["labelled_judge_pass_rate"] == pytest.approx(0.8)
    assert rule["details"]["labels_vs_rest"]["unlabelled_judge_pass_rate"] == 1.0
    assert "the judge passes 80.0% of the 300 labelled cases but 100.0% of the other 300 (Fisher exact p = " in rule["sentence"]
    assert rule["sentence"].endswith("label cases drawn at random, and do not let the judge see the labels.")


DOCS = Path(__file__).resolve().parents[2] / "docs" / "release-yaml.md"


@pytest.mark.parametrize("key", ["min_agreement", "min_pass_agreement", "min_fail_agreement"])
def test_the_docs_give_each_judge_threshold_the_range_the_code_accepts(
    key: str, project: Project, run_cli: Any, capsys: Any, monkeypatch: Any
) -> None:
    # Issue 17, point 6: the docs said (0, 1] for two of them; 1 is refused (no finite number of
    # labels gives a lower bound of 1).
    row = next(line for line in DOCS.read_text(encoding="utf-8").splitlines() if line.startswith(f"| `judges.{key}` |"))
    assert row.split("|")[2].strip() == "number in (0, 1)"
    judged_project(project, [True] * 3, {0: True})
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace("policy:\n", f"policy:\n  judges: {{{key}: 1}}\n"))
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert f"policy.judges.{key}: expected a number in (0, 1), got 1: no finite number of labels gives" in err


def test_a_useless_judge_still_says_so(project: Project) -> None:
    # Grades unrelated to people's (kappa near 0): refused before any interval, with the reason.
    human = [i % 5 != 4 for i in range(400)]
    says = [(i * 7919) % 13 < 10 for i in range(400)]  # about 77% passes, blind to what people said
    judged_project(project, says, {i: human[i] for i in range(0, 400, 2)})
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert abs(judge["kappa"]) < 0.15 and judge["trusted"] is False
    assert "below min_fail_agreement 70%" in judge["why"]
    rule = data["rules"][0]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "judge_untrusted" in rule["reasons"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_regression_guard_on_a_judge_criterion_says_it_compares_the_judge(project: Project) -> None:
    # Not corrected (people's labels describe one version's outputs, not the baseline's): shown, never decides.
    human = [i % 5 != 4 for i in range(200)]
    judged_project(
        project, human, {i: human[i] for i in range(0, 200, 2)}, rule="{id: judged, criterion: judge_pass, min: 0.5}"
    )
    assert project.cli("gate", "-q") in (ExitCode.PASS, ExitCode.INSUFFICIENT_EVIDENCE)  # the v1 run
    release = project.root / "release.yaml"
    text = release.read_text().replace("version: v1", "version: v2")
    release.write_text(
        text.replace(
            "rules:\n", "rules:\n  - {id: no_drop, criterion: judge_pass, baseline: 'version:v1', max_drop: 0.1}\n"
        )
    )
    _, data = report(project)
    [rule] = [rule for rule in data["rules"] if rule["id"] == "no_drop"]
    assert rule["verdict"] == "MANUAL_REVIEW" and "judge_graded" in rule["reasons"]
    assert rule["interval"]["method"] == "judge-graded fay-lumbard-melded" and rule["interval"]["approximate"]
    assert rule["caveats"][0].startswith("Both versions were graded by the judge, not by people")


def test_a_grouped_test_set_has_no_judge_corrected_interval(project: Project) -> None:
    says = [i % 5 != 4 for i in range(200)]  # a judge that agrees with people
    humans = {i: says[i] for i in range(0, 200, 2)}
    cases = [
        {"id": f"c{i:04d}", "answer": 1, "judge_says": grade, "expected": {"label": 1}, "group": f"doc{i // 5}"}
        for i, grade in enumerate(says)
    ]
    judged_project(project, says, humans, approximate=True)
    project.write(
        cases=cases,
        policy_extra="  allow_approximate_methods: true\n",
        rules="  - {id: judged, criterion: judge_pass, min: 0.7}",
        evaluators=f"  - {{type: judge, command: {json.dumps([sys.executable, str(JUDGE)])}, labels: data/labels.jsonl}}",
    )
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["interval"] is None and rule["verdict"] == "MANUAL_REVIEW" and code != ExitCode.PASS
    assert "no interval that carries a judge's errors is implemented for grouped cases" in rule["sentence"]


def test_people_grading_every_case_decide_even_when_the_judge_is_untrusted(project: Project) -> None:
    # Both audits of issue 17: 300 of 300 cases labelled, people pass them all, so no human failure
    # exists to show the judge fails what people fail: the judge is untrusted, and the rule was
    # INSUFFICIENT_EVIDENCE, asking for 11 more human failures that do not exist. People's grades of
    # every case decide alone (Clopper–Pearson [0.988, 1]); the judge's trust is a diagnostic.
    judged_project(project, [True] * 300, {i: True for i in range(300)})
    code, data = report(project)
    rule = data["rules"][0]
    assert code == ExitCode.PASS and rule["verdict"] == "PASS"
    assert rule["interval"]["method"] == "clopper-pearson" and rule["interval"]["low"] == pytest.approx(0.025 ** (1 / 300), abs=1e-12)
    assert "judge_untrusted" not in rule["reasons"]
    assert data["criteria"]["judge_pass"]["details"]["judge"]["trusted"] is False
    # One answered case without a label: the judge matters again, and it is untrusted.
    judged_project(project, [True] * 300, {i: True for i in range(299)})
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and "judge_untrusted" in data["rules"][0]["reasons"]
