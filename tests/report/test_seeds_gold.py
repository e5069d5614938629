"""The seeds command's renderings against their gold files: the terminal text and the offline page
(``OLOPROOF_REGOLD=1 python -m pytest tests/report`` regenerates). Made from a real recipe: three
checkpoints declared by their commands (two run now, one failing) and one named by a ref, with run
ids and times replaced by constants."""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from oloproof.config import load_release
from oloproof.gate import load_dev_testset
from oloproof.report import seeds_page, seeds_terminal
from oloproof.runstore import RunStore
from oloproof.seeds.check import SeedsResult, decide_recipe, gather_checkpoints
from oloproof.seeds.spec import load_seeds_file
from report.golden import check_gold, scrub
from tests.conftest import FIXTURES, Project, labelled_cases

SEED_SYSTEM = FIXTURES / "seed_system.py"


@pytest.fixture
def recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SeedsResult:
    project = Project(tmp_path).write(cases=labelled_cases(40, 40), policy_extra="  allow_approximate_methods: true\n")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "weights").mkdir()
    for k in (1, 2):
        (tmp_path / "weights" / f"seed_{k}.json").write_text(json.dumps({"seed": k, "error": 0.1 * k}))
    seed = f"{sys.executable} {SEED_SYSTEM} --weights weights/seed_"
    assert project.cli("run", "--version", "seed_0", "--command", f"{seed}1.json") == 0
    (tmp_path / "seeds.yaml").write_text(
        "recipe: loan-model\ncheckpoints:\n  seed_0: version:seed_0\n"
        f"  seed_1: {{command: '{seed}1.json'}}\n  seed_2: {{command: '{seed}2.json'}}\n"
        f"  seed_3: {{command: '{seed}3.json'}}\n"  # no such weights: the run fails
        "rule: {id: recipe_accurate, criterion: correct, min: 0.5}\n"
    )
    release = load_release("release.yaml")
    spec = load_seeds_file(Path("seeds.yaml"), "seeds.yaml")
    testset = load_dev_testset(release)
    store = RunStore(tmp_path)
    result = decide_recipe(spec, release, release.policy, testset, store, gather_checkpoints(spec, release, testset, store))
    fixed = []
    for number, cp in enumerate(result.checkpoints):
        assert cp.run is not None
        tail = cp.run.stderr_tail.strip().splitlines()[-1] + "\n" if cp.run.stderr_tail.strip() else ""  # not Python's traceback layout
        run = replace(cp.run, run_id=f"20260101T00000{number}Z-abcdef", stderr_tail=tail)
        fixed.append(replace(cp, run=run))
    return replace(result, checkpoints=tuple(fixed))


def test_seeds_terminal_gold(recipe: SeedsResult, tmp_path: Path) -> None:
    text = scrub(seeds_terminal.render(recipe, width=140), tmp_path)
    check_gold("seeds-terminal.txt", text)
    assert "│ seed_0     │ 20260101T000000Z-abcdef │ named by version:seed_0 │" in text
    assert "│ now " in text and "  seed_3: run failed: batch 1: system exited with status 1" in text
    assert text.count("what this cannot tell:") == 1


def test_seeds_page_gold(recipe: SeedsResult, tmp_path: Path) -> None:
    page = scrub(seeds_page.render(recipe), tmp_path)
    check_gold("seeds-page.html", page)
    assert "<h2>What this cannot tell</h2>" in page and "failed · run now" in page
