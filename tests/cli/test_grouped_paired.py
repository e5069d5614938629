"""Issue 17, point 3: groups are honoured by every paired comparison, through the real CLI.

A set of 40 documents × 5 cases where the new version fails every case of two documents (10
regressions, no improvement): the case-level exact interval treats the 10 as independent and the
guard PASSed (lower bound −0.090 ≥ −0.10) with an interval labelled exact. Cases of one document
move together, so the interval is the clustered one: approximate, wider, never a PASS here, and a
MANUAL_REVIEW under an exact policy, as the clustered pass-rate rule already is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project

GUARD = "  - {id: guard, criterion: correct, baseline: 'version:A', max_drop: 0.10}"
APPROXIMATE = "  allow_approximate_methods: true\n"


def cases(n: int = 200, per_group: int | None = 5) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(n):
        case: dict[str, Any] = {"id": f"c{i:03d}", "expected": {"label": 1}}
        if per_group is not None:
            case["group"] = f"doc{i // per_group:02d}"
        out.append(case)
    return out


def build(
    project: Project,
    *,
    per_group: int | None = 5,
    policy_extra: str = "",
    new_wrong: int = 10,
    new_missing: int = 0,
    n: int = 200,
) -> None:
    """A right everywhere; B wrong on the first ``new_wrong`` cases (whole documents), no output
    on the last ``new_missing``."""
    project.write(cases=cases(n, per_group), command=None, rules=GUARD, policy_extra=policy_extra)
    for version, wrong, missing in (("A", 0, 0), ("B", new_wrong, new_missing)):
        lines = [json.dumps({"id": f"c{i:03d}", "label": 0 if i < wrong else 1}) + "\n" for i in range(n - missing)]
        outputs = project.root / f"{version}.jsonl"
        outputs.write_text("".join(lines), encoding="utf-8")
        assert project.cli("run", "--outputs", str(outputs), "--version", version) == 0


def gate(project: Project) -> tuple[int, dict[str, Any]]:
    out = project.root / "gate.json"
    code = project.cli("gate", "--run", "version:B", "--json", str(out))
    return code, json.loads(out.read_text())["rules"][0]


def compare(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "compare.json"
    code = project.cli("compare", "version:A", "version:B", "--json", str(out), *extra)
    return code, json.loads(out.read_text())


def test_the_ungrouped_set_keeps_its_exact_interval(project: Project) -> None:
    build(project, per_group=None)
    code, rule = gate(project)
    assert code == ExitCode.PASS  # 10 independent regressions in 200: within a drop of 0.10
    assert rule["interval"]["method"] == "fay-lumbard-melded" and rule["interval"]["approximate"] is False
    assert rule["interval"]["low"] == pytest.approx(-0.0900275377, abs=1e-9)


def test_the_guard_on_a_grouped_set_is_approximate_and_asks_for_review_under_an_exact_policy(
    project: Project,
) -> None:
    build(project)
    code, rule = gate(project)
    assert code == ExitCode.MANUAL_REVIEW and rule["verdict"] == "MANUAL_REVIEW"
    assert rule["interval"]["method"] == "clustered-paired-melded" and rule["interval"]["approximate"] is True
    assert rule["interval"]["low"] < -0.0900275377 and rule["interval"]["high"] > -0.0146371241  # wider
    assert "approximate_method" in rule["reasons"] and "interval_clears_threshold" not in rule["reasons"]
    assert (
        "the test set declares groups (40), so only an approximate (clustered) paired interval exists: set "
        "allow_approximate_methods: true in the policy to let it decide, or review by hand" in rule["sentence"]
    )
    assert "(clustered-paired-melded, approximate)" in rule["sentence"]


def test_the_guard_on_a_grouped_set_does_not_pass_when_approximate_methods_are_allowed(project: Project) -> None:
    build(project, policy_extra=APPROXIMATE)
    code, rule = gate(project)
    # Two documents regressed whole: the variance rests on them (df 5), and a drop of 0.10 is inside.
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and rule["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert rule["interval"]["low"] == pytest.approx(-0.2293753375, abs=1e-9)
    assert rule["interval"]["high"] == pytest.approx(0.1184495348, abs=1e-9)
    assert rule["reasons"][0] == "interval_straddles_threshold"
    assert "; add groups to settle it." in rule["sentence"]


def test_the_guard_on_a_grouped_set_passes_with_its_caveat_when_nothing_moved(project: Project) -> None:
    build(project, policy_extra=APPROXIMATE, new_wrong=0)
    code, rule = gate(project)
    assert code == ExitCode.PASS and rule["interval"]["method"] == "clustered-paired-melded"
    # The caveat is its own sentence, listed apart for the reports to show under the table (issue 17 audit).
    [said] = rule["caveats"]
    assert said.startswith("The clustered paired interval is approximate: with groups of very unequal size")
    assert rule["sentence"].endswith(said)


def test_a_large_drop_on_a_grouped_set_still_fails(project: Project) -> None:
    build(project, policy_extra=APPROXIMATE, new_wrong=100)
    code, rule = gate(project)
    assert code == ExitCode.FAIL and rule["interval"]["high"] < -0.10


def test_fewer_than_30_groups_go_to_review_even_when_approximate_methods_are_allowed(project: Project) -> None:
    build(project, per_group=20, policy_extra=APPROXIMATE, new_wrong=0)  # 10 documents, nothing moved
    code, rule = gate(project)
    assert code == ExitCode.MANUAL_REVIEW
    assert "few_clusters" in rule["reasons"]
    assert "with 10 groups, fewer than 30, the clustered paired interval is not trustworthy" in rule["sentence"]


def test_missing_outputs_on_a_grouped_set_are_not_sent_to_review(project: Project) -> None:
    build(project, new_missing=5)
    code, rule = gate(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert {"missing_outputs", "approximate_method"} <= set(rule["reasons"])
    assert "a manual review needs every output" in rule["sentence"]


def test_compare_on_a_grouped_set_is_clustered_wider_and_never_passes_under_an_exact_policy(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project)
    capsys.readouterr()
    code, data = compare(project, "--max-drop", "0.10")
    text = capsys.readouterr().out
    paired = data["paired"]
    assert paired["exact"] is None  # no exact paired interval applies to grouped cases
    assert paired["approximate"]["method"] == "clustered-paired-melded" and paired["approximate"]["approximate"] is True
    assert paired["approximate"]["low"] == pytest.approx(-0.2293753375, abs=1e-9)
    assert paired["clustered"]["groups"] == 40 and paired["clustered"]["df"] == 5.0
    assert code == ExitCode.MANUAL_REVIEW and data["decision"]["verdict"] == "MANUAL_REVIEW"
    assert "approximate_method" in data["decision"]["reasons"]
    assert "95% [-22.9, +11.8] (clustered-paired-melded, approximate) on 40 groups" in text
    assert "no exact paired interval applies" in text
    assert "fay-lumbard-melded" not in text


def test_compare_on_the_same_outputs_without_groups_is_exact_and_narrower(project: Project) -> None:
    build(project, per_group=None)
    code, data = compare(project, "--max-drop", "0.10")
    assert code == ExitCode.PASS and data["paired"]["clustered"] is None
    assert data["paired"]["exact"]["low"] == pytest.approx(-0.0900275377, abs=1e-9)


def test_compare_on_a_grouped_set_decides_when_approximate_methods_are_allowed(project: Project) -> None:
    build(project, policy_extra=APPROXIMATE, new_wrong=0)
    code, data = compare(project, "--max-drop", "0.10")
    assert code == ExitCode.PASS and data["decision"]["reasons"][0] == "interval_clears_threshold"
    assert data["decision"]["sentence"] == "the lower bound -0.019 shows a drop of at most 0.1"
    [said] = data["decision"]["caveats"]
    assert said.endswith(
        "the guard's false-PASS rate was measured at up to 4% (where groups are few by count or by size the gate does "
        "not decide) against a nominal 2.5%."
    )
    # Nothing moved: the clustered interval has no spread; the melded one on 200 cases is its floor.
    assert data["paired"]["approximate"]["low"] == pytest.approx(-0.0192186006, abs=1e-9)
    build(project, policy_extra=APPROXIMATE)
    code, data = compare(project, "--max-drop", "0.10")
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and data["decision"]["sentence"].endswith("; add groups to settle it")


def test_the_json_of_a_grouped_comparison_is_one_shape(project: Project, tmp_path: Path) -> None:
    build(project)
    _, data = compare(project)
    assert set(data["paired"]["clustered"]) == {"groups", "groups_by_size", "se", "df", "n_eff", "few_clusters"}
    assert data["paired"]["clustered"]["few_clusters"] is False
