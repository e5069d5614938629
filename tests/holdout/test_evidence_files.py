"""Issue 16, point 4: holdout evidence (READS.log, the register, outcome records) is a regular file,
read with a size cap, in every command — not only in the action. A symlink (it could point at a
rewritten copy), a device, a FIFO or a huge file is refused with exit 2 and a message naming it:
never followed, never read to the end, never waited on, never exit 70."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Project

from tests.holdout.test_read import log_path, read, setup

ROOT = Path(__file__).resolve().parents[2]


def oloproof(project: Project, *argv: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process with 1 GiB of address space and 60 s: a regression that reads
    /dev/zero or waits on a FIFO fails the test, not the machine."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *argv], cwd=project.root, env=env, capture_output=True, text=True,
        timeout=60, preexec_fn=limit, check=False,
    )


def point_log_at(project: Project, log: str) -> None:
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("log: evals/holdout/READS.log", f"log: {log}"))


@pytest.mark.parametrize(
    "command", [["holdout", "status"], ["holdout", "run", "--reason", "r"], ["gap", "--baseline", "version:v0"]]
)
def test_a_log_pointed_at_dev_zero_is_refused_with_exit_2(project: Project, command: list[str]) -> None:
    setup(project)
    if command[0] == "gap":  # two versions' dev runs, so that gap reaches the holdout
        text = (project.root / "release.yaml").read_text()
        (project.root / "release.yaml").write_text(text.replace("version: v1", "version: v0"))
        assert project.cli("run", "--quiet") == 0
        (project.root / "release.yaml").write_text(text)
        assert project.cli("run", "--quiet") == 0
    point_log_at(project, "/dev/zero")
    done = oloproof(project, *command)
    assert done.returncode == 2, done.stderr
    assert (
        "oloproof: error: /dev/zero: is a character device, expected a holdout reads log (only regular files are read)"
        in done.stderr
    )
    assert "Traceback" not in done.stderr


def test_a_log_that_is_a_fifo_is_refused_at_once(project: Project) -> None:
    setup(project)
    os.mkfifo(project.root / "reads.fifo")
    point_log_at(project, "reads.fifo")
    for command in (["holdout", "status"], ["holdout", "run", "--reason", "r"]):
        done = oloproof(project, *command)
        assert done.returncode == 2
        assert "reads.fifo: is a FIFO (named pipe), expected a holdout reads log (only regular files are read)" in done.stderr


@pytest.mark.parametrize("key", ["log", "cases"])
def test_a_holdout_path_with_a_nul_byte_is_a_config_error(project: Project, key: str) -> None:
    setup(project)
    text = (project.root / "release.yaml").read_text()
    old = "log: evals/holdout/READS.log" if key == "log" else "cases: evals/holdout/cases.jsonl"
    (project.root / "release.yaml").write_text(text.replace(old, f'{key}: "evals/a\\0b"'))
    for command in (["holdout", "status"], ["gate"]):
        done = oloproof(project, *command)
        assert done.returncode == 2, done.stderr
        line = 16 if key == "log" else 14
        assert f"oloproof: error: release.yaml:{line}: holdout.{key}: a path cannot contain a NUL byte" in done.stderr


def test_a_huge_log_is_refused_before_it_is_read(project: Project) -> None:
    setup(project)
    big = project.root / "big.log"
    with open(big, "wb") as handle:
        handle.truncate(2 * 1024**3)  # sparse: 2 GiB that take no disk
    point_log_at(project, "big.log")
    done = oloproof(project, "holdout", "status")
    assert done.returncode == 2
    assert "big.log: is 2048 MiB, more than the 16 MiB a holdout reads log can hold; not read" in done.stderr


def test_the_gate_reports_an_unreadable_log_and_still_decides(project: Project) -> None:
    """The gate does not read the holdout: a log it cannot read is said, the dev-set verdict stands."""
    setup(project)
    point_log_at(project, "/dev/zero")
    done = oloproof(project, "gate")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "holdout: log /dev/zero unreadable: /dev/zero: is a character device" in done.stdout


def test_a_reads_log_that_is_a_symlink_is_never_read_or_appended(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "week 0") == 0
    log = log_path(project)
    copy = project.root / "fresh.log"
    copy.write_bytes(b"")  # a reset budget, behind a link
    log.unlink()
    log.symlink_to(copy)
    capsys.readouterr()
    assert read(project, "week 1") == 2
    err = capsys.readouterr().err
    assert (
        "evals/holdout/READS.log: is a symbolic link, expected a holdout reads log (a symlink is never read as "
        "evidence)" in err
    )
    assert copy.read_bytes() == b""  # nothing appended through the link
    assert project.cli("holdout", "status") == 2


def test_a_register_that_is_a_symlink_is_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "week 0") == 0
    register = project.root / ".oloproof" / "holdouts.jsonl"
    copy = project.root / "register.jsonl"
    copy.write_bytes(register.read_bytes().splitlines(keepends=True)[0])  # the salt, no read
    register.unlink()
    register.symlink_to(copy)
    before = copy.read_bytes()
    capsys.readouterr()
    assert read(project, "week 1") == 2
    assert (
        ".oloproof/holdouts.jsonl: is a symbolic link, expected the holdout register (a symlink is never read as "
        "evidence)" in capsys.readouterr().err
    )
    assert copy.read_bytes() == before


def test_an_outcome_record_that_is_a_symlink_is_not_used(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project)
    assert read(project, "week 0") == 0
    [record] = sorted((project.root / ".oloproof" / "holdout").glob("read-*.json"))
    copy = project.root / "record.json"
    copy.write_bytes(record.read_bytes())
    record.unlink()
    record.symlink_to(copy)
    capsys.readouterr()
    assert project.cli("holdout", "status", "--json", str(project.root / "status.json")) == 0
    notes = json.loads((project.root / "status.json").read_text())["notes"]
    assert any(
        f"outcome record .oloproof/holdout/{record.name} is unreadable and was ignored (.oloproof/holdout/"
        f"{record.name}: is a symbolic link" in note
        for note in notes
    ), notes
