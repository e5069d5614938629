"""Refs mean what they say (docs/runs.md, "Refs"): ``version:NAME`` and ``latest~N`` count the runs
on the current test set, so a stray run of another config (another test set in the same store)
never breaks a ``baseline:`` rule, ``compare`` or a seeds block; and a seeds block's ``latest~4 …
latest`` names the same five runs on every gate, never the run a gate adds."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import ECHO, Project, labelled_cases, write_cases

REGRESSION = "  - {id: no_regression, criterion: correct, baseline: 'version:v1', max_drop: 0.05}"


def import_run(project: Project, version: str, n: int, correct: int, *, config: str | None = None, prefix: str = "c") -> None:
    preds = project.root / f"{version}-{prefix}.jsonl"
    preds.write_text("".join(json.dumps({"id": f"{prefix}{i:05d}", "label": 1 if i < correct else 0}) + "\n" for i in range(n)))
    assert main(["run", "-c", config or project.config, "--outputs", str(preds), "--version", version]) == 0


def stray_config(project: Project) -> str:
    """Another config in the same directory (so the same run store), on another test set."""
    write_cases(project.root / "data" / "other.jsonl", labelled_cases(30, 30, prefix="o"))
    text = (project.root / "release.yaml").read_text().replace("data/test.jsonl", "data/other.jsonl")
    (project.root / "other.yaml").write_text(text)
    return str(project.root / "other.yaml")


def gate(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "gate.json"
    out.unlink(missing_ok=True)
    code = project.cli("gate", "--json", str(out), *extra)
    return code, (json.loads(out.read_text()) if out.exists() else {})


def rule(data: dict[str, Any], rule_id: str) -> dict[str, Any]:
    [found] = [item for item in data["rules"] if item["id"] == rule_id]
    return found


def test_a_stray_run_of_the_baseline_version_on_another_test_set_does_not_break_the_guard(project: Project) -> None:
    project.write(cases=labelled_cases(100, 80), version="v2", rules=REGRESSION)  # v2 answers 80 of 100
    import_run(project, "v1", 100, 100)  # v1 answered every case right
    code, data = gate(project)
    assert code == ExitCode.FAIL and rule(data, "no_regression")["verdict"] == "FAIL"
    baseline = rule(data, "no_regression")
    # another config's run of "v1" on another test set, made after: the newest v1 run overall
    import_run(project, "v1", 30, 30, config=stray_config(project), prefix="o")
    for _ in range(2):
        code, again = gate(project)
        assert code == ExitCode.FAIL, again["rules"]
        assert rule(again, "no_regression")["verdict"] == "FAIL"
        assert rule(again, "no_regression")["reasons"] == baseline["reasons"]
        assert rule(again, "no_regression")["sentence"] == baseline["sentence"]  # the same baseline run


def test_compare_with_a_stray_run_of_another_config(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(100, 80), version="v2")
    import_run(project, "v1", 100, 100)
    import_run(project, "v2", 100, 80)
    import_run(project, "v2", 30, 30, config=stray_config(project), prefix="o")
    capsys.readouterr()
    out = project.root / "cmp.json"
    assert project.cli("compare", "version:v1", "version:v2", "--max-drop", "0.05", "--json", str(out)) == ExitCode.FAIL
    data = json.loads(out.read_text())
    assert data["b"]["version"] == "v2" and data["paired"]["n"] == 100
    assert project.cli("compare", "latest~1", "latest") == 0  # latest: the newest run on this test set
    assert "were made on different test sets" not in capsys.readouterr().err


def test_a_version_with_runs_only_on_other_test_sets_says_so(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(100, 80), version="v2", rules=REGRESSION)
    import_run(project, "v1", 30, 30, config=stray_config(project), prefix="o")
    capsys.readouterr()
    assert project.cli("gate") == ExitCode.USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "release.yaml:12: policy.rules[0].baseline: ref 'version:v1': no run of version 'v1' on" in err, err
    assert "data/test.jsonl (sha256:" in err
    assert "its 1 run(s) were made on other test sets (sha256:" in err and "run version 'v1' on this test set" in err
    assert project.cli("compare", "version:v1", "latest") == ExitCode.USAGE
    assert "its 1 run(s) were made on other test sets" in " ".join(capsys.readouterr().err.split())
    assert project.cli("runs", "version:v1") == ExitCode.USAGE
    assert project.cli("runs", RunStore(project.root).records()[0].run_id) == 0  # a run id names it wherever it was made


def test_runs_lists_refs_counted_on_the_current_test_set(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(10, 10))
    import_run(project, "a", 10, 10)
    import_run(project, "b", 30, 30, config=stray_config(project), prefix="o")
    import_run(project, "c", 10, 10)
    capsys.readouterr()
    assert project.cli("runs") == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "│" in line and "run id" not in line]
    refs = {row.split("│")[3].strip(): row.split("│")[1].strip() for row in rows}
    assert refs == {"a": "latest~1", "b": "(other set)", "c": "latest"}


SEEDS_BLOCK = (
    "seeds:\n  recipe: loan-model\n"
    "  checkpoints: {seed_1: latest~4, seed_2: latest~3, seed_3: latest~2, seed_4: latest~1, seed_5: latest}\n"
    "  rule: {id: recipe_accurate, criterion: correct, min: 0.5}\n"
)


def seed_runs(project: Project) -> list[str]:
    """The guide's five `oloproof run`s, one version each."""
    for k in range(1, 6):
        command = f"{sys.executable} {ECHO} --drop c{k:05d}"
        assert project.cli("run", "--version", f"seed_{k}", "--command", command, "--quiet") == 0
    return [record.run_id for record in RunStore(project.root).records()]


