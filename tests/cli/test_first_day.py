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

from oloproof.cli.main import main
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


# ----------------------------------------------------------------- integers beyond 2**53 and 2**64

BIG = 2**64  # 18446744073709551616: orjson alone reads it, and BIG + 1, as the same float


def big_cases(answers: list[int], expected: int = BIG) -> list[dict[str, object]]:
    return [{"id": f"c{i:03d}", "answer": a, "expected": {"label": expected}} for i, a in enumerate(answers)]


@pytest.mark.parametrize("big", [2**53 + 1, 2**63 + 1, 2**64, -(2**63) - 2, 10**30])
def test_big_integer_labels_are_compared_exactly(project: Project, big: int) -> None:
    # Half the answers are off by one: 30 of 60 correct, a FAIL of min 0.8 (main called every one equal).
    project.write(
        cases=big_cases([big + (i % 2) for i in range(60)], expected=big),
        evaluators="  - {type: label_match, field: label}\n  - {type: within_tolerance, field: label, tolerance: 0}",
        rules="  - {id: accurate, criterion: correct, min: 0.8}\n  - {id: close, criterion: within_tolerance, min: 0.8}",
    )
    out = project.root / "r.json"
    assert project.cli("gate", "-q", "--json", str(out)) == ExitCode.FAIL
    data = json.loads(out.read_text())
    assert [rule["passes"] for rule in data["rules"]] == [30, 30]


def test_imported_big_integer_outputs_are_exact(project: Project) -> None:
    project.write(cases=big_cases([0] * 40), command=None)
    preds = project.root / "preds.jsonl"
    preds.write_text("".join(f'{{"id": "c{i:03d}", "label": {BIG + (i % 2)}}}\n' for i in range(40)))
    assert project.cli("run", "--outputs", str(preds), "--version", "v1", "-q") == 0
    out = project.root / "r.json"
    assert project.cli("gate", "-q", "--json", str(out)) == ExitCode.FAIL
    assert json.loads(out.read_text())["rules"][0]["passes"] == 20


def test_test_sets_differing_only_beyond_2_64_have_different_digests(project: Project) -> None:
    digests = []
    for expected in (BIG, BIG + 1):
        project.write(cases=big_cases([BIG] * 40, expected=expected))
        out = project.root / "r.json"
        project.cli("gate", "-q", "--json", str(out))
        digests.append(json.loads(out.read_text())["testset"]["digest"])
    assert digests[0] != digests[1]


def test_a_number_too_large_for_a_float_is_a_data_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    path = project.root / "data" / "test.jsonl"
    project.write(cases=big_cases([1]))
    path.write_text('{"id": "c0", "answer": 1, "expected": {"label": 1e400}}\n', encoding="utf-8")
    capsys.readouterr()
    assert project.cli("gate", "-q") == ExitCode.USAGE
    assert "test.jsonl:1: not valid JSON" in capsys.readouterr().err


# ----------------------------------------------------------------- declared transforms

TRANSFORMS = """\
metamorphic:
  transforms:
    - name: noise
      field: features
      perturb: {{kind: numeric_noise, scale: {{x: 0.5}}, seed: 2}}
    - name: other
      field: features
      perturb: {{kind: numeric_noise, scale: {{{other_key}: 0.5}}, seed: 3}}
"""


def transform_project(project: Project, *, other_key: str = "y", read_noise: bool = True) -> None:
    cases = [
        {"id": f"c{i:03d}", "answer": 1, "features": {"x": float(i), "y": 1.0}, "expected": {"label": 1}}
        for i in range(40)
    ]
    relation = "\n  - {type: metamorphic_relation, relation: same_label, transform: noise, field: label}"
    project.write(
        cases=cases,
        evaluators="  - {type: label_match, field: label}" + (relation if read_noise else ""),
        extra=TRANSFORMS.format(other_key=other_key),
    )


