"""Issue 16, point 11: invalid evidence outranks an approximate method.

A rule whose evidence is invalid (leaked cases, a failed run) is INSUFFICIENT_EVIDENCE whatever
its method, with every reason code kept; the gate orders BLOCKED > FAIL > INSUFFICIENT_EVIDENCE >
MANUAL_REVIEW > PASS. A person told "manual review" must never be reviewing contaminated or
incomplete evidence. Everything runs through the real CLI.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

from oloproof.errors import ExitCode
from oloproof.verdicts import Verdict, worst
from tests.conftest import Project, report

# A system that writes both a label and a score in [0, 1] (the case's `answer` and `score`
# inputs), answers case --wrong ID wrongly, and exits with --exit N after answering every case.
BOTH = """\
import json, sys
code = int(sys.argv[sys.argv.index("--exit") + 1]) if "--exit" in sys.argv else 0
wrong = sys.argv[sys.argv.index("--wrong") + 1] if "--wrong" in sys.argv else None
for line in sys.stdin:
    case = json.loads(line)
    label = 0 if case["id"] == wrong else case["answer"]
    print(json.dumps({"id": case["id"], "label": label, "score": case["score"]}))
sys.exit(code)
"""


def both_system(project: Project, *args: str) -> str:
    script = project.root / "both.py"
    script.write_text(BOTH, encoding="utf-8")
    return json.dumps([sys.executable, str(script), *args])


def scored_cases(n: int = 90, *, groups: bool = False) -> list[dict[str, Any]]:
    cases = []
    for i in range(n):
        case: dict[str, Any] = {
            "id": f"c{i:03d}",
            "answer": 1,
            "score": 0.9,
            "text": f"Case number {i}",
            "expected": {"label": 1},
        }
        if groups:
            case["group"] = f"g{i // 3}"
        cases.append(case)
    return cases


def leak(project: Project, *texts: str) -> None:
    """Record a leakage check that finds the cases whose text is in ``texts``."""
    training = project.root / "private" / "training.jsonl"
    training.parent.mkdir(exist_ok=True)
    training.write_text("".join(json.dumps({"answer": 1, "score": 0.9, "text": t}) + "\n" for t in texts))
    assert (
        project.cli("leakage", "check", "--training", str(training), "--record", "-q") == ExitCode.INSUFFICIENT_EVIDENCE
    )


SCORE = "  - {type: label_match, field: label}\n  - {type: score, field: score}"


def test_the_order_is_blocked_fail_insufficient_manual_pass() -> None:
    order = [Verdict.BLOCKED, Verdict.FAIL, Verdict.INSUFFICIENT_EVIDENCE, Verdict.MANUAL_REVIEW, Verdict.PASS]
    assert sorted(Verdict, key=lambda v: -v.severity) == order
    assert list(Verdict) == order  # the enum lists them worst first, as the docs do
    assert worst([Verdict.MANUAL_REVIEW, Verdict.INSUFFICIENT_EVIDENCE]) is Verdict.INSUFFICIENT_EVIDENCE
    assert worst([Verdict.PASS, Verdict.MANUAL_REVIEW]) is Verdict.MANUAL_REVIEW


def test_an_insufficient_rule_outranks_a_manual_review_rule(project: Project) -> None:
    # `fine` straddles (INSUFFICIENT_EVIDENCE); `graded` is on scores with the t method (approximate,
    # MANUAL_REVIEW without permission). The gate says INSUFFICIENT_EVIDENCE, exit 4.
    cases = scored_cases(90)
    for case in cases[:10]:
        case["answer"] = 0
    project.write(
        cases=cases,
        command=both_system(project),
        evaluators=SCORE,
        rules="  - {id: fine, criterion: correct, min: 0.85}\n  - {id: graded, criterion: score, min: 0.5, method: t}",
    )
    code, data = report(project)
    verdicts = {rule["id"]: rule["verdict"] for rule in data["rules"]}
    assert verdicts == {"fine": "INSUFFICIENT_EVIDENCE", "graded": "MANUAL_REVIEW"}
    assert data["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_leaked_cases_make_a_score_rule_on_groups_insufficient_not_manual_review(project: Project) -> None:
    # Scores on grouped cases have no interval at all (MANUAL_REVIEW on clean evidence); with
    # three leaked cases the evidence is invalid, and that comes first.
    project.write(
        cases=scored_cases(90, groups=True),
        command=both_system(project),
        evaluators=SCORE,
        rules="  - {id: graded, criterion: score, min: 0.5}",
    )
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW and data["rules"][0]["verdict"] == "MANUAL_REVIEW"  # clean: a review
    leak(project, "Case number 1", "Case number 2", "Case number 3")
    code, data = report(project)
    (rule,) = data["rules"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert {"approximate_method", "leaked_cases"} <= set(rule["reasons"])
    assert "the evidence is invalid (leaked_cases), so the rule is not decided." in rule["sentence"]
    assert data["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_regression_rule_on_scores_keeps_every_reason_code(project: Project) -> None:
    cases = scored_cases(60)
    project.write(cases=cases, command=both_system(project), evaluators=SCORE, version="v0")
    assert project.cli("gate", "-q") == ExitCode.PASS  # the baseline run
    regression = "  - {id: no_drop, criterion: score, baseline: 'version:v0', max_drop: 0.05}"
    project.write(cases=cases, command=both_system(project), evaluators=SCORE, version="v1", rules=regression)
    code, data = report(project)
    assert data["rules"][0]["verdict"] == "MANUAL_REVIEW" and code == ExitCode.MANUAL_REVIEW  # clean: a review
    # The new version exits 1 after answering every case (run_failed) on a set with leaked cases.
    project.write(
        cases=cases, command=both_system(project, "--exit", "1"), evaluators=SCORE, version="v1", rules=regression
    )
    leak(project, "Case number 7")
    code, data = report(project)
    (rule,) = data["rules"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert {"approximate_method", "leaked_cases", "run_failed"} <= set(rule["reasons"])
    assert "the evidence is invalid (run_failed, leaked_cases)" in rule["sentence"] or (
        "the evidence is invalid (leaked_cases, run_failed)" in rule["sentence"]
    )
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_missing_outputs_are_not_sent_to_a_manual_review(project: Project) -> None:
    # Grouped cases (an approximate, clustered interval) with missing outputs: the evidence is
    # incomplete, so the rule is INSUFFICIENT_EVIDENCE, not MANUAL_REVIEW.
    cases = [{"id": f"c{i:05d}", "answer": 1, "group": f"g{i // 3}", "expected": {"label": 1}} for i in range(120)]
    project.write(cases=cases, system_args="--drop c00000 --drop c00001")
    code, data = report(project)
    (rule,) = data["rules"]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    assert {"missing_outputs", "approximate_method"} <= set(rule["reasons"])
    assert "the evidence is incomplete (missing_outputs)" in rule["sentence"]


SEEDS = """\
recipe: r
checkpoints:
  s1: {{command: {c1}}}
  s2: {{command: {c2}}}
  s3: {{command: {c3}}}
