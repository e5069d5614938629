"""A judge criterion can be read on the holdout (the audit of issue 17, finding 5).

The judge's labels file is written for the dev set: on a holdout read its dev-case labels are left
out, not refused as "label for unknown case id" (which made `holdout run` exit 2 and `gap` on a
judge criterion unreachable). On the dev set an unknown id is still an error (a typo must not pass).
"""

from __future__ import annotations

import json
import sys

from oloproof.errors import ExitCode
from tests.conftest import FIXTURES, Project, judge_label, write_cases

JUDGE = FIXTURES / "judge_system.py"


def cases(prefix: str, n: int) -> list[dict[str, object]]:
    sets = {"d": "the development set", "h": "the withheld evaluation set"}
    return [
        {
            "id": f"{prefix}-{i:03d}",
            "question": f"question {i * 7919 % 10007} drawn for {sets[prefix]}",
            "answer": 1,
            "judge_says": True,
            "expected": {"label": 1},
        }
        for i in range(n)
    ]


def build(project: Project) -> None:
    dev = cases("d", 120)
    command = json.dumps([sys.executable, str(JUDGE)])
    project.write(
        cases=dev,
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl}}",
        rules="  - {id: judged, criterion: judge_pass, min: 0.5}",
        extra="holdout:\n  cases: evals/holdout/cases.jsonl\n  budget: 5\n  log: evals/holdout/READS.log\n",
    )
    labels = project.root / "data" / "labels.jsonl"
    labels.write_text("".join(json.dumps(judge_label(str(c["id"]), 1)) + "\n" for c in dev[::2]), encoding="utf-8")
    write_cases(project.root / "evals" / "holdout" / "cases.jsonl", cases("h", 120))


def test_a_holdout_read_leaves_the_dev_sets_labels_out(project: Project) -> None:
    build(project)
    assert project.cli("run", "--quiet") == ExitCode.PASS
    assert project.cli("holdout", "run", "--reason", "first read", "--quiet") == 0
    assert "judge_pass" in (project.root / "evals" / "holdout" / "READS.log").read_text()


def test_on_the_dev_set_a_label_of_an_unknown_case_is_still_an_error(project: Project) -> None:
    build(project)
    labels = project.root / "data" / "labels.jsonl"
    labels.write_text(labels.read_text() + json.dumps(judge_label("h-000", 1)) + "\n", encoding="utf-8")
    assert project.cli("gate", "--quiet") == ExitCode.USAGE
