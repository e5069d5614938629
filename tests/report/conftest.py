"""The sample gate result every renderer's gold file is made from.

A real gate run (an echo system on 100 cases) with the volatile parts (checker digest, run id,
times, the config digest that holds this machine's interpreter path) replaced by constants, plus
check reports of the kinds the checks add (leakage, metamorphic flip rates, the seeds check's
recipe rule, the holdout budget), so the gold files show how each appears without any renderer
knowing them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from oloproof.config import load_release
from oloproof.fingerprint import Fingerprint
from oloproof.gate import run_gate
from oloproof.identity import CheckerIdentity
from oloproof.result import CheckReport, GateResult, RuleResult
from oloproof.stats.interval import Interval
from oloproof.verdicts import Verdict, worst
from report.golden import HOSTILE
from tests.conftest import Project, labelled_cases


@pytest.fixture
def sample(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> GateResult:
    project = Project(tmp_path).write(
        cases=labelled_cases(100, 85),
        rules=(
            "  - {id: accurate, criterion: correct, min: 0.7}\n"
            "  - {id: strict, criterion: correct, min: 0.95}\n"
            "  - {id: borderline, criterion: correct, min: 0.8}"
        ),
        extra="# seeds: (the seeds check's rule is added below)\n",
    )
    monkeypatch.chdir(project.root)
    result = run_gate(load_release("release.yaml"))
    checker = CheckerIdentity(version="0.0.0-test", source_digest="sha256:" + "0" * 64)
    assert result.run is not None
    run = replace(result.run, fingerprint=Fingerprint(digest="sha256:" + "2" * 64, files={"model/weights.npz": "sha256:" + "3" * 64}), run_id="20260101T000000Z-abcdef", started_at="2026-01-01T00:00:00.000000Z", checker=checker.to_json())
    recipe = RuleResult(
        rule_id="recipe_accurate", criterion="correct", kind="min", threshold=0.8, verdict=Verdict.MANUAL_REVIEW,
        reasons=("approximate_method",),
        sentence="recipe correct is 0.882 over 5 seeds, 95% interval [0.832, 0.919] (crossed, approximate): "
        "set allow_approximate_methods: true to let it decide.",
        interval=Interval(estimate=0.882, low=0.832, high=0.919, level=0.95, method="crossed cases × seeds", approximate=True),
        n=1750, passes=1543.0, missing=0, resolution=None, source="release.yaml", line=14,
        caveats=("The interval assumes the seeds are a random sample of the recipe's seeds.", "A caveat shared by two rules, said once."),
    )
    # A PASS's caveats are shown under the table (issue 17 audit): one line each, a shared one once.
    shared = ("A caveat shared by two rules, said once.",)
    checks = (
        CheckReport(
            name="leakage", title="Leakage", status="clean: none of 100 cases is in data/training.jsonl (5000 rows)",
            sentence="Exact match after lowercasing and collapsing whitespace.",
            limitations=("Near-duplicates of training rows are not checked.",),
        ),
        CheckReport(
            name="metamorphic", title="Metamorphic transforms", status="1 declared transform",
            lines=("noise (declared): 7 of 97 changed cases flipped, flip rate 0.072 on the dev set; 3 not applicable",),
            limitations=("Undeclared perturbations, larger changes, an attacker's search and certified robustness are not examined.",),
        ),
        CheckReport(
            name="seeds", title="Seeds: recipe loan-model", status="5 seeds; 86 cases change verdict with the seed",
            verdict=Verdict.MANUAL_REVIEW, reasons=("approximate_method",),
            sentence="The recipe interval is approximate.", lines=("seed_1: 0.911 (319/350)", "seed_3: 0.843 (295/350)"),
            source="release.yaml", line=14,
            limitations=("Failures rarer than about once in 5 seeds: a recipe that fails one training in 10 may pass all 5.",),
        ),
        CheckReport(
            name="holdout", title="Holdout", status="3 of 20 reads used, 17 left",
            lines=("last read: holdout score 0.708 (85/120) on the holdout set, reason \"release v1.1.0\"",),
        ),
    )
    rules = (replace(result.rules[0], caveats=shared), *result.rules[1:], recipe)
    verdicts = [rule.verdict for rule in rules] + [check.verdict for check in checks if check.verdict is not None]
    return replace(
        result, checker=checker, generated_at="2026-01-01T00:00:00Z", run=run, checks=checks, rules=rules,
        verdict=worst(verdicts), release=replace(result.release, digest="sha256:" + "1" * 64),
        problems=(f"case '{HOSTILE}': output has no 'label'",),
    )


