"""``oloproof compare`` through the real CLI: the chapter's table, verdicts, and bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, write_cases

# The chapter's paired table (003_*, "The number that replaces seventeen"): 120 cases, the newer
# version alone right on 9, the older alone on 5.
N, B, C, BOTH = 120, 9, 5, 80


def chapter_labels() -> tuple[list[int], list[int]]:
    """Per case, whether version A and version B answer right (expected label is 1)."""
    old = [1] * BOTH + [0] * B + [1] * C + [0] * (N - BOTH - B - C)
    new = [1] * BOTH + [1] * B + [0] * C + [0] * (N - BOTH - B - C)
    return old, new


def setup(project: Project, old: list[int | None], new: list[int | None], **write: Any) -> None:
    ids = [f"d{i:03d}" for i in range(len(old))]
    project.write(
        cases=[{"id": i, "expected": {"label": 1}} for i in ids],
        command=None,
        rules="  - {id: guard, criterion: correct, baseline: 'version:A', max_drop: 0.05}",
        **write,
    )
    for version, labels in (("A", old), ("B", new)):
        outputs = project.root / f"{version}.jsonl"
        outputs.write_text(
            "".join(
                json.dumps({"id": i, "label": v}) + "\n" for i, v in zip(ids, labels, strict=True) if v is not None
            ),
            encoding="utf-8",
        )
        assert project.cli("run", "--outputs", str(outputs), "--version", version) == 0


def compare(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "compare.json"
    code = project.cli("compare", "version:A", "version:B", "--json", str(out), *extra)
    return code, json.loads(out.read_text())


def test_the_chapters_numbers(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = chapter_labels()
    setup(project, old, new)  # type: ignore[arg-type]
    capsys.readouterr()
    code, data = compare(project)
    text = capsys.readouterr().out
    assert code == 0
    paired = data["paired"]
    assert (paired["n"], paired["b"], paired["c"]) == (120, 9, 5)
    assert paired["difference"] == pytest.approx(4 / 120)
    # Fay–Lumbard melded (R exact2x2::mcnemarExactDP) and Tango, to the chapter's precision.
    assert round(100 * paired["exact"]["low"], 1) == -3.7 and round(100 * paired["exact"]["high"], 1) == 10.6
    assert paired["exact"]["approximate"] is False and paired["exact"]["method"] == "fay-lumbard-melded"
    assert (
        round(100 * paired["approximate"]["low"], 1) == -3.1 and round(100 * paired["approximate"]["high"], 1) == 10.2
    )
    assert paired["approximate"]["approximate"] is True
    assert paired["mcnemar_exact_p"] == pytest.approx(2 * sum(math.comb(14, k) for k in range(6)) / 2**14)
    assert round(100 * paired["resolution"], 1) == 8.7  # STATISTICS.md §7: 8.7 points at n = 120, ψ = 14/120
    assert paired["regressed_ids"] == [f"d{i:03d}" for i in range(BOTH + B, BOTH + B + C)]
    assert paired["improved_ids"] == [f"d{i:03d}" for i in range(BOTH, BOTH + B)]
    assert data["schema"] == "oloproof.compare/1" and data["set"]["kind"] == "dev"
    assert data["decision"] is None
    assert "difference B − A on the dev set: +3.3 points" in text
    assert "95% [-3.7, +10.6] (fay-lumbard-melded, exact)" in text
    assert "95% [-3.1, +10.2] (tango-score, approximate)" in text
    assert "McNemar exact p = 0.424" in text
    assert "regressed (5, dev set): d089, d090, d091, d092, d093" in text


@pytest.mark.parametrize(
    ("option", "code", "verdict"),
    [
        (("--max-drop", "0.05"), ExitCode.PASS, "PASS"),  # lower bound -0.037 >= -0.05
        (("--max-drop", "1pt"), ExitCode.INSUFFICIENT_EVIDENCE, "INSUFFICIENT_EVIDENCE"),  # -0.01 inside
        (("--min-gain", "0.02"), ExitCode.INSUFFICIENT_EVIDENCE, "INSUFFICIENT_EVIDENCE"),
        (("--min-gain", "0.15"), ExitCode.FAIL, "FAIL"),  # upper bound 0.106 < 0.15
    ],
)
def test_a_threshold_turns_it_into_a_verdict(
    project: Project, option: tuple[str, str], code: int, verdict: str
) -> None:
    old, new = chapter_labels()
    setup(project, old, new)  # type: ignore[arg-type]
    got, data = compare(project, *option)
    assert got == code
    assert data["decision"]["verdict"] == verdict and data["exit_code"] == code


def test_a_regression_fails(project: Project) -> None:
    old = [1] * 100
    new = [1] * 60 + [0] * 40
    setup(project, old, new)  # type: ignore[arg-type]
    code, data = compare(project, "--max-drop", "0.05")
    assert code == ExitCode.FAIL
    assert data["paired"]["regressed"] == 40 and data["paired"]["exact"]["high"] < -0.05


def test_missing_outputs_alone_never_pass(project: Project) -> None:
    # B answers nothing it did not answer before: 30 of 100 cases missing from B, the rest equal.
    old = [1] * 100
    new: list[int | None] = [1] * 70 + [None] * 30
    setup(project, old, new)  # type: ignore[arg-type]
    code, data = compare(project, "--max-drop", "0.05")
    assert code != ExitCode.PASS
    assert data["paired"]["missing"] == 30 and "missing_outputs" in data["reasons"]
    assert data["paired"]["exact"]["low"] < -0.2  # counted against B at the low end


def test_different_test_sets_are_an_error(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = chapter_labels()
    setup(project, old, new)  # type: ignore[arg-type]
    write_cases(
        project.root / "data" / "test.jsonl", [{"id": f"d{i:03d}", "expected": {"label": 1}} for i in range(119)]
    )
    outputs = project.root / "C.jsonl"
    outputs.write_text(
        "".join(json.dumps({"id": f"d{i:03d}", "label": 1}) + "\n" for i in range(119)), encoding="utf-8"
    )
    assert project.cli("run", "--outputs", str(outputs), "--version", "C") == 0
    capsys.readouterr()
    assert project.cli("compare", "version:A", "version:C") == ExitCode.USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "ref 'version:A': no run of version 'A' on" in err and "its 1 run(s) were made on other test sets" in err
    ids = {record.version: record.run_id for record in RunStore(project.root).records()}
    assert project.cli("compare", ids["A"], ids["C"]) == ExitCode.USAGE  # run ids name runs on any set
    err = capsys.readouterr().err
    assert (
        "were made on different test sets" in err and "a paired comparison needs both versions on the same cases" in err
    )


def test_a_run_against_itself_and_unknown_refs_are_errors(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = chapter_labels()
    setup(project, old, new)  # type: ignore[arg-type]
    capsys.readouterr()
    assert project.cli("compare", "version:A", "version:A") == ExitCode.USAGE
    assert "are the same run" in capsys.readouterr().err
    assert project.cli("compare", "version:A", "version:nope") == ExitCode.USAGE
    err = " ".join(capsys.readouterr().err.split())
    assert "no run of version 'nope' on " in err and "known versions there: A, B" in err
    assert project.cli("compare", "version:A", "version:B", "--max-drop", "7") == ExitCode.USAGE
    assert "--max-drop must lie in [0, 1]" in capsys.readouterr().err


def test_the_report_never_replaces_an_input(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = chapter_labels()
    setup(project, old, new)  # type: ignore[arg-type]
    before = (project.root / "data" / "test.jsonl").read_bytes()
    capsys.readouterr()
    code = project.cli("compare", "version:A", "version:B", "--json", str(project.root / "data" / "test.jsonl"))
    assert code == ExitCode.USAGE
    assert (project.root / "data" / "test.jsonl").read_bytes() == before


def test_case_ids_are_printed_inert(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    ids = ["ok-1", "evil\x1b]0;owned\x07\n::error::x"]
    project.write(cases=[{"id": i, "expected": {"label": 1}} for i in ids], command=None)
    for version, labels in (("A", [1, 1]), ("B", [1, 0])):
        path = project.root / f"{version}.jsonl"
        path.write_text(
            "".join(json.dumps({"id": i, "label": v}) + "\n" for i, v in zip(ids, labels, strict=True)),
            encoding="utf-8",
        )
        assert project.cli("run", "--outputs", str(path), "--version", version) == 0
    capsys.readouterr()
    assert project.cli("compare", "version:A", "version:B") == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\n::error::" not in out
    assert "evil\\x1b]0;owned\\x07\\x0a::error::x" in out


def test_gate_regression_guard_names_the_regressed_cases(project: Project) -> None:
    old, new = chapter_labels()
    setup(project, old, new, version="B")  # type: ignore[arg-type]
    out = project.root / "gate.json"
    code = project.cli("gate", "--run", "version:B", "--json", str(out))
    rule = json.loads(out.read_text())["rules"][0]
    assert code == ExitCode.PASS
    assert rule["details"]["regressed"] == 5
    assert rule["details"]["regressed_ids"] == ["d089", "d090", "d091", "d092", "d093"]
    assert "5 case(s) regressed: d089, d090, d091, d092, d093" in rule["sentence"]
    assert "This set resolves paired differences of about 0.087 or more (about 80% power)." in rule["sentence"]
    summary = project.root / "summary.md"
    assert project.cli("gate", "--run", "version:B", "--markdown", str(summary)) == ExitCode.PASS
    text = summary.read_text()
    assert "### Regression guards (dev set)" in text
    assert "| 9 / 5 of 120 | 5: <code>d089</code>" in text and "| 0.087 |" in text


def test_json_schema_documents_every_field() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "compare.md").read_text(encoding="utf-8")
    for name in (
        "schema",
        "exit_code",
        "criterion",
        "confidence",
        "set",
        "a",
        "b",
        "paired",
        "reasons",
        "notes",
        "decision",
        "checker",
        "regressed_ids",
        "improved_ids",
        "missing_ids",
        "mcnemar_exact_p",
        "resolution",
        "discordance",
    ):
        assert f"`{name}`" in doc, name


def test_a_wrapped_line_never_starts_a_workflow_command(project: Project, capfd: pytest.CaptureFixture[str]) -> None:
    import subprocess
    import sys

    ids = [f"::error::pwn{i}" for i in range(40)]
    project.write(cases=[{"id": i, "expected": {"label": 1}} for i in ids], command=None)
    for version, wrong in (("A", set()), ("B", set(ids[::2]))):
        path = project.root / f"{version}.jsonl"
        path.write_text(
            "".join(json.dumps({"id": i, "label": 0 if i in wrong else 1}) + "\n" for i in ids), encoding="utf-8"
        )
        assert project.cli("run", "--outputs", str(path), "--version", version) == 0
    proc = subprocess.run(
        [sys.executable, "-m", "oloproof", "compare", "-c", project.config, "version:A", "version:B"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 0, proc.stderr
    assert not [line for line in proc.stdout.splitlines() if line.startswith("::")]
    assert "regressed (20, dev set): \\x3a:error::pwn0" in proc.stdout  # inert: a leading '::' is escaped


def test_a_set_too_small_to_resolve_anything_says_so(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, [1, 0], [0, 1])  # type: ignore[arg-type]
    capsys.readouterr()
    code, data = compare(project)
    assert code == 0 and data["paired"]["resolution"] is None
    assert "resolution: none — 2 cases are too few to resolve any paired difference" in capsys.readouterr().out


@pytest.mark.parametrize("names", [("A", "B"), ("smile", "tada"), ("x:y", "+1")])
def test_no_ref_is_followed_by_a_colon_that_makes_an_emoji_shortcode(
    project: Project, capsys: pytest.CaptureFixture[str], names: tuple[str, str]
) -> None:
    """`version:A:` is the shortcode `:A:` in GitHub Markdown and Slack: the refs are printed in a code
    span followed by `=`, and no `:word:` is left outside code spans (issue 17, point 6)."""
    import re

    old, new = chapter_labels()
    ids = [f"d{i:03d}" for i in range(N)]
    project.write(cases=[{"id": i, "expected": {"label": 1}} for i in ids], command=None)
    for version, labels in zip(names, (old, new), strict=True):
        outputs = project.root / "out.jsonl"
        outputs.write_text("".join(json.dumps({"id": i, "label": v}) + "\n" for i, v in zip(ids, labels, strict=True)))
        assert project.cli("run", "--outputs", str(outputs), "--version", version) == 0
    capsys.readouterr()
    assert project.cli("compare", f"version:{names[0]}", f"version:{names[1]}") == 0
    text = capsys.readouterr().out
    assert f"  A  `version:{names[0]}` = run " in text and f"  B  `version:{names[1]}` = run " in text
    outside = re.sub(r"`[^`\n]*`", "", text)
    assert f"version:{names[0]}:" not in outside
    if ":" not in names[0]:
        assert re.search(r":[A-Za-z0-9_+-]+:", outside) is None, outside
    assert "about 8.7 points or more (about 80% power, discordance 0.117)" in text
