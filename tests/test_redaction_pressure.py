"""The redaction-pressure environment's own checks, run exactly as its seed writes them, from the
repository root: the lock is current, the environment syncs from it, and its unittest suite
passes. The environment is its own uv sub-project at ``environments/redaction_pressure`` (the
seed's path), so the main package never depends on it or on verifiers.

uv comes from PATH, else it is installed with pip into a private virtualenv (as the sub-project's
ci.sh does); uv never downloads a Python (``UV_PYTHON_DOWNLOADS=never``) and reaches no network
but the package registries."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

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
        result = subprocess.run(shlex.split(command), cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800, check=False)
        log = result.stdout + result.stderr
        assert result.returncode == 0, f"{command}: exit {result.returncode}\n{log[-4000:]}"
    ran = re.findall(r"^Ran (\d+) tests? in", log, re.M)
    assert ran and int(ran[-1]) >= 90, f"the environment ran {ran or 'no'} tests:\n{log[-2000:]}"
    assert re.search(r"^OK\b", log, re.M), log[-2000:]
