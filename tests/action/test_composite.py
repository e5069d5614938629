"""The composite variant (python/action.yml), run as the runner runs it: each ``run:`` step in
order, with ``bash --noprofile --norc -eo pipefail``, the ``${{ }}`` expressions of its ``env:``
filled in as GitHub fills them (``inputs.*``, ``github.action_path``, ``toJSON(inputs)``), a
fresh ``GITHUB_OUTPUT`` per step, and no ``INPUT_*`` variables (a composite action gets none).

Offline: oloproof's venv is made by the action's first step from this interpreter; the
dependencies that step 2 would fetch from PyPI come from this test runner's own environment
(one ``.pth``, as tests/install/test_wheel.py does) and pip is told ``--no-index --no-deps`` and
no build isolation through its environment variables, so step 2 builds and installs the wheel
from a copy of this tree exactly as written. The system under test imports a module that only
the job's own Python path holds: the gate runs it in the job's environment, not oloproof's venv.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import yaml

from tests.action.conftest import HEAD_SHA, REPOSITORY, FakeGitHub, parse_outputs
from tests.conftest import ECHO, Project, labelled_cases
from tests.install.test_wheel import BUILD_LITTER, clean_env

REPO = Path(__file__).resolve().parents[2]
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def fill(text: str, inputs: dict[str, str], action_path: Path) -> str:
    def one(match: re.Match[str]) -> str:
        expr = match[1]
        if expr == "github.action_path":
            return str(action_path)
        if expr == "toJSON(inputs)":
            return json.dumps(inputs, indent=2)  # GitHub's toJSON is pretty-printed
        if expr.startswith("inputs."):
            return inputs[expr[len("inputs.") :]]
        raise AssertionError(f"python/action.yml uses an expression this test does not emulate: {expr}")

    return EXPRESSION.sub(one, text)


def run_composite(
    tmp: Path, workspace: Path, with_: dict[str, str], *, api_url: str, event: dict[str, Any], event_name: str,
    extra_env: dict[str, str], before_install: Any,
) -> tuple[list[subprocess.CompletedProcess[str]], dict[str, str], str]:
    checkout = tmp / "_actions" / "oloproof"  # where the runner checks out `uses: OWNER/oloproof/python@v1`
    shutil.copytree(REPO, checkout, ignore=shutil.ignore_patterns(*BUILD_LITTER))
    action_path = checkout / "python"
    meta = yaml.safe_load((action_path / "action.yml").read_text())
    inputs = {name: str(spec.get("default", "")) for name, spec in meta["inputs"].items()}
    inputs["github-token"] = "ghs_faketoken0123456789"  # ${{ github.token }}
    inputs.update(with_)
    temp, files = tmp / "runner_temp", tmp / "file_commands"
    temp.mkdir()
    files.mkdir()
    (tmp / "event.json").write_text(json.dumps(event))
    summary = files / "step_summary"
    summary.touch()
    base = {
        **clean_env(),
        "HOME": str(tmp),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(tmp / "event.json"),
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_SHA": "1" * 40,
        "GITHUB_RUN_ID": "99",
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_ACTION_PATH": str(action_path),
        "GITHUB_STEP_SUMMARY": str(summary),
        "RUNNER_TEMP": str(temp),
        **extra_env,
    }
    assert not any(name.startswith("INPUT_") for name in base)
    done: list[subprocess.CompletedProcess[str]] = []
    outputs: dict[str, str] = {}
    for number, step in enumerate(meta["runs"]["steps"]):
        assert step["shell"] == "bash" and "uses" not in step
        if number == 1:
            before_install(temp / "oloproof-venv")
        output = files / f"output_{number}"
        output.touch()
        env = {**base, "GITHUB_OUTPUT": str(output)}
        env.update({key: fill(str(value), inputs, action_path) for key, value in step.get("env", {}).items()})
        script = tmp / f"step_{number}.sh"
        script.write_text(fill(step["run"], inputs, action_path))
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace, env=env, capture_output=True, text=True, timeout=600, check=False,
        )
        done.append(result)
        if step.get("id") == "gate":
            outputs = parse_outputs(output.read_text())
        if result.returncode != 0:
            break
    return done, outputs, summary.read_text()


def offline_dependencies(venv: Path) -> None:
    """What pip would fetch from PyPI: this runner's own packages (setuptools included; the copy
    that Python 3.11's venv bundles is too old to build this tree without build isolation)."""
    subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "uninstall", "--quiet", "--yes", "setuptools"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "_runner_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))


