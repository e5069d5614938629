"""Every metamorphic configuration error exits 2 with file:line: key.path: message, pinned here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from tests.conftest import Project, write_cases

BASE = """\
system:
  version: v1
  command: python predict.py
testset:
  cases: data/test.jsonl
evaluators:
  - {type: label_match, field: label}
  - {type: metamorphic_relation, relation: same_label, transform: noise, field: label}
metamorphic:
  transforms:
    - name: noise
      field: features
      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}
policy:
  rules:
    - {id: accurate, criterion: correct, min: 0.8}
    - {id: stable, criterion: flips_under_noise, max: 0.05}
"""


@pytest.fixture(autouse=True)
def in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    write_cases(project.root / "data" / "test.jsonl", [{"id": "c0", "features": {"income": "52k"}, "expected": {"label": 1}}])


def error_of(project: Project, release: str, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    (project.root / "release.yaml").write_text(release, encoding="utf-8")
    code = main(list(argv or ["gate"]))
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert "Traceback" not in err and err.startswith("oloproof: error: ")
    return err.removeprefix("oloproof: error: ").strip()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("kind: numeric_noise, scale: {income: 1.0}, seed: 7", "kind: numeric_nois, scale: 1.0",
         "release.yaml:13: metamorphic.transforms[0].perturb.kind: unknown kind 'numeric_nois'; expected one of: numeric_noise, "
         "categorical_swap, blur, brightness, occlusion, jpeg, typos, case, whitespace, word_swap (did you mean 'numeric_noise'?)"),
        ("seed: 7}", "sead: 7}",
         "release.yaml:13: metamorphic.transforms[0].perturb.sead: unknown key (did you mean 'seed'?); allowed keys: keep_integers, scale, seed"),
        ("kind: numeric_noise, scale: {income: 1.0}, seed: 7", "kind: blur",
         "release.yaml:13: metamorphic.transforms[0].perturb: missing required key 'radius'"),
        ("kind: numeric_noise, scale: {income: 1.0}, seed: 7", "kind: blur, radius: 0",
         "release.yaml:13: metamorphic.transforms[0].perturb.radius: expected a number in (0, 100], got 0"),
        ("kind: numeric_noise, scale: {income: 1.0}, seed: 7", "kind: jpeg, quality: 100",
         "release.yaml:13: metamorphic.transforms[0].perturb.quality: expected a number in [1, 95], got 100"),
        ("scale: {income: 1.0}", "scale: {income: 0.0}",
         "release.yaml:13: metamorphic.transforms[0].perturb.scale: every scale is 0: the noise would change nothing"),
        ("scale: {income: 1.0}", "scale: {income: -1}",
         "release.yaml:13: metamorphic.transforms[0].perturb.scale.income: expected a number >= 0, got -1"),
        ("kind: numeric_noise, scale: {income: 1.0}, seed: 7", "kind: case, to: camel",
         "release.yaml:13: metamorphic.transforms[0].perturb.to: expected one of: lower, upper, title; got 'camel'"),
        ("      field: features", "      feild: features",
         "release.yaml:12: metamorphic.transforms[0].feild: unknown key (did you mean 'field'?); allowed keys: accepted, field, labels, name, perturb"),
        ("  transforms:", "  transform:",
         "release.yaml:10: metamorphic.transform: unknown key (did you mean 'transforms'?); allowed keys: transforms"),
        ("  transforms:\n    - name: noise\n      field: features\n      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}\n",
         "  transforms: []\n", "release.yaml:10: metamorphic.transforms: declare at least one transform"),
        ("      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}",
         "      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}\n      labels: noise.jsonl",
         "release.yaml:14: metamorphic.transforms[0].labels: numeric_noise is a declared transform: a person cannot judge whether it "
         "keeps a case's meaning, so labels do not apply (its rules are INSUFFICIENT_EVIDENCE with transform_declared)"),
        ("name: noise", "name: no/ise",
         "release.yaml:11: metamorphic.transforms[0].name: 'no/ise' may hold only letters, digits, _ and - (it names criteria and a directory)"),
        ("      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}",
         "      perturb: {kind: numeric_noise, scale: {income: 1.0}, seed: 7}\n    - {name: noise, field: x, perturb: {kind: numeric_noise, scale: 1}}",
         "release.yaml:14: metamorphic.transforms[1].name: duplicate transform name 'noise' (first at metamorphic.transforms[0])"),
        ("field: features\n", "field: features..income\n",
         "release.yaml:12: metamorphic.transforms[0].field: 'features..income' is not a key path (write features.income, not features..income)"),
        ("transform: noise, field: label}", "transform: nois, field: label}",
         "release.yaml:8: evaluators[1].transform: no transform named 'nois' (did you mean 'noise'?); declared: noise"),
        ("relation: same_label", "relation: same_lable",
         "release.yaml:8: evaluators[1].relation: expected one of: same_label, same_score_within; got 'same_lable' (did you mean 'same_label'?)"),
        ("relation: same_label", "relation: same_score_within",
         "release.yaml:8: evaluators[1].tolerance: same_score_within needs a tolerance: the largest change of the score that is not a flip"),
        ("field: label}\nmeta", "field: label, tolerance: 0.1}\nmeta",
         "release.yaml:8: evaluators[1].tolerance: tolerance applies to relation same_score_within only"),
        ("field: label}\nmeta", "field: label, passes_when: flipd}\nmeta",
         "release.yaml:8: evaluators[1].passes_when: expected one of: flipped, unchanged; got 'flipd' (did you mean 'flipped'?)"),
        ("criterion: flips_under_noise, max: 0.05}", "criterion: stable_under_noise, max: 0.05}",
         "release.yaml:17: policy.rules[1].criterion: no evaluator provides criterion 'stable_under_noise' (did you mean 'flips_under_noise'?); "
         "available: correct, flips_under_noise"),
        ("criterion: flips_under_noise, max: 0.05}", "criterion: flips_under_noise, baseline: version:v0, max_drop: 0.05}",
         "release.yaml:17: policy.rules[1].baseline: 'flips_under_noise' compares one version's outputs on original and transformed cases; "
         "a baseline comparison of it is not supported: use max (or min) on the rate"),
    ],
)
def test_config_errors_are_pinned(project: Project, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str) -> None:
    assert BASE.count(old) == 1, old
    assert error_of(project, BASE.replace(old, new), capsys) == message


@pytest.mark.parametrize(
    "perturb",
    ["kind: numeric_noise, scale: {income: 1.0}", "kind: occlusion, size: 0.2", "kind: typos, rate: 0.1"],
)
def test_every_seed_is_at_most_2_to_the_63_minus_1(project: Project, capsys: pytest.CaptureFixture[str], perturb: str) -> None:
    # A larger seed used to reach orjson (params digest) and exit 70 with "Integer exceeds 64-bit range".
    release = BASE.replace("kind: numeric_noise, scale: {income: 1.0}, seed: 7", f"{perturb}, seed: 99999999999999999999999")
    assert error_of(project, release, capsys, "metamorphic", "show") == (
        "release.yaml:13: metamorphic.transforms[0].perturb.seed: expected an integer of at most 63 bits, got 99999999999999999999999"
    )
    largest = BASE.replace("kind: numeric_noise, scale: {income: 1.0}, seed: 7", f"{perturb}, seed: {2**63 - 1}")
    (project.root / "release.yaml").write_text(largest, encoding="utf-8")
    from oloproof.config import load_release

    assert load_release(str(project.root / "release.yaml")).metamorphic is not None  # the largest seed is accepted


def test_a_relation_without_any_transforms_says_where_to_declare_them(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    release = BASE.split("metamorphic:")[0] + "policy:" + BASE.split("policy:")[1]
    assert error_of(project, release, capsys) == (
        "release.yaml:8: evaluators[1].transform: no transform named 'noise': declare it under metamorphic.transforms"
    )


def test_a_value_the_transform_cannot_take_is_a_data_error_at_its_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert error_of(project, BASE, capsys, "metamorphic", "show") == (
        "data/test.jsonl:1: case 'c0': features: numeric_noise needs a number at 'income', got str (transform 'noise')"
    )


def test_a_declared_labels_file_that_is_missing_is_not_an_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    # SPEC §5: missing labels mean transform_unlabelled, not a broken configuration.
    release = BASE.replace("kind: numeric_noise, scale: {income: 1.0}, seed: 7}", "kind: case, to: upper}\n      labels: labels/up.jsonl")
    release = release.replace("field: features", "field: text")
    write_cases(project.root / "data" / "test.jsonl", [{"id": "c0", "text": "good", "expected": {"label": 1}}])
    (project.root / "release.yaml").write_text(release, encoding="utf-8")
    assert main(["metamorphic", "show"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "1 changed, 0 not applicable; unlabelled" in out
    assert "labels/up.jsonl does not exist yet: make it with `oloproof metamorphic label noise`" in out


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ("labels", "release.yaml:14: metamorphic.transforms[0].labels: labels is not a file"),
        ('"labels/up\\0.jsonl"', "release.yaml:14: metamorphic.transforms[0].labels: 'labels/up\\x00.jsonl': a path must not contain a NUL byte"),
    ],
)
def test_a_labels_path_that_cannot_be_a_labels_file_is_pinned(
    project: Project, capsys: pytest.CaptureFixture[str], labels: str, message: str,
) -> None:
    release = BASE.replace("kind: numeric_noise, scale: {income: 1.0}, seed: 7}", f"kind: case, to: upper}}\n      labels: {labels}")
    release = release.replace("field: features", "field: text")
    write_cases(project.root / "data" / "test.jsonl", [{"id": "c0", "text": "good", "expected": {"label": 1}}])
    (project.root / "labels").mkdir()
    assert error_of(project, release, capsys, "metamorphic", "show") == message


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"id": "c0"}, "labels.jsonl:1: case 'c0': 'preserved' must be true or false, got None"),
        ({"id": "c0", "preserved": "yes"}, "labels.jsonl:1: case 'c0': 'preserved' must be true or false, got 'yes'"),
        ({"preserved": True}, "labels.jsonl:1: each label needs a non-empty string 'id'"),
        ({"id": "c0", "preserved": True, "verdict": 1}, "labels.jsonl:1: case 'c0': unknown key(s) verdict; allowed: digest, id, note, preserved"),
    ],
)
def test_malformed_labels_files_are_pinned(project: Project, capsys: pytest.CaptureFixture[str], line: dict, message: str) -> None:
    release = BASE.replace("kind: numeric_noise, scale: {income: 1.0}, seed: 7}", "kind: case, to: upper}\n      labels: labels.jsonl")
    release = release.replace("field: features", "field: text")
    write_cases(project.root / "data" / "test.jsonl", [{"id": "c0", "text": "good", "expected": {"label": 1}}])
    Path(project.root / "labels.jsonl").write_text(json.dumps(line) + "\n", encoding="utf-8")
    assert error_of(project, release, capsys, "metamorphic", "show") == message


def test_label_command_errors(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert error_of(project, BASE, capsys, "metamorphic", "label", "nosie") == (
        "no transform named 'nosie' (did you mean 'noise'?); declared: noise"
    )
    write_cases(project.root / "data" / "test.jsonl", [{"id": "c0", "features": {"income": 5.0}, "expected": {"label": 1}}])
    assert error_of(project, BASE, capsys, "metamorphic", "label", "noise") == (
        "'noise' is a numeric_noise transform: declared, not validated — a person cannot judge whether it keeps a row's meaning, "
        "so there is nothing to label (image and text transforms can be labelled)"
    )
