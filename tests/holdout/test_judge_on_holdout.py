"""A judge criterion can be read on the holdout, and dev grades never stand for holdout ones.

The judge's labels file grades the dev set. It made `holdout run` exit 2 ("label for unknown case
id", the statistics audit of issue 17); then, once other ids were skipped, a holdout case sharing a
dev case's id and output took the dev person's grade (the red team: 0 of 120 judged passes scored
1.000). On a holdout read the labels file is not read at all. On the dev set an unknown id is still
an error (a typo must not pass).
"""

from __future__ import annotations

import json
import sys

from oloproof.errors import ExitCode
from tests.conftest import FIXTURES, Project, judge_label, write_cases

JUDGE = FIXTURES / "judge_system.py"


def cases(prefix: str, n: int, *, judge_says: bool = True, same_ids: bool = False) -> list[dict[str, object]]:
    sets = {"d": "the development set", "h": "the withheld evaluation set"}
    return [
        {
            "id": f"c{i:03d}" if same_ids else f"{prefix}-{i:03d}",
            "question": f"question {i * 7919 % 10007} drawn for {sets[prefix]}",
            "answer": 1,
            "judge_says": judge_says,
            "expected": {"label": 1},
        }
        for i in range(n)
    ]


def build(project: Project, *, same_ids: bool = False, holdout_judged: bool = True) -> None:
    dev = cases("d", 120, same_ids=same_ids)
    command = json.dumps([sys.executable, str(JUDGE)])
    project.write(
        cases=dev,
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl}}",
        rules="  - {id: judged, criterion: judge_pass, min: 0.5}",
        extra="holdout:\n  cases: evals/holdout/cases.jsonl\n  budget: 5\n  log: evals/holdout/READS.log\n",
    )
    labels = project.root / "data" / "labels.jsonl"
    labels.write_text("".join(json.dumps(judge_label(str(c["id"]), 1)) + "\n" for c in dev[::2]), encoding="utf-8")
    holdout = cases("h", 120, judge_says=holdout_judged, same_ids=same_ids)
    write_cases(project.root / "evals" / "holdout" / "cases.jsonl", holdout)


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


def test_a_dev_grade_never_stands_for_a_holdout_case_with_the_same_id_and_output(project: Project) -> None:
    # Dev and holdout share ids c000..c119 and the echo system's output {"id", "label": 1}, so every
    # dev label's output_sha256 matches a holdout output. People passed every dev case; the judge
    # fails every holdout case. The holdout's score is the judge's 0, never the dev people's 1.
    build(project, same_ids=True, holdout_judged=False)
    assert project.cli("run", "--quiet") == ExitCode.PASS
    out = project.root / "read.json"
    assert project.cli("holdout", "run", "--reason", "first read", "--quiet", "--json", str(out)) == 0
    read = json.loads(out.read_text())
    score = read["score"]
    assert score["passes"] == 0 and score["estimate"] == 0.0
    assert score["interval"]["low"] == 0.0 and score["interval"]["high"] == 1.0
    assert any(note.startswith("judge_untrusted") for note in read["notes"])
