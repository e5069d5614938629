"""Issue 16, point 10: the first-day mistakes get the right answer, through the real CLI.

The wrong output key (the system writes ``species``, the evaluator reads ``label``) decides
nothing: it is a mismatch between release.yaml and the system (exit 2 naming the evaluator's
line and both keys), never "add cases to settle it", and never exit 70 with a seeds block.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from tests.conftest import ECHO, Project, labelled_cases

SPECIES = "evaluators[0].field: 149 of 149 outputs have no 'label' (they have: species)"


def penguins(project: Project, *, extra: str = "", system_args: str = "--field species") -> None:
    project.write(cases=labelled_cases(149, 149), system_args=system_args, extra=extra)


def seeds_file(project: Project, field: str) -> None:
    commands = [shlex.join([sys.executable, str(ECHO), "--field", field, "--tag", str(i)]) for i in range(3)]
    lines = "".join(f"  s{i}: {{command: {command}}}\n" for i, command in enumerate(commands, start=1))
    (project.root / "seeds.yaml").write_text(
        f"recipe: r\ncheckpoints:\n{lines}rule: {{id: recipe, criterion: correct, min: 0.5}}\n", encoding="utf-8"
    )


def gate_err(project: Project, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = project.cli("gate", "-q", *argv)
    return code, capsys.readouterr().err


def test_wrong_output_key_names_both_keys_and_decides_nothing(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    penguins(project)
    code, err = gate_err(project, capsys, "--json", str(project.root / "r.json"))
    assert code == ExitCode.USAGE
    assert f"release.yaml:8: {SPECIES}" in err
    assert "label_match reads 'label', so no rule on it can be decided" in err
    assert "add cases" not in err and "internal error" not in err
    assert not (project.root / "r.json").exists()
    # The run is kept: fixing the evaluator needs no second run of the system.
    project.write(
        system_args="--field species", evaluators="  - {type: label_match, field: species, expected_field: label}"
    )
    capsys.readouterr()
    assert project.cli("gate", "-q") == ExitCode.PASS


def test_wrong_output_key_with_a_seeds_block_is_not_an_internal_error(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds_file(project, "species")
    penguins(project, extra="seeds: seeds.yaml\n")
    code, err = gate_err(project, capsys)
    assert code == ExitCode.USAGE and SPECIES in err and "internal error" not in err
    capsys.readouterr()
    assert project.cli("seeds", "-q") == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "149 of 149 outputs of checkpoint s1 (run " in err and "have no 'label' (they have: species)" in err


def test_a_checkpoint_that_writes_another_key_is_named(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    seeds_file(project, "species")
    penguins(project, extra="seeds: seeds.yaml\n", system_args="")  # the released system writes `label`
    code, err = gate_err(project, capsys)
    assert code == ExitCode.USAGE
    assert "outputs of checkpoint s1 (run " in err and "have no 'label' (they have: species)" in err


def test_some_outputs_without_the_key_are_missing_outputs(project: Project, tmp_path: Path) -> None:
    # One output lacks the key (the system answered it with something else): that case is missing,
    # the others decide; only a key no output holds is a mismatch.
    script = tmp_path / "partial.py"
    script.write_text(
        "import json, sys\n"
        "for n, line in enumerate(sys.stdin):\n"
        "    case = json.loads(line)\n"
        "    key = 'error' if n == 0 else 'label'\n"
        "    print(json.dumps({'id': case['id'], key: 1}))\n",
        encoding="utf-8",
    )
    project.write(cases=labelled_cases(149, 149), command=json.dumps([sys.executable, str(script)]))
    out = project.root / "r.json"
    assert project.cli("gate", "-q", "--json", str(out)) == ExitCode.PASS
    data = json.loads(out.read_text())
    assert data["rules"][0]["missing"] == 1 and "missing_outputs" in data["rules"][0]["reasons"]


@pytest.mark.parametrize(
    ("evaluator", "system_args"),
    [
        ("{type: within_tolerance, field: label, tolerance: 0.5}", "--field prediction"),
        ("{type: contains, field: label, value: x}", "--field text"),
        ("{type: regex, field: label, pattern: x}", "--field text"),
        ("{type: score, field: label}", "--field prediction"),
    ],
)
def test_every_field_evaluator_refuses_a_key_no_output_holds(
    project: Project, capsys: pytest.CaptureFixture[str], evaluator: str, system_args: str
) -> None:
    criterion = {"within_tolerance": "within_tolerance", "contains": "contains", "regex": "matches", "score": "score"}
    kind = evaluator.split("type: ")[1].split(",")[0]
    project.write(
        cases=labelled_cases(20, 20),
        system_args=system_args,
        evaluators=f"  - {evaluator}",
        rules=f"  - {{id: r, criterion: {criterion[kind]}, min: 0.5}}",
    )
    code, err = gate_err(project, capsys)
    wrote = system_args.split()[-1]
    assert code == ExitCode.USAGE, err
    assert f"evaluators[0].field: 20 of 20 outputs have no 'label' (they have: {wrote})" in err


def test_a_baseline_run_with_another_key_is_named_in_compare(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=labelled_cases(30, 30), system_args="--field species", version="v0")
    project.cli("gate", "-q")  # exit 2, but the run of v0 is stored
    project.write(cases=labelled_cases(30, 30), version="v1")
    assert project.cli("gate", "-q") == ExitCode.PASS
    capsys.readouterr()
    assert project.cli("compare", "version:v0", "version:v1") == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "30 of 30 outputs of run " in err and "(version v0) have no 'label' (they have: species)" in err
