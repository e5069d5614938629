"""`oloproof init`: every example is listed and copied whole (evidence directories included),
without caches or lock files, and never over an existing directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from oloproof.cli.init import EXAMPLES
from oloproof.cli.main import main

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"


def shipped(name: str) -> set[str]:
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
    assert [line.split(":")[0] for line in out.splitlines()] == ["model-validation", "prompt-holdout"]
    assert set(EXAMPLES) == {"model-validation", "prompt-holdout"}


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
    assert "init needs --example NAME (one of model-validation, prompt-holdout), or --list" in capsys.readouterr().err
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
    include, exclude = config["package-data"]["oloproof.examples"], config["exclude-package-data"]["oloproof.examples"]
    matched = {
        Path(found).relative_to(EXAMPLES_DIR).as_posix()
        for pattern in include
        for found in glob.glob(os.path.join(EXAMPLES_DIR, pattern), recursive=True)
        if Path(found).is_file()
    }
    kept = {name for name in matched if not any(fnmatch.fnmatch(name, pattern) for pattern in exclude)}
    for name in EXAMPLES:
        missing = {f"{name}/{file}" for file in shipped(name)} - kept
        assert not missing, f"not in the wheel: {sorted(missing)[:5]}"
    assert not [name for name in kept if name.startswith("redaction-pressure/")]