rule: {{id: recipe, criterion: correct, min: 0.5}}
"""


def test_the_seeds_recipe_rule_carries_leaked_cases_in_the_gate(project: Project) -> None:
    # The recipe's interval is approximate (MANUAL_REVIEW without permission); its checkpoints
    # answered the same test set, whose leaked cases invalidate their evidence too.
    cases = scored_cases(60)
    both_system(project)
    commands = [shlex.join([sys.executable, str(project.root / "both.py"), "--wrong", f"c{i:03d}"]) for i in range(3)]
    (project.root / "seeds.yaml").write_text(SEEDS.format(c1=commands[0], c2=commands[1], c3=commands[2]))
    project.write(cases=cases, command=both_system(project), evaluators=SCORE, extra="seeds: seeds.yaml\n")
    code, data = report(project)
    recipe = next(rule for rule in data["rules"] if rule["id"] == "recipe")
    assert recipe["verdict"] == "MANUAL_REVIEW"  # clean evidence, approximate method
    leak(project, "Case number 4", "Case number 5", "Case number 6")
    code, data = report(project)
    assert {rule["verdict"] for rule in data["rules"]} == {"INSUFFICIENT_EVIDENCE"}
    recipe = next(rule for rule in data["rules"] if rule["id"] == "recipe")
    assert "leaked_cases" in recipe["reasons"] and "interval_clears_threshold" not in recipe["reasons"]
    assert recipe["sentence"].endswith("The evidence is invalid (leaked_cases), so the rule is not decided.")
    assert data["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_docs_list_the_verdicts_in_the_gate_order() -> None:
    text = (Path(__file__).parents[2] / "docs" / "verdicts.md").read_text(encoding="utf-8")
    rows = [
        line.split("|")[1].strip()
        for line in text.splitlines()
        if line.startswith("| ") and "`oloproof gate`" not in line
    ]
    listed = [row for row in rows if row in {v.value for v in Verdict}]
    assert listed[:5] == [v.value for v in Verdict]
