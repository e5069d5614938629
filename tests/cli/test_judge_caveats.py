"""Issue 17 audit: a judge's verdicts alone never decide a paired comparison, and every caveat shows.

A lenient judge passes some of the answers people fail, so on the judge's verdicts a drop looks
smaller than it is ((1 − fpr) × drop): here B truly loses 0.20 against A (200 of 1000 cases), the
judge sees 0.10 of it. A `max_drop: 0.15` guard PASSed on the judge's interval, labelled exact;
a guard, `compare` and `gap` on a judge criterion now show the interval as judge-graded and
decide nothing (MANUAL_REVIEW, or INSUFFICIENT_EVIDENCE where the evidence is incomplete anyway).
The caveats of a PASS (PPI's measured error, the clustered interval's) appear under the verdict
table in the terminal and the Markdown, not only inside the JSON sentence, with the nominal error
of the policy's own confidence.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, judge_label, labelled_cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
N = 1000
JUDGE_CAVEAT = "Both versions were graded by the judge, not by people: a judge's errors shrink the differences"

# The judge passes an output labelled 1 (a good answer) or 2 (a bad answer it is fooled by).
LENIENT_JUDGE = """import json, sys
for line in sys.stdin.read().splitlines():
    r = json.loads(line)
    print(json.dumps({"id": r["id"], "grade": r["output"]["label"] in (1, 2)}))
