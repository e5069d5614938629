"""The recipe across seeds, through the real CLI: `oloproof seeds` and the gate's recipe rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, labelled_cases

POLICY_APPROX = "confidence: 0.95\nallow_approximate_methods: true\nrules:\n  - {id: r, criterion: correct, min: 0.5}\n"


def seeds_file(project: Project, names: list[str], *, min_: float = 0.8) -> Path:
    checkpoints = ", ".join(f"{name}: 'version:{name}'" for name in names)
    path = project.root / "seeds.yaml"
    path.write_text(f"recipe: r1\ncheckpoints: {{{checkpoints}}}\nrule: {{id: recipe_ok, criterion: correct, min: {min_}}}\n")
    (project.root / "recipe.yaml").write_text(POLICY_APPROX)
    return path


def import_seed(project: Project, name: str, outcomes: np.ndarray, *, answered: np.ndarray | None = None) -> None:
    lines = []
    for i, right in enumerate(outcomes):
        if answered is not None and not answered[i]:
            continue
        lines.append(json.dumps({"id": f"c{i:05d}", "label": 1 if right else 0}))
    preds = project.root / f"{name}.jsonl"
    preds.write_text("\n".join(lines) + "\n")
    assert project.cli("run", "--outputs", str(preds), "--version", name) == 0


def five_seeds(project: Project, n: int = 300, seed: int = 11) -> None:
    rng = np.random.default_rng(seed)
    ease = rng.uniform(0.6, 1.0, size=n)  # per-case difficulty shared by every seed
    project.write(cases=labelled_cases(n, n))
    for k in range(5):
        import_seed(project, f"s{k + 1}", rng.uniform(size=n) < ease)


def seeds_cli(project: Project, *extra: str) -> tuple[int, dict]:
    out = project.root / "seeds.json"
    code = project.cli("seeds", str(project.root / "seeds.yaml"), "--json", str(out), *extra)
    return code, json.loads(out.read_text())


def test_five_seeds_pass_with_permission_and_need_review_without(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, [f"s{k}" for k in range(1, 6)], min_=0.7)
    code, data = seeds_cli(project, "--policy", str(project.root / "recipe.yaml"))
    rule = data["rule"]
    assert code == ExitCode.PASS and rule["verdict"] == "PASS"
    assert rule["interval"]["method"] == "crossed-anova-logit-t" and rule["interval"]["approximate"] is True
    assert rule["interval"]["low"] >= 0.7
    assert [cp["version"] for cp in data["checkpoints"]] == ["s1", "s2", "s3", "s4", "s5"]
    assert len(data["unstable_case_ids"]) > 0
    # The release's own policy does not allow approximate methods: MANUAL_REVIEW.
    code, data = seeds_cli(project)
    assert code == ExitCode.MANUAL_REVIEW and "approximate_method" in data["rule"]["reasons"]


def test_fewer_than_three_seeds_are_insufficient(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, ["s1", "s2"], min_=0.5)
    code, data = seeds_cli(project, "--policy", str(project.root / "recipe.yaml"))
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["rule"]["reasons"][0] == "too_few_seeds"


def test_a_failed_seed_is_kept_and_widens_the_interval(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, [f"s{k}" for k in range(1, 6)], min_=0.7)
    _, full = seeds_cli(project, "--policy", str(project.root / "recipe.yaml"))
    # A sixth checkpoint whose training failed: it answered nothing.
    import_seed(project, "s6", np.ones(300, dtype=bool), answered=np.zeros(300, dtype=bool))
    seeds_file(project, [f"s{k}" for k in range(1, 7)], min_=0.7)
    code, data = seeds_cli(project, "--policy", str(project.root / "recipe.yaml"))
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["checkpoints"][5]["missing"] == 300
    assert "missing_outputs" in data["rule"]["reasons"]
    assert data["rule"]["interval"]["low"] < full["rule"]["interval"]["low"]
    assert data["rule"]["interval"]["high"] > full["rule"]["interval"]["high"]


def test_a_checkpoint_without_a_run_is_insufficient_evidence(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, ["s1", "s2", "s3", "nope"])
    code, data = seeds_cli(project, "--policy", str(project.root / "recipe.yaml"))
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["rule"]["reasons"] == ["seed_runs_missing"]
    assert "no run for nope (ref 'version:nope': no run of version 'nope'" in data["rule"]["sentence"]


def test_same_version_twice_and_other_test_sets_are_rejected(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    five_seeds(project)
    path = project.root / "seeds.yaml"
    path.write_text("recipe: r\ncheckpoints: {a: 'version:s1', b: 'version:s1', c: 'version:s2'}\nrule: {id: x, criterion: correct, min: 0.5}\n")
    assert project.cli("seeds", str(path)) == ExitCode.USAGE
    assert "checkpoints a and b are both version 's1': each checkpoint must map to its own system version" in capsys.readouterr().err
    seeds_file(project, ["s1", "s2", "s3"])
    ids = [record.run_id for record in RunStore(project.root).records()]
    project.write(cases=labelled_cases(301, 301))  # the test set changed since the seed runs
    # version:NAME counts the runs on this test set: the seeds are missing here, and it says where they are
    assert project.cli("seeds", str(path)) == ExitCode.INSUFFICIENT_EVIDENCE
    out = capsys.readouterr().out
    assert "seed_runs_missing" in out or "no run for s1" in out
    assert "its 1 run(s) were made on other test sets" in " ".join(out.split())
    # a run id names its run wherever it was made, and a run on another set is refused
    path.write_text(f"recipe: r\ncheckpoints: {{a: {ids[0]}, b: {ids[1]}, c: {ids[2]}}}\nrule: {{id: x, criterion: correct, min: 0.5}}\n")
    assert project.cli("seeds", str(path)) == ExitCode.USAGE
    assert "every checkpoint must run the same test set" in capsys.readouterr().err


def test_a_grouped_test_set_is_rejected(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = labelled_cases(40, 40)
    for i, case in enumerate(cases):
        case["group"] = f"g{i // 4}"
    project.write(cases=cases)
    for k in range(3):
        import_seed(project, f"s{k + 1}", np.ones(40, dtype=bool))
    seeds_file(project, ["s1", "s2", "s3"])
    assert project.cli("seeds", str(project.root / "seeds.yaml")) == ExitCode.USAGE
    assert "declares groups; the crossed cases × seeds interval assumes independent cases" in capsys.readouterr().err


def test_the_gate_decides_the_recipe_rule_when_seeds_are_declared(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, [f"s{k}" for k in range(1, 6)], min_=0.7)
    project.write(extra="seeds: seeds.yaml\n", policy_extra="  allow_approximate_methods: true\n",
                  rules="  - {id: accurate, criterion: correct, min: 0.1}")
    out = project.root / "gate.json"
    code = project.cli("gate", "--json", str(out), "--run", "version:s1")
    data = json.loads(out.read_text())
    assert [rule["id"] for rule in data["rules"]] == ["accurate", "recipe_ok"]
    assert data["rules"][1]["verdict"] == "PASS" and code == ExitCode.PASS
    assert data["rules"][1]["source"].endswith("seeds.yaml") and data["rules"][1]["line"] == 3


def test_the_recipe_verdict_joins_the_gate(project: Project) -> None:
    five_seeds(project)
    seeds_file(project, ["s1", "s2"], min_=0.7)
    project.write(extra="seeds: seeds.yaml\n", rules="  - {id: accurate, criterion: correct, min: 0.1}")
    assert project.cli("gate", "--run", "version:s1") == ExitCode.INSUFFICIENT_EVIDENCE


def test_seeds_config_errors_name_the_file(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    five_seeds(project)
    (project.root / "seeds.yaml").write_text("recipe: r\ncheckpoints: {a: latest}\nrule: {id: x, criterion: corect, min: 0.5}\n")
    project.write(extra="seeds: seeds.yaml\n")
    assert project.cli("gate") == ExitCode.USAGE
    assert capsys.readouterr().err.strip().endswith(
        "seeds.yaml:3: rule.criterion: no evaluator provides criterion 'corect' (did you mean 'correct'?); available: correct"
    )


def test_html_lists_every_case_under_every_checkpoint_escaped(project: Project) -> None:
    cases = labelled_cases(12, 12)
    cases[0]["id"] = "<script>alert(1)</script>"
    project.write(cases=cases)
    for k in range(3):
        lines = [json.dumps({"id": case["id"], "label": 1}) for case in cases]
        (project.root / f"p{k}.jsonl").write_text("\n".join(lines) + "\n")
        assert project.cli("run", "--outputs", str(project.root / f"p{k}.jsonl"), "--version", f"s{k}") == 0
    seeds_file(project, ["s0", "s1", "s2"])
    page = project.root / "seeds.html"
    project.cli("seeds", str(project.root / "seeds.yaml"), "--html", str(page))
    text = page.read_text()
    assert "<script>" not in text and "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert text.count("<tr") == 13 and text.count('class="pass"') == 36
    assert "http://" not in text and "https://" not in text


def test_run_command_override_records_its_own_version(project: Project) -> None:
    project.write(cases=labelled_cases(5, 5))
    import sys

    from tests.conftest import ECHO

    assert project.cli("run", "--version", "seed_9", "--command", f"{sys.executable} {ECHO}") == 0
    from oloproof.runstore import RunStore

    record = RunStore(project.root).resolve("version:seed_9")
    assert record.status == "ok" and record.command == f"{sys.executable} {ECHO}"