def checkpoints_of(data: dict[str, Any]) -> list[tuple[str, str]]:
    [seeds] = [check for check in data["checks"] if check["name"] == "seeds"]
    return [(cp["name"], cp["run_id"]) for cp in seeds["data"]["checkpoints"]]


def test_latest_tilde_n_seeds_pick_the_same_five_runs_on_every_gate(project: Project) -> None:
    project.write(cases=labelled_cases(40, 36), extra=SEEDS_BLOCK, policy_extra="  allow_approximate_methods: true\n")
    expected = list(zip([f"seed_{k}" for k in range(1, 6)], seed_runs(project), strict=True))
    stray = stray_config(project)
    for number in range(4):
        code, data = gate(project, "--rerun")  # every gate adds a run of the released system
        assert code in (ExitCode.PASS, ExitCode.FAIL, ExitCode.INSUFFICIENT_EVIDENCE), data
        assert checkpoints_of(data) == expected, f"gate {number + 1}"
        assert data["run"]["run_id"] not in {run_id for _, run_id in expected}
        if number == 1:
            import_run(project, "seed_9", 30, 30, config=stray, prefix="o")  # another config's run
    out = project.root / "seeds.json"
    project.cli("seeds", "--json", str(out))
    assert [(cp["name"], cp["run_id"]) for cp in json.loads(out.read_text())["checkpoints"]] == expected
    assert len([r for r in RunStore(project.root).records() if r.version == "v1"]) == 4


def test_a_latest_ref_beside_a_command_checkpoint_does_not_shift(project: Project) -> None:
    project.write(cases=labelled_cases(40, 36))
    for k in (1, 2):
        command = f"{sys.executable} {ECHO} --drop c{k:05d}"
        assert project.cli("run", "--version", f"seed_{k}", "--command", command, "--quiet") == 0
    ids = [record.run_id for record in RunStore(project.root).records()]
    command = json.dumps(f"{sys.executable} {ECHO}")
    (project.root / "seeds.yaml").write_text(
        f"recipe: r\ncheckpoints: {{a: latest~1, b: latest, c: {{command: {command}}}}}\n"
        "rule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
    )
    out = project.root / "seeds.json"
    for rerun in ((), ("--rerun",), ()):
        out.unlink(missing_ok=True)
        code = project.cli("seeds", str(project.root / "seeds.yaml"), "--json", str(out), *rerun)
        assert code in (ExitCode.INSUFFICIENT_EVIDENCE, ExitCode.MANUAL_REVIEW), rerun
        data = json.loads(out.read_text())
        assert [cp["run_id"] for cp in data["checkpoints"]][:2] == ids, rerun


def test_a_latest_ref_that_only_the_released_system_could_fill_says_why(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=labelled_cases(40, 36), extra=SEEDS_BLOCK, policy_extra="  allow_approximate_methods: true\n")
    seed_runs(project)
    runs = Path(project.root / ".oloproof" / "runs")
    oldest = sorted(RunStore(project.root).records(), key=lambda record: record.created_ns)[0]
    import shutil

    shutil.rmtree(runs / oldest.run_id)  # four seed runs left
    gate(project)  # adds a run of the released system (v1)
    code, data = gate(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    [recipe] = [item for item in data["rules"] if item["id"] == "recipe_accurate"]
    assert recipe["reasons"] == ["seed_runs_missing"]
    text = " ".join(recipe["sentence"].split())
    assert "ref 'latest~4': only 4 runs on " in text and "data/test.jsonl (sha256:" in text
    assert "not counting 1 run(s) of version 'v1' (the released system, whose runs gates add; `version:v1` names them)" in text


def test_gap_with_stray_runs_of_both_versions_on_another_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "ph"
    assert main(["init", "--example", "prompt-holdout", str(target)]) == 0
    monkeypatch.chdir(target)
    assert main(["gap", "--baseline", "version:extract-v1", "--json", "before.json"]) == 0
    write_cases(target / "data" / "other.jsonl", [{"id": f"o{i}", "text": "x", "expected": {"clause": "a"}} for i in range(5)])
    (target / "other.yaml").write_text(
        (target / "release.yaml").read_text().replace("data/dev.jsonl", "data/other.jsonl").split("holdout:")[0]
    )
    (target / "o.jsonl").write_text("".join(json.dumps({"id": f"o{i}", "clause": "a"}) + "\n" for i in range(5)))
    for version in ("extract-v1", "extract-v6"):
        assert main(["run", "-c", "other.yaml", "--outputs", "o.jsonl", "--version", version]) == 0
    assert main(["gap", "--baseline", "version:extract-v1", "--json", "after.json"]) == 0
    before, after = (json.loads((target / name).read_text()) for name in ("before.json", "after.json"))
    assert after["dev"] == before["dev"] and after["real_improvement"] == before["real_improvement"]
