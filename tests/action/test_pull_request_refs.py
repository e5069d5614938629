"""In a pull request, refs resolve over the base branch's run list, each run read as the base
holds it (docs/action.md, "What a pull request can and cannot forge"): deleting, editing,
re-dating or symlinking the newest base run of the baseline's version never moves
``baseline: version:v1`` onto an older, weaker run, so FAIL never flips to PASS."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main as cli
from oloproof.files import seal
from oloproof.runstore import RunStore
from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import git, pull_request, report
from tests.conftest import labelled_cases

REGRESSION = "  - {id: no_regression, criterion: correct, baseline: 'version:v1', max_drop: 0.05}"


def import_v1(root: Path, correct: int) -> str:
    preds = root / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1 if i < correct else 0}) + "\n" for i in range(100)))
    before = {path.name for path in (root / ".oloproof" / "runs").glob("*")} if (root / ".oloproof" / "runs").exists() else set()
    assert cli(["run", "-c", str(root / "release.yaml"), "--outputs", str(preds), "--version", "v1"]) == 0
    preds.unlink()
    [new] = {path.name for path in (root / ".oloproof" / "runs").glob("*")} - before
    return new


def base_with_two_baselines(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
    """The protected branch: v2 (85 of 100) gated against version:v1, whose newest run is 100 of
    100 (FAIL: a drop of 0.15) and whose older run is 80 of 100 (it would PASS)."""
    action.project.write(cases=labelled_cases(100, 85), version="v2", rules=REGRESSION)
    monkeypatch.chdir(action.workspace)
    older = import_v1(action.workspace, 80)
    newest = import_v1(action.workspace, 100)
    git(action.workspace, "init", "-q", "-b", "main")
    git(action.workspace, "add", "-A")
    git(action.workspace, "commit", "-qm", "base")
    return git(action.workspace, "rev-parse", "HEAD"), older, newest


def reseal(run: Path, change: Callable[[dict[str, Any]], None]) -> None:
    meta = json.loads((run / "run.json").read_text())
    meta.pop("digest", None)
    change(meta)
    (run / "run.json").write_text(json.dumps(seal(meta)))


def all_wrong(run: Path) -> None:
    data = "".join(json.dumps({"id": f"c{i:05d}", "label": 0}, separators=(",", ":")) + "\n" for i in range(100))
    (run / "outputs.jsonl").write_text(data)
    reseal(run, lambda meta: meta.update(outputs_sha256="sha256:" + hashlib.sha256(data.encode()).hexdigest()))


def symlinked(run: Path, older: Path) -> None:
    forged = run.parent.parent / "forged-run.json"
    forged.write_text((run / "run.json").read_text())
    (run / "run.json").unlink()
    (run / "run.json").symlink_to(forged)
    reseal_target = json.loads(forged.read_text())
    reseal_target.pop("digest", None)
    reseal_target["created_ns"] = 1
    forged.write_text(json.dumps(seal(reseal_target)))


def moved_behind_a_symlink(run: Path, older: Path, *, level: int) -> None:
    """The runs folder (level 1) or the whole .oloproof/ (level 2) replaced by a symlink to a copy
    without the newest run."""
    folder = run.parents[level - 1]
    elsewhere = run.parents[3] / f"elsewhere-{level}"  # beside the workspace
    shutil.copytree(folder, elsewhere)
    shutil.rmtree(elsewhere.joinpath(*run.relative_to(folder).parts))
    shutil.rmtree(folder)
    folder.symlink_to(elsewhere)


def replaced_by_a_file(run: Path) -> None:
    shutil.rmtree(run)
    run.write_text("x")


ATTACKS: dict[str, Callable[[Path, Path], None]] = {
    "runs folder a symlink to a copy": lambda run, older: moved_behind_a_symlink(run, older, level=1),
    ".oloproof a symlink to a copy": lambda run, older: moved_behind_a_symlink(run, older, level=2),
    "run folder replaced by a file": lambda run, older: replaced_by_a_file(run),
    "deleted": lambda run, older: shutil.rmtree(run),
    "run.json deleted": lambda run, older: (run / "run.json").unlink(),
    "every run deleted": lambda run, older: shutil.rmtree(run.parent),
    "re-dated older and sealed again": lambda run, older: reseal(run, lambda meta: meta.update(created_ns=1)),
    "outputs rewritten and sealed again": lambda run, older: all_wrong(run),
    "outputs deleted": lambda run, older: (run / "outputs.jsonl").unlink(),
    "run.json a symlink to a re-dated copy": symlinked,
    "the older run re-dated newest": lambda run, older: reseal(older, lambda meta: meta.update(created_ns=2**62)),
}


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_pull_request_cannot_move_the_baseline_ref_off_the_newest_base_run(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    base, older, newest = base_with_two_baselines(action, monkeypatch)
    runs = action.workspace / ".oloproof" / "runs"
    # Untouched, the pull request FAILs against the newest v1 run.
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "FAIL"})
    assert result.code == 1, result.stdout
    [rule] = report(action)["rules"]
    assert rule["verdict"] == "FAIL" and f"run {newest}, version v1" in rule["sentence"]
    ATTACKS[attack](runs / newest, runs / older)
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "FAIL"})
    data = report(action)
    [rule] = data["rules"]
    assert result.code == 1 and rule["verdict"] == "FAIL", (attack, rule["sentence"])
    assert f"run {newest}, version v1" in rule["sentence"]
    assert rule["estimate"] == pytest.approx(-0.15)
    touched = older if attack == "the older run re-dated newest" else newest
    assert any(
        note.startswith(f"run {touched} is ") and f"by this pull request: the copy on the base branch ({base[:12]}) is used" in note
        for note in data["run_notes"]
    ), data["run_notes"]


def test_a_baseline_run_a_pull_request_adds_is_not_found(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    action.project.write(cases=labelled_cases(100, 85), version="v2", rules=REGRESSION)
    monkeypatch.chdir(action.workspace)
    (action.workspace / "keep").write_text("x")
    git(action.workspace, "init", "-q", "-b", "main")
    git(action.workspace, "add", "-A")
    git(action.workspace, "commit", "-qm", "base without any run")
    base = git(action.workspace, "rev-parse", "HEAD")
    added = import_v1(action.workspace, 60)  # a weak "baseline" added by the pull request
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "none"})
    assert result.code == 2, result.stdout  # the ref does not resolve over the base's runs: a config error
    assert "policy.rules[0].baseline: ref 'version:v1': no run of version 'v1' on data/test.jsonl" in result.stdout
    assert f"(not counted: run {added}, added by this pull request (only runs on the base branch" in result.stdout


SEEDS = (
    "seeds:\n  recipe: r\n"
    "  checkpoints: {seed_1: latest~2, seed_2: latest~1, seed_3: latest}\n"
    "  rule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
)


def test_a_pull_request_cannot_shift_the_seed_refs(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    """The guide's `latest~N` checkpoints name the base branch's seed runs, whatever the pull
    request deletes or adds, and whatever runs gates added on the base branch."""
    action.project.write(cases=labelled_cases(100, 85), extra=SEEDS)
    monkeypatch.chdir(action.workspace)
    seeds = []
    for k in range(1, 4):
        preds = action.workspace / "preds.jsonl"
        preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": int(i != k)}) + "\n" for i in range(100)))
        assert cli(["run", "--outputs", str(preds), "--version", f"seed_{k}"]) == 0
        preds.unlink()
        seeds.append(RunStore(action.workspace).resolve(f"version:seed_{k}").run_id)
    assert cli(["gate", "--quiet"]) in (0, 1, 4, 5)  # a gate on the base branch adds a run of v1
    git(action.workspace, "init", "-q", "-b", "main")
    git(action.workspace, "add", "-A")
    git(action.workspace, "commit", "-qm", "base")
    base = git(action.workspace, "rev-parse", "HEAD")
    runs = action.workspace / ".oloproof" / "runs"
    shutil.rmtree(runs / seeds[2])  # the newest seed run deleted ...
    import_v1(action.workspace, 100)  # ... and a newer run added (it is not used)
    pull_request(action, base)(**{"github-token": "", "fail-on": "none"})
    data = report(action)
    [check] = [item for item in data["checks"] if item["name"] == "seeds"]
    assert [cp["run_id"] for cp in check["data"]["checkpoints"]] == seeds
