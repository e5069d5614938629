"""Paths where a gate could have passed without evidence, or wasted a run: each one closed."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from oloproof.errors import ExitCode
from oloproof.files import seal
from oloproof.runstore import RunStore
from tests.conftest import Project, labelled_cases, report


def preds(project: Project, name: str, n: int, right: int) -> str:
    path = project.root / f"{name}.jsonl"
    path.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1 if i < right else 0}) + "\n" for i in range(n)))
    return str(path)


def test_a_failed_run_is_kept_but_not_reused(project: Project) -> None:
    project.write(cases=labelled_cases(20, 20), system_args="--exit 9")
    assert project.cli("gate") == ExitCode.INSUFFICIENT_EVIDENCE
    project.write(cases=labelled_cases(20, 20))  # the system is fixed
    assert project.cli("gate") == ExitCode.PASS
    statuses = [record.status for record in RunStore(project.root).records()]
    assert statuses == ["failed", "ok"]


def test_a_baseline_that_is_the_gated_version_decides_nothing(project: Project) -> None:
    project.write(cases=labelled_cases(100, 100), rules="  - {id: no_regression, criterion: correct, baseline: latest, max_drop: 0.05}")
    out = project.root / "g.json"
    project.cli("run")
    assert project.cli("gate", "--json", str(out)) == ExitCode.INSUFFICIENT_EVIDENCE
    rule = json.loads(out.read_text())["rules"][0]
    assert rule["reasons"] == ["baseline_is_gated_version"]


def test_an_unknown_baseline_is_a_config_error_before_any_run(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(10, 10), rules="  - {id: no_regression, criterion: correct, baseline: 'version:v0', max_drop: 0.05}")
    assert project.cli("gate") == ExitCode.USAGE
    err = capsys.readouterr().err.strip()
    assert "release.yaml:12: policy.rules[0].baseline: ref 'version:v0': no run of version 'v0' on " in err
    assert re.search(r"data/test\.jsonl \(sha256:[0-9a-f]{12}…\)$", err), err
    assert RunStore(project.root).records() == []


def test_a_case_missing_its_expected_value_is_found_before_the_system_runs(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = labelled_cases(10, 10)
    cases[4]["expected"] = {"score": 1}
    project.write(cases=cases)
    assert project.cli("gate") == ExitCode.USAGE
    assert "data/test.jsonl:5: case 'c00004': expected has no 'label'" in capsys.readouterr().err
    assert RunStore(project.root).records() == []


def test_gating_another_versions_run_says_so_everywhere(project: Project) -> None:
    project.write(cases=labelled_cases(40, 40))
    assert project.cli("run", "--outputs", preds(project, "o", 40, 40), "--version", "other-model") == 0
    out, junit = project.root / "g.json", project.root / "g.xml"
    assert project.cli("gate", "--run", "version:other-model", "--json", str(out), "--junit", str(junit)) == ExitCode.PASS
    data = json.loads(out.read_text())
    assert data["system"]["version"] == "other-model" and data["system"]["declared_version"] == "v1"
    assert 'name="system.version" value="other-model"' in junit.read_text()


def test_two_gates_at_once_run_the_system_once(project: Project) -> None:
    project.write(cases=labelled_cases(30, 30))
    gates = [
        subprocess.Popen([sys.executable, "-m", "oloproof", "gate", "-q", "-c", project.config], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    codes = [gate.wait(timeout=120) for gate in gates]
    assert codes == [0, 0]
    assert len(RunStore(project.root).records()) == 1
    assert (project.root / ".oloproof" / ".gitignore").read_text().endswith(".locks/\n")


def test_a_checker_change_between_baseline_and_today_is_reported(project: Project) -> None:
    project.write(cases=labelled_cases(200, 200), rules="  - {id: no_regression, criterion: correct, baseline: 'version:old', max_drop: 0.05}")
    assert project.cli("run", "--outputs", preds(project, "old", 200, 190), "--version", "old") == 0
    assert project.cli("run", "--outputs", preds(project, "new", 200, 190), "--version", "new") == 0
    # Simulate a baseline recorded by another oloproof: its stored identity differs.
    store = RunStore(project.root)
    meta = store.runs_dir / store.resolve("version:old").run_id / "run.json"
    data = json.loads(meta.read_text())
    data["checker"] = {"version": "0.0.9", "source_digest": "sha256:" + "0" * 64}
    meta.write_text(json.dumps(seal(data)))  # as that oloproof would have sealed it
    code, report_data = report(project, "--run", "version:new")
    rule = report_data["rules"][0]
    assert rule["details"]["checker_changed"] is True
    assert "the checker changed in between" in rule["sentence"]
    assert code == ExitCode.PASS
