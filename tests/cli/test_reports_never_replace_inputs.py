"""A report is never written over an input: nor over a file inside a declared artifact directory
(a model folder), nor over a judge's script. The model would be replaced by the JSON report and
the next gate would fingerprint the report as the model."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from oloproof.cli.main import main
from tests.conftest import Project, labelled_cases


@pytest.fixture
def with_models(project: Project, monkeypatch: pytest.MonkeyPatch) -> Path:
    project.write(cases=labelled_cases(30, 30))
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("  timeout_s: 20\n", "  timeout_s: 20\n  artifacts: [models]\n", 1))
    model = project.root / "models" / "a" / "model.json"
    model.parent.mkdir(parents=True)
    model.write_text('{"weights": [1, 2, 3]}\n')
    monkeypatch.chdir(project.root)
    return model


@pytest.mark.parametrize("flag", ["--json", "--junit", "--markdown"])
def test_a_report_inside_a_declared_artifact_directory_is_refused(
    with_models: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    before = with_models.read_bytes()
    assert main(["gate", flag, "models/a/model.json"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "oloproof: error: models/a/model.json: is inside models/, an input of this command (a declared directory: "
        "everything in it is the system's); a report never replaces an input"
    )
    assert with_models.read_bytes() == before
    assert main(["gate", flag, "models/new-report.out"]) == 2  # a new file in the model folder: also refused
    assert not (with_models.parent.parent / "new-report.out").exists()


def test_a_symlinked_artifact_directory_is_protected_through_the_link(
    with_models: Path, project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / "link").symlink_to(project.root / "models")
    before = with_models.read_bytes()
    assert main(["gate", "--json", "link/a/model.json"]) == 2
    assert with_models.read_bytes() == before


def test_a_report_beside_the_models_is_written(with_models: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "--json", "report.json"]) == 0
    assert Path("report.json").is_file()


def test_a_judge_script_is_an_input(project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    judge = project.root / "judge.py"
    judge.write_text("import sys\n")
    project.write(
        cases=labelled_cases(30, 30),
        evaluators=f"  - {{type: label_match, field: label}}\n  - {{type: judge, criterion: graded, command: '{sys.executable} judge.py', labels: labels.jsonl}}",
    )
    monkeypatch.chdir(project.root)
    before = judge.read_bytes()
    code = main(["gate", "--json", "judge.py"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "judge.py: is an input of this command" in err
    assert judge.read_bytes() == before
