"""The prompt-holdout example: its files are what its build makes, its evidence is what its
extractor answers, and the gap chapter's figures come out of both, through the real CLI."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from oloproof.cli.main import main

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "prompt-holdout"
V1 = "python extractor.py --prompt prompts/extract@v1.md"


@pytest.fixture(scope="module")
def builder() -> Iterator[dict[str, ModuleType]]:
    sys.path.insert(0, str(EXAMPLE))
    try:
        from builder import evidence, plan, prompts, record, report

        yield {"evidence": evidence, "plan": plan, "prompts": prompts, "record": record, "report": report}
    finally:
        sys.path.remove(str(EXAMPLE))


@pytest.fixture(scope="module")
def planned(builder: dict[str, ModuleType], tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The inputs generated afresh, and every version evaluated in-process on both sets."""
    root = tmp_path_factory.mktemp("fresh")
    shutil.copy2(EXAMPLE / "extractor.py", root / "extractor.py")
    cases = builder["plan"].write_inputs(root)
    return root, builder["plan"].evaluate(root, cases)


@pytest.fixture()
def demo(tmp_path: Path) -> Path:
    """What `oloproof init --example prompt-holdout` would give (the shipped files, evidence included)."""
    target = tmp_path / "demo"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def test_the_shipped_data_prompts_and_release_are_what_the_generator_makes(planned: Any, builder: dict[str, ModuleType]) -> None:
    root, _ = planned
    built = sorted(p.relative_to(root).as_posix() for p in (root / "prompts").glob("*.md"))
    shipped = sorted(p.relative_to(EXAMPLE).as_posix() for p in (EXAMPLE / "prompts").glob("*.md"))
    assert built == shipped and len(built) == 31
    for name in ("data/dev.jsonl", "evals/holdout/cases.jsonl", *built):
        assert (root / name).read_bytes() == (EXAMPLE / name).read_bytes(), name
    assert (EXAMPLE / "release.yaml").read_text() == builder["record"].release_yaml("extract-v6")


def test_the_real_extractor_reproduces_the_chapter_on_both_sets(planned: Any, builder: dict[str, ModuleType]) -> None:
    _, plan = planned
    score = {key: sum(values) for key, values in plan.correct.items()}
    assert (score[("dev", "extract-v1")], score[("dev", "extract-v6")]) == (144, 178)  # 0.72 -> 0.89
    assert (score[("holdout", "extract-v1")], score[("holdout", "extract-v6")]) == (85, 89)  # 0.708 -> 0.742
    assert builder["plan"].discordant(plan.correct[("holdout", "extract-v1")], plan.correct[("holdout", "extract-v6")]) == (9, 5)
    problems: list[str] = []
    builder["plan"].check_plan(plan, problems.append)
    assert problems == []


