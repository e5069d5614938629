"""Evidence that cannot go stale, be forged, or destroy what it reads (issue 9), through the CLI.

Each test is one of the ways a gate said PASS without evidence about the model being released, or
lost an input, or broke a promise of exit 2, or printed text that acts.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from conftest import FIXTURES, Project, labelled_cases, report, write_cases

from oloproof.cli.main import main

MODEL = """\
import json, sys
from pathlib import Path
weights = json.loads(Path(sys.argv[1]).read_text())
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"id": case["id"], "label": weights["answer"] if weights["answer"] is not None else case["answer"]}))
"""


def model_project(project: Project, answer: int | None) -> Project:
    """A system whose behaviour lives in a weights file its command line names."""
    (project.root / "model.py").write_text(MODEL)
    (project.root / "weights.json").write_text(json.dumps({"answer": answer}))
    project.write(
        cases=labelled_cases(100, 95),
        rules="  - {id: accurate, criterion: correct, min: 0.8}",
        command=f"{sys.executable} model.py weights.json",
    )
    return project


# --------------------------------------------------------------------------- 1. a run is about its files


def test_a_model_swapped_under_the_same_version_is_run_again(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    model_project(project, None)  # echoes the answer: 95 of 100
    code, first = report(project)
    assert code == 0 and first["rules"][0]["estimate"] == 0.95
    (project.root / "weights.json").write_text(json.dumps({"answer": 0}))  # a constant predictor, same version
    capsys.readouterr()
    code, second = report(project)
    assert second["run"]["reused"] is False and second["rules"][0]["estimate"] == 0.0 and code == 1
    [note] = [note for note in second["run_notes"] if "not reused" in note]
    assert note == (
        f"not reused: run {first['run']['run_id']} was made with other system files (weights.json changed since): "
        "the system was run again"
    )
    assert note in capsys.readouterr().out
    assert {"model.py", "weights.json"} <= set(second["run"]["fingerprint"]["files"])  # and the interpreter it names


def test_declared_artifacts_are_part_of_the_fingerprint(project: Project) -> None:
    model_project(project, None)
    (project.root / "tokenizer.txt").write_text("v1")
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("  timeout_s:", "  artifacts: [tokenizer.txt]\n  timeout_s:", 1))
    _, first = report(project)
    assert "tokenizer.txt" in first["run"]["fingerprint"]["files"]
    _, again = report(project)
    assert again["run"]["reused"] is True
    (project.root / "tokenizer.txt").write_text("v2")
    _, after = report(project)
    assert after["run"]["reused"] is False


def test_an_artifact_that_does_not_exist_is_a_config_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    model_project(project, None)
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("  timeout_s:", "  artifacts: [gone.bin]\n  timeout_s:", 1))
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "release.yaml:4: system.artifacts[0]: gone.bin: no such file or directory (relative to " in err


def test_imported_outputs_never_stand_in_for_the_declared_command(project: Project, tmp_path: Path) -> None:
    model_project(project, 0)  # the declared model answers 0: FAIL
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(100)))
    code, failed = report(project)
    assert code == 1
    assert project.cli("run", "--outputs", str(forged), "--version", "v1") == 0
    code, data = report(project)
    assert code == 1 and data["run"]["run_id"] == failed["run"]["run_id"]  # the declared command's run decides
    code, named = report(project, "--run", "latest")  # asked for by name: it decides, and says so
    assert code == 0 and named["run"]["imported"] is True
    assert any("was imported from" in note and "(--run), not made here" in note for note in named["run_notes"])


def test_a_failed_run_edited_to_ok_is_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(50, 50), rules="  - {id: accurate, criterion: correct, min: 0.8}", system_args="--exit 3")
    _, failed = report(project)
    assert failed["run"]["status"] == "failed"
    run_json = project.root / ".oloproof" / "runs" / failed["run"]["run_id"] / "run.json"
    data = json.loads(run_json.read_text())
    data["status"], data["failure"] = "ok", None  # edited by hand, without resealing
    run_json.write_text(json.dumps(data))
    _code, again = report(project)
    assert again["run"]["run_id"] != failed["run"]["run_id"]
    assert f"run {failed['run']['run_id']} is not used: its content does not match its digest (it was edited after it was written)" in again["run_notes"]
    assert project.cli("gate", "--run", failed["run"]["run_id"]) == 2
    assert f"run {failed['run']['run_id']} is not used: its content does not match its digest" in capsys.readouterr().err


def test_edited_outputs_of_a_sealed_run_are_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(50, 10), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    _, first = report(project)
    outputs = project.root / ".oloproof" / "runs" / first["run"]["run_id"] / "outputs.jsonl"
    outputs.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(50)))
    assert project.cli("gate", "--run", first["run"]["run_id"]) == 2
    assert "the outputs do not match the digest in run" in capsys.readouterr().err


# --------------------------------------------------------------------------- 4. no write destroys an input


@pytest.mark.parametrize("target", ["release.yaml", "data/test.jsonl", "model.py", "weights.json"])
def test_a_report_over_an_input_is_refused_before_any_work(project: Project, capsys: pytest.CaptureFixture[str], target: str) -> None:
    model_project(project, None)
    before = (project.root / target).read_bytes()
    assert project.cli("gate", "--json", str(project.root / target)) == 2
    assert f"{project.root / target}: is an input of this command" in capsys.readouterr().err
    assert (project.root / target).read_bytes() == before
    assert not (project.root / ".oloproof" / "runs").exists()  # refused before the system ran


def test_a_report_over_the_holdout_or_the_training_file_is_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(20, 20), rules="  - {id: accurate, criterion: correct, min: 0.5}",
                  extra="holdout: {cases: holdout.jsonl, budget: 3}\n")
    write_cases(project.root / "holdout.jsonl", [{**case, "source": "holdout"} for case in labelled_cases(20, 20, prefix="h")])
    before = (project.root / "holdout.jsonl").read_bytes()
    assert project.cli("holdout", "run", "--reason", "oops", "--json", str(project.root / "holdout.jsonl")) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert (project.root / "holdout.jsonl").read_bytes() == before
    assert not (project.root / "evals").exists() or not any((project.root / "evals").rglob("READS.log"))  # no read spent
    training = FIXTURES / "leakage" / "training.jsonl"
    copy = project.root / "training.jsonl"
    copy.write_bytes(training.read_bytes())
    assert project.cli("leakage", "check", "--training", str(copy), "--json", str(copy)) == 2
    assert copy.read_bytes() == training.read_bytes()


@pytest.mark.parametrize("kind", ["fifo", "directory", "device"])
def test_a_report_path_that_is_not_a_regular_file_is_never_replaced(
    project: Project, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A directory is refused; a FIFO nobody reads is refused at once; a device is written into
    (issue 16 point 7: reports go where they are sent), never replaced by a regular file."""
    project.write(cases=labelled_cases(10, 10), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    target = project.root / "out"
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "directory":
        target.mkdir()
    else:
        target = Path("/dev/null")
    code = project.cli("gate", "--json", str(target))
    err = capsys.readouterr().err
    if kind == "device":
        assert code == 0, err
    else:
        assert code == 2
        expected = {"fifo": "is a FIFO (named pipe) that nothing is reading", "directory": "is a directory; give a file name for the report"}[kind]
        assert f"{target}: {expected}" in err
    assert Path("/dev/null").is_char_device()
    assert kind != "fifo" or target.is_fifo()


# --------------------------------------------------------------------------- 5. everything bounded


@pytest.mark.parametrize("what", ["config", "testset"])
def test_a_fifo_as_an_input_is_refused_at_once(project: Project, capsys: pytest.CaptureFixture[str], what: str) -> None:
    project.write(cases=labelled_cases(10, 10), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    if what == "config":
        target = project.root / "fifo.yaml"
        os.mkfifo(target)
        assert main(["gate", "-c", str(target)]) == 2
    else:
        (project.root / "data" / "test.jsonl").unlink()
        os.mkfifo(project.root / "data" / "test.jsonl")
        assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "is a FIFO (named pipe), expected a " in err and "(only regular files are read)" in err


def test_dev_zero_as_a_test_set_is_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(10, 10), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("cases: data/test.jsonl", "cases: /dev/zero"))
    assert project.cli("gate") == 2
    assert "/dev/zero: is a character device, expected a JSONL file (only regular files are read)" in capsys.readouterr().err


def test_a_system_that_prints_without_end_fails_its_run_with_the_reason(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    import oloproof.process as process

    monkeypatch.setattr(process, "STDOUT_MIN_CAP", 1 << 20)
    monkeypatch.setattr(process, "STDOUT_PER_CASE", 1 << 10)
    (project.root / "flood.py").write_text("import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n")
    project.write(cases=labelled_cases(10, 10), rules="  - {id: accurate, criterion: correct, min: 0.5}",
                  command=f"{sys.executable} flood.py")
    code, data = report(project)
    assert code == 4
    assert data["run"]["status"] == "failed"
    assert data["run"]["failure"] == "batch 1: wrote more than 1 MiB on stdout for one batch; the run was stopped (one JSON line per case is expected)"


# --------------------------------------------------------------------------- 6. exit 2 as promised


def test_a_key_given_twice_in_a_case_names_file_and_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    path = project.root / "data" / "test.jsonl"
    path.write_text(path.read_text() + '{"id": "x", "answer": 1, "answer": 0, "expected": {"label": 1}}\n')
    assert project.cli("gate") == 2
    assert 'data/test.jsonl:4: the key "answer" is given twice in one object' in capsys.readouterr().err


def test_an_output_with_a_key_given_twice_is_malformed(project: Project, tmp_path: Path) -> None:
    project.write(cases=labelled_cases(2, 2), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    outputs = tmp_path / "out.jsonl"
    outputs.write_text('{"id": "c00000", "label": 0, "label": 1}\n{"id": "c00001", "label": 1}\n')
    assert project.cli("run", "--outputs", str(outputs), "--version", "v9", "--json", str(tmp_path / "r.json")) == 0
    record = json.loads((tmp_path / "r.json").read_text())
    assert record["run_errors"] == [f'{outputs}:1: the key "label" is given twice in one object']
    assert record["case_errors"] == {"c00000": "no output"}


def test_a_misspelt_noise_scale_key_is_a_config_error_at_its_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": f"c{i}", "features": {"income": 10 + i, "debt_ratio": 0.1}, "expected": {"label": 1}} for i in range(10)]
    project.write(
        cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}",
        extra=(
            "metamorphic:\n  transforms:\n    - name: noise\n      field: features\n"
            "      perturb: {kind: numeric_noise, scale: {incme: 1.0}, seed: 7}\n"
        ),
        evaluators="  - {type: label_match, field: label}\n  - {type: metamorphic_relation, relation: same_label, transform: noise, field: label}\n",
    )
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "metamorphic.transforms[0].perturb.scale.incme: no case of " in err
    assert "data/test.jsonl has 'features.incme' (did you mean 'income'?); keys under features: debt_ratio, income" in err


def test_integers_beyond_float_range_are_compared_exactly(project: Project, tmp_path: Path) -> None:
    big = 2**53
    cases = [{"id": "a", "answer": 0, "expected": {"score": big + 1}}, {"id": "b", "answer": 0, "expected": {"score": big}}]
    project.write(cases=cases, rules="  - {id: close, criterion: within_tolerance, min: 0.1}",
                  evaluators="  - {type: within_tolerance, field: score, tolerance: 0}\n", command=None)
    outputs = tmp_path / "out.jsonl"
    outputs.write_text(json.dumps({"id": "a", "score": big}) + "\n" + json.dumps({"id": "b", "score": big}) + "\n")
    assert project.cli("run", "--outputs", str(outputs), "--version", "v1") == 0
    _, data = report(project)
    assert data["criteria"]["within_tolerance"]["failed_ids"] == ["a"]  # 2**53 + 1 is not 2**53


# --------------------------------------------------------------------------- 7. terminal output is inert


def test_ids_and_outputs_cannot_start_a_workflow_command_or_an_escape(project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hostile = "x\n::error::pwned\x1b]0;title\x07\u202e"
    cases = [{"id": hostile, "answer": 1, "expected": {"label": 1}}, *labelled_cases(5, 5)]
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}", command=None)
    outputs = tmp_path / "out.jsonl"
    outputs.write_text(json.dumps({"id": hostile, "label": 1}) + "\n" + json.dumps({"id": "unknown\n::warning::x"}) + "\n")
    capsys.readouterr()
    assert project.cli("run", "--outputs", str(outputs), "--version", "v1") == 0
    assert project.cli("gate") in (0, 4)
    assert project.cli("runs") == 0
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert "unknown\\x0a::warning::x" in text  # shown, escaped, never at the start of a line
    assert not [line for line in text.splitlines() if line.lstrip().startswith("::")]
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


def test_an_error_message_quoting_data_is_inert(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(2, 2), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    path = project.root / "data" / "test.jsonl"
    path.write_text(path.read_text() + json.dumps({"id": "d\n::error::x\x1b[2J", "answer": 1}) + "\n")
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "d\\x0a::error::x\\x1b[2J" in err and "\x1b" not in err
    assert not [line for line in err.splitlines() if line.startswith("::")]


# --------------------------------------------------------------------------- 8. a failing system is diagnosable


def test_a_crashing_systems_stderr_tail_is_shown_in_every_report(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (project.root / "crash.py").write_text(
        "import sys\nsys.stdin.read()\nprint('loading weights from /models/w.bin', file=sys.stderr)\n"
        "print('::error::not a command \\x1b[31m', file=sys.stderr)\n"
        "raise SystemExit('RuntimeError: CUDA out of memory')\n"
    )
    project.write(cases=labelled_cases(5, 5), rules="  - {id: accurate, criterion: correct, min: 0.5}", command=f"{sys.executable} crash.py")
    capsys.readouterr()
    code, data = report(project)
    out = capsys.readouterr().out
    assert code == 4 and data["run"]["status"] == "failed"
    assert "RuntimeError: CUDA out of memory" in data["run"]["stderr_tail"]
    assert "the system failed (batch 1: system exited with status 1); the last lines of its stderr:" in out
    assert "  | RuntimeError: CUDA out of memory" in out
    assert "  | \\x3a:error::not a command \\x1b[31m" in out  # shown, inert: a leading '::' is escaped (inert.py)
    from oloproof.config import load_release
    from oloproof.gate import run_gate
    from oloproof.report import markdown

    summary = markdown.render(run_gate(load_release(project.config)))
    assert "the last lines of its stderr" in summary and "RuntimeError: CUDA out of memory" in summary

