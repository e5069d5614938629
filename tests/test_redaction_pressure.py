"""The redaction-pressure environment's own checks, run exactly as its seed writes them, from the
repository root: the lock is current, the environment syncs from it, and its unittest suite
passes. The environment is its own uv sub-project at ``environments/redaction_pressure`` (the
seed's path), so the main package never depends on it or on verifiers.

uv comes from PATH, else it is installed with pip into a private virtualenv (as the sub-project's
ci.sh does); uv never downloads a Python (``UV_PYTHON_DOWNLOADS=never``) and reaches no network
but the package registries."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENVIRONMENT = ROOT / "environments" / "redaction_pressure"
# The seed's three commands, verbatim.
SEED_COMMANDS = (
    "uv lock --project environments/redaction_pressure --check",
    "uv sync --project environments/redaction_pressure --frozen",
    "uv run --project environments/redaction_pressure python -m unittest discover -s environments/redaction_pressure/tests -v",
)


def uv_on_path(env: dict[str, str]) -> dict[str, str]:
    if shutil.which("uv", path=env.get("PATH")):
        return env
    tool = ENVIRONMENT / ".uv-tool"
    if not (tool / "bin" / "uv").exists():
        subprocess.run([sys.executable, "-m", "venv", str(tool)], check=True, timeout=300)
        subprocess.run([str(tool / "bin" / "python"), "-m", "pip", "install", "--quiet", "uv"], check=True, timeout=600)
    return {**env, "PATH": f"{tool / 'bin'}{os.pathsep}{env.get('PATH', '')}"}


def test_the_seeds_three_commands_pass_verbatim_from_the_root() -> None:
    readme = " ".join((ENVIRONMENT / "README.md").read_text().replace("\\\n", " ").split())
    for command in SEED_COMMANDS:
        assert command in readme, f"the README does not state: {command}"
    env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
    env = uv_on_path({**env, "UV_PYTHON_DOWNLOADS": "never"})
    log = ""
    for command in SEED_COMMANDS:
        result = subprocess.run(
            shlex.split(command), cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False
        )
        log = result.stdout + result.stderr
        assert result.returncode == 0, f"{command}: exit {result.returncode}\n{log[-4000:]}"
    ran = re.findall(r"^Ran (\d+) tests? in", log, re.M)
    assert ran and int(ran[-1]) >= 90, f"the environment ran {ran or 'no'} tests:\n{log[-2000:]}"
    assert re.search(r"^OK\b", log, re.M), log[-2000:]


def test_the_gate_reruns_when_an_environment_source_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 21, point 6: the example's release.yaml declares the environment's sources as system
    artifacts, so a run made with a doctored reward.py is never served for the real one (and the
    other way round); outputs name the regex and Python versions that scored them."""
    import yaml

    from oloproof.cli.main import main

    copy = tmp_path / "rp"
    assert main(["init", "--example", "redaction-pressure", str(copy)]) == 0
    assert yaml.safe_load((copy / "release.yaml").read_text())["system"]["artifacts"] == ["redaction_pressure"]
    dev = (copy / "data" / "dev.jsonl").read_text().splitlines(keepends=True)
    (copy / "data" / "dev.jsonl").write_text("".join(dev[:4]))  # four tasks keep the test quick
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python").symlink_to(sys.executable)  # release.yaml runs `python`: one with regex
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.chdir(copy)

    def gate() -> str:
        capsys.readouterr()
        assert main(["gate"]) in (0, 1, 4)  # PASS, FAIL or (four cases) INSUFFICIENT_EVIDENCE: never an error
        return capsys.readouterr().out

    first = gate()
    made = re.search(r"^run (\S+) \(new, ok, 4/4 outputs\)", first, re.M)
    assert made, first
    assert re.search(r"^run \S+ \(reused, ok, 4/4 outputs\)", gate(), re.M)
    reward = copy / "redaction_pressure" / "reward.py"
    original = reward.read_text()
    reward.write_text(original + "\n# doctored\n")
    doctored = gate()
    assert re.search(r"^run \S+ \(new, ok, 4/4 outputs\)", doctored, re.M), doctored
    assert "redaction_pressure/reward.py changed since" in doctored
    reward.write_text(original)
    assert f"run {made.group(1)} (reused, ok, 4/4 outputs)" in gate()  # the original's run, never the doctored one
    output = json.loads((copy / ".oloproof" / "runs" / made.group(1) / "outputs.jsonl").read_text().splitlines()[0])
    assert set(output["environment"]) >= {"source_sha256", "regex_version", "python"}