def test_every_decision_of_the_six_weeks_is_the_greedy_one(
    planned: Any, builder: dict[str, ModuleType], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plan = planned
    lineage = builder["prompts"].LINEAGE
    assert len(lineage) == 30 and sum(it.accepted for it in lineage) == 19
    working = "extract-v1"
    for iteration in lineage:
        before, after = sum(plan.correct[("dev", working)]), sum(plan.correct[("dev", iteration.version)])
        assert iteration.accepted == (after > before), iteration.version
        working = iteration.version if iteration.accepted else working
    # A story that disagrees with the scores is caught: extract-v1.2 (dev 59/200) claimed as kept.
    monkeypatch.setattr(builder["plan"], "LINEAGE", (lineage[0], dataclasses.replace(lineage[1], accepted=True), *lineage[2:]))
    problems: list[str] = []
    builder["plan"].check_plan(plan, problems.append)
    assert problems[0] == "extract-v1.2: dev 59/200 against the working prompt's 149/200, but the lineage says accepted"


def test_the_recorded_runs_and_reads_are_the_extractors_answers(planned: Any, builder: dict[str, ModuleType]) -> None:
    _, plan = planned
    evidence = builder["evidence"]
    runs = evidence.dev_runs(EXAMPLE)
    assert [run.version for run in runs] == list(builder["prompts"].states())
    dev_ids = [case.id for case in plan.cases["dev"]]
    for run in runs:
        assert run.status == "ok"
        assert run.outputs == dict(zip(dev_ids, plan.answers[("dev", run.version)], strict=True)), run.version
    cases = evidence.load_jsonl(EXAMPLE / "evals/holdout/cases.jsonl")
    keys = evidence.canonical_keys(EXAMPLE / "evals/holdout/cases.jsonl")
    reads = evidence.holdout_reads(EXAMPLE)
    assert [(r.seq, r.version, r.who) for r in reads] == [(1, "extract-v1", "alice"), (2, "extract-v3", "alice"), (3, "extract-v6", "bob")]
    for read in reads:
        assert evidence.aligned_outcomes(read.record, cases, keys) == plan.correct[("holdout", read.version)]
        assert "hold-" not in json.dumps(read.record)  # no holdout case id in a committed record


def test_the_report_gives_the_figures_compare_and_gap_must_show(builder: dict[str, ModuleType]) -> None:
    data = builder["report"].compute(EXAMPLE)
    hold = data["compare_holdout"]
    assert (hold["b"], hold["c"], hold["n"]) == (9, 5, 120)
    assert hold["difference"] == pytest.approx(4 / 120)
    assert (round(100 * hold["exact"]["low"], 1), round(100 * hold["exact"]["high"], 1)) == (-3.7, 10.6)
    assert (round(100 * hold["tango"]["low"], 1), round(100 * hold["tango"]["high"], 1)) == (-3.1, 10.2)
    assert hold["mcnemar_exact_p"] == pytest.approx(0.424, abs=5e-4)
    dev = data["compare_dev"]
    assert (dev["b"], dev["c"], dev["regressed"]) == (36, 2, ["dev-0099", "dev-0168"])
    assert data["gap"]["fit"]["estimate"] == pytest.approx(0.17 - 4 / 120)
    assert data["gap"]["fit"]["low"] > 0.0  # the fit is there, with its interval
    assert [r["versions_run_before"] for r in data["reads"]] == [1, 16, 31]
    gaps = [r["gap_points"] for r in data["reads"]]
    assert gaps == sorted(gaps) and round(gaps[0], 1) == 1.2
    counts = data["composition"]["counts"]
    assert sum(counts["dev"].values()) == 200 and sum(counts["holdout"].values()) == 120
    assert abs(data["composition"]["fit"]["estimate"] - data["gap"]["fit"]["estimate"]) < 0.01  # composition explains nothing


def test_after_init_the_log_verifies_and_the_gate_reuses_the_week_6_run(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["holdout", "status", "-c", str(demo / "release.yaml")]) == 0
    out = capsys.readouterr().out
    assert "intact, hash chain verified (3 read entries)" in out and "budget: 3 of 20 reads used, 17 left" in out
    runs_before = sorted((demo / ".oloproof" / "runs").iterdir())
    assert main(["gate", "-c", str(demo / "release.yaml")]) == 0
    out = capsys.readouterr().out
    assert "(reused, ok, 200/200 outputs)" in out and "verdict: PASS" in out
    assert sorted(p for p in (demo / ".oloproof" / "runs").iterdir() if p.is_dir()) == [p for p in runs_before if p.is_dir()]


def test_the_burned_dev_set_still_catches_a_broken_prompt(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate", "-c", str(demo / "release.yaml"), "--run", "version:extract-v1.2"]) == 1
    out = capsys.readouterr().out
    assert "b=5" in out and "c=90" in out and "verdict: FAIL" in out


def test_the_baseline_re_measurement_reproduces_exactly_and_counts_as_read_4(
    demo: Path, builder: dict[str, ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    config = str(demo / "release.yaml")
    assert main(["run", "-c", config, "--command", V1, "--version", "extract-v1"]) == 0
    runs = [run for run in builder["evidence"].dev_runs(demo) if run.version == "extract-v1"]
    assert len(runs) == 2 and runs[0].outputs == runs[1].outputs
    capsys.readouterr()
    assert main(["holdout", "run", "-c", config, "--command", V1, "--version", "extract-v1",
                 "--reason", "baseline re-measurement, overfitting investigation"]) == 0
    out = capsys.readouterr().out
    assert "holdout score: 0.708 (85/120)" in out and "(run 4 of 20 in budget)" in out
    reads = builder["evidence"].holdout_reads(demo)
    assert reads[0].record["outcomes"] == reads[3].record["outcomes"]
    assert builder["report"].compute(demo)["drift"]["holdout_reads_of_baseline"] == [85, 85]


def _tamper_outputs(root: Path) -> None:
    # The sixth run made (run ids sort by second, then at random within one: order by start time).
    runs = sorted((root / ".oloproof" / "runs").glob("*/run.json"), key=lambda p: json.loads(p.read_text())["started_at"])
    run = runs[5].with_name("outputs.jsonl")
    rows = [json.loads(line) for line in run.read_text().splitlines()]
    rows[0]["clause"] = "Texas" if rows[0]["clause"] != "Texas" else "Ontario"
    run.write_text("".join(json.dumps(row) + "\n" for row in rows))


def test_check_reports_what_differs_from_a_build(demo: Path, builder: dict[str, ModuleType]) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("prompt_holdout_build", EXAMPLE / "build.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    assert build.compare_trees(EXAMPLE, demo) == []
    _tamper_outputs(demo)
    (demo / "prompts" / "extract@v6.md").write_text((EXAMPLE / "prompts" / "extract@v6.md").read_text() + "\n")
    log = demo / "evals/holdout/READS.log"
    log.write_text(log.read_text().replace('reason="week-6 release candidate"', 'reason="week-6 release"'))
    problems = build.compare_trees(EXAMPLE, demo)
    assert "prompts/extract@v6.md: differs from a fresh build" in problems
    assert any(p.startswith("dev runs: entry 6 differs") for p in problems)
    assert any(p.startswith("holdout reads: entry 3 differs") for p in problems)


def _extractor(tmp_path: Path, prompt: str, lines: list[str]) -> tuple[int, list[dict[str, Any]], str]:
    import subprocess

    file = tmp_path / "p.md"
    file.write_text(prompt)
    proc = subprocess.run([sys.executable, str(EXAMPLE / "extractor.py"), "--prompt", str(file)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=30, check=False)
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


PROMPT = """# test
## Jurisdictions
| name | written as |
|---|---|
| New York | the State of New York; New York |
| Texas | Texas |
## Rules
1. `laws of {place}` — a note
2. `Lone Star` -> Texas
## Settings
- case: ignore
"""


def test_the_extractor_answers_first_rule_first_match_and_settings_change_that(tmp_path: Path) -> None:
    text = "the laws of Texas apply; the laws of the State of New York too; lone star"
    code, out, _ = _extractor(tmp_path, PROMPT, [json.dumps({"id": "a", "text": text}), json.dumps({"id": "b", "text": "Lone Star"}),
                                                  json.dumps({"id": "c", "text": "nothing"})])
    assert code == 0 and out == [{"id": "a", "clause": "Texas"}, {"id": "b", "clause": "Texas"}, {"id": "c", "clause": None}]
    code, out, _ = _extractor(tmp_path, PROMPT.replace("case: ignore", "match: last\n- default: New York"),
                              [json.dumps({"id": "a", "text": text}), json.dumps({"id": "c", "text": "nothing"})])
    assert out == [{"id": "a", "clause": "New York"}, {"id": "c", "clause": "New York"}]
    code, out, _ = _extractor(tmp_path, PROMPT.replace("case: ignore", "case: exact"), [json.dumps({"id": "b", "text": "lone star"})])
    assert out == [{"id": "b", "clause": None}]


def test_the_extractor_refuses_a_bad_prompt_with_its_line_and_reports_bad_input(tmp_path: Path) -> None:
    code, out, err = _extractor(tmp_path, PROMPT.replace("1. `laws of {place}` — a note", "1. laws of {place}"), ["{}"])
    assert code == 2 and out == [] and err.strip() == f"extractor: {tmp_path / 'p.md'}:8: a rule is written '1. `pattern`' or '1. `pattern` -> NAME'"
    code, _, err = _extractor(tmp_path, PROMPT.replace("-> Texas", "-> Utah"), ["{}"])
    assert code == 2 and err.strip() == f"extractor: {tmp_path / 'p.md'}:9: answer 'Utah' is not a jurisdiction of the table"
    code, out, err = _extractor(tmp_path, PROMPT, ["not json", json.dumps({"id": "x"}), json.dumps({"text": "no id"})])
    assert code == 0 and out == [{"id": "x", "clause": None, "error": "no 'text' string in the input"}]
    assert "stdin:1: not valid JSON" in err and "stdin:3: expected an object with a string 'id'; skipped" in err
