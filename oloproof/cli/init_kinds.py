"""What ``oloproof init --kind KIND DIR`` writes: a commented release.yaml, a policy and an empty
test set for a classifier, a prompt or a regression model, and what to fill in.

The files are plain text written here (not copied from an example), each created exclusively
(``open(..., "x")``): init never replaces a file, and stops at the first one that exists.
"""

from __future__ import annotations

HEADER = """\
# release.yaml — written by `oloproof init --kind {kind}`. Every key: docs/release-yaml.md.
# Fill in the lines marked TODO, then run `oloproof gate`.
"""

SYSTEM = """\
system:
  version: v1                  # TODO: the version you gate (a git tag, a model name); shown in every report
  # TODO: the command that reads the cases as JSONL on stdin and writes one JSON object per case on
  # stdout, {{"id": ..., {output}}}, run from this directory. Without it, import outputs made elsewhere:
  #   oloproof run --outputs predictions.jsonl --version v1
  # command: [python, predict.py]
  timeout_s: 600
  # artifacts: [model.pkl]     # files the command reads that its command line does not name
testset:
  # TODO: fill in your test set, one JSON object per line:
  #   {case}
  cases: data/test.jsonl
"""

KINDS: dict[str, dict[str, str]] = {
    "classifier": {
        "output": '"label": ...',
        "case": '{"id": "c1", "features": {"bill_length_mm": 39.1}, "expected": {"label": "Adelie"}}',
        "evaluators": """\
evaluators:
  # output.label == expected.label (as JSON values: "1" is not 1) gives the criterion `correct`.
  - {type: label_match, field: label}
""",
        "rules": """\
rules:
  # Accuracy: PASS when the 95% interval's lower bound clears 0.9.
  - {id: accurate, criterion: correct, min: 0.9}
  # Recall on one class (the cases whose expected label is it) and precision on it (the cases
  # the system called it), once your cases are in: TODO name your class.
  # - {id: recall_adelie, criterion: correct, min: 0.85, where: {expected.label: Adelie}}
  # - {id: precision_adelie, criterion: correct, min: 0.85, where: {output.label: Adelie}}
  # One verdict per slice (a case's "stratum", or any case key), Holm's step-down over the rows:
  # - {id: accurate_by_site, criterion: correct, min: 0.8, per: stratum}
  # AUC of a score your system writes ({"id": ..., "label": ..., "score": 0.93}) for one class:
  # - {id: auc, criterion: auc, score: score, positive: Adelie, min: 0.9}
  # The 95th percentile of a latency your system writes ({"latency_ms": 12.5}):
  # - {id: p95_latency, criterion: latency_ms, quantile: 0.95, max: 800}
  # A rule shown in every report that never changes the verdict:
  # - {id: stretch, criterion: correct, min: 0.95, advisory: true}
""",
        "next": "data/test.jsonl: one case per line with its expected label, e.g.\n"
        '    {"id": "c1", "features": {...}, "expected": {"label": "Adelie"}}',
    },
    "prompt": {
        "output": '"answer": "..."',
        "case": '{"id": "q1", "question": "What is the capital of France?", "expected": {"answer": "Paris"}}',
        "evaluators": """\
evaluators:
  # The answer contains the expected text (taken per case from expected.answer): criterion `contains`.
  - {type: contains, field: answer, expected_field: answer, ignore_case: true}
  # A human-calibrated judge instead: see `type: judge` in docs/release-yaml.md.
""",
        "rules": """\
rules:
  - {id: answers, criterion: contains, min: 0.8}
""",
        "next": "data/test.jsonl: one prompt case per line with the text a good answer contains, e.g.\n"
        '    {"id": "q1", "question": "...", "expected": {"answer": "Paris"}}',
    },
    "regression": {
        "output": '"value": 12.5',
        "case": '{"id": "r1", "features": {"rooms": 3}, "expected": {"value": 12.0}}',
        "evaluators": """\
evaluators:
  # |output.value - expected.value| <= tolerance gives the criterion `within_tolerance`.
  - {type: within_tolerance, field: value, tolerance: 1.0}   # TODO: the error you can live with
""",
        "rules": """\
rules:
  # Share of cases within the tolerance: PASS when the 95% interval's lower bound clears 0.9.
  - {id: close_enough, criterion: within_tolerance, min: 0.9}
  # The mean absolute error of output.value against expected.value, exact with a declared largest
  # possible error (bound, in the value's units): TODO your bound and threshold.
  # - {id: mae, criterion: mae, field: value, bound: 100, max: 5}
""",
        "next": "data/test.jsonl: one case per line with its expected number, e.g.\n"
        '    {"id": "r1", "features": {...}, "expected": {"value": 12.0}}',
    },
}

POLICY = """\
# policy.yaml — the gate's rules. A rule decides on the interval, never the point estimate:
# PASS when the whole interval clears the threshold, FAIL when it misses it, and
# INSUFFICIENT_EVIDENCE (exit 4) while the test set is too small to tell.
confidence: 0.95
{rules}"""


def files(kind: str) -> dict[str, str]:
    """The files ``init --kind`` writes, by path relative to DIR, in the order written."""
    spec = KINDS[kind]
    release = (
        HEADER.format(kind=kind)
        + SYSTEM.format(output=spec["output"], case=spec["case"])
        + spec["evaluators"]
        + "policy: policy.yaml\n"
    )
    return {"release.yaml": release, "policy.yaml": POLICY.format(rules=spec["rules"]), "data/test.jsonl": ""}


def next_steps(kind: str, shown: str) -> list[str]:
    """What to fill in, printed after the files are written."""
    return [
        "fill in:",
        f"  1. {KINDS[kind]['next']}",
        "  2. release.yaml: system.version, and system.command (or import outputs with `oloproof run --outputs FILE "
        "--version v1`)",
        "  3. policy.yaml: the thresholds your release must clear",
        f"then: cd {shown} && oloproof gate",
    ]
