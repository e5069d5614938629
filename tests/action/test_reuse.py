"""The action runs the released system fresh by default (issue 16, point 2): input ``reuse``.

``baseline-only`` (the default): the released system and its metamorphic copies run on every job;
stored runs stand in only as regression baselines and seed checkpoints. ``all``: a stored run of
the released system is reused when its fingerprint matches, and says what that fingerprint covered.
Through the action's entry point, on a push and on a pull request against a committed base branch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import base_branch, pull_request, run_dir
from tests.conftest import ECHO


def _swap_default_model(action: ActionRun) -> None:
    """`python predict.py` loading model/current.json by default: a model the fingerprint cannot see."""
    root = action.workspace
    (root / "model").mkdir()
    (root / "model" / "current.json").write_text('{"answer": null}')
    (root / "predict.py").write_text(
        "import json, sys\n"
        "weights = json.load(open('model/current.json'))\n"
        "for line in sys.stdin:\n"
        "    case = json.loads(line)\n"
        "    answer = weights['answer'] if weights['answer'] is not None else case['answer']\n"
        "    print(json.dumps({'id': case['id'], 'label': answer}))\n"
    )
    text = (root / "release.yaml").read_text()
    command = next(line for line in text.splitlines() if line.startswith("  command:"))
    (root / "release.yaml").write_text(text.replace(command, f"  command: {json.dumps([sys.executable, 'predict.py'])}"))


def test_by_default_the_released_system_is_run_fresh_in_the_action(action: ActionRun) -> None:
    _swap_default_model(action)
    first = action(**{"github-token": ""})
    assert first.code == 0
    before = json.loads((action.workspace / "oloproof-report.json").read_text())
    (action.workspace / "model" / "current.json").write_text('{"answer": 0}')  # swapped; the fingerprint is blind to it
    second = action(**{"github-token": ""})
    data = json.loads((action.workspace / "oloproof-report.json").read_text())
    assert second.code == 1 and second.outputs["verdict"] == "FAIL"
    assert data["run"]["reused"] is False and data["run"]["run_id"] != before["run"]["run_id"]
    assert "the system was run fresh: no stored run of version 'v1' stands in for it here" in second.summary


def test_reuse_all_reuses_the_stored_run_and_says_what_its_fingerprint_covered(action: ActionRun) -> None:
    _swap_default_model(action)
    assert action(**{"github-token": "", "reuse": "all"}).code == 0
    (action.workspace / "model" / "current.json").write_text('{"answer": 0}')
    result = action(**{"github-token": "", "reuse": "all"})
    data = json.loads((action.workspace / "oloproof-report.json").read_text())
    assert result.code == 0 and data["run"]["reused"] is True  # today's behaviour, asked for by name
    assert "its fingerprint covers only code (2 files: predict.py, " in result.summary
    assert "declare the model in &#96;system.artifacts&#96;" in result.summary


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("baseline", "reuse: unknown value 'baseline' (did you mean 'baseline-only'?); choose baseline-only"),
        ("none", "reuse: unknown value 'none'; choose baseline-only (run the released system fresh, reuse only"),
        ("", "reuse: unknown value ''; choose baseline-only"),
    ],
)
def test_an_unknown_reuse_value_is_an_input_error(action: ActionRun, value: str, message: str) -> None:
    result = action(**{"github-token": "", "reuse": value})
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    assert message in error


def test_baseline_and_seed_runs_are_still_reused_when_the_released_system_runs_fresh(action: ActionRun) -> None:
    from oloproof.cli.main import main as cli

    root = action.workspace
    outputs = root / "v0.jsonl"
    outputs.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(100)))
    config = str(root / "release.yaml")
    for version in ("v0", "seed_2"):
        assert cli(["run", "-c", config, "--outputs", str(outputs), "--version", version, "--quiet"]) == 0
    [v0] = [p.parent.name for p in root.glob(".oloproof/runs/*/run.json") if '"v0"' in p.read_text()]
    text = (root / "release.yaml").read_text()
    command = f"'{sys.executable} {ECHO}'"
    (root / "release.yaml").write_text(
        text.replace("  rules:\n", "  rules:\n  - {id: no_regression, criterion: correct, baseline: 'version:v0', max_drop: 0.2}\n")
        + f"seeds:\n  recipe: r\n  checkpoints:\n    s1: {{command: {command}, version: seed_1}}\n    s2: version:seed_2\n"
        "  rule: {id: recipe, criterion: correct, min: 0.5}\n"
    )
    assert cli(["gate", "-c", config, "--quiet"]) == 4  # runs v1 and the checkpoint seed_1 (too few seeds)
    before = {p.parent.name for p in root.glob(".oloproof/runs/*/run.json")}
    assert len(before) == 4
    result = action(**{"github-token": "", "fail-on": "none"})
    data = json.loads((root / "oloproof-report.json").read_text())
    assert result.code == 0, result.stdout
    assert data["run"]["reused"] is False and data["run"]["run_id"] not in before  # the released system: run now
    assert {p.parent.name for p in root.glob(".oloproof/runs/*/run.json")} - before == {data["run"]["run_id"]}
    [rule] = [rule for rule in data["rules"] if rule["id"] == "no_regression"]
    assert v0 in json.dumps(rule)  # the baseline: the stored run


def test_docs_list_every_input_with_its_default() -> None:
    from oloproof.action.inputs import INPUTS

    docs = (Path(__file__).parents[2] / "docs" / "action.md").read_text()
    for name in INPUTS:
        assert f"| `{name}` |" in docs, name
    assert "| `reuse` | `baseline-only` |" in docs


def test_a_pull_request_that_swaps_a_model_read_by_default_is_judged_on_a_fresh_run(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base branch holds a run made with model/current.json; the pull request replaces that
    file, which no command line names. Reusing the base's run would PASS the swapped model."""
    _swap_default_model(action)
    (action.workspace / "model" / "current.json").write_text('{"answer": 1}')  # the base's model: always right
    base = base_branch(action, monkeypatch)  # commits a run of it
    stored = run_dir(action.workspace).name
    (action.workspace / "model" / "current.json").write_text('{"answer": 0}')  # the pull request's model
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "FAIL"})
    data = json.loads((action.workspace / "oloproof-report.json").read_text())
    assert result.code == 1 and data["run"]["run_id"] != stored and data["rules"][0]["estimate"] == 0.0
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "FAIL", "reuse": "all"})
    data = json.loads((action.workspace / "oloproof-report.json").read_text())
    assert data["run"]["run_id"] == stored and result.code == 0  # what `all` risks, said in the summary:
    assert f"run {stored} was reused: its fingerprint covers only code (2 files: predict.py, " in result.summary
