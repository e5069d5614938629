"""A seed checkpoint is never the regression baseline's version (config error at its line, exit
2), and a checkpoint whose command exits non-zero is a failed seed, whatever it answered."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import ECHO, Project, labelled_cases

REGRESSION = "  - {id: no_regression, criterion: correct, baseline: 'version:v0', max_drop: 0.05}"
APPROX = "  allow_approximate_methods: true\n"


def echo(*flags: str) -> str:
    return json.dumps(" ".join([sys.executable, str(ECHO), *flags]))


def seeds_block(checkpoints: str) -> str:
    return f"seeds:\n  recipe: r\n  checkpoints:\n{checkpoints}  rule: {{id: recipe_ok, criterion: correct, min: 0.5}}\n"


@pytest.mark.parametrize(
    ("checkpoint", "key"),
    [
        (f"    s1: {{command: {echo()}, version: v0}}\n", "seeds.checkpoints.s1"),  # declared version
        (f"    v0: {{command: {echo()}}}\n", "seeds.checkpoints.v0"),  # the name is the version
        ("    s1: 'version:v0'\n", "seeds.checkpoints.s1"),  # a ref to the baseline's version
        ("    s1: 'version:v0~1'\n", "seeds.checkpoints.s1"),
    ],
    ids=["command-version", "command-name", "ref", "ref-tilde"],
)
def test_a_checkpoint_may_not_be_the_baselines_version(
    project: Project, capsys: pytest.CaptureFixture[str], checkpoint: str, key: str
) -> None:
    extra = seeds_block(checkpoint + f"    s2: {{command: {echo()}}}\n    s3: {{command: {echo()}}}\n")
    project.write(cases=labelled_cases(20, 18), version="v1", rules=REGRESSION, extra=extra, policy_extra=APPROX)
    for command in (("gate",), ("seeds",)):
        assert project.cli(*command) == ExitCode.USAGE, command
        err = " ".join(capsys.readouterr().err.split())
        assert f"release.yaml:17: {key}: version 'v0' is the baseline of rule no_regression (" in err, err
        assert "policy.rules[0].baseline: version:v0): a seed checkpoint may not be the regression baseline's version" in err
    assert not (project.root / ".oloproof" / "runs").exists()  # refused before anything ran


def test_a_baseline_named_by_run_id_is_checked_once_resolved(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=labelled_cases(20, 18), version="v0")
    assert project.cli("run", "--quiet") == 0
    [baseline] = RunStore(project.root).records()
    rules = f"  - {{id: no_regression, criterion: correct, baseline: '{baseline.run_id}', max_drop: 0.05}}"
    extra = seeds_block(f"    s1: {{command: {echo()}, version: v0}}\n    s2: {{command: {echo()}}}\n")
    project.write(version="v1", rules=rules, extra=extra, policy_extra=APPROX)
    (project.root / "seeds.yaml").write_text(
        f"recipe: r\ncheckpoints:\n  s1: {{command: {echo()}}}\n  s2: latest\n"
        "rule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
    )
    assert project.cli("gate") == ExitCode.USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "release.yaml:17: seeds.checkpoints.s1: version 'v0' is the baseline of rule no_regression" in err, err
    # a separate seeds file whose `latest` is the baseline's run: refused at its line too
    assert project.cli("seeds", str(project.root / "seeds.yaml")) == ExitCode.USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert f"seeds.yaml:4: checkpoints.s2: latest is run {baseline.run_id}: version 'v0' is the baseline" in err, err
    assert len(RunStore(project.root).records()) == 1  # nothing ran


def recipe(data: dict[str, Any]) -> dict[str, Any]:
    [found] = [rule for rule in data["rules"] if rule["id"] == "recipe_ok"]
    return found


def test_a_checkpoint_that_exits_non_zero_is_a_failed_seed_even_if_it_answered_everything(project: Project) -> None:
    good = "".join(f"    s{k}: {{command: {echo('--drop', f'c{k:05d}')}}}\n" for k in range(1, 5))
    extra = seeds_block(good + f"    s5: {{command: {echo('--exit', '1')}}}\n")
    project.write(
        cases=labelled_cases(300, 300),
        rules="  - {id: accurate, criterion: correct, min: 0.5}",
        extra=extra,
        policy_extra=APPROX,
    )
    out = project.root / "gate.json"
    code = project.cli("gate", "--json", str(out))
    data = json.loads(out.read_text())
    rule = recipe(data)
    assert RunStore(project.root).resolve("version:s5").status == "failed"
    assert RunStore(project.root).resolve("version:s5").n_outputs == 300  # it answered every case
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and rule["verdict"] == "INSUFFICIENT_EVIDENCE", rule
    assert "seed_failed" in rule["reasons"] and rule["details"]["failed_checkpoints"] == ["s5"]
    assert rule["interval"]["low"] < 0.85  # every case of s5 counted as a failure for the lower bound
    assert "The run of s5 (batch 1: system exited with status 1) failed: a failed seed, none of its outputs is used" in (
        rule["sentence"]
    )
    # two failed seeds are two failures, never "one seed under two names"
    extra = seeds_block(good[: good.index("    s4")] + "".join(
        f"    s{k}: {{command: {echo('--exit', '1', '--tag', str(k))}}}\n" for k in (4, 5)
    ))
    project.write(rules="  - {id: accurate, criterion: correct, min: 0.5}", extra=extra, policy_extra=APPROX)
    project.cli("gate", "--json", str(out))
    rule = recipe(json.loads(out.read_text()))
    assert "duplicate_seeds" not in rule["reasons"] and rule["details"]["failed_checkpoints"] == ["s4", "s5"]
    assert rule["details"]["k"] == 5


def test_when_every_checkpoint_failed_there_is_nothing_to_estimate(project: Project) -> None:
    failing = "".join(f"    s{k}: {{command: {echo('--exit', '1', '--tag', str(k))}}}\n" for k in range(1, 4))
    project.write(cases=labelled_cases(30, 30), extra=seeds_block(failing), policy_extra=APPROX)
    out = project.root / "seeds.json"
    html = project.root / "seeds.html"
    assert project.cli("seeds", "--json", str(out), "--html", str(html)) == ExitCode.INSUFFICIENT_EVIDENCE
    rule = json.loads(out.read_text())["rule"]
    assert rule["reasons"] == ["seed_failed", "missing_outputs"] and rule["interval"] is None
    assert rule["sentence"] == (
        "recipe r: no checkpoint has a usable output (failed: s1, s2, s3), so the recipe is not judged."
    )
    assert html.exists()


def test_checkpoints_named_by_latest_show_the_version_they_landed_on(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """A stray run of another experiment shifts latest~N; the gate names each checkpoint's version
    and says how to pin the seeds, so the shift is seen."""
    project.write(cases=labelled_cases(20, 18), version="released")
    for name in ("seed_1", "seed_2", "seed_3", "experiment"):
        assert project.cli("run", "--command", f"{sys.executable} {ECHO}", "--version", name, "--quiet") == 0
    extra = seeds_block("    s1: latest~2\n    s2: latest~1\n    s3: latest\n")
    project.write(cases=labelled_cases(20, 18), version="released", extra=extra, policy_extra=APPROX)
    capsys.readouterr()
    project.cli("gate")
    out = " ".join(capsys.readouterr().out.split())
    assert "(version experiment) named by latest (" in out
    assert "(version seed_2) named by latest~2 (" in out
    assert "latest~N names whatever runs are newest on this test set" in out
    assert "name each seed by version:NAME to pin it" in out
