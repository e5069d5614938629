"""Through the gate: a score criterion does not depend on the order of the test-set file (issue 10).

A trusted judge grades 150 cases 1.0 and 150 cases 0.76 (mean 0.88). Written easy-first, the
one-order betting interval put its lower bound at 0.952, pulled back to the estimate 0.88, so a
`min: 0.88` rule PASSed on the point estimate; written hard-first it gave 0.855. Now both files
give the same interval, with the seed printed, and the rule is not PASSed. (Issue 17: a judge rule
is about the pass rate unless it says ``measure: mean_grade``; every case is labelled here, so the
betting interval runs on people's grades, which equal the judge's.)
"""

from __future__ import annotations

import json
import sys

from oloproof.errors import ExitCode
from oloproof.stats.bounded import bounded_mean_betting, order_seed
from tests.conftest import FIXTURES, Project, judge_label, report

JUDGE = FIXTURES / "judge_system.py"


CASES = [{"id": f"c{i:03d}", "answer": 1, "judge_says": 1.0 if i < 150 else 0.76, "expected": {"label": 1}} for i in range(300)]


def _write(project: Project, cases: list[dict[str, object]]) -> None:
    # People fail what the judge grades below 0.8 (pass_threshold 0.8): every label agreed, 150 fails.
    labels = project.root / "data" / "labels.jsonl"
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text("".join(json.dumps(judge_label(c["id"], c["judge_says"])) + "\n" for c in cases), encoding="utf-8")
    command = json.dumps([sys.executable, str(JUDGE)])
    project.write(
        cases=cases, rules="  - {id: judged, criterion: judge_pass, min: 0.88, measure: mean_grade}",
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl, pass_threshold: 0.8}}",
    )


def test_sorted_and_reversed_files_give_one_interval_and_min_at_the_mean_does_not_pass(project: Project) -> None:
    results = []
    for cases in (CASES, CASES[::-1]):  # the same cases, easy first or hard first
        _write(project, cases)
        code, data = report(project)
        assert data["criteria"]["judge_pass"]["details"]["judge"]["trusted"] is True
        results.append((code, data))
    (code_a, a), (code_b, b) = results
    rule_a, rule_b = a["rules"][0], b["rules"][0]
    assert a["testset"]["digest"] == b["testset"]["digest"]  # the digest ignores line order
    seed = order_seed(a["testset"]["digest"])
    assert rule_a["details"]["seed"] == rule_b["details"]["seed"] == seed
    assert rule_a["interval"] == rule_b["interval"]
    reference = bounded_mean_betting([1.0] * 150 + [0.76] * 150, confidence=0.95, seed=seed)
    assert rule_a["interval"]["low"] == reference.low and rule_a["interval"]["high"] == reference.high
    assert rule_a["interval"]["estimate"] == 0.88 or abs(rule_a["interval"]["estimate"] - 0.88) < 1e-12
    assert rule_a["interval"]["low"] < 0.88 < rule_a["interval"]["high"]
    for rule, code in ((rule_a, code_a), (rule_b, code_b)):
        assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
        assert f"(betting-wsr, exact, seed {seed})" in rule["sentence"]
