""".github/workflows/release.yml: on a version tag, build the image, push it to ghcr.io, pin
action.yml to it by digest on a release commit, move the version and major tags.

The build step is run here as the workflow runs it (its own ``run:`` script, with the job's env
filled in), against a real Docker engine; the push is skipped (no registry here). The pin script and
the guard step run for real too.
"""

from __future__ import annotations

import runpy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WORKFLOW = REPO / ".github" / "workflows" / "release.yml"
DIGEST = "docker://ghcr.io/octo-org/oloproof-action@sha256:" + "ab" * 32


def workflow() -> dict[Any, Any]:
    loaded: dict[Any, Any] = yaml.safe_load(WORKFLOW.read_text())
    return loaded


def steps() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = workflow()["jobs"]["release"]["steps"]
    return found


def step(step_id: str) -> dict[str, Any]:
    return next(s for s in steps() if s.get("id") == step_id)


def test_triggers_permissions_and_order() -> None:
    meta = workflow()
    assert meta[True] == {"push": {"tags": ["v[0-9]+.[0-9]+.[0-9]+"]}}  # yaml reads `on:` as True
    assert meta["permissions"] == {"contents": "write", "packages": "write"}
    names = [s.get("id") or s.get("name") or s.get("uses") for s in steps()]
    assert names.index("build") < names.index("push") < len(names) - 1
    assert step("push")["env"]["LOCAL"] == "${{ steps.build.outputs.local }}"
    assert "docker://$REF" in steps()[-1]["run"] and "git tag --force \"$major\"" in steps()[-1]["run"]
    for s in steps():  # expressions reach scripts only through env:, never pasted into bash
        assert "${{" not in s.get("run", ""), s.get("name")


def pin_module() -> dict[str, Any]:
    return runpy.run_path(str(REPO / "docker" / "pin-image.py"), run_name="pin")


def test_pin_points_action_yml_at_the_digest_and_nothing_else() -> None:
    pin = pin_module()["pin"]
    text = (REPO / "action.yml").read_text()
    pinned = pin(text, DIGEST)
    before, after = yaml.safe_load(text), yaml.safe_load(pinned)
    assert after["runs"] == {"using": "docker", "image": DIGEST}
    assert {k: v for k, v in after.items() if k != "runs"} == {k: v for k, v in before.items() if k != "runs"}
    with pytest.raises(SystemExit, match="already pinned"):
        pin(pinned, DIGEST)
    for bad in (
        "docker://ghcr.io/octo-org/oloproof-action:v1",  # a tag moves; a digest does not
        "docker://docker.io/octo-org/oloproof-action@sha256:" + "ab" * 32,
        "docker://ghcr.io/Octo/oloproof-action@sha256:" + "ab" * 32,  # registry names are lower case
        DIGEST + "\n  entrypoint: /bin/sh",
    ):
        with pytest.raises(SystemExit, match=r"is not docker://ghcr\.io"):
            pin(text, bad)


def test_the_guard_step_refuses_an_already_pinned_tag(tmp_path: Path) -> None:
    guard = next(s for s in steps() if s.get("name", "").startswith("Refuse"))
    (tmp_path / "action.yml").write_text((REPO / "action.yml").read_text())
    ok = subprocess.run(["bash", "-eo", "pipefail", "-c", guard["run"]], cwd=tmp_path, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    (tmp_path / "action.yml").write_text(pin_module()["pin"]((REPO / "action.yml").read_text(), DIGEST))
    refused = subprocess.run(["bash", "-eo", "pipefail", "-c", guard["run"]], cwd=tmp_path, capture_output=True, text=True)
    assert refused.returncode == 1 and "already a release commit" in refused.stdout


@pytest.mark.docker
def test_the_build_step_runs_here(tmp_path: Path) -> None:
    from tests.action.test_docker import _engine, _skip_loudly

    try:
        _engine()
    except Exception as exc:
        _skip_loudly(f"{type(exc).__name__}: {exc}")
    build = step("build")
    output = tmp_path / "output"
    output.touch()
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "VERSION": "v0.0.0-ci",
        "OWNER": "octo-org",
        "REVISION": "1" * 40,
        "SOURCE": "https://github.com/octo-org/oloproof",
        "GITHUB_OUTPUT": str(output),
    }
    assert set(workflow()["jobs"]["release"]["env"]) == {"VERSION", "OWNER", "REVISION", "SOURCE"}
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", build["run"]],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=1800, check=False,
    )
    try:
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert output.read_text() == "local=oloproof-action:v0.0.0-ci\n"
        labels = subprocess.run(
            ["docker", "image", "inspect", "--format", "{{json .Config.Labels}}", "oloproof-action:v0.0.0-ci"],
            capture_output=True, text=True, timeout=60, check=True,
        ).stdout
        assert '"org.opencontainers.image.version":"v0.0.0-ci"' in labels
        assert '"org.opencontainers.image.revision":"' + "1" * 40 + '"' in labels
    finally:
        if shutil.which("docker"):
            subprocess.run(["docker", "image", "rm", "oloproof-action:v0.0.0-ci"], capture_output=True, timeout=120)
