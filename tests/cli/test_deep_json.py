"""JSON nested deeper than anything real ends in a data error or a missing output, never exit 70
(a RecursionError in the standard parser or encoder). orjson reads 1024 levels and writes 255, so
a test case or an output is refused beyond 255: the line is named."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.jsonl import MAX_DEPTH, too_deep
from tests.conftest import Project, labelled_cases


def nested(depth: int, *, kind: str = "[") -> str:
    close = "]" if kind == "[" else "}"
    inner = "1" if kind == "[" else ""
    if kind == "{":
        return '{"k":' * depth + "1" + "}" * depth
    return kind * depth + inner + close * depth


@pytest.mark.parametrize("depth", [300, 1000, 1023, 1025, 100_000])
@pytest.mark.parametrize("kind", ["[", "{"])
def test_a_test_case_nested_too_deep_is_a_data_error_naming_its_line(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], depth: int, kind: str
) -> None:
    project.write(cases=labelled_cases(3, 3))
    cases = project.root / "data" / "test.jsonl"
    deep = '{"id": "deep", "answer": 1, "x": ' + nested(depth, kind=kind) + ', "expected": {"label": 1}}\n'
    cases.write_text(cases.read_text() + deep)
    monkeypatch.chdir(project.root)
    assert main(["gate"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err
    assert err.startswith("oloproof: error: data/test.jsonl:4: "), err


def test_a_duplicate_key_beside_deep_nesting_is_still_refused(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=labelled_cases(3, 3))
    cases = project.root / "data" / "test.jsonl"
    cases.write_text(cases.read_text() + '{"id": "a", "id": "b", "x": ' + nested(990, kind="{") + ', "expected": {"label": 1}}\n')
    monkeypatch.chdir(project.root)
    assert main(["gate"]) == 2
    assert "data/test.jsonl:4: " in capsys.readouterr().err


def test_an_output_nested_too_deep_is_a_missing_output(project: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    system = tmp_path / "deep_system.py"
    system.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    case = json.loads(line)\n"
        "    label = " + repr(nested(500)) + " if case['id'] == 'c00001' else '1'\n"
        "    sys.stdout.write('{\"id\": ' + json.dumps(case['id']) + ', \"label\": ' + label + '}\\n')\n"
        "    sys.stdout.flush()\n"
    )
    project.write(cases=labelled_cases(10, 10), command=json.dumps([sys.executable, str(system)]))
    monkeypatch.chdir(project.root)
    code = main(["gate", "--json", "r.json"])
    assert code == 4
    data = json.loads((project.root / "r.json").read_text())
    assert data["run"]["status"] == "partial" and data["run"]["n_outputs"] == 9


def test_too_deep_counts_brackets_outside_strings_only() -> None:
    assert not too_deep(b'{"a": "' + b"[" * 1000 + b'"}')
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert not too_deep(b"[[]]" * 1000)  # many brackets, shallow
