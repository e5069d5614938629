"""Checkpoints declared by the command that runs them: run when no stored run can stand in, stored
like any run (sealed, fingerprinted), reused afterwards by the gate's rules, run again when a file
it names changed or with --rerun; a failing or missing command is named; Ctrl-C keeps nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import FIXTURES, Project, labelled_cases

SEED_SYSTEM = FIXTURES / "seed_system.py"
POLICY = "confidence: 0.95\nallow_approximate_methods: true\nrules:\n  - {id: r, criterion: correct, min: 0.5}\n"


def checkpoint(k: int, *extra: str) -> str:
    return " ".join([sys.executable, str(SEED_SYSTEM), "--weights", f"weights/seed_{k}.json", *extra])


def setup(project: Project, k: int = 5, *, wrapped: bool = False, extra: dict[int, str] | None = None) -> Path:
    project.write(cases=labelled_cases(200, 200))
    (project.root / "weights").mkdir(exist_ok=True)
    for i in range(1, k + 1):
        (project.root / "weights" / f"seed_{i}.json").write_text(json.dumps({"seed": i, "error": 0.05 + 0.01 * i}))
    lines = [f"  seed_{i}: {{command: '{(extra or {}).get(i, checkpoint(i))}'}}" for i in range(1, k + 1)]
    body = "recipe: r1\ncheckpoints:\n" + "\n".join(lines) + "\nrule: {id: recipe_ok, criterion: correct, min: 0.7}\n"
    if wrapped:
        body = "seeds:\n" + "".join(f"  {line}\n" for line in body.splitlines())
    path = project.root / "seeds.yaml"
    path.write_text(body)
    (project.root / "recipe.yaml").write_text(POLICY)
    return path


def seeds(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "seeds.json"
    out.unlink(missing_ok=True)
    code = project.cli("seeds", str(project.root / "seeds.yaml"), "--policy", str(project.root / "recipe.yaml"),
                       "--json", str(out), *extra)
    return code, (json.loads(out.read_text()) if out.exists() else {})


def made(data: dict[str, Any]) -> list[str]:
    return [cp["run"] for cp in data["checkpoints"]]


def test_a_declared_command_runs_once_and_is_reused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    code, first = seeds(project)
    assert code == ExitCode.PASS and made(first) == ["new"] * 5
    assert [cp["version"] for cp in first["checkpoints"]] == [f"seed_{k}" for k in range(1, 6)]
    out = capsys.readouterr().out
    assert "│ seed_1     │ " in out and "│ now  │" in out
    # Stored like any run: sealed, fingerprinted by the files its command names.
    record = RunStore(project.root).resolve("version:seed_3")
    assert record.command == checkpoint(3) and record.status == "ok"
    assert record.fingerprint is not None and "weights/seed_3.json" in record.fingerprint.files
    code, second = seeds(project)
    assert code == ExitCode.PASS and made(second) == ["reused"] * 5
    assert [cp["run_id"] for cp in second["checkpoints"]] == [cp["run_id"] for cp in first["checkpoints"]]
    assert second["rule"]["interval"] == first["rule"]["interval"]
    assert "│ reused │" in capsys.readouterr().out
    assert len(RunStore(project.root).records()) == 5


def test_a_changed_weights_file_means_a_new_run_and_rerun_forces_one(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    _, first = seeds(project)
    (project.root / "weights" / "seed_2.json").write_text(json.dumps({"seed": 2, "error": 0.2}))
    capsys.readouterr()
    _, second = seeds(project)
    assert made(second) == ["reused", "new", "reused", "reused", "reused"]
    assert second["checkpoints"][1]["notes"] == [
        f"not reused: run {first['checkpoints'][1]['run_id']} was made with other system files "
        "(weights/seed_2.json changed since): run again"
    ]
    assert "seed_2: not reused: run " in capsys.readouterr().out
    _, third = seeds(project, "--rerun")
    assert made(third) == ["new"] * 5


def test_the_wrapped_form_is_the_same_seeds_file(project: Project) -> None:
    setup(project, wrapped=True)
    code, data = seeds(project)
    assert code == ExitCode.PASS and made(data) == ["new"] * 5


def test_a_failing_checkpoint_is_named_and_cannot_pass(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    broken = " ".join([sys.executable, str(SEED_SYSTEM), "--weights", "weights/seed_9.json"])
    setup(project, extra={3: broken})
    code, data = seeds(project)
    assert code != ExitCode.PASS and data["rule"]["verdict"] != "PASS"
    third = data["checkpoints"][2]
    assert third["status"] == "failed" and third["missing"] == 200 and third["run"] == "new"
    assert "The run of seed_3 (batch 1: system exited with status 1) failed" in data["rule"]["sentence"]
    assert data["rule"]["details"]["failed_checkpoints"] == ["seed_3"]
    out = capsys.readouterr().out
    assert "seed_3: run failed: batch 1: system exited with status 1" in out
    assert "seed_3: | FileNotFoundError" in out
    # A failed run is kept but never reused: the next command runs it again.
    _, again = seeds(project)
    assert made(again) == ["reused", "reused", "new", "reused", "reused"]


def test_a_command_that_cannot_start_is_a_config_error_at_its_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, extra={2: "no-such-program-xyz --weights weights/seed_2.json"})
    code, _ = seeds(project)
    assert code == ExitCode.USAGE
    err = capsys.readouterr().err.strip()
    assert err.endswith("seeds.yaml:4: checkpoints.seed_2.command: command not found: 'no-such-program-xyz'")


@pytest.mark.parametrize(
    ("checkpoints", "message"),
    [
        ("{a: {command: x, version: v}, b: {command: y, version: v}}",
         "seeds.yaml:2: checkpoints.b.version: checkpoints a and b are both version 'v': each checkpoint must map to "
         "its own system version"),
        ("{a: {command: 'python \"x'}}", "seeds.yaml:2: checkpoints.a.command: cannot split the command: No closing quotation"),
        ("{a: {command: x, version: v1}}",
         "seeds.yaml:2: checkpoints.a: version 'v1' is system.version in release.yaml, run by another command; give "
         "the checkpoint a version of its own"),
        ("{a: {command: x, timeout_s: 0}}", "seeds.yaml:2: checkpoints.a.timeout_s: expected a number > 0, got 0"),
        ("{a: {command: x, artifacts: [nope.bin]}}",
         "seeds.yaml:2: checkpoints.a.artifacts[0]: nope.bin: no such file or directory (relative to the directory of "
         "release.yaml)"),
        ("{a: {command: x, wieghts: y}}",
         "seeds.yaml:2: checkpoints.a.wieghts: unknown key; allowed keys: artifacts, command, timeout_s, version"),
    ],
)
def test_checkpoint_declarations_are_checked_before_anything_runs(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, checkpoints: str, message: str
) -> None:
    project.write(cases=labelled_cases(20, 20))
    (project.root / "seeds.yaml").write_text(f"recipe: r\ncheckpoints: {checkpoints}\nrule: {{id: x, criterion: correct, min: 0.5}}\n")
    monkeypatch.chdir(project.root)
    assert project.cli("seeds", "seeds.yaml") == ExitCode.USAGE
    assert capsys.readouterr().err.strip().endswith(message)
    assert not (project.root / ".oloproof" / "runs").exists()


def test_refs_are_resolved_before_a_command_runs(project: Project) -> None:
    setup(project, k=3)
    for k in (1, 2):
        assert project.cli("run", "--version", f"seed_{k}", "--command", checkpoint(k)) == 0
    (project.root / "seeds.yaml").write_text(
        "recipe: r1\ncheckpoints: {a: latest~1, b: latest, c: {command: '" + checkpoint(3) + "'}}\n"
        "rule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
    )
    _, data = seeds(project)
    assert [cp["version"] for cp in data["checkpoints"]] == ["seed_1", "seed_2", "c"]
    assert made(data) == ["ref", "ref", "new"]


def test_a_checkpoint_timeout_fails_its_run(project: Project) -> None:
    project.write(cases=labelled_cases(10, 10))
    (project.root / "weights").mkdir()
    (project.root / "weights" / "seed_1.json").write_text(json.dumps({"seed": 1, "error": 0.1}))
    (project.root / "seeds.yaml").write_text(
        "recipe: r\ncheckpoints:\n  a: {command: '" + checkpoint(1, "--hang") + "', timeout_s: 0.5}\n"
        "rule: {id: x, criterion: correct, min: 0.5}\n"
    )
    (project.root / "recipe.yaml").write_text(POLICY)
    started = time.monotonic()
    code, data = seeds(project)
    assert time.monotonic() - started < 20
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and data["checkpoints"][0]["status"] == "failed"
    assert "timed out" in RunStore(project.root).resolve("version:a").failure


def test_ctrl_c_during_a_checkpoint_keeps_nothing_half_written(project: Project) -> None:
    tag = f"seed-interrupt-{uuid.uuid4().hex}"
    setup(project, k=3, extra={2: checkpoint(2, "--hang", "--tag", tag)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "seeds", "seeds.yaml", "--policy", "recipe.yaml"],
        cwd=project.root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "CI": "1"},
    )
    deadline = time.monotonic() + 30
    while not subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split():
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("the checkpoint never started")
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == ExitCode.INTERRUPTED, err
    runs = project.root / ".oloproof" / "runs"
    assert [entry.name for entry in runs.iterdir() if entry.name.startswith(".")] == []  # no temporary directory left
    store = RunStore(project.root)
    assert [record.version for record in store.records()] == ["seed_1"] and store.refused == {}
    time.sleep(0.2)
    assert subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split() == []
    # The next command reuses seed_1 and runs what was interrupted.
    setup(project, k=3)
    code, data = seeds(project)
    assert made(data) == ["reused", "new", "new"] and code == ExitCode.PASS


def test_the_gate_runs_checkpoints_only_when_nothing_blocks_it(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    project.write(extra="leakage: required\nseeds: seeds.yaml\n", policy_extra="  allow_approximate_methods: true\n",
                  rules="  - {id: accurate, criterion: correct, min: 0.5}")
    assert project.cli("gate") == ExitCode.BLOCKED
    assert not (project.root / ".oloproof" / "runs").exists()  # a blocked gate spends nothing on the checkpoints
    project.write(extra="seeds: seeds.yaml\n", policy_extra="  allow_approximate_methods: true\n",
                  rules="  - {id: accurate, criterion: correct, min: 0.5}")
    capsys.readouterr()
    out_file = project.root / "gate.json"
    assert project.cli("gate", "--json", str(out_file)) == ExitCode.PASS
    out = capsys.readouterr().out
    assert "Recipe across seeds: recipe r1: 5 checkpoint(s) (seed_1, seed_2, seed_3, seed_4, seed_5): 5 run now" in out
    assert "  seed_1: run " in out and " made now (ok, 200/200 outputs)" in out
    assert "Failures rarer than about once in 5 seeds" in out and out.count("what this cannot tell:") == 1
    gate = json.loads(out_file.read_text())
    seeds_check = next(check for check in gate["checks"] if check["name"] == "seeds")
    assert [cp["run"] for cp in seeds_check["data"]["checkpoints"]] == ["new"] * 5
    assert any(item.startswith("How the checkpoints were trained") for item in gate["limitations"])
    capsys.readouterr()
    assert project.cli("gate", "--rerun") == ExitCode.PASS
    assert ": 5 run now" in capsys.readouterr().out  # --rerun runs the checkpoints again too
    assert project.cli("gate") == ExitCode.PASS
    assert ": 5 reused" in capsys.readouterr().out


def test_one_checkpoint_declared_twice_is_said(project: Project) -> None:
    setup(project, k=3)
    (project.root / "weights" / "seed_3.json").write_text((project.root / "weights" / "seed_2.json").read_text())
    _, data = seeds(project)
    assert data["rule"]["details"]["identical_files"] == [["seed_2", "seed_3"]]
    assert ("Note: seed_2 and seed_3 ran byte-identical files (one checkpoint under several names); they count as "
            "one seed.") in data["rule"]["sentence"]
    # Three checkpoints, two of them one seed: two seeds cannot judge a recipe.
    assert data["rule"]["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert data["rule"]["reasons"][:2] == ["too_few_seeds", "duplicate_seeds"]


def test_five_copies_of_the_best_checkpoint_are_not_a_recipe(project: Project) -> None:
    setup(project, k=5)
    for k in range(1, 5):
        (project.root / "weights" / f"seed_{k}.json").write_text((project.root / "weights" / "seed_5.json").read_text())
    code, data = seeds(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["rule"]["details"]["k"] == 1 and "too_few_seeds" in data["rule"]["reasons"]