"""


def outputs(version: str) -> list[int]:
    """Cases 0-99 fail on both versions, 100-599 pass on both (people's labels are on these, where the
    judge is right for either version); on 600-799 B is bad where A was good: the judge is fooled on
    600-699 (label 2) and not on 700-799."""
    labels = [0] * 100 + [1] * (N - 100)
    if version == "B":
        labels[600:700] = [2] * 100
        labels[700:800] = [0] * 100
    return labels


def build(project: Project, *, rules: str, policy_extra: str = "", b_missing: int = 0) -> None:
    judge = project.root / "judge.py"
    judge.write_text(LENIENT_JUDGE, encoding="utf-8")
    command = json.dumps([sys.executable, str(judge)])
    cases = [{"id": f"c{i:04d}", "text": f"dev question {i}", "expected": {"label": 1}} for i in range(N)]
    project.write(
        cases=cases,
        command=None,
        rules=rules,
        # The labels here are about the comparison's cases, whichever version's outputs: taken as
        # grades of each run's outputs (every report says so), which these tests are not about.
        policy_extra=policy_extra + "  judges: {unbound_labels: allow}\n",
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl, batch_size: 1000}}",
        extra="holdout:\n  cases: evals/holdout/cases.jsonl\n  budget: 20\n  log: evals/holdout/READS.log\n",
    )
    labels = [{"id": f"c{i:04d}", "grade": i >= 100} for i in [*range(0, 100), *range(100, 600, 5)]]
    (project.root / "data" / "labels.jsonl").write_text("".join(json.dumps(row) + "\n" for row in labels))
    holdout = project.root / "evals" / "holdout" / "cases.jsonl"
    holdout.parent.mkdir(parents=True, exist_ok=True)
    holdout.write_text("".join(json.dumps({"id": f"h{i:04d}", "text": f"held out {i}", "expected": {"label": 1}}) + "\n" for i in range(50)))
    for version in ("A", "B"):
        rows = outputs(version)
        kept = N - (b_missing if version == "B" else 0)
        path = project.root / f"{version}.jsonl"
        path.write_text("".join(json.dumps({"id": f"c{i:04d}", "label": rows[i]}) + "\n" for i in range(kept)))
        assert project.cli("run", "--outputs", str(path), "--version", version) == 0


def gate(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "gate.json"
    code = project.cli("gate", "--run", "version:B", "--json", str(out), *extra)
    return code, json.loads(out.read_text())["rules"][0]


GUARD = "  - {id: guard, criterion: judge_pass, baseline: 'version:A', max_drop: %s}"


@pytest.mark.parametrize("policy_extra", ["", "  allow_approximate_methods: true\n"])
def test_a_guard_on_a_judge_does_not_pass_a_drop_the_judge_hides(
    project: Project, policy_extra: str, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, rules=GUARD % "0.15", policy_extra=policy_extra)
    capsys.readouterr()
    summary = project.root / "gate.md"
    code, rule = gate(project, "--markdown", str(summary))
    terminal = capsys.readouterr().out
    # The judge sees a drop of 0.100 (true drop 0.200): its interval alone would clear -0.15.
    assert rule["interval"]["estimate"] == pytest.approx(-0.1)
    assert rule["interval"]["low"] > -0.15
    assert code == ExitCode.MANUAL_REVIEW and rule["verdict"] == "MANUAL_REVIEW"
    assert "judge_graded" in rule["reasons"] and "interval_clears_threshold" not in rule["reasons"]
    assert rule["interval"]["method"] == "judge-graded fay-lumbard-melded" and rule["interval"]["approximate"] is True
    assert "the comparison is of the judge's verdicts on both versions, which cannot decide it" in rule["sentence"]
    [caveat] = rule["caveats"]
    assert caveat.startswith(JUDGE_CAVEAT) and caveat.endswith("gate on human-graded outcomes or review the change by hand.")
    assert f"caveat (guard): {caveat}" in " ".join(terminal.split())
    assert "* judge-graded paired interval: shown, never decides" in terminal
    markdown = summary.read_text()
    assert "**Caveat** (<code>guard</code>): Both versions were graded by the judge" in markdown
    assert "judge-graded fay-lumbard-melded" in markdown


def test_a_guard_on_a_judge_does_not_fail_either(project: Project) -> None:
    build(project, rules=GUARD % "0.02")
    code, rule = gate(project)
    assert rule["interval"]["high"] < -0.02  # the judge's interval alone would FAIL
    assert code == ExitCode.MANUAL_REVIEW and "interval_misses_threshold" not in rule["reasons"]


def test_a_guard_on_a_judge_with_missing_outputs_is_insufficient(project: Project) -> None:
    build(project, rules=GUARD % "0.5", b_missing=5)
    code, rule = gate(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert {"judge_graded", "missing_outputs"} <= set(rule["reasons"])
    assert "the evidence is incomplete (missing_outputs), so it is not decided" in rule["sentence"]


def compare(project: Project, *extra: str) -> tuple[int, dict[str, Any], str]:
    out = project.root / "compare.json"
    code = project.cli("compare", "version:A", "version:B", "--json", str(out), *extra)
    return code, json.loads(out.read_text()), ""


@pytest.mark.parametrize("threshold", ["0.15", "0.02"])
def test_compare_on_a_judge_reviews_by_hand(project: Project, capsys: pytest.CaptureFixture[str], threshold: str) -> None:
    build(project, rules=GUARD % "0.15", policy_extra="  allow_approximate_methods: true\n")
    capsys.readouterr()
    code, data, _ = compare(project, "--max-drop", threshold)
    terminal = capsys.readouterr().out
    decision = data["decision"]
    assert code == ExitCode.MANUAL_REVIEW and decision["verdict"] == "MANUAL_REVIEW"
    assert "judge_graded" in decision["reasons"]
    assert decision["caveats"][0].startswith(JUDGE_CAVEAT)
    paired = data["paired"]
    assert paired["exact"] is None and paired["judge_graded"] is True and paired["decides"] is False
    assert paired["approximate"]["method"] == "judge-graded tango-score"
    assert "(judge-graded fay-lumbard-melded, approximate)" in terminal
    [verdict_line] = [line for line in terminal.splitlines() if line.startswith("verdict:")]
    assert JUDGE_CAVEAT not in verdict_line  # the caveat is its own line, not inside the verdict's parenthesis
    assert f"caveat: {JUDGE_CAVEAT}" in terminal


def test_compare_on_a_judge_without_a_threshold_still_says_it(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    build(project, rules=GUARD % "0.15")
    capsys.readouterr()
    code, data, _ = compare(project)
    assert code == 0 and data["decision"] is None and data["paired"]["decides"] is False
    assert f"caveat: {JUDGE_CAVEAT}" in capsys.readouterr().out


def test_gap_on_a_judge_says_the_movement_is_the_judges(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    build(project, rules=GUARD % "0.15")
    out = project.root / "gap.json"
    capsys.readouterr()
    project.cli("gap", "--baseline", "version:A", "--current", "version:B", "--json", str(out))
    data = json.loads(out.read_text())
    assert data["notes"][0].startswith(JUDGE_CAVEAT)
    assert data["dev"]["judge_graded"] is True and data["dev"]["exact"] is None
    assert data["dev"]["approximate"]["method"].startswith("judge-graded ")
    assert f"note: {JUDGE_CAVEAT}" in capsys.readouterr().out


def test_seeds_on_a_judge_criterion_do_not_decide(project: Project) -> None:
    build(project, rules=GUARD % "0.15")
    rows = outputs("A")
    rng = np.random.default_rng(3)
    names = [f"s{k}" for k in range(1, 6)]
    for name in names:
        flip = rng.uniform(size=N) < 0.02
        labels = [0 if (f and r == 1) else r for r, f in zip(rows, flip, strict=True)]
        path = project.root / f"{name}.jsonl"
        path.write_text("".join(json.dumps({"id": f"c{i:04d}", "label": labels[i]}) + "\n" for i in range(N)))
        assert project.cli("run", "--outputs", str(path), "--version", name) == 0
    checkpoints = ", ".join(f"{name}: 'version:{name}'" for name in names)
    (project.root / "seeds.yaml").write_text(
        f"recipe: r1\ncheckpoints: {{{checkpoints}}}\nrule: {{id: recipe_ok, criterion: judge_pass, min: 0.6}}\n"
    )
    (project.root / "recipe.yaml").write_text("confidence: 0.95\nallow_approximate_methods: true\njudges: {unbound_labels: allow}\nrules:\n  - {id: r, criterion: judge_pass, min: 0.5}\n")
    out = project.root / "seeds.json"
    code = project.cli("seeds", str(project.root / "seeds.yaml"), "--policy", str(project.root / "recipe.yaml"), "--json", str(out))
    rule = json.loads(out.read_text())["rule"]
    assert rule["interval"]["low"] >= 0.6  # the judge's verdicts alone would PASS the recipe
    assert code == ExitCode.MANUAL_REVIEW and rule["verdict"] == "MANUAL_REVIEW"
    assert "judge_graded" in rule["reasons"] and "interval_clears_threshold" not in rule["reasons"]
    assert rule["caveats"][0].startswith("Every checkpoint was graded by the judge, not by people")


def test_a_ppi_pass_shows_its_caveat_under_the_table(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """/tmp/audit17/ppi_pass: the PPI caveat appeared only in the JSON sentence on a PASS."""
    says = [True] * 950 + [False] * 50
    cases = [{"id": f"c{i:04d}", "answer": 1, "judge_says": grade, "expected": {"label": 1}} for i, grade in enumerate(says)]
    labels = project.root / "data" / "labels.jsonl"
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text("".join(json.dumps(judge_label(f"c{i:04d}", says[i])) + "\n" for i in range(0, 1000, 2)))
    command = json.dumps([sys.executable, str(FIXTURES / "judge_system.py")])
    project.write(
        cases=cases,
        policy_extra="  allow_approximate_methods: true\n",
        rules="  - {id: judged, criterion: judge_pass, min: 0.8, method: ppi}\n  - {id: judged2, criterion: judge_pass, min: 0.7, method: ppi}",
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl, batch_size: 500}}",
    )
    summary = project.root / "gate.md"
    capsys.readouterr()
    assert project.cli("gate", "--markdown", str(summary)) == ExitCode.PASS
    terminal = " ".join(capsys.readouterr().out.split())
    caveat = (
        "The interval assumes the labelled cases are a random sample of the test cases; it is approximate: its one-sided "
        "error was measured up to 31% with 50 labels, 19% with 100 and 10% with 300 (the worst regime of each: a lenient "
        "judge at a pass rate of 0.95; docs/statistics.md), against a nominal 2.5%."
    )
    assert f"caveat (judged, judged2): {caveat}" in terminal
    assert terminal.count("measured up to 31% with 50 labels") == 1  # two rules share it: said once
    markdown = summary.read_text()
    assert f"**Caveat** (<code>judged</code>, <code>judged2</code>): {caveat}" in markdown
    assert "3-31%" not in markdown


def test_the_nominal_error_follows_the_policys_confidence(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """The clustered caveat said "nominal 2.5%" at confidence 0.99 (nominal 0.5%)."""
    cases = [{**case, "group": f"g{i % 60}"} for i, case in enumerate(labelled_cases(600, 600))]
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.8}", policy_extra="  allow_approximate_methods: true\n")
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace("confidence: 0.95", "confidence: 0.99"))
    out = project.root / "gate.json"
    capsys.readouterr()
    assert project.cli("gate", "--json", str(out)) == ExitCode.PASS
    [caveat] = json.loads(out.read_text())["rules"][0]["caveats"]
    assert caveat.endswith(
        "its one-sided error was measured at about 3% at 95% intervals, against a nominal 2.5%; this policy's 99% "
        "intervals have a nominal 0.5% a side, where it was not measured."
    )
    assert "caveat (accurate): The clustered interval is approximate" in capsys.readouterr().out


def test_compare_renders_the_clustered_caveat_as_its_own_line(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """`compare`'s verdict line held a full caveat sentence inside its parenthesis."""
    cases = [{"id": f"c{i:03d}", "expected": {"label": 1}, "group": f"doc{i // 5:02d}"} for i in range(200)]
    project.write(cases=cases, command=None, rules="  - {id: accurate, criterion: correct, min: 0.5}", policy_extra="  allow_approximate_methods: true\n")
    for version in ("A", "B"):
        path = project.root / f"{version}.jsonl"
        path.write_text("".join(json.dumps({"id": f"c{i:03d}", "label": 1}) + "\n" for i in range(200)))
        assert project.cli("run", "--outputs", str(path), "--version", version) == 0
    capsys.readouterr()
    assert project.cli("compare", "version:A", "version:B", "--max-drop", "0.1") == ExitCode.PASS
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "verdict: PASS  (the lower bound -0.019 shows a drop of at most 0.1; exit 0)"
    assert lines[-2].startswith("caveat: The clustered paired interval is approximate: with groups of very unequal size")
