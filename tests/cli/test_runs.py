"""Runs: executing, importing, failing loudly, and naming runs by ref."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, labelled_cases


def only_run(project: Project):  # type: ignore[no-untyped-def]
    records = RunStore(project.root).records()
    assert len(records) == 1
    return records[0]


def test_run_records_every_output(project: Project) -> None:
    project.write(cases=labelled_cases(7, 7))
    assert project.cli("run") == 0
    record = only_run(project)
    assert record.status == "ok" and record.n_outputs == 7 and record.case_errors == {}
    outputs = RunStore(project.root).outputs(record)
    assert outputs["c00003"] == {"id": "c00003", "label": 1}
    assert record.checker["source_digest"].startswith("sha256:")


def test_batches_call_the_system_once_per_batch(project: Project, tmp_path: Path) -> None:
    seen = tmp_path / "stdin.jsonl"
    project.write(cases=labelled_cases(25, 25), system_args=f"--record {seen}")
    text = (project.root / "release.yaml").read_text().replace("timeout_s: 20", "timeout_s: 20\n  batch_size: 10")
    (project.root / "release.yaml").write_text(text)
    assert project.cli("run") == 0
    record = only_run(project)
    assert record.exit_statuses == (0, 0, 0)  # 10 + 10 + 5
    assert len(seen.read_text().splitlines()) == 25


@pytest.mark.parametrize(
    ("args", "status", "case_reason"),
    [
        ("--crash-after 3", "failed", "system exited with status 3"),
        ("--exit 9", "failed", None),
        ("--drop c00002", "partial", "no output"),
        ("--duplicate c00001", "partial", "duplicate outputs (stdout of batch 1:2 and later); none is used"),
    ],
)
def test_misbehaving_systems_are_recorded_per_case(project: Project, args: str, status: str, case_reason: str | None) -> None:
    project.write(cases=labelled_cases(6, 6), system_args=args)
    project.cli("run")
    record = only_run(project)
    assert record.status == status
    if case_reason is not None:
        assert case_reason in record.case_errors.values()
    # Never silently fewer cases: every case is answered or has a reason.
    assert record.n_outputs + len(record.case_errors) == 6


def test_extra_and_garbage_lines_make_a_partial_run(project: Project) -> None:
    project.write(cases=labelled_cases(3, 3), system_args="--extra --garbage")
    project.cli("run")
    record = only_run(project)
    assert record.status == "partial"
    assert record.run_errors == (
        "stdout of batch 1:4: output for unknown case id 'no-such-case'",
        "stdout of batch 1:5: not valid JSON",
    )
    assert record.n_outputs == 3


def test_a_hanging_system_is_killed_at_its_timeout(project: Project) -> None:
    project.write(cases=labelled_cases(4, 4), system_args="--hang")
    text = (project.root / "release.yaml").read_text().replace("timeout_s: 20", "timeout_s: 0.5")
    (project.root / "release.yaml").write_text(text)
    out = project.root / "g.json"
    code = project.cli("gate", "--json", str(out))
    record = only_run(project)
    assert record.status == "failed" and record.failure == "batch 1: timed out after 0.5 s"
    assert set(record.case_errors.values()) == {"timed out after 0.5 s"}
    data = json.loads(out.read_text())
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert {"run_failed", "missing_outputs"} <= set(data["rules"][0]["reasons"])


def test_a_crashed_run_gates_as_insufficient_not_pass(project: Project) -> None:
    project.write(cases=labelled_cases(100, 100), system_args="--crash-after 50", rules="  - {id: a, criterion: correct, min: 0.8}")
    out = project.root / "g.json"
    assert project.cli("gate", "--json", str(out)) == ExitCode.INSUFFICIENT_EVIDENCE
    rule = json.loads(out.read_text())["rules"][0]
    assert rule["missing"] == 50 and "run_failed" in rule["reasons"]


def test_unknown_command_is_a_config_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    text = (project.root / "release.yaml").read_text()
    lines = text.splitlines()
    lines[2] = "  command: no-such-program --flag"
    (project.root / "release.yaml").write_text("\n".join(lines) + "\n")
    assert project.cli("run") == ExitCode.USAGE
    assert "release.yaml:3: system.command: command not found: 'no-such-program'" in capsys.readouterr().err


def test_gate_reuses_a_run_of_this_version_on_this_test_set(project: Project) -> None:
    project.write(cases=labelled_cases(10, 10))
    project.cli("gate")
    project.cli("gate")
    assert len(RunStore(project.root).records()) == 1
    project.cli("gate", "--rerun")
    assert len(RunStore(project.root).records()) == 2
    # Editing the test set changes its digest: the old runs no longer count.
    project.write(cases=labelled_cases(11, 11))
    project.cli("gate")
    assert len(RunStore(project.root).records()) == 3


def test_import_outputs_then_gate_that_run(project: Project) -> None:
    project.write(cases=labelled_cases(40, 40))
    preds = project.root / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(40)))
    assert project.cli("run", "--outputs", str(preds), "--version", "v7") == 0
    record = only_run(project)
    assert record.version == "v7" and record.imported_from == str(preds) and record.command is None
    out = project.root / "g.json"
    assert project.cli("gate", "--run", "version:v7", "--json", str(out)) == ExitCode.PASS
    assert json.loads(out.read_text())["run"]["version"] == "v7"


def test_import_needs_a_version(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    assert project.cli("run", "--outputs", "x.jsonl") == ExitCode.USAGE
    assert "--outputs needs --version NAME" in capsys.readouterr().err


def test_refs_resolve_everywhere(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(5, 5))
    for version in ("a", "b", "c"):
        preds = project.root / f"{version}.jsonl"
        preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(5)))
        project.cli("run", "--outputs", str(preds), "--version", version)
    store = RunStore(project.root)
    ids = [record.run_id for record in store.records()]
    assert store.resolve("latest").version == "c"
    assert store.resolve("latest~2").version == "a"
    assert store.resolve("version:b").run_id == ids[1]
    assert store.resolve(ids[0][:-2]).run_id == ids[0]
    with pytest.raises(Exception, match=r"ref 'latest~3': only 3 runs, so latest~3 does not exist"):
        store.resolve("latest~3")
    with pytest.raises(Exception, match=r"ref 'version:zz': no run of version 'zz'; known versions: a, b, c"):
        store.resolve("version:zz")
    assert project.cli("gate", "--run", "latest~7") == ExitCode.USAGE
    assert "ref 'latest~7': only 3 runs" in capsys.readouterr().err
    assert project.cli("runs", "latest~1") == 0


def test_runs_lists_oldest_first_with_refs(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    project.cli("run")
    project.cli("run")
    capsys.readouterr()
    out = project.root / "runs.json"
    assert project.cli("runs", "--json", str(out)) == 0
    text = capsys.readouterr().out
    assert "latest~1" in text and "latest " in text
    data = json.loads(out.read_text())
    assert data["schema"] == "oloproof.runs/1" and len(data["runs"]) == 2


def test_no_half_written_run_directories_are_listed(project: Project) -> None:
    project.write(cases=labelled_cases(3, 3))
    project.cli("run")
    runs = project.root / ".oloproof" / "runs"
    (runs / ".20990101T000000Z-abcdef.tmp").mkdir()  # what an interrupted save leaves at worst
    assert len(RunStore(project.root).records()) == 1


def test_the_system_never_sees_the_actions_token_or_file_commands(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = project.root / "spy.py"
    spy.write_text(
        "import json, os, sys\n"
        "seen = {k: v for k, v in os.environ.items() if k.startswith(('INPUT_', 'GITHUB_', 'ACTIONS_'))}\n"
        "open('env.json', 'w').write(json.dumps(seen))\n"
        "for line in sys.stdin:\n"
        "    case = json.loads(line)\n"
        "    print(json.dumps({'id': case['id'], 'label': case['answer']}))\n"
    )
    project.write(cases=labelled_cases(3, 3))
    text = (project.root / "release.yaml").read_text().splitlines()
    text[2] = f"  command: {json.dumps([sys.executable, str(spy)])}"
    (project.root / "release.yaml").write_text("\n".join(text) + "\n")
    for name, value in {
        "INPUT_GITHUB-TOKEN": "ghs_secret", "GITHUB_TOKEN": "ghs_secret", "GITHUB_OUTPUT": "/tmp/out", "GITHUB_STEP_SUMMARY": "/tmp/s",
        "GITHUB_ENV": "/tmp/e", "GITHUB_PATH": "/tmp/p", "ACTIONS_RUNTIME_TOKEN": "x", "GITHUB_SHA": "abc123",
    }.items():
        monkeypatch.setenv(name, value)
    assert project.cli("run") == 0
    seen = json.loads((project.root / "env.json").read_text())
    assert seen == {"GITHUB_SHA": "abc123"}  # context a model may use, nothing it could abuse
