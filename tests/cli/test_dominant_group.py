"""Groups are counted by size too: one big document beside many single cases is not "30 groups".

The audit of issue 17: 229 cases, 200 of them in one document and 29 without a group (each its
own group), "30 groups" in all. The cluster-robust variance cannot see how far the dominant group
sits from the mean (it mostly *is* the mean), and the guard PASSed 21–35% of the time at a true
drop equal to max_drop (nominal 2.5%). The effective number of groups by size, (Σm)²/Σm² = 1.3
here, is what the "at least 30 groups" rule now counts, for the guard, `compare` and the clustered
pass-rate rule alike.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from oloproof.errors import ExitCode
from oloproof.stats.clustered import clustered_proportion, groups_by_size, too_few_groups
from tests.conftest import Project

APPROXIMATE = "  allow_approximate_methods: true\n"
GUARD = "  - {id: guard, criterion: correct, baseline: 'version:A', max_drop: 0.07}"


def dominant(n_big: int = 200, singles: int = 29) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = [
        {"id": f"c{i:03d}", "group": "contract-1", "expected": {"label": 1}} for i in range(n_big)
    ]
    cases += [{"id": f"c{n_big + i:03d}", "expected": {"label": 1}} for i in range(singles)]
    return cases


def imported(project: Project, version: str, wrong: range) -> None:
    lines = [json.dumps({"id": f"c{i:03d}", "label": 0 if i in wrong else 1}) + "\n" for i in range(229)]
    path = project.root / f"{version}.jsonl"
    path.write_text("".join(lines), encoding="utf-8")
    assert project.cli("run", "--outputs", str(path), "--version", version) == 0


def test_a_dominant_group_sends_the_guard_and_compare_to_review(project: Project) -> None:
    project.write(cases=dominant(), command=None, rules=GUARD, policy_extra=APPROXIMATE)
    imported(project, "A", range(4))  # A wrong on 4 cases of the big document
    imported(project, "B", range(4, 12))  # B wrong on 8 others of it
    out = project.root / "gate.json"
    assert project.cli("gate", "--run", "version:B", "--json", str(out)) == ExitCode.MANUAL_REVIEW
    rule = json.loads(out.read_text())["rules"][0]
    assert rule["verdict"] == "MANUAL_REVIEW" and "few_clusters" in rule["reasons"]
    assert (
        "with 30 groups of such unequal sizes that they count as 1.3 by size (fewer than 30: a few groups hold "
        "most of the cases), the clustered paired interval is not trustworthy" in rule["sentence"]
    )
    report = project.root / "compare.json"
    code = project.cli("compare", "version:A", "version:B", "--max-drop", "0.07", "--json", str(report))
    assert code == ExitCode.MANUAL_REVIEW
    paired = json.loads(report.read_text())["paired"]["clustered"]
    assert paired["groups"] == 30 and paired["groups_by_size"] == pytest.approx(229**2 / (200**2 + 29))
    assert paired["few_clusters"] is True


def test_a_dominant_group_sends_the_pass_rate_rule_to_review(project: Project) -> None:
    rules = "  - {id: accurate, criterion: correct, min: 0.9}"
    project.write(cases=dominant(), command=None, rules=rules, policy_extra=APPROXIMATE)
    imported(project, "A", range(2))
    out = project.root / "gate.json"
    assert project.cli("gate", "--run", "version:A", "--json", str(out)) == ExitCode.MANUAL_REVIEW
    rule = json.loads(out.read_text())["rules"][0]
    assert "few_clusters" in rule["reasons"] and rule["details"]["groups_by_size"] == pytest.approx(1.31, abs=0.01)
    assert "count as 1.3 by size" in rule["sentence"]


def test_groups_by_size_is_kishs_participation_ratio() -> None:
    assert groups_by_size([5] * 40) == pytest.approx(40.0)
    assert groups_by_size([200] + [1] * 29) == pytest.approx(52441 / 40029)
    assert groups_by_size([2, 50] * 15) == pytest.approx(52**2 * 225 / (2504 * 15))  # 30 groups, 16.2 by size
    assert not too_few_groups(40, 40.0) and too_few_groups(30, 16.2) and too_few_groups(29, 29.0)
    # Equal groups of any size keep their count; the pass-rate interval carries the figure.
    result = clustered_proportion([1.0] * 200, [i // 5 for i in range(200)], confidence=0.95)
    assert result.by_size == pytest.approx(40.0) and not result.few_clusters