def test_the_composite_action_gates_in_the_jobs_own_environment(tmp_path: Path, fake_github: FakeGitHub) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    jobsite = tmp_path / "job-site-packages"  # the job's own packages (say, torch): not in oloproof's venv
    jobsite.mkdir()
    (jobsite / "usermodel.py").write_text("WHERE = 'the job'\n")
    (workspace / "predict.py").write_text(
        f"import runpy, usermodel\nassert usermodel.WHERE == 'the job'\nrunpy.run_path({str(ECHO)!r}, run_name='__main__')\n"
    )
    command = json.dumps(["python3", "predict.py"])
    Project(workspace).write(cases=labelled_cases(60, 60), command=command)
    steps, outputs, summary = run_composite(
        tmp_path,
        workspace,
        {"python": sys.executable, "comment": "true", "junit": "reports/junit.xml"},
        api_url=fake_github.url,
        event={"number": 7, "pull_request": {"number": 7, "head": {"sha": HEAD_SHA, "repo": {"full_name": REPOSITORY}}}},
        event_name="pull_request",
        extra_env={
            "PYTHONPATH": str(jobsite),
            "PIP_NO_INDEX": "1",
            "PIP_NO_DEPS": "1",
            "PIP_NO_BUILD_ISOLATION": "0",
        },
        before_install=offline_dependencies,
    )
    logs = "\n".join(f"--- step {i}\n{s.stdout}\n{s.stderr}" for i, s in enumerate(steps))
    assert [s.returncode for s in steps] == [0, 0, 0], logs
    venv = tmp_path / "runner_temp" / "oloproof-venv"
    where = subprocess.run(
        [str(venv / "bin" / "python"), "-I", "-c", "import oloproof; print(oloproof.__file__)"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout
    assert where.startswith(str(venv)), where  # the wheel built from the checkout, installed in oloproof's venv
    assert outputs["verdict"] == "PASS" and outputs["rules-pass"] == "1" and outputs["summary"] == "oloproof-report.md"
    assert outputs["check-url"].endswith("/runs/4242")
    assert summary.startswith("## ✅ oloproof gate: PASS")
    assert (workspace / "reports" / "junit.xml").read_text().startswith("<?xml")
    posts = [r for r in fake_github.requests if r.method == "POST"]
    assert {r.path for r in posts} == {f"/repos/{REPOSITORY}/check-runs", f"/repos/{REPOSITORY}/issues/7/comments"}
    assert posts[0].body["head_sha"] == HEAD_SHA
    assert "ghs_faketoken0123456789" not in logs.replace("::add-mask::ghs_faketoken0123456789", "")


# The system under test, walking up its ancestors: whose /proc/<pid>/environ (and cmdline) holds the
# planted token, or the step's GITHUB_OUTPUT path, and whose it could read at all.
ANCESTOR_SNOOP = r'''
import json, os, sys

secrets = {"token": sys.argv[1].encode(), "github_output": sys.argv[2].encode()}
found = {"ancestors": [], "read": [], "visible": [], "own_env": sorted(
    k for k in os.environ if k.startswith(("INPUT_", "OLOPROOF_ACTION_INPUTS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"))
)}
pid = os.getppid()
while pid > 1:
    found["ancestors"].append(pid)
    for name in ("environ", "cmdline"):
        try:
            data = open(f"/proc/{pid}/{name}", "rb").read()
        except OSError:
            continue
        found["read"].append(f"{pid} {name}")
        for what, value in secrets.items():
            if value in data:
                found["visible"].append(f"{what} in /proc/{pid}/{name}")
    with open(f"/proc/{pid}/status") as status:
        pid = next(int(line.split()[1]) for line in status if line.startswith("PPid:"))
with open(sys.argv[3], "w") as out:
    json.dump(found, out)
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"id": case["id"], "label": case["answer"]}))
'''


def test_no_ancestor_of_the_system_holds_the_token_in_its_environment(tmp_path: Path, fake_github: FakeGitHub) -> None:
    """Red team RT-H4: the gate step's shell had the token (in OLOPROOF_ACTION_INPUTS) and the file
    commands in its environment and stayed alive as the entry point's parent, so the system, a
    grandchild, read them from ``/proc/<ppid of its parent>/environ``. The step ``exec``s the entry
    point, which then re-executes itself without them: no ancestor holds them."""
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "snoop.py").write_text(ANCESTOR_SNOOP)
    seen = tmp_path / "seen.json"
    gate_output = tmp_path / "file_commands" / "output_2"  # the gate step's GITHUB_OUTPUT (run_composite)
    command = json.dumps(["python3", "snoop.py", "ghs_faketoken0123456789", str(gate_output), str(seen)])
    Project(workspace).write(cases=labelled_cases(40, 40), command=command)
    steps, outputs, _ = run_composite(
        tmp_path, workspace, {"python": sys.executable}, api_url=fake_github.url, event={}, event_name="push",
        extra_env={"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "0"},
        before_install=offline_dependencies,
    )
    logs = "\n".join(f"--- step {i}\n{s.stdout}\n{s.stderr}" for i, s in enumerate(steps))
    assert [s.returncode for s in steps] == [0, 0, 0], logs
    assert outputs["verdict"] == "PASS"
    found = json.loads(seen.read_text())
    assert found["own_env"] == []
    assert f"{found['ancestors'][0]} environ" in found["read"], found  # the entry point's environ was read: not a vacuous check
    assert found["visible"] == [], found


def test_a_bad_input_stops_the_composite_with_exit_2(tmp_path: Path, fake_github: FakeGitHub) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    Project(workspace).write(cases=labelled_cases(10, 10))
    steps, outputs, _ = run_composite(
        tmp_path, workspace, {"python": sys.executable, "fail-on": "FIAL"}, api_url=fake_github.url, event={},
        event_name="push", extra_env={"PIP_NO_INDEX": "1", "PIP_NO_DEPS": "1", "PIP_NO_BUILD_ISOLATION": "0"},
        before_install=offline_dependencies,
    )
    assert steps[-1].returncode == 2
    assert "fail-on: unknown verdict 'FIAL' (did you mean 'FAIL'?)" in steps[-1].stdout
    assert outputs["verdict"] == "ERROR"


def test_composite_inputs_become_input_variables() -> None:
    from oloproof.action.inputs import expand_composite_inputs

    environ = {"OLOPROOF_ACTION_INPUTS": json.dumps({"python": "python3", "fail-on": "FAIL", "github-token": "t"})}
    expand_composite_inputs(environ)
    assert environ == {"INPUT_FAIL-ON": "FAIL", "INPUT_GITHUB-TOKEN": "t"}
    broken = {"OLOPROOF_ACTION_INPUTS": "[1]"}
    expand_composite_inputs(broken)
    assert list(broken) == ["INPUT_OLOPROOF_ACTION_INPUTS"]  # reported as an unknown input (exit 2)
    untouched = {"PATH": "/bin"}
    expand_composite_inputs(untouched)
    assert untouched == {"PATH": "/bin"}


def test_the_composite_inputs_variable_is_private_like_the_input_variables() -> None:
    """The entry point pops OLOPROOF_ACTION_INPUTS first; should it ever be left (or set by a
    workflow's env:), no system, judge or re-executed entry point is handed it: it holds the token."""
    from oloproof.process import system_environment

    environ = {"OLOPROOF_ACTION_INPUTS": '{"github-token": "t"}', "INPUT_GITHUB-TOKEN": "t", "PATH": "/bin"}
    assert system_environment(environ) == {"PATH": "/bin"}


def test_no_step_interpolates_an_expression_into_a_script() -> None:
    """Expressions go through env: (never pasted into a bash script, where a value could run)."""
    meta = yaml.safe_load((REPO / "python" / "action.yml").read_text())
    for step in meta["runs"]["steps"]:
        assert "${{" not in step["run"], step["name"]
    gate = meta["runs"]["steps"][-1]["run"].split()
    assert gate[0] == "exec" and os.path.basename(gate[1].strip('"')) == "python"  # no shell stays behind holding the token
