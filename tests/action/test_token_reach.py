"""The system under test cannot reach the action's token (issue 16, point 8).

Measured, not assumed: the action's real entry point runs as a process, the way the runner starts
the container, with the token in its environment; the system it gates is a script that looks for
the token everywhere a child can look: its own environment, its parent's ``/proc/<ppid>/environ``
and ``cmdline``, the parent's open descriptors, and the parent's memory (``/proc/<ppid>/mem``).
It records what it could read and answers every case, so the gate runs to its end.

As root with ``CAP_SYS_PTRACE`` (root outside a container), the action's memory stays readable:
the token must live there to call the Checks API. Without ``CAP_SYS_PTRACE`` (a Docker container's
default) the memory is closed too, because the action makes itself non-dumpable. Measured on
Linux 6.18: ``/proc/<ppid>/environ`` and ``maps`` stay readable to a same-user child of a
non-dumpable process (read access), ``mem`` does not (attach access); hence the re-exec, which
leaves the environment without the secrets.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.action.conftest import TOKEN, ActionRun
from tests.conftest import labelled_cases

ROOT = Path(__file__).resolve().parents[2]

SNOOP = r'''
import json, os, sys

token = sys.argv[1].encode()
found = {"own_env": sorted(k for k in os.environ if k.startswith(("INPUT_", "ACTIONS_", "GITHUB_"))),
         "readable": [], "token_in": [], "denied": []}
ppid = os.getppid()
for name in ("environ", "cmdline"):
    try:
        data = open(f"/proc/{ppid}/{name}", "rb").read()
    except OSError as exc:
        found["denied"].append(f"{name}: {exc.strerror}")
        continue
    found["readable"].append(name)
    if token in data:
        found["token_in"].append(name)
try:
    for fd in os.listdir(f"/proc/{ppid}/fd"):
        try:  # regular files and memfds only: a pipe would block
            data = open(f"/proc/{ppid}/fd/{fd}", "rb").read(1 << 20) if os.path.isfile(f"/proc/{ppid}/fd/{fd}") else b""
        except OSError:
            continue
        if token in data:
            found["token_in"].append(f"fd {fd}")
except OSError as exc:
    found["denied"].append(f"fd: {exc.strerror}")
try:
    with open(f"/proc/{ppid}/maps") as maps, open(f"/proc/{ppid}/mem", "rb", 0) as mem:
        for line in maps:
            span, perms = line.split()[:2]
            start, end = (int(x, 16) for x in span.split("-"))
            if "r" not in perms or end - start > (256 << 20):
                continue
            try:
                mem.seek(start)
                if token in mem.read(end - start):
                    found["token_in"].append("mem")
                    break
            except (OSError, ValueError, OverflowError):
                continue
        found["readable"].append("mem")
except OSError as exc:
    found["denied"].append(f"mem: {exc.strerror}")
with open(sys.argv[2], "w") as out:
    json.dump(found, out)
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"id": case["id"], "label": case["answer"]}))
'''


def snooping_action(tmp_path: Path) -> tuple[ActionRun, Path]:
    root = tmp_path / "workspace"
    root.mkdir()
    script = root / "snoop.py"
    script.write_text(SNOOP)
    found = tmp_path / "found.json"
    from tests.conftest import Project

    project = Project(root).write(
        cases=labelled_cases(40, 40),
        rules="  - {id: accurate, criterion: correct, min: 0.5}",
        command=json.dumps([sys.executable, str(script), TOKEN, str(found)]),
    )
    return ActionRun(tmp_path, project), found


def run_entrypoint(action: ActionRun, *prefix: str) -> subprocess.CompletedProcess[bytes]:
    env = {**action.environ(), "PYTHONPATH": str(ROOT), "ACTIONS_RUNTIME_TOKEN": "runtime-" + TOKEN}
    return subprocess.run(
        [*prefix, sys.executable, str(ROOT / "entrypoint.py")],
        cwd=action.workspace,
        env=env,
        capture_output=True,
        timeout=300,
        check=False,
    )


def found(path: Path, done: subprocess.CompletedProcess[bytes]) -> dict[str, Any]:
    assert path.exists(), f"the system never ran: exit {done.returncode}\n{done.stdout.decode()}\n{done.stderr.decode()}"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def test_the_system_sees_no_private_variable_and_no_token_in_its_parents_environ(tmp_path: Path) -> None:
    action, path = snooping_action(tmp_path)
    done = run_entrypoint(action)
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    seen = found(path, done)
    assert seen["own_env"] == [name for name in seen["own_env"] if name not in {
        "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STATE", "GITHUB_TOKEN"
    } and not name.startswith(("INPUT_", "ACTIONS_"))]
    assert "environ" not in seen["token_in"] and "cmdline" not in seen["token_in"]
    assert not [where for where in seen["token_in"] if where.startswith("fd")]
    # The action still had its token and its file commands: outputs and summary were written.
    assert "verdict=PASS" in (action.files / "output").read_text()
    assert "PASS" in (action.files / "step_summary").read_text()
    assert f"::add-mask::{TOKEN}" in done.stdout.decode()


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_without_cap_sys_ptrace_the_parents_proc_files_are_closed(tmp_path: Path) -> None:
    """Root without CAP_SYS_PTRACE, as in a Docker container: the system can open its parent's
    environ (it holds no secret: the re-exec) but not its memory (the action is non-dumpable),
    although both run as root."""
    action, path = snooping_action(tmp_path)
    done = run_entrypoint(action, "setpriv", "--bounding-set", "-sys_ptrace", "--inh-caps", "-all")
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    seen = found(path, done)
    assert seen["token_in"] == []
    assert "mem" not in seen["readable"] and "mem: Permission denied" in seen["denied"], seen
    assert "PASS" in (action.files / "step_summary").read_text()


def test_a_checkout_that_keeps_the_token_in_git_config_is_warned_about(action: ActionRun) -> None:
    """actions/checkout keeps the job's token in .git/config by default (persist-credentials: true),
    a file the system under test can read: the action says so and how to stop it."""
    from tests.conftest import labelled_cases

    action.project.write(cases=labelled_cases(20, 20), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    git_dir = action.workspace / ".git"
    git_dir.mkdir()
    (git_dir / "config").write_text(
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX2Zha2U=\n'
    )
    result = action(**{"github-token": ""})
    [warning] = [line for line in result.annotations("warning") if "token in the checkout" in line]
    assert "set `persist-credentials: false` on the checkout step" in warning
    (git_dir / "config").write_text("[core]\n\tbare = false\n")
    result = action(**{"github-token": ""})
    assert not [line for line in result.annotations("warning") if "token in the checkout" in line]
