"""`oloproof init`: every example is listed and copied whole (evidence directories included),
without caches or lock files, and never over an existing directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof.cli.init import EXAMPLES
from oloproof.cli.main import main

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
ENVIRONMENT_DIR = Path(__file__).resolve().parents[2] / "environments" / "redaction_pressure"
NOT_SHIPPED = (".venv", ".uv-tool", ".hypothesis", "outputs", "evals", ".oloproof", "__pycache__")


def shipped(name: str) -> set[str]:
    if name == "redaction-pressure":  # its own sub-project, at the seed's path, with its uv.lock
        root = ENVIRONMENT_DIR
        files = {
            path.relative_to(root).as_posix()
            for path in root.rglob("*")
            if path.is_file() and not set(path.relative_to(root).parts) & set(NOT_SHIPPED) and not path.name.endswith(".pyc")
        }
        assert "uv.lock" in files and "pyproject.toml" in files
        return files
    root = EXAMPLES_DIR / name
    files = {
        path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and not path.name.endswith((".pyc", ".lock"))
    }
    assert files, f"no files under {root}"
    return files


def test_list_names_every_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init", "--list"]) == 0
    out = capsys.readouterr().out
    assert [line.split(":")[0] for line in out.splitlines()] == ["classifier", "model-validation", "prompt-holdout", "redaction-pressure"]
    assert set(EXAMPLES) == {"classifier", "model-validation", "prompt-holdout", "redaction-pressure"}


def test_the_redaction_pressure_example_is_the_environment_at_the_seeds_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """issue 21: the environment lives at environments/redaction_pressure (the seed's path) and
    init copies that sub-project, lock included, never its virtualenv or a holdout set."""
    assert not (EXAMPLES_DIR / "redaction-pressure").exists()
    assert (ENVIRONMENT_DIR / "uv.lock").is_file() and (ENVIRONMENT_DIR / "redaction_pressure" / "taskset.py").is_file()
    (ENVIRONMENT_DIR / "evals" / "holdout").mkdir(parents=True, exist_ok=True)
    probe = ENVIRONMENT_DIR / "evals" / "holdout" / "probe-not-shipped.jsonl"
    probe.write_text("{}\n")
    try:
        assert main(["init", "--example", "redaction-pressure", str(tmp_path / "rp")]) == 0
    finally:
        probe.unlink()
    out = capsys.readouterr().out
    assert "next: cd " in out and "uv sync --frozen && oloproof gate" in out
    assert (tmp_path / "rp" / "uv.lock").read_bytes() == (ENVIRONMENT_DIR / "uv.lock").read_bytes()
    assert not (tmp_path / "rp" / "evals").exists() and not (tmp_path / "rp" / ".venv").exists()


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_init_copies_the_example_whole(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "demo"
    assert main(["init", "--example", name, str(target)]) == 0
    copied = {path.relative_to(target).as_posix() for path in target.rglob("*") if path.is_file()}
    assert copied == shipped(name)
    assert f"copied the {name} example to {target}/" in capsys.readouterr().out


def test_the_prompt_holdout_example_brings_its_evidence(tmp_path: Path) -> None:
    target = tmp_path / "ph"
    assert main(["init", "--example", "prompt-holdout", str(target)]) == 0
    assert list((target / ".oloproof" / "runs").iterdir()) and list((target / ".oloproof" / "holdout").glob("read-*.json"))
    assert (target / "evals" / "holdout" / "READS.log").is_file() and (target / ".gitattributes").is_file()


def test_init_needs_an_example_and_refuses_a_full_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["init"]) == 2
    assert (
        "init needs --kind classifier|prompt|regression DIR, or --example NAME (one of classifier, model-validation, prompt-holdout, "
        "redaction-pressure), or --list"
    ) in capsys.readouterr().err
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep.txt").write_text("mine")
    assert main(["init", "--example", "model-validation", str(tmp_path / "full")]) == 2
    assert "already exists and is not an empty directory" in capsys.readouterr().err
    assert (tmp_path / "full" / "keep.txt").read_text() == "mine"


def test_the_wheel_ships_every_file_of_every_example() -> None:
    """pyproject's package-data patterns, matched the way setuptools matches them (recursive glob,
    hidden names only where a pattern names them), cover every file ``init`` must copy, and
    nothing of the redaction-pressure sub-project."""
    import fnmatch
    import glob
    import os

    import tomllib

    config = tomllib.loads((EXAMPLES_DIR.parent / "pyproject.toml").read_text())["tool"]["setuptools"]

    def wheel(package: str, root: Path) -> set[str]:
        assert config["package-dir"][package] == root.name
        include, exclude = config["package-data"][package], config["exclude-package-data"][package]
        matched = {
            Path(found).relative_to(root).as_posix()
            for pattern in include
            for found in glob.glob(os.path.join(root, pattern), recursive=True)
            if Path(found).is_file()
        }
        return {name for name in matched if not any(fnmatch.fnmatch(name, pattern) for pattern in exclude)}

    kept = wheel("oloproof.examples", EXAMPLES_DIR)
    for name in EXAMPLES:
        if name == "redaction-pressure":
            continue
        missing = {f"{name}/{file}" for file in shipped(name)} - kept
        assert not missing, f"not in the wheel: {sorted(missing)[:5]}"
    environments = wheel("oloproof.environments", ENVIRONMENT_DIR.parent)
    missing = {f"redaction_pressure/{file}" for file in shipped("redaction-pressure")} - environments
    assert not missing, f"not in the wheel: {sorted(missing)[:5]}"
    assert not [name for name in environments if "/.venv/" in name or "/outputs/" in name or "/evals/" in name]
