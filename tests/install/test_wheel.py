"""What users install is what is tested: the wheel, built and installed, runs every subcommand.

``pip install .`` (not editable) is what users and the action's image run; an editable install
sees the whole source tree and hides a package the wheel leaves out (``oloproof compare`` once
died with exit 70 in every normal install). So this builds the wheel from this tree, installs it
with ``--no-deps`` into a fresh venv, makes the test runner's own dependencies visible to that venv
(one ``.pth`` line: offline, and the versions pyproject.toml resolved), and runs tests/install/
smoke.py there: every subcommand once through the installed console script, from a folder outside
the source tree. The Docker image runs the same script (tests/action/test_docker.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from oloproof.identity import checker_identity

REPO = Path(__file__).resolve().parents[2]
SMOKE = Path(__file__).with_name("smoke.py")
BUILD_LITTER = (".git", ".ci", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", ".venv", "venv")


def clean_env() -> dict[str, str]:
    """This environment without PYTHONPATH: the install under test must not see the source tree."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: an in-tree build leaves build/lib behind, whose stale modules a later
    # build would ship, and an egg-info that makes the source tree look installed.
    source = tmp_path_factory.mktemp("source") / "oloproof"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(*BUILD_LITTER))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation", "--wheel-dir", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=source,
        env=clean_env(),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = out.glob("oloproof-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh venv holding only the wheel; the runner's dependencies are visible to it."""
    home = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False, symlinks=True).create(home)
    bin_dir = home / "bin"
    purelib = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=60, check=True,
    ).stdout.strip()
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(bin_dir / "python"), "install", "--quiet", "--no-deps", str(wheel)],
        capture_output=True, text=True, timeout=300, env=clean_env(), check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # After the install (pip would otherwise see the runner's own oloproof and install nothing). The
    # venv's site-packages stays first on sys.path; the runner's .pth files (an editable install's
    # finder) are not run from here, so `import oloproof` is the wheel's (smoke.py reports where).
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(purelib) / "_runner_dependencies.pth").write_text("".join(f"{path}\n" for path in sorted(ours)))
    yield bin_dir


def source_packages() -> set[str]:
    found = {"oloproof.examples"}
    for init in (REPO / "oloproof").rglob("__init__.py"):
        if "__pycache__" not in init.parts:
            found.add(".".join(init.parent.relative_to(REPO).parts))
    return found


def test_the_wheel_holds_every_package_of_the_source_tree(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            ".".join(Path(name).parent.parts)
            for name in archive.namelist()
            # The examples' own helper packages are content, not oloproof's.
            if name.endswith("/__init__.py")
            and (name == "oloproof/examples/__init__.py" or not name.startswith("oloproof/examples/"))
        }
    expected = source_packages()
    assert len(expected) > 10
    assert expected - shipped == set(), "packages missing from the wheel"
    assert "oloproof.compare" in shipped


def test_every_subcommand_runs_from_the_installed_wheel(installed: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [str(installed / "python"), str(SMOKE), str(installed), str(tmp_path / "work")],
        capture_output=True, text=True, timeout=1200, cwd=tmp_path, env=clean_env(), check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    identity = json.loads(done.stdout.strip().splitlines()[-1])
    # Imported from the venv, not from this source tree.
    assert Path(identity["file"]).resolve().is_relative_to(installed.parent.resolve()), identity
    # One commit, one checker: the wheel's digest is the source tree's (an editable install's).
    assert identity["source_digest"] == checker_identity().source_digest
    assert identity["version"] == checker_identity().version


def test_a_stray_script_outside_any_package_does_not_change_the_digest(tmp_path: Path) -> None:
    """An editable install sees files a wheel never ships; only packaged modules are digested."""
    stray = REPO / "oloproof" / "_not_a_package_for_this_test"
    stray.mkdir()
    try:
        (stray / "scratch.py").write_text("print('hello')\n")
        done = subprocess.run(
            [sys.executable, "-c", "import oloproof.identity as i; print(i.checker_identity().source_digest)"],
            capture_output=True, text=True, timeout=60, cwd=REPO, check=True,
        )
    finally:
        (stray / "scratch.py").unlink()
        stray.rmdir()
    assert done.stdout.strip() == checker_identity().source_digest
