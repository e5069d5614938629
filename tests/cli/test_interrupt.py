"""Ctrl-C exits 130, kills the system it started, and leaves no half-written record."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from oloproof.atomic import atomic_write_dir
from tests.conftest import Project, labelled_cases


def test_sigint_during_a_run_exits_130_and_keeps_nothing(project: Project) -> None:
    tag = f"interrupt-{uuid.uuid4().hex}"
    project.write(cases=labelled_cases(5, 5), system_args=f"--hang --tag {tag}")
    text = (project.root / "release.yaml").read_text().replace("timeout_s: 20", "timeout_s: 120")
    (project.root / "release.yaml").write_text(text)
    env = {**os.environ, "CI": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "oloproof", "gate", "-c", project.config],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=project.root,
    )
    # Wait until the system process exists (found by its unique tag).
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
        if found:
            break
        time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the system process never started")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"interrupted; nothing half-written was kept" in err
    runs = project.root / ".oloproof" / "runs"
    assert not runs.exists() or list(runs.iterdir()) == []
    time.sleep(0.2)
    left = subprocess.run(["pgrep", "-f", tag], capture_output=True, text=True).stdout.split()
    assert left == [], "system processes survived the interrupt"


def test_an_interrupted_directory_write_leaves_nothing(tmp_path: Path) -> None:
    final = tmp_path / "runs" / "r1"

    def fill(tmp: Path) -> None:
        (tmp / "run.json").write_text("{}")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        atomic_write_dir(final, fill)
    assert not final.exists()
    assert list((tmp_path / "runs").iterdir()) == []


def test_atomic_files_get_ordinary_permissions(tmp_path: Path) -> None:
    from oloproof.atomic import atomic_write_text

    old = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "report.json", "{}")
    finally:
        os.umask(old)
    assert (tmp_path / "report.json").stat().st_mode & 0o777 == 0o644
