"""judge: a real grading command, trusted only when it agrees with human labels (SPEC §3.5).

The system is the echo fixture; the judge is tests/fixtures/judge_system.py, which grades each
case with its input's ``judge_says``. Human grades go in data/labels.jsonl.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from oloproof.errors import ExitCode
from oloproof.stats.binomial import clopper_pearson
from oloproof.stats.bounded import bounded_mean_betting, order_seed
from tests.conftest import FIXTURES, Project, config_error, judge_label, report

JUDGE = FIXTURES / "judge_system.py"
JUDGES_POLICY = "  judges: {min_agreement: 0.8, min_labels: 20}\n"
JUDGED_RULE = "  - {id: judged, criterion: judge_pass, min: 0.8}"


def ids(indices: range | list[int]) -> list[str]:
    return [f"c{i:02d}" for i in indices]


# A judge that agrees with people on 120 labelled cases, 12 of which people fail: enough fails
# for even a perfect judge to show min_fail_agreement 0.7 (it needs 11: 0.025 ** (1/11) = 0.715).
TRUSTED_SAYS = [True] * 108 + [False] * 12


def judge_project(
    project: Project,
    says: list[Any],
    humans: dict[int, Any],
    *,
    judge_args: list[str] | None = None,
    judge_options: str = "",
    system_args: str = "",
    rules: str = JUDGED_RULE,
    case_extra: dict[str, Any] | None = None,
) -> Project:
    """Cases c00, c01, ... whose judge grade is says[i]; humans maps case index -> human grade."""
    cases = [
        {"id": f"c{i:02d}", "answer": 1, "judge_says": grade, "expected": {"label": 1}, **(case_extra or {})}
        for i, grade in enumerate(says)
    ]
    labels = project.root / "data" / "labels.jsonl"
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text("".join(json.dumps(judge_label(f"c{i:02d}", g)) + "\n" for i, g in humans.items()), encoding="utf-8")
    command = json.dumps([sys.executable, str(JUDGE), *(judge_args or [])])
    return project.write(
        cases=cases, system_args=system_args, policy_extra=JUDGES_POLICY, rules=rules,
        evaluators=f"  - {{type: judge, command: {command}, labels: data/labels.jsonl{judge_options}}}",
    )




# ---------------------------------------------------------------------------------------------
# A trusted judge decides its rule


def test_trusted_judge_passes_its_rule(project: Project) -> None:
    # 120 labels, all agreed: Clopper-Pearson lower bound 0.025 ** (1/120) = 0.970 >= 0.8; on the
    # 108 human passes 0.025 ** (1/108) = 0.966 and on the 12 human fails 0.025 ** (1/12) = 0.735,
    # both >= 0.7, so the judge is trusted; its grades 108/120 have lower bound 0.832 >= min 0.8.
    judge_project(project, TRUSTED_SAYS, dict(enumerate(TRUSTED_SAYS)))
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["trusted"] is True and judge["why"] == ""
    assert judge["n_labels"] == 120 and judge["n_compared"] == 120
    assert judge["agreement"] == 1.0 and judge["agreement_low"] == pytest.approx(0.025 ** (1 / 120))
    assert judge["n_human_passed"] == 108 and judge["pass_agreement_low"] == pytest.approx(0.025 ** (1 / 108))
    assert judge["n_human_failed"] == 12 and judge["fail_agreement_low"] == pytest.approx(0.025 ** (1 / 12))
    assert judge["min_pass_agreement"] == judge["min_fail_agreement"] == 0.7  # the defaults
    assert judge["kappa"] == pytest.approx(1.0)
    rule = data["rules"][0]
    assert rule["verdict"] == "PASS" and rule["reasons"] == ["interval_clears_threshold"]
    assert rule["passes"] == 108
    assert data["criteria"]["judge_pass"]["failed_ids"] == ids(range(108, 120))
    assert code == ExitCode.PASS


def test_trusted_judge_fails_its_rule(project: Project) -> None:
    says = [True] * 12 + [False] * 28
    judge_project(project, says, dict(enumerate(says)))
    code, data = report(project)
    assert data["criteria"]["judge_pass"]["details"]["judge"]["trusted"] is True
    rule = data["rules"][0]
    assert rule["verdict"] == "FAIL" and rule["reasons"] == ["interval_misses_threshold"]
    assert rule["passes"] == 12
    assert code == ExitCode.FAIL


def test_judge_and_people_using_one_grade_throughout_leave_kappa_undefined_and_the_judge_untrusted(project: Project) -> None:
    # Kappa is (p_o - p_e) / (1 - p_e) with p_e = 1 here: undefined, reported as null. Raw
    # agreement (40/40) is still measured, but nothing shows the judge can fail a case.
    judge_project(project, [1] * 41, {i: 1 for i in range(40)})  # one case unlabelled: the judge is needed
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["agreement"] == 1.0
    assert judge["kappa"] is None and judge["kappa_low"] is None and judge["kappa_high"] is None
    assert judge["n_human_failed"] == 0 and judge["fail_agreement"] is None and judge["more_human_failed_needed"] == 11
    assert judge["trusted"] is False
    assert judge["why"] == (
        "only 0 of the 40 labelled cases are ones people failed; even a judge that fails every one of them needs 11 such "
        "labels to show that it fails at least 70% of what people fail: label at least 11 more case(s) that people fail"
    )
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_judge_that_always_says_pass_is_not_trusted(project: Project) -> None:
    # Issue 10: people fail 10 of 200 labelled cases; a judge that passes everything agrees on
    # 95% of them (kappa 0, lower bound 0.910 >= min_agreement 0.8 here) and would pass every
    # release. On the 10 cases people failed it agrees on none.
    humans = {i: i >= 10 for i in range(200)}
    judge_project(project, [True] * 201, humans)  # one case unlabelled: the judge is needed
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["agreement"] == pytest.approx(0.95) and judge["agreement_low"] > 0.9
    assert judge["kappa"] == pytest.approx(0.0, abs=1e-12)
    assert judge["n_human_failed"] == 10 and judge["fail_agreement"] == 0.0
    assert judge["fail_agreement_high"] == pytest.approx(clopper_pearson(0, 10, confidence=0.95).high)
    assert judge["trusted"] is False
    assert judge["why"] == (
        "only 10 of the 200 labelled cases are ones people failed; even a judge that fails every one of them needs 11 such "
        "labels to show that it fails at least 70% of what people fail: label at least 1 more case(s) that people fail"
    )
    assert data["rules"][0]["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_judge_that_always_says_pass_stays_untrusted_with_many_human_fails(project: Project) -> None:
    # 40 of 400 labels failed by people: now there are enough to measure, and the judge fails
    # none of them (0/40, upper bound 0.088).
    humans = {i: i >= 40 for i in range(400)}
    judge_project(project, [True] * 401, humans)  # one case unlabelled: the judge is needed
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["agreement"] == pytest.approx(0.9) and judge["trusted"] is False
    assert "more_human_failed_needed" not in judge
    assert judge["why"] == (
        "judge fails 0 of the 40 labelled cases people failed (0.0%), but the lower bound 0.0% is below min_fail_agreement 70%"
    )
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_judge_that_always_says_fail_is_not_trusted(project: Project) -> None:
    # The mirror image: people pass 12 of 200 cases, the judge fails everything.
    humans = {i: i < 12 for i in range(200)}
    judge_project(project, [False] * 200, humans)
    _, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["agreement"] == pytest.approx(0.94) and judge["trusted"] is False
    assert judge["why"] == (
        "judge passes 0 of the 12 labelled cases people passed (0.0%), but the lower bound 0.0% is below min_pass_agreement 70%"
    )


def test_class_agreement_thresholds_come_from_the_policy(project: Project) -> None:
    # With min_fail_agreement 0.5 six human fails suffice for a judge that gets them all right
    # (0.025 ** (1/6) = 0.541); at the default 0.7 they do not.
    says = [True] * 60 + [False] * 6
    judge_project(project, says, dict(enumerate(says)), rules="  - {id: judged, criterion: judge_pass, min: 0.7}")
    _, data = report(project)
    assert data["criteria"]["judge_pass"]["details"]["judge"]["more_human_failed_needed"] == 5
    policy = project.root / "release.yaml"
    policy.write_text(policy.read_text().replace("min_labels: 20}", "min_labels: 20, min_fail_agreement: 0.5}"))
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["min_fail_agreement"] == 0.5 and judge["trusted"] is True
    assert code == ExitCode.PASS


@pytest.mark.parametrize("key", ["min_pass_agreement", "min_fail_agreement"])
@pytest.mark.parametrize("value", ["0", "1.5", "'high'"])
def test_class_agreement_keys_are_checked(
    key: str, value: str, project: Project, run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    judge_project(project, [True] * 3, {0: True})
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace("min_labels: 20}", f"min_labels: 20, {key}: {value}}}"))
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err.startswith("oloproof: error: release.yaml:") and f"policy.judges.{key}: " in err


# ---------------------------------------------------------------------------------------------
# An untrusted judge decides nothing


def test_too_few_labels_make_the_judge_untrusted(project: Project) -> None:
    # The judge would pass the rule (40/40), and agrees with all 10 labels, but 10 < min_labels 20.
    judge_project(project, [True] * 40, {i: True for i in range(10)})
    code, data = report(project)
    criterion = data["criteria"]["judge_pass"]
    judge = criterion["details"]["judge"]
    assert judge["trusted"] is False and judge["n_labels"] == 10 and judge["min_labels"] == 20
    # Every shortfall is named, joined by "; ": 10/10 has lower bound 0.025 ** (1/10) = 0.692,
    # below min_agreement 0.8, and 10 human passes are too few to show 70%.
    assert judge["why"] == (
        "only 10 labelled case(s) compared; the policy needs at least 20 before a judge can be trusted; "
        "judge agrees with people on 100.0% of 10 labelled cases, but the lower bound 69.2% is below min_agreement 80%; "
        "only 10 of the 10 labelled cases are ones people passed; even a judge that passes every one of them needs 11 such "
        "labels to show that it passes at least 70% of what people pass: label at least 1 more case(s) that people pass; "
        "only 0 of the 10 labelled cases are ones people failed; even a judge that fails every one of them needs 11 such "
        "labels to show that it fails at least 70% of what people fail: label at least 11 more case(s) that people fail"
    )
    assert criterion["reasons"] == ["judge_untrusted"]
    rule = data["rules"][0]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "judge_untrusted" in rule["reasons"]
    assert "the evidence is invalid (judge_untrusted)" in rule["sentence"]
    assert data["problems"] == [f"evaluators[0] (judge): {judge['why']}"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_enough_labels_but_low_agreement_make_the_judge_untrusted(project: Project) -> None:
    # Judge passes c00-c29, people pass c00-c25 and c30-c33: they agree on 32 of 40.
    says = [True] * 30 + [False] * 10
    humans = {i: (i < 26 or 30 <= i < 34) for i in range(40)}
    judge_project(project, [*says, True], humans)  # one case unlabelled: the judge is needed
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    # Reference: 2x2 table judge x people = [[26, 4], [4, 6]] / 40;
    # p_o = 32/40 = 0.8, p_e = 0.75*0.75 + 0.25*0.25 = 0.625, kappa = 0.175/0.375 = 7/15.
    expected_agreement = clopper_pearson(32, 40, confidence=0.95)
    assert judge["n_compared"] == 40
    assert judge["agreement"] == pytest.approx(0.8)
    assert judge["agreement_low"] == pytest.approx(expected_agreement.low)
    assert judge["agreement_high"] == pytest.approx(expected_agreement.high)
    assert judge["agreement_low"] < 0.8 < judge["agreement_high"]
    assert judge["kappa"] == pytest.approx(7 / 15)
    assert -1 <= judge["kappa_low"] < 7 / 15 < judge["kappa_high"] <= 1
    assert judge["trusted"] is False
    # On the 30 cases people passed the judge passes 26: lower bound 0.693 < 0.7; the 10 they
    # failed are too few to show 70% at all.
    on_passes = clopper_pearson(26, 30, confidence=0.95)
    assert judge["pass_agreement"] == pytest.approx(26 / 30) and judge["pass_agreement_low"] == pytest.approx(on_passes.low)
    assert judge["n_human_failed"] == 10 and judge["fail_agreement"] == pytest.approx(0.6)
    assert judge["why"] == (
        f"judge agrees with people on 80.0% of 40 labelled cases, but the lower bound {expected_agreement.low:.1%} "
        "is below min_agreement 80%; "
        f"judge passes 26 of the 30 labelled cases people passed (86.7%), but the lower bound {on_passes.low:.1%} is below "
        "min_pass_agreement 70%; "
        "only 10 of the 40 labelled cases are ones people failed; even a judge that fails every one of them needs 11 such "
        "labels to show that it fails at least 70% of what people fail: label at least 1 more case(s) that people fail"
    )
    rule = data["rules"][0]
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and "judge_untrusted" in rule["reasons"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_agreement_is_measured_at_the_pass_threshold(project: Project) -> None:
    # Scores on both sides: judge 0.6 vs person 0.9 agree at threshold 0.5 (both pass) but
    # disagree at threshold 0.7 (judge fails, person passes).
    says = [0.6] * 40
    humans = {i: 0.9 for i in range(40)}
    judge_project(project, says, humans)
    _, data = report(project)
    assert data["criteria"]["judge_pass"]["details"]["judge"]["agreement"] == 1.0
    judge_project(project, says, humans, judge_options=", pass_threshold: 0.7")
    _, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["agreement"] == 0.0 and judge["trusted"] is False


# ---------------------------------------------------------------------------------------------
# A judge that misbehaves


def test_judge_that_crashes_fails_and_leaves_cases_missing(project: Project) -> None:
    says = [True] * 40
    # One case unlabelled, so the judge is needed (people grading every case would decide alone).
    judge_project(project, [*says, True], dict(enumerate(says)), judge_args=["--crash-after", "5"])
    code, data = report(project)
    criterion = data["criteria"]["judge_pass"]
    assert criterion["missing_ids"] == ids(range(5, 41))
    assert criterion["notes"]["c05"].startswith("judge: ") and "exited with status 3" in criterion["notes"]["c05"]
    assert set(criterion["notes"]) == set(ids(range(5, 41)))
    assert "judge_failed" in criterion["reasons"]
    # The 35 labelled cases it was shown but never graded count as disagreements: untrusted.
    judge = criterion["details"]["judge"]
    assert judge["n_compared"] == 40 and judge["ungraded_labelled"] == 35 and "judge_untrusted" in criterion["reasons"]
    rule = data["rules"][0]
    assert {"judge_failed", "missing_outputs", "judge_untrusted"} <= set(rule["reasons"])
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE
    assert any(problem.startswith("evaluators[0] (judge): the judge command failed (batch 1: ") for problem in data["problems"])


def test_judge_that_hangs_is_killed_at_its_timeout(project: Project) -> None:
    says = [True] * 30
    # One case unlabelled, so the judge is needed (people grading every case would decide alone).
    judge_project(project, [*says, True], dict(enumerate(says)), judge_args=["--hang"], judge_options=", timeout_s: 1")
    code, data = report(project)
    criterion = data["criteria"]["judge_pass"]
    assert criterion["missing_ids"] == ids(range(31))
    assert criterion["notes"]["c00"] == "judge: timed out after 1 s"
    assert "judge_failed" in criterion["reasons"]
    assert data["rules"][0]["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_judge_grades_that_are_not_grades_leave_cases_missing(project: Project) -> None:
    says: list[Any] = [True] * 40
    says[4], says[5], says[6] = 1.5, "pass", None
    judge_project(project, says, dict.fromkeys(range(40), True), judge_args=["--bad-grade", "c03"])
    _, data = report(project)
    criterion = data["criteria"]["judge_pass"]
    assert criterion["missing_ids"] == ids([3, 4, 5, 6])
    assert criterion["notes"] == {
        case_id: "judge: 'grade' must be true/false or a number in [0, 1]" for case_id in ids([3, 4, 5, 6])
    }
    assert "missing_outputs" in data["rules"][0]["reasons"]


def test_judge_command_that_does_not_exist_is_a_config_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_project(project, [True] * 3, {0: True})
    release = project.root / "release.yaml"
    text = release.read_text()
    release.write_text(text.replace(json.dumps([sys.executable, str(JUDGE)]), "oloproof-no-such-judge"))
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: release.yaml:8: evaluators[0].command: command not found: 'oloproof-no-such-judge'\n"


# ---------------------------------------------------------------------------------------------
# The labels file


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            ['{"id": "c00", "grade": true}', '{"id": "c01", "grade": true}', '{"id": "zz", "grade": true}'],
            "data/labels.jsonl:3: label for unknown case id 'zz' (not in data/test.jsonl)",
        ),
        (
            ['{"id": "c00", "grade": true}', "", '{"id": "c00", "grade": false}'],
            "data/labels.jsonl:3: duplicate label for case 'c00' (first on line 1)",
        ),
        (
            ['{"id": "c00", "grade": true}', '{"id": "c01", "grade": "good"}'],
            "data/labels.jsonl:2: 'grade' must be true/false or a number in [0, 1]",
        ),
        (
            ['{"id": "c00", "grade": 2}'],
            "data/labels.jsonl:1: 'grade' must be true/false or a number in [0, 1]",
        ),
        (
            ['{"case": "c00", "grade": 1}'],
            "data/labels.jsonl:1: each label needs a string 'id'",
        ),
        (
            ['{"id": "c00", "grade": 1}', "[1, 2]"],
            "data/labels.jsonl:2: expected a JSON object, got an array",
        ),
    ],
    ids=["unknown-id", "duplicate", "bad-grade", "grade-out-of-range", "no-id", "not-an-object"],
)
def test_bad_labels_file_is_a_data_error_naming_the_line_before_the_judge_runs(
    lines: list[str], message: str, project: Project, run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = project.root / "judge-stdin.jsonl"
    judge_project(project, [True] * 3, {}, judge_args=["--record", str(record)])
    (project.root / "data" / "labels.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == f"oloproof: error: {message}\n"
    assert not record.exists()  # the judge was never called


def test_missing_labels_file_is_an_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    judge_project(project, [True] * 3, {})
    (project.root / "data" / "labels.jsonl").unlink()
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert err == "oloproof: error: data/labels.jsonl: file not found\n"


# ---------------------------------------------------------------------------------------------
# Score grades


def test_fractional_grades_are_binarised_at_the_pass_threshold(project: Project) -> None:
    # Issue 17: a rule on a judge criterion is about people's pass rate unless it says
    # measure: mean_grade. Every case is labelled here, so people's 60/72 decide (Clopper–Pearson).
    says = [0.9, 0.95, 1.0, 0.85, 0.7, 0.2] * 12  # 12 cases people fail (0.2), as trust needs
    humans = {i: grade >= 0.5 for i, grade in enumerate(says)}
    judge_project(project, says, humans, rules="  - {id: judged, criterion: judge_pass, min: 0.6}")
    code, data = report(project)
    criterion = data["criteria"]["judge_pass"]
    assert criterion["kind"] == "score" and criterion["missing"] == 0
    assert criterion["details"]["judge"]["trusted"] is True
    rule = data["rules"][0]
    reference = clopper_pearson(60, 72, confidence=0.95)
    assert rule["interval"]["method"] == "clopper-pearson" and rule["interval"]["approximate"] is False
    assert rule["interval"]["estimate"] == pytest.approx(60 / 72) and rule["passes"] == 60
    assert rule["interval"]["low"] == pytest.approx(reference.low) and rule["interval"]["high"] == pytest.approx(reference.high)
    assert rule["verdict"] == "PASS" and code == ExitCode.PASS


def test_a_mean_grade_rule_with_every_case_labelled_uses_the_betting_interval_on_people_s_grades(project: Project) -> None:
    says = [0.9, 0.95, 1.0, 0.85, 0.7, 0.2] * 12
    humans = {i: round(grade - 0.05, 2) for i, grade in enumerate(says)}  # people grade a little lower
    judge_project(project, says, humans, rules="  - {id: judged, criterion: judge_pass, min: 0.6, measure: mean_grade}")
    code, data = report(project)
    rule = data["rules"][0]
    seed = order_seed(data["testset"]["digest"])
    reference = bounded_mean_betting(np.array(list(humans.values())), confidence=0.95, seed=seed)
    assert rule["details"]["seed"] == seed and f"seed {seed})" in rule["sentence"]
    assert rule["interval"]["method"] == reference.method == "betting-wsr"
    assert rule["interval"]["estimate"] == pytest.approx(np.mean(says) - 0.05)
    assert rule["interval"]["low"] == pytest.approx(reference.low) and rule["interval"]["high"] == pytest.approx(reference.high)
    assert rule["verdict"] == "PASS" and code == ExitCode.PASS


def test_grades_with_missing_cases_count_them_against_the_lower_bound(project: Project) -> None:
    # 33 graded (0.9, 0.7, 0.1, ...) before the judge crashes, 9 ungraded. The 33 agree with people
    # (33 >= min_labels 20, lower bound 0.025 ** (1/33) = 0.894 >= 0.8; 11 of them people fail,
    # 0.025 ** (1/11) = 0.715 >= 0.7), so the judge is trusted. Only the 33 are labelled, so the
    # double-sampling interval decides, the 9 ungraded cases in the judge-fail stratum for the lower
    # bound and the judge-pass one for the upper: it reaches below the 22/42 that counts them as
    # failures and above the 31/42 that counts them as passes.
    says = [0.9, 0.7, 0.1] * 14
    humans = {i: says[i] >= 0.5 for i in range(33)}
    judge_project(project, says, humans, judge_args=["--crash-after", "33"], rules="  - {id: judged, criterion: judge_pass, min: 0.6}")
    code, data = report(project)
    assert data["criteria"]["judge_pass"]["kind"] == "score"
    assert data["criteria"]["judge_pass"]["details"]["judge"]["trusted"] is True
    rule = data["rules"][0]
    assert rule["missing"] == 9 and {"judge_failed", "missing_outputs"} <= set(rule["reasons"])
    assert rule["interval"]["method"] == "judge-double-sampling-clopper-pearson-bonferroni"
    assert rule["interval"]["approximate"] is False
    assert rule["interval"]["low"] < 22 / 42 and rule["interval"]["high"] > 31 / 42
    assert rule["verdict"] == "INSUFFICIENT_EVIDENCE" and code == ExitCode.INSUFFICIENT_EVIDENCE


def test_binary_grades_as_0_and_1_keep_a_binary_criterion(project: Project) -> None:
    says = [1, 0, 1.0, 0.0] * 10
    judge_project(project, says, dict(enumerate(says)))
    _, data = report(project)
    assert data["criteria"]["judge_pass"]["kind"] == "binary"
    assert data["rules"][0]["interval"]["method"] == "clopper-pearson"


# ---------------------------------------------------------------------------------------------
# What a judge is shown


def test_judge_receives_only_id_input_output_expected_for_answered_cases(project: Project) -> None:
    record = project.root / "judge-stdin.jsonl"
    says = [True] * 12
    judge_project(
        project, says, dict(enumerate(says)), judge_args=["--record", str(record)], judge_options=", batch_size: 5",
        system_args="--drop c03", case_extra={"stratum": "north", "question": "2+2?"},
    )
    report(project)
    requests = [json.loads(line) for line in record.read_text().splitlines()]
    answered = [case_id for case_id in ids(range(12)) if case_id != "c03"]
    assert [request["id"] for request in requests] == answered  # in order, in batches of 5
    for request in requests:
        assert set(request) == {"id", "input", "output", "expected"}
        assert request["input"] == {"answer": 1, "judge_says": True, "question": "2+2?"}
        assert request["output"] == {"id": request["id"], "label": 1}
        assert request["expected"] == {"label": 1}


def test_judge_is_run_from_the_release_directory(project: Project) -> None:
    # A relative labels path and a relative judge script both resolve next to release.yaml.
    (project.root / "judges").mkdir()
    (project.root / "judges" / "grade.py").write_text(JUDGE.read_text(), encoding="utf-8")
    judge_project(project, TRUSTED_SAYS, dict(enumerate(TRUSTED_SAYS)))
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace(json.dumps(str(JUDGE)), '"judges/grade.py"'))
    code, data = report(project)
    assert data["criteria"]["judge_pass"]["details"]["judge"]["trusted"] is True
    assert code == ExitCode.PASS


def test_a_judge_cannot_earn_trust_by_skipping_the_cases_it_would_get_wrong(project: Project) -> None:
    # 120 labels, 30 of them "fail". The judge says pass everywhere but answers nothing for
    # exactly those 30: counted as disagreements, agreement is 90/120, far below 0.9.
    says: list[object] = [True] * 120
    labels = {i: i >= 30 for i in range(120)}
    judge_project(project, says, labels, judge_args=[*(arg for i in range(30) for arg in ("--skip", f"c{i:02d}"))])
    code, data = report(project)
    judge = data["criteria"]["judge_pass"]["details"]["judge"]
    assert judge["ungraded_labelled"] == 30 and judge["n_compared"] == 120
    assert judge["agreement"] == pytest.approx(90 / 120)
    assert judge["trusted"] is False and code == ExitCode.INSUFFICIENT_EVIDENCE