def test_a_misspelt_scale_key_is_an_error_for_a_transform_no_rule_reads(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    transform_project(project, other_key="yy")  # `other` has no evaluator and no rule; its key is misspelt
    for argv in (("gate", "-q"), ("compare", "latest", "latest"), ("run", "-q")):
        capsys.readouterr()
        assert project.cli(*argv) == ExitCode.USAGE, argv
        err = capsys.readouterr().err
        assert "metamorphic.transforms[1].perturb.scale.yy: no case of " in err, argv
        assert "has 'features.yy' (did you mean 'y'?)" in err
    assert not (project.root / ".oloproof" / "runs").exists()  # refused before the system ran


def test_what_this_cannot_tell_names_only_the_transforms_run(project: Project) -> None:
    transform_project(project)  # `noise` is read by an evaluator; `other` by nothing
    out = project.root / "r.json"
    project.cli("gate", "-q", "--json", str(out))
    said = json.loads(out.read_text())["limitations"]
    assert any(item.startswith("Perturbations nobody declared: only noise was tried") for item in said)
    assert not any("other was tried" in item or "noise and other" in item for item in said)
    assert any(item.startswith("Declared but not tried: other (its flip rate was not measured") for item in said)


def test_no_transform_run_means_none_is_said_to_be_tried(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    transform_project(project, read_noise=False)
    out = project.root / "r.json"
    capsys.readouterr()
    assert project.cli("gate", "--json", str(out)) == ExitCode.PASS
    said = json.loads(out.read_text())["limitations"]
    assert not any("tried, at the declared size" in item for item in said)
    assert not any(item.startswith("Certified robustness") for item in said)
    assert any(item.startswith("Perturbations: none was tried (noise and other declared") for item in said)
    assert "only noise" not in capsys.readouterr().out


# ----------------------------------------------------------------- seeds with nothing to estimate


def test_seeds_whose_checkpoints_all_crash_are_insufficient_not_exit_70(project: Project) -> None:
    (project.root / "seeds.yaml").write_text(
        "recipe: r\ncheckpoints:\n"
        + "".join(
            f"  s{i}: {{command: {shlex.join([sys.executable, str(ECHO), '--crash-after', '0', '--tag', str(i)])}}}\n"
            for i in range(3)
        )
        + "rule: {id: recipe, criterion: correct, min: 0.5}\n",
        encoding="utf-8",
    )
    project.write(cases=labelled_cases(30, 30), extra="seeds: seeds.yaml\n")
    out = project.root / "seeds.json"
    assert project.cli("seeds", "-q", "--json", str(out)) == ExitCode.INSUFFICIENT_EVIDENCE
    rule = json.loads(out.read_text())["rule"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "missing_outputs" in rule["reasons"]
    assert rule["sentence"] == "recipe r: no checkpoint has a usable output (failed: s0, s1, s2), so the recipe is not judged."


def test_seeds_on_a_one_case_set_are_insufficient_not_exit_70(project: Project) -> None:
    seeds_file(project, "label")
    project.write(cases=labelled_cases(1, 1), extra="seeds: seeds.yaml\n")
    out = project.root / "seeds.json"
    assert project.cli("seeds", "-q", "--json", str(out)) == ExitCode.INSUFFICIENT_EVIDENCE
    assert "the test set has one case, and a recipe's interval needs at least two" in json.loads(out.read_text())["rule"]["sentence"]


def test_the_labelling_page_shows_a_big_integer_label_exactly(project: Project) -> None:
    cases = [{"id": f"c{i}", "answer": 1, "text": f"good case {i}", "expected": {"label": BIG + 1}} for i in range(5)]
    project.write(
        cases=cases,
        extra="metamorphic:\n  transforms:\n    - name: t\n      field: text\n      perturb: {kind: case, to: upper}\n",
    )
    page = project.root / "t.html"
    assert main(["metamorphic", "label", "t", "-c", project.config, "-o", str(page)]) == 0
    assert str(BIG + 1) in page.read_text(encoding="utf-8")


@pytest.mark.parametrize(("row_value", "leaked"), [(BIG + 1, True), (BIG, False)])
def test_leakage_compares_big_integers_exactly(project: Project, row_value: int, leaked: bool) -> None:
    # The case's input is 2**64 + 1; a training row with the same integer is a leak, one with 2**64 is not.
    cases = [{"id": "c0", "answer": 1, "account": BIG + 1, "expected": {"label": 1}}] + [
        {"id": f"c{i}", "answer": 1, "account": i, "expected": {"label": 1}} for i in range(1, 30)
    ]
    project.write(cases=cases)
    training = project.root / "private" / "training.jsonl"
    training.parent.mkdir()
    training.write_text("".join(f'{{"account": {v}, "answer": 1}}\n' for v in (row_value, 10**6, 10**7)))
    out = project.root / "leak.json"
    code = project.cli("leakage", "check", "--training", str(training), "--field", "account", "--json", str(out), "-q")
    data = json.loads(out.read_text())
    assert (code == ExitCode.INSUFFICIENT_EVIDENCE) is leaked, data
    assert (data["leaked_ids"] == ["c0"]) is leaked


def test_the_long_integer_scan_agrees_with_its_regex() -> None:
    # The fast scan (digits as 0, a substring search, then the two ends of each run) must find
    # exactly the integer literals of 19 or more digits that the plain regex finds.
    import random

    from oloproof.jsonl import _LONG_DIGITS, _has_long_integer

    rng = random.Random(16)
    for _ in range(5000):
        text = "".join(rng.choice("0123456789.eE-x ,") for _ in range(rng.randint(0, 40)))
        raw = text.replace(" ", "1" * rng.randint(0, 25)).encode()
        assert _has_long_integer(raw) is (_LONG_DIGITS.search(raw) is not None), raw
    assert not _has_long_integer(b'{"x": 0.00012345678901234567}')  # a float's digits
    assert _has_long_integer(b'{"x": -9223372036854775809}')


def test_a_deep_line_with_a_big_integer_is_a_data_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    # orjson reads 1024 levels, the standard parser (which keeps big integers) about 1000.
    project.write(cases=big_cases([1]))
    deep = "[" * 1010 + "]" * 1010
    (project.root / "data" / "test.jsonl").write_text(
        f'{{"id": "c0", "answer": 1, "deep": {deep}, "expected": {{"label": {BIG + 1}}}}}\n', encoding="utf-8"
    )
    capsys.readouterr()
    assert project.cli("gate", "-q") == ExitCode.USAGE
    assert "test.jsonl:1: not valid JSON (nested too deeply)" in capsys.readouterr().err


def test_a_holdout_read_with_the_wrong_key_is_recorded_not_refused(project: Project) -> None:
    # The system has seen the holdout once it ran: the read is logged and spent either way, so it
    # is recorded with every output lacking the key counted as missing, not refused after the fact.
    project.write(
        cases=labelled_cases(30, 30),
        system_args="--field species",
        extra="holdout:\n  cases: evals/holdout.jsonl\n  budget: 3\n  log: evals/READS.log\n",
    )
    holdout = project.root / "evals" / "holdout.jsonl"
    holdout.parent.mkdir()
    holdout.write_text("".join(json.dumps({**c, "source": "h"}) + "\n" for c in labelled_cases(40, 40, prefix="h")))
    out = project.root / "read.json"
    code = project.cli("holdout", "run", "--reason", "first read", "--json", str(out), "-q")
    assert code in (0, 4), code
    data = json.loads(out.read_text())
    assert data["entry"]["missing"] == 40 and data["entry"]["answered"] == 0
    assert (project.root / "evals" / "READS.log").read_text().count("\n") >= 2


@pytest.mark.parametrize("how", ["integer ids", "ids matching no case", "a misspelt key on most outputs"])
def test_outputs_that_match_no_case_are_not_told_to_add_cases(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """When half or more of the cases have no usable output, more cases would not settle the rule:
    the sentence says the outputs are what is missing, never 'add cases' or 'PASS would need N'."""
    project.write(cases=labelled_cases(40, 40), command=None)
    monkeypatch.chdir(project.root)
    rows = []
    for i in range(40):
        if how == "integer ids":
            rows.append({"id": i, "label": 1})
        elif how == "ids matching no case":
            rows.append({"id": f"other{i}", "label": 1})
        else:
            rows.append({"id": f"c{i:05d}", ("label" if i == 0 else "lable"): 1})
    (project.root / "o.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert main(["run", "--outputs", "o.jsonl", "--version", "v1", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["gate", "--json", "r.json"]) == 4
    [rule] = json.loads((project.root / "r.json").read_text())["rules"]
    assert "cases have no usable output" in rule["sentence"], rule["sentence"]
    assert "so more cases would not settle it; make the system answer every case." in rule["sentence"]
    assert "add cases" not in rule["sentence"] and "would need" not in rule["sentence"]
