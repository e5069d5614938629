"""The holdout stays reserved (issue 9 §3): by its cases, across configs and directories of the
repository, and a read killed half-way still counts. Through the CLI, on real files and real
processes; the register is the repository's ``.oloproof/holdouts.jsonl``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ECHO, Project, write_cases

from holdout.test_read import holdout_cases, log_path, read, setup, state
from oloproof.cli.main import main


def test_the_holdout_minus_one_case_is_refused_as_a_dev_set(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    near = holdout_cases()[1:]
    for case in near:  # renamed ids and another expected value: the same cases all the same
        case["id"] = "dev-" + case["id"]
        case["expected"] = {"label": 0}
    write_cases(project.root / "data" / "near.jsonl", near)
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("cases: data/test.jsonl", "cases: data/near.jsonl"))
    capsys.readouterr()
    assert project.cli("gate") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "shares 119 case(s) with the declared holdout (holdout.cases): 119 exact copies of holdout inputs, at line(s) 1, 2, 3, 4, 5, … (+114) of the dev set" in err
    assert "h00001" not in err
    assert not (project.root / ".oloproof" / "runs").exists()


def second_config(project: Project, name: str, *, holdout: bool, dev: list[dict[str, object]]) -> Path:
    """Another project in the same repository (a sub-directory), with its own release.yaml and log."""
    other = project.root / name
    (other / "data").mkdir(parents=True)
    write_cases(other / "data" / "test.jsonl", dev)
    lines = [
        "system:", "  version: other-v1", f"  command: {json.dumps([sys.executable, str(ECHO)])}",
        "testset:", "  cases: data/test.jsonl", "evaluators:", "  - {type: label_match, field: label}",
        "policy:", "  rules:", "    - {id: accurate, criterion: correct, min: 0.5}",
    ]
    if holdout:
        write_cases(other / "holdout.jsonl", holdout_cases())
        lines.append("holdout: {cases: holdout.jsonl, budget: 10, log: reads/READS.log}")
    (other / "release.yaml").write_text("\n".join(lines) + "\n")
    return other / "release.yaml"


def git_repository(root: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)


def test_a_second_config_in_the_repository_meets_the_reads_already_made(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    git_repository(project.root)
    setup(project, budget=2)
    assert read(project, "one") == 0 and read(project, "two") == 0
    assert read(project, "three") == 3  # spent here
    other = second_config(project, "copy", holdout=True, dev=[{"id": "o1", "answer": 1, "expected": {"label": 1}}])
    capsys.readouterr()
    assert main(["holdout", "run", "-c", str(other), "--reason", "a fresh budget?"]) == 3
    out = capsys.readouterr().out
    assert "holdout_budget_spent" in out and "2 of 2 reads used" in out
    assert "2 of them of the same cases under other logs (evals/holdout/READS.log)" in out
    assert not (other.parent / "reads" / "READS.log").exists()


def test_a_near_copy_declared_elsewhere_shares_the_budget(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    git_repository(project.root)
    setup(project, budget=3)
    assert read(project, "one") == 0
    other = second_config(project, "near", holdout=True, dev=[{"id": "o1", "answer": 1, "expected": {"label": 1}}])
    write_cases(other.parent / "holdout.jsonl", holdout_cases()[:-1])  # the holdout minus one case: another digest
    capsys.readouterr()
    assert main(["holdout", "run", "-c", str(other), "--reason", "near copy", "--quiet"]) == 0
    assert "appended to reads/READS.log (run 1 of 3 in budget)" in capsys.readouterr().out
    assert main(["holdout", "status", "-c", str(other)]) == 0
    assert "budget: 2 of 3 reads used, 1 left" in capsys.readouterr().out


def test_a_config_without_a_holdout_cannot_score_a_registered_holdouts_cases(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    git_repository(project.root)
    setup(project)
    assert read(project, "week 0") == 0
    other = second_config(project, "elsewhere", holdout=False, dev=holdout_cases()[:30])
    capsys.readouterr()
    assert main(["gate", "-c", str(other)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "shares 30 case(s) with a holdout set of this repository (1 read(s) under evals/holdout/READS.log; .oloproof/holdouts.jsonl): 30 exact copies of holdout inputs, at line(s) 1, 2, 3, 4, 5, … (+25)" in err
    assert main(["run", "-c", str(other)]) == 2


def test_deleting_the_log_and_its_records_does_not_give_the_budget_back(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=2)
    assert read(project, "one") == 0 and read(project, "two") == 0
    log_path(project).unlink()
    for path in (project.root / ".oloproof" / "holdout").iterdir():
        path.unlink()
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("READS.log", "READS-fresh.log"))
    capsys.readouterr()
    assert read(project, "three") == 3
    assert "holdout_budget_spent" in capsys.readouterr().out


def test_the_register_holds_no_case_content(project: Project) -> None:
    setup(project, holdout=holdout_cases(marker=True))
    assert read(project, "one") == 0
    register = (project.root / ".oloproof" / "holdouts.jsonl").read_text()
    assert "MARKER" not in register.upper() and "h00001" not in register and "confidential" not in register
    kinds = [json.loads(line)["kind"] for line in register.splitlines()]
    assert kinds == ["salt", "set", "read"]


SLOW = """
import sys, time
sys.stdin.read()
print("started", flush=True, file=sys.stderr)
time.sleep(60)
"""


def test_a_read_killed_while_the_system_runs_is_counted(project: Project) -> None:
    (project.root / "slow.py").write_text(SLOW)
    setup(project, budget=5)
    text = (project.root / "release.yaml").read_text()
    command = json.dumps([sys.executable, str(project.root / "slow.py")])
    (project.root / "release.yaml").write_text(text.replace(text.split("command: ", 1)[1].split("\n", 1)[0], command, 1))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "holdout", "run", "-c", project.config, "--reason", "killed", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if log_path(project).exists() and b"read 1 | " in log_path(project).read_bytes():
                break
            time.sleep(0.05)
        else:
            pytest.fail("the read never logged its start")
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGKILL)  # the read and the system it started
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    after = state(project)
    assert after.intact and after.reads_used == 1 and after.interrupted
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace(command, json.dumps([sys.executable, str(ECHO)])))
    assert read(project, "again") == 0
    assert state(project).reads_used == 2


def test_status_since_a_commit_sees_reads_removed_from_the_register(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    git_repository(project.root)
    setup(project)
    assert read(project, "one") == 0
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "add", "-A"], cwd=project.root, check=True)
    subprocess.run([*git, "commit", "-qm", "one read"], cwd=project.root, check=True)
    register = project.root / ".oloproof" / "holdouts.jsonl"
    register.write_text("".join(register.read_text().splitlines(keepends=True)[:-1]))
    capsys.readouterr()
    assert project.cli("holdout", "status", "--since", "HEAD") == 3
    assert "the holdout register .oloproof/holdouts.jsonl at HEAD is not a prefix of the register now" in capsys.readouterr().out
