"""The gate through the real CLI: every verdict and its exit code, decided on bounds."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, labelled_cases, report


def test_pass_when_lower_bound_clears_min(project: Project) -> None:
    # 100/100: Clopper-Pearson lower bound = 0.025 ** (1/100) = 0.9638 >= 0.9.
    project.write(cases=labelled_cases(100, 100), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    code, data = report(project)
    assert code == ExitCode.PASS
    rule = data["rules"][0]
    assert rule["verdict"] == "PASS"
    assert rule["interval"]["low"] == pytest.approx(0.025 ** (1 / 100), abs=1e-9)
    assert rule["interval"]["method"] == "clopper-pearson" and rule["interval"]["approximate"] is False
    assert rule["reasons"] == ["interval_clears_threshold"]
    assert data["verdict"] == "PASS" and data["exit_code"] == 0


def test_fail_when_upper_bound_misses_min(project: Project) -> None:
    project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    code, data = report(project)
    assert code == ExitCode.FAIL
    rule = data["rules"][0]
    assert rule["verdict"] == "FAIL" and rule["reasons"] == ["interval_misses_threshold"]
    assert rule["interval"]["high"] < 0.8
    assert "misses min 0.8" in rule["sentence"]


def test_straddle_is_insufficient_evidence_with_resolution(project: Project) -> None:
    # 85/100 has a point estimate above 0.8 but an interval [0.765, 0.914] that contains it.
    project.write(cases=labelled_cases(100, 85), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert rule["reasons"] == ["interval_straddles_threshold"]
    assert rule["interval"]["low"] < 0.8 < rule["estimate"]
    assert 0 < rule["resolution"] < 0.2
    assert rule["sentence"].endswith(
        "; if the true rate were 0.850, PASS would need 494 cases or more (the power stays above 80% from there)."
    )


def test_a_set_too_small_to_ever_pass_says_so(project: Project) -> None:
    project.write(cases=labelled_cases(20, 20), rules="  - {id: accurate, criterion: correct, min: 0.95}")
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert "set_too_small" in rule["reasons"]
    assert "this set can never clear min 0.95: even a perfect result needs at least 72 cases, it has 20" in rule["sentence"]


def test_max_rule_is_decided_on_the_upper_bound(project: Project) -> None:
    # Criterion `wrong` passes when the output is 0: 2 of 200 -> upper bound 0.0357 <= 0.05.
    cases = [{"id": f"c{i}", "answer": 1 if i < 2 else 0, "expected": {"label": 1}} for i in range(200)]
    project.write(
        cases=cases,
        evaluators="  - {type: label_match, field: label, criterion: wrong}",
        rules="  - {id: rarely_wrong, criterion: wrong, max: 0.05}",
    )
    code, data = report(project)
    assert code == ExitCode.PASS
    assert data["rules"][0]["interval"]["high"] <= 0.05


def test_groups_without_permission_are_manual_review(project: Project) -> None:
    cases = labelled_cases(120, 110)
    for i, case in enumerate(cases):
        case["group"] = f"g{i // 3}"
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}")
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW
    rule = data["rules"][0]
    assert rule["interval"]["approximate"] is True
    assert rule["interval"]["method"].startswith("clustered")
    assert "approximate_method" in rule["reasons"]
    assert "allow_approximate_methods: true" in rule["sentence"]


def test_groups_with_permission_decide(project: Project) -> None:
    cases = labelled_cases(120, 110)
    for i, case in enumerate(cases):
        case["group"] = f"g{i // 3}"
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}", policy_extra="  allow_approximate_methods: true\n")
    code, data = report(project)
    assert code == ExitCode.PASS
    assert data["rules"][0]["details"]["n_clusters"] == 40


def test_few_groups_stay_manual_review_even_when_allowed(project: Project) -> None:
    cases = labelled_cases(100, 95)
    for i, case in enumerate(cases):
        case["group"] = f"g{i // 10}"
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}", policy_extra="  allow_approximate_methods: true\n")
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW
    assert "few_clusters" in data["rules"][0]["reasons"]


def test_gate_verdict_is_the_worst_rule(project: Project) -> None:
    project.write(
        cases=labelled_cases(100, 85),
        rules="  - {id: easy, criterion: correct, min: 0.5}\n  - {id: hard, criterion: correct, min: 0.95}\n  - {id: mid, criterion: correct, min: 0.8}",
    )
    code, data = report(project)
    assert [rule["verdict"] for rule in data["rules"]] == ["PASS", "FAIL", "INSUFFICIENT_EVIDENCE"]
    assert code == ExitCode.FAIL


def test_missing_outputs_count_against_the_lower_bound_and_for_the_upper(project: Project) -> None:
    dropped = [f"c{i:05d}" for i in range(10)]
    args = " ".join(f"--drop {case_id}" for case_id in dropped)
    project.write(cases=labelled_cases(100, 100), system_args=args, rules="  - {id: accurate, criterion: correct, min: 0.8}")
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["missing"] == 10
    assert "missing_outputs" in rule["reasons"]
    # Lower bound: 90 passes of 100; upper: 100 of 100.
    from scipy.stats import beta

    assert rule["interval"]["low"] == pytest.approx(beta.ppf(0.025, 90, 11), abs=1e-9)
    assert rule["interval"]["high"] == 1.0
    assert sorted(data["criteria"]["correct"]["missing_ids"]) == dropped
    assert code == ExitCode.PASS  # 0.826 >= 0.8 even with every missing case counted as a failure


def test_junit_has_one_testcase_per_rule(project: Project) -> None:
    project.write(cases=labelled_cases(100, 85), rules="  - {id: easy, criterion: correct, min: 0.5}\n  - {id: mid, criterion: correct, min: 0.8}")
    junit = project.root / "junit.xml"
    assert project.cli("gate", "--junit", str(junit)) == ExitCode.INSUFFICIENT_EVIDENCE
    suite = ET.parse(junit).getroot()
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["easy", "mid"]
    assert cases[0].find("failure") is None
    failure = cases[1].find("failure")
    assert failure is not None and failure.get("type") == "INSUFFICIENT_EVIDENCE"
    assert suite.get("failures") == "1" and suite.get("tests") == "2"
    assert cases[1].get("file", "").endswith("release.yaml") and cases[1].get("line") is not None


def test_json_report_carries_identity(project: Project) -> None:
    project.write(cases=labelled_cases(30, 30))
    _, data = report(project)
    assert data["schema"] == "oloproof.gate/1"
    assert data["checker"]["version"] and data["checker"]["source_digest"].startswith("sha256:")
    assert data["testset"]["digest"].startswith("sha256:") and data["testset"]["set"] == "dev"
    assert data["config"]["digest"].startswith("sha256:")
    assert data["system"]["version"] == "v1"
    assert data["run"]["checker"] == data["checker"]


def test_expected_never_reaches_the_system(project: Project, tmp_path: Path) -> None:
    seen = tmp_path / "stdin.jsonl"
    project.write(cases=labelled_cases(5, 5), system_args=f"--record {seen}")
    project.cli("gate")
    lines = [json.loads(line) for line in seen.read_text().splitlines()]
    assert len(lines) == 5
    assert all(set(line) == {"id", "answer"} for line in lines)


def _import(project: Project, version: str, right: int, n: int) -> None:
    preds = project.root / f"{version}.jsonl"
    preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1 if i < right else 0}) + "\n" for i in range(n)))
    assert project.cli("run", "--outputs", str(preds), "--version", version) == 0


def test_regression_guard_is_decided_on_the_paired_interval(project: Project) -> None:
    # Same 300 cases: the baseline gets the first 270 right, the new version the first 268.
    project.write(cases=labelled_cases(300, 300), rules="  - {id: no_regression, criterion: correct, baseline: 'version:old', max_drop: 0.05}")
    _import(project, "old", 270, 300)
    _import(project, "new", 268, 300)
    out = project.root / "g.json"
    assert project.cli("gate", "--run", "version:new", "--json", str(out)) == ExitCode.PASS
    rule = json.loads(out.read_text())["rules"][0]
    assert rule["details"]["b"] == 0 and rule["details"]["c"] == 2
    assert "melded" in rule["interval"]["method"]
    assert rule["interval"]["approximate"] is False
    assert -0.05 <= rule["interval"]["low"] < rule["estimate"] == pytest.approx(-2 / 300)


def test_regression_guard_fails_a_large_drop(project: Project) -> None:
    project.write(cases=labelled_cases(300, 300), rules="  - {id: no_regression, criterion: correct, baseline: 'version:old', max_drop: 0.05}")
    _import(project, "old", 290, 300)
    _import(project, "new", 220, 300)
    assert project.cli("gate", "--run", "version:new") == ExitCode.FAIL


def test_regression_guard_on_another_test_set_is_insufficient(project: Project) -> None:
    guard = "  - {id: no_regression, criterion: correct, baseline: 'version:old', max_drop: 0.05}"
    project.write(cases=labelled_cases(30, 30), rules=guard)
    _import(project, "old", 30, 30)
    project.write(cases=labelled_cases(31, 31), rules=guard)
    _import(project, "new", 31, 31)
    out = project.root / "g.json"
    # version:old counts the runs on this test set: there is none, and the error says where its run is
    assert project.cli("gate", "--run", "version:new", "--json", str(out)) == ExitCode.USAGE
    assert not out.exists()
    # a run id names its run wherever it was made: then the paired comparison is impossible
    old = RunStore(project.root).records()[0].run_id
    project.write(rules=guard.replace("version:old", old))
    assert project.cli("gate", "--run", "version:new", "--json", str(out)) == ExitCode.INSUFFICIENT_EVIDENCE
    assert json.loads(out.read_text())["rules"][0]["reasons"] == ["baseline_mismatch"]
