"""Issue 18 §8 through the CLI: `init --kind` writes a commented skeleton and never replaces a file,
`gate` without a release.yaml points at `init`, `run` and `runs` show each criterion's estimate and
interval, and label_match says when outputs and expected labels differ in JSON type."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, labelled_cases, report

KINDS = ("classifier", "prompt", "regression")


def err_of(capsys: pytest.CaptureFixture[str], *argv: str, code: int = ExitCode.USAGE) -> str:
    capsys.readouterr()
    assert main(list(argv)) == code
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and "internal error" not in captured.err, captured.err
    return captured.err.removeprefix("oloproof: error: ").strip()


@pytest.mark.parametrize("kind", KINDS)
def test_init_kind_writes_a_commented_skeleton_that_loads(
    kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["init", "--kind", kind, "proj"]) == 0
    out = capsys.readouterr().out
    assert f"wrote a {kind} project to proj/: release.yaml, policy.yaml, data/test.jsonl" in out
    assert "fill in:" in out and "then: cd proj && oloproof gate" in out
    release = (tmp_path / "proj" / "release.yaml").read_text()
    assert release.startswith(f"# release.yaml — written by `oloproof init --kind {kind}`")
    assert "TODO" in release and (tmp_path / "proj" / "data" / "test.jsonl").read_text() == ""
    monkeypatch.chdir(tmp_path / "proj")
    # the skeleton loads: the first thing the gate asks for is the test set, not a traceback
    assert err_of(capsys, "gate") == (
        "data/test.jsonl: the test set is empty: it needs at least one case; fill in your test set, one JSON object "
        'per line: {"id": ..., your input keys, "expected": {...}}'
    )
    assert main(["schema", "release"]) == 0


def test_init_never_replaces_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "proj"
    assert main(["init", "--kind", "classifier", str(target)]) == 0
    (target / "release.yaml").write_text("# mine\n")
    before = {path: path.read_bytes() for path in target.rglob("*") if path.is_file()}
    # init twice: refused, nothing touched
    assert err_of(capsys, "init", "--kind", "prompt", str(target)) == (
        f"{target}: already has release.yaml, policy.yaml, data/test.jsonl; init never replaces a file: choose "
        "another DIR or remove them"
    )
    assert {path: path.read_bytes() for path in target.rglob("*") if path.is_file()} == before
    # into a file path
    afile = tmp_path / "notes.txt"
    afile.write_text("keep")
    assert err_of(capsys, "init", "--kind", "classifier", str(afile)) == (
        f"{afile}: already exists and is not a directory; choose another DIR"
    )
    assert afile.read_text() == "keep"
    # a non-empty directory with one of the files: nothing is written, not even the others
    repo = tmp_path / "repo"
    (repo / "data").mkdir(parents=True)
    (repo / "data" / "test.jsonl").write_text('{"id": "x", "expected": {"label": 1}}\n')
    (repo / "README.md").write_text("mine")
    assert err_of(capsys, "init", "--kind", "regression", str(repo)) == (
        f"{repo}: already has data/test.jsonl; init never replaces a file: choose another DIR or remove them"
    )
    assert sorted(path.name for path in repo.rglob("*")) == ["README.md", "data", "test.jsonl"]
    # a non-empty directory without them (an existing repository): written beside what is there
    (repo / "data" / "test.jsonl").unlink()
    assert main(["init", "--kind", "regression", str(repo)]) == 0
    assert (repo / "README.md").read_text() == "mine" and (repo / "release.yaml").is_file()


def test_init_never_writes_through_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    os.symlink(outside, repo / "data")
    assert err_of(capsys, "init", "--kind", "classifier", str(repo)) == (
        f"{repo}: data/test.jsonl would be written through a symbolic link; choose another DIR"
    )
    os.symlink(tmp_path / "nowhere.yaml", tmp_path / "linked")
    assert "already exists and is not a directory" in err_of(capsys, "init", "--kind", "prompt", str(tmp_path / "linked"))
    assert list(outside.iterdir()) == [] and not (tmp_path / "nowhere.yaml").exists()


def test_init_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert err_of(capsys, "init", "--kind", "classifier") == (
        "init --kind classifier needs DIR, the directory to write the project into"
    )
    assert err_of(capsys, "init", "--kind", "classifier", "--example", "prompt-holdout", str(tmp_path / "x")) == (
        "give --kind or --example, not both"
    )
    assert err_of(capsys, "init") == (
        "init needs --kind classifier|prompt|regression DIR, or --example NAME (one of classifier, model-validation, "
        "prompt-holdout, redaction-pressure), or --list"
    )


def test_gate_without_a_release_yaml_points_at_init(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    expected = (
        "release.yaml: file not found; start a project with `oloproof init --kind classifier|prompt|regression DIR` "
        "(or copy one with `oloproof init --example NAME`), or name the config with -c FILE"
    )
    assert err_of(capsys, "gate") == expected
    assert err_of(capsys, "run") == expected


def filled_classifier(root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """A skeleton from `init --kind classifier`, filled in: 60 cases, expected labels 0/1."""
    monkeypatch.chdir(root)
    assert main(["init", "--kind", "classifier", "."]) == 0
    (root / "data" / "test.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i}", "x": i, "expected": {"label": i % 2}}) + "\n" for i in range(60))
    )
    capsys.readouterr()


def outputs(root: Path, name: str, labels: list[object]) -> str:
    (root / name).write_text("".join(json.dumps({"id": f"c{i}", "label": label}) + "\n" for i, label in enumerate(labels)))
    return name


def test_run_prints_and_runs_lists_each_criterion_estimate_and_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    filled_classifier(tmp_path, capsys, monkeypatch)
    # 55 of 60 right: Clopper–Pearson 95% [0.8161422, 0.9723867]
    # (scipy.stats.binomtest(55, 60).proportion_ci(0.95, "exact"))
    labels: list[object] = [i % 2 if i < 55 else 7 for i in range(60)]
    assert main(["run", "--outputs", outputs(tmp_path, "v2.jsonl", labels), "--version", "v2"]) == 0
    out = capsys.readouterr().out
    assert "scores on these outputs (95% intervals; the gate decides, not this list):" in out
    assert "  correct 0.917 [0.816, 0.972] (95%, clopper-pearson, exact; 60 cases)" in out
    assert main(["runs", "--json", "runs.json"]) == 0
    listed = capsys.readouterr().out
    assert "correct 0.917 [0.816, 0.972]" in listed
    [stored] = json.loads((tmp_path / "runs.json").read_text())["runs"]
    [score] = stored["scores"]
    assert score["criterion"] == "correct" and score["n"] == 60 and score["missing"] == 0
    assert score["estimate"] == pytest.approx(55 / 60)
    assert score["low"] == pytest.approx(0.8161422, abs=1e-7) and score["high"] == pytest.approx(0.9723867, abs=1e-7)


def test_runs_stored_before_scores_still_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    filled_classifier(tmp_path, capsys, monkeypatch)
    assert main(["run", "--outputs", outputs(tmp_path, "a.jsonl", [i % 2 for i in range(60)]), "--version", "v1"]) == 0
    store = RunStore(tmp_path)
    [record] = store.records()
    assert record.scores
    from dataclasses import replace

    # a run as an older oloproof stored it: no "scores" key in its sealed run.json
    old = replace(record, run_id=record.run_id[:-6] + "000000", scores=())
    assert "scores" not in old.to_json()
    store.save(old, {})
    capsys.readouterr()
    assert main(["runs"]) == 0
    listed = capsys.readouterr().out
    # 60 of 60: Clopper–Pearson lower bound 0.9403705 (scipy.stats.binomtest(60, 60).proportion_ci(0.95, "exact"))
    assert f"  latest ({record.run_id}): correct 1.000 [0.940, 1.000]\n" in listed
    assert f"  latest~1 ({old.run_id}): -\n" in listed
    assert main(["gate", "--run", old.run_id, "-q"]) in (ExitCode.FAIL, ExitCode.INSUFFICIENT_EVIDENCE, ExitCode.PASS)


def test_label_match_says_when_outputs_and_labels_differ_in_json_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    filled_classifier(tmp_path, capsys, monkeypatch)
    assert main(["run", "--outputs", outputs(tmp_path, "s.jsonl", [str(i % 2) for i in range(60)]), "--version", "v1"]) == 0
    note = (
        'On 60 of 60 answered cases output.label and expected.label hold the same value in different JSON types (case '
        'c0: output "0", a string; expected 0, a number), so those cases fail: label_match compares JSON values, so '
        '"1" is not 1 and 1 is not true; write both as the same type.'
    )
    assert note in capsys.readouterr().out  # `run` says so beside the score
    assert main(["gate", "--json", "r.json", "-q"]) == ExitCode.FAIL
    [rule] = json.loads((tmp_path / "r.json").read_text())["rules"]
    assert rule["sentence"].endswith(note)
    # a few cases that fail on type alone are said too, with their count (18-D4: a set mixing 1 and
    # true failed half its cases on type and said nothing, since that was not "most")
    mixed: list[object] = [i % 2 for i in range(60)]
    mixed[:5] = ["0", "1", "0", "1", "0"]
    assert main(["run", "--outputs", outputs(tmp_path, "m.jsonl", mixed), "--version", "v2"]) == 0
    assert main(["gate", "--json", "r.json", "-q", "--run", "version:v2"]) in (ExitCode.FAIL, ExitCode.INSUFFICIENT_EVIDENCE)
    [rule] = json.loads((tmp_path / "r.json").read_text())["rules"]
    assert "On 5 of 60 answered cases output.label and expected.label hold the same value in different JSON" in (
        rule["sentence"]
    )
    # wrong answers of another type that are not the same value are ordinary failures: no sentence
    other: list[object] = [i % 2 for i in range(60)]
    other[:5] = ["cat"] * 5
    assert main(["run", "--outputs", outputs(tmp_path, "o.jsonl", other), "--version", "v3"]) == 0
    assert main(["gate", "--json", "r.json", "-q", "--run", "version:v3"]) in (ExitCode.FAIL, ExitCode.INSUFFICIENT_EVIDENCE)
    [rule] = json.loads((tmp_path / "r.json").read_text())["rules"]
    assert "JSON type" not in rule["sentence"]


def test_a_run_the_gate_makes_is_listed_with_its_scores(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(100, 90))
    assert project.cli("gate", "-q") in (ExitCode.PASS, ExitCode.INSUFFICIENT_EVIDENCE)
    capsys.readouterr()
    assert project.cli("runs") == 0
    # 90 of 100: Clopper–Pearson 95% [0.8238, 0.9510] (scipy.stats.binomtest(90, 100).proportion_ci(0.95, "exact"))
    assert "): correct 0.900 [0.824, 0.951]\n" in capsys.readouterr().out


def test_a_test_set_mixing_1_and_true_is_told_why_half_its_cases_fail(project: Project) -> None:
    # 18-D4: expected labels true/false on half the cases and 1/0 on the rest; the system answers 1/0.
    cases = [
        {"id": f"c{i:02d}", "answer": i % 2, "expected": {"label": bool(i % 2) if i < 40 else i % 2}} for i in range(80)
    ]
    project.write(cases=cases)
    code, data = report(project)
    assert code == ExitCode.FAIL
    assert data["rules"][0]["sentence"].endswith(
        "On 40 of 80 answered cases output.label and expected.label hold the same value in different JSON types (case "
        "c00: output 0, a number; expected false, a boolean), so those cases fail: label_match compares JSON values, "
        'so "1" is not 1 and 1 is not true; write both as the same type.'
    )
