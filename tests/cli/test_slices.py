"""Rules over a subset of cases (where:) and per slice (per:), through the CLI (issue 18 §1-2).

On main before this change every ``where:``/``per:`` rule was refused as an unknown key (exit 2),
so each test here failed there.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any

import pytest

from oloproof.errors import ExitCode
from oloproof.stats.holm import holm_reject, row_p_values
from tests.conftest import Project, config_error, report

SPECIES = ("Adelie", "Chinstrap", "Gentoo")


def penguins(n_per: int = 60, wrong: dict[str, int] | None = None, strata: int = 3) -> list[dict[str, Any]]:
    """``n_per`` cases per species; the first ``wrong[species]`` of each are answered as the next
    species (the echo system answers the case's ``answer``)."""
    wrong = wrong or {}
    cases = []
    for s_index, species in enumerate(SPECIES):
        for i in range(n_per):
            answer = SPECIES[(s_index + 1) % 3] if i < wrong.get(species, 0) else species
            cases.append(
                {
                    "id": f"{species[:2]}{i:03d}",
                    "answer": answer,
                    "stratum": f"island{i % strata}",
                    "expected": {"label": species},
                }
            )
    return cases


def rules_of(code: int, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rule["id"]: rule for rule in data["rules"]}


def test_recall_and_precision_on_one_class_decide_on_their_subsets(project: Project) -> None:
    # 60 Chinstrap, 6 of them called Gentoo; 3 Adelie called Chinstrap.
    project.write(
        cases=penguins(wrong={"Chinstrap": 6, "Adelie": 3}),
        rules="    - {id: recall, criterion: correct, min: 0.7, where: {expected.label: Chinstrap}}\n"
        "    - {id: precision, criterion: correct, min: 0.7, where: {output.label: Chinstrap}}",
    )
    code, data = report(project)
    assert code == ExitCode.PASS
    rules = rules_of(code, data)
    recall, precision = rules["recall"], rules["precision"]
    assert (recall["n"], recall["passes"]) == (60, 54)  # 54/60 Chinstrap found
    assert (precision["n"], precision["passes"]) == (57, 54)  # 54 right of 57 called Chinstrap
    assert recall["sentence"].startswith("On 60 of 180 cases where expected.label = Chinstrap: correct is 0.900")
    assert precision["sentence"].startswith("On 57 of 180 cases where output.label = Chinstrap: correct is 0.947")
    assert precision["details"]["subset"] == {
        "where": {"output.label": ["Chinstrap"]},
        "n": 57,
        "of": 180,
        "unanswered": 0,
    }
    # The interval is the exact Clopper-Pearson one on the subset (scipy: beta.ppf(0.025, 54, 7)).
    assert recall["interval"]["low"] == pytest.approx(0.79494226, abs=1e-8)


def test_precision_does_not_select_unanswered_cases_and_says_how_many(project: Project) -> None:
    cases = penguins(wrong={"Chinstrap": 0})
    project.write(
        cases=cases,
        system_args="--drop Ch000 --drop Ch001 --drop Ad000",
        rules="    - {id: precision, criterion: correct, min: 0.7, where: {output.label: Chinstrap}}",
    )
    _, data = report(project)
    rule = data["rules"][0]
    assert rule["n"] == 58 and rule["missing"] == 0
    assert rule["details"]["subset"]["unanswered"] == 3
    assert (
        "3 case(s) without an output (or without the key selected on) are not selected: a system that does not "
        "answer shrinks this denominator." in rule["sentence"]
    )


def test_json_type_difference_selects_nothing_and_says_so(project: Project) -> None:
    cases = [{"id": f"c{i}", "answer": 1, "expected": {"label": 1}} for i in range(40)]
    project.write(cases=cases, rules="    - {id: ones, criterion: correct, min: 0.8, where: {expected.label: '1'}}")
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert rule["reasons"] == ["no_selected_cases"]
    assert rule["sentence"] == (
        'correct: no case is selected by where: expected.label = "1" (expected.label holds 1 (a number) on 40 '
        'case(s), but the rule asks for "1" (a string): values match by JSON type, so write 1 in where:), so there '
        "is no evidence either way."
    )


def test_several_keys_are_and_and_a_list_is_in(project: Project) -> None:
    project.write(
        cases=penguins(),
        rules="    - {id: two, criterion: correct, min: 0.5, where: {expected.label: [Adelie, Gentoo], "
        "stratum: island0}}",
    )
    _, data = report(project)
    rule = data["rules"][0]
    assert rule["n"] == 40  # 20 + 20 of island0
    assert rule["sentence"].startswith(
        "On 40 of 180 cases where expected.label in (Adelie, Gentoo) and stratum = island0"
    )


@pytest.mark.parametrize(
    ("where", "key_path", "message"),
    [
        (
            "{expected.lable: Chinstrap}",
            "policy.rules[0].where.expected.lable",
            "no case of data/test.jsonl has 'expected.lable' (did you mean 'expected.label'?): such a key would "
            "select no case",
        ),
        ("{stratun: a}", "policy.rules[0].where.stratun", "no case of data/test.jsonl has 'stratun' (did you mean "),
        ("{group: a}", "policy.rules[0].where.group", "no case of data/test.jsonl has 'group'"),
        ("{expected.: a}", "policy.rules[0].where.expected.", "'expected.' names no key"),
        ("{}", "policy.rules[0].where", "where: needs at least one key"),
        ("{expected.label: null}", "policy.rules[0].where.expected.label", "expected a string, number or boolean"),
    ],
)
def test_a_key_no_case_has_is_a_config_error_naming_file_line_and_key(
    project: Project,
    run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    key_path: str,
    message: str,
) -> None:
    project.write(cases=penguins(n_per=5), rules=f"    - {{id: r, criterion: correct, min: 0.8, where: {where}}}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert f"release.yaml:12: {key_path}: " in err
    assert message in err


def test_an_output_key_no_output_has_is_a_config_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=penguins(n_per=5), rules="    - {id: r, criterion: correct, min: 0.8, where: {output.lable: x}}"
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        "release.yaml:12: policy.rules[0].where.output.lable: no output of the run has 'lable' (did you mean "
        "'label'?) (they have: label): the rule would select no case" in err
    )


def test_a_subset_too_small_to_ever_pass_says_so(project: Project) -> None:
    project.write(
        cases=penguins(n_per=20),
        rules="    - {id: r, criterion: correct, min: 0.9, where: {expected.label: Gentoo}}",
    )
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert "set_too_small" in rule["reasons"]
    assert "even a perfect result needs at least 36 cases, it has 20." in rule["sentence"]


def test_every_report_names_the_subset(project: Project) -> None:
    project.write(
        cases=penguins(n_per=20),
        rules="    - {id: r, criterion: correct, min: 0.9, where: {expected.label: Gentoo}}",
    )
    md, junit = project.root / "s.md", project.root / "j.xml"
    project.cli("gate", "--markdown", str(md), "--junit", str(junit))
    assert "on 20 of 60 cases where expected.label = Gentoo" in md.read_text()
    failure = ET.parse(junit).getroot().find("testcase/failure")
    assert failure is not None and "On 20 of 60 cases where expected.label = Gentoo" in failure.get("message", "")


def _rows(data: dict[str, Any]) -> list[dict[str, Any]]:
    return list(data["rules"][0]["details"]["rows"])


def test_per_gives_one_row_per_value_with_holm_and_the_worst_row_decides(project: Project) -> None:
    cases = penguins(n_per=60, wrong={"Gentoo": 30})
    project.write(cases=cases, rules="    - {id: per_species, criterion: correct, min: 0.8, per: expected.label}")
    code, data = report(project)
    assert code == ExitCode.FAIL
    rule = data["rules"][0]
    rows = _rows(data)
    assert [(row["label"], row["n"], row["passes"], row["verdict"]) for row in rows] == [
        ("Adelie", 60, 60, "PASS"),
        ("Chinstrap", 60, 60, "PASS"),
        ("Gentoo", 60, 30, "FAIL"),
    ]
    # Holm's rounds: all three tested at 1 - 0.05/3 and decided in the first round.
    assert [row["level"] for row in rows] == [pytest.approx(1 - 0.05 / 3)] * 3
    assert rule["verdict"] == "FAIL" and rule["details"]["fwer"] == "holm"
    assert "per expected.label, Holm's step-down over the 3 rows (fwer: holm;" in rule["sentence"]
    assert "Worst row expected.label = Gentoo" in rule["sentence"]


def test_holm_rows_match_holm_on_the_exact_binomial_p_values(project: Project) -> None:
    # Five strata with different rates: which rows Holm decides is what multipletests(method="holm")
    # rejects on the exact one-sided p-values (the test file tests/stats/test_holm.py pins both).
    cases = []
    right = {0: 58, 1: 52, 2: 46, 3: 30, 4: 59}
    for stratum, good in right.items():
        for i in range(60):
            cases.append(
                {
                    "id": f"s{stratum}-{i}",
                    "answer": 1 if i < good else 0,
                    "stratum": f"s{stratum}",
                    "expected": {"label": 1},
                }
            )
    project.write(cases=cases, rules="    - {id: per, criterion: correct, min: 0.75, per: stratum}")
    _, data = report(project)
    rows = _rows(data)
    claims = [row_p_values(int(r["passes"]), r["n"], threshold=0.75, kind="min") for r in rows]
    assert [r["p_values"] for r in rows] == [{"pass": c.pass_p, "fail": c.fail_p} for c in claims]
    reject = holm_reject([c.p for c in claims], alpha=0.025)  # one side of a 95% two-sided interval
    decided = [r["verdict"] in ("PASS", "FAIL") for r in rows]
    assert decided == list(reject)
    assert [r["verdict"] for r in rows] == ["PASS", "INSUFFICIENT_EVIDENCE", "INSUFFICIENT_EVIDENCE", "FAIL", "PASS"]
    # A row's shown interval is at the level of the last round that tested it.
    assert [r["round"] for r in rows] == [1, 2, 2, 1, 1]
    assert rows[1]["level"] == pytest.approx(1 - 0.05 / 2) and rows[0]["level"] == pytest.approx(1 - 0.05 / 5)


def test_fwer_none_decides_each_row_at_the_policy_level_and_says_so(project: Project) -> None:
    cases = [
        {"id": f"s{s}-{i}", "answer": 1 if i < 54 else 0, "stratum": f"s{s}", "expected": {"label": 1}}
        for s in range(4)
        for i in range(60)
    ]
    project.write(cases=cases, rules="    - {id: per, criterion: correct, min: 0.78, per: stratum, fwer: none}")
    _, holm_free = report(project)
    assert [r["verdict"] for r in _rows(holm_free)] == ["PASS"] * 4
    assert "no family-wise correction (fwer: none)" in holm_free["rules"][0]["sentence"]
    project.write(cases=cases, rules="    - {id: per, criterion: correct, min: 0.78, per: stratum}")
    _, holm = report(project)
    # 54/60: the 95% lower bound 0.795 clears 0.78, the 98.75% one (0.770) does not.
    assert [r["verdict"] for r in _rows(holm)] == ["INSUFFICIENT_EVIDENCE"] * 4


def test_cases_without_the_per_key_are_a_row_of_their_own(project: Project) -> None:
    cases = penguins(n_per=20)
    for case in cases[:7]:
        del case["stratum"]
    project.write(cases=cases, rules="    - {id: per, criterion: correct, min: 0.5, per: stratum}")
    _, data = report(project)
    rows = _rows(data)
    assert rows[-1]["label"] == "(none)" and rows[-1]["value"] is None and rows[-1]["n"] == 7
    assert sum(row["n"] for row in rows) == 60


def test_where_then_per_and_a_slice_left_empty(project: Project) -> None:
    # Slices come from the selected cases: where: picks Gentoo, per: stratum splits it.
    project.write(
        cases=penguins(n_per=30),
        rules="    - {id: r, criterion: correct, min: 0.5, where: {expected.label: Gentoo}, per: stratum}",
    )
    _, data = report(project)
    assert [(row["label"], row["n"]) for row in _rows(data)] == [("island0", 10), ("island1", 10), ("island2", 10)]
    assert data["rules"][0]["sentence"].startswith("On 30 of 90 cases where expected.label = Gentoo: per stratum")


def test_per_on_a_key_naming_cases_is_refused(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i:03d}", "answer": 1, "expected": {"label": 1}} for i in range(500)]
    project.write(cases=cases, rules="    - {id: r, criterion: correct, min: 0.5, per: id}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        "release.yaml:12: policy.rules[0].per: per: id has 500 distinct values in data/test.jsonl (at most 50 "
        "rows): per: names slices (stratum, a class), not cases" in err
    )


@pytest.mark.parametrize(
    ("rule", "key_path", "message"),
    [
        ("{id: r, criterion: correct, min: 0.5, per: output.label}", "per", "per: slices by what the case is"),
        ("{id: r, criterion: correct, min: 0.5, fwer: none}", "fwer", "fwer: applies to the rows of per:"),
        (
            "{id: r, criterion: correct, min: 0.5, per: stratum, fwer: bonferroni}",
            "fwer",
            "expected one of: holm, none",
        ),
        (
            "{id: r, criterion: correct, baseline: 'version:v0', max_drop: 0.05, where: {stratum: a}}",
            "where",
            "where: is not supported on a baseline rule",
        ),
    ],
)
def test_per_and_fwer_spelling_errors(
    project: Project,
    run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    key_path: str,
    message: str,
) -> None:
    project.write(cases=penguins(n_per=5), rules=f"    - {rule}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert f"release.yaml:12: policy.rules[0].{key_path}: " in err and message in err


def test_terminal_and_markdown_show_the_rows(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(
        cases=penguins(n_per=60, wrong={"Gentoo": 30}),
        rules="    - {id: per_species, criterion: correct, min: 0.8, per: expected.label}",
    )
    md = project.root / "s.md"
    capsys.readouterr()
    project.cli("gate", "--markdown", str(md))
    out = capsys.readouterr().out
    assert "per_species: Holm's step-down over the rows (fwer: holm)" in out
    assert (
        "  expected.label = Gentoo: FAIL 0.500 [0.342, 0.658] at 98.33%, n=60" in out
    )  # scipy beta.ppf/isf(0.05/6, 30, 31)
    text = md.read_text()
    assert "### Subsets and slices" in text
    assert (  # the row follows its rule in the rules table (issue 19 §6)
        "| ↳\u00a0<code>Gentoo</code><br><sub>n=60 · 98.33%</sub> | ❌\u00a0FAIL | 0.500 | <code>[0.342,\u00a00.658]</code> |"
    ) in text
    assert json.dumps("Gentoo") not in out  # labels are shown as text, not JSON-quoted


def test_the_seeds_recipe_rule_refuses_where_rather_than_ignoring_it(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=penguins(n_per=5), extra="seeds: seeds.yaml\n")
    (project.root / "seeds.yaml").write_text(
        "recipe: r\ncheckpoints: {a: latest}\nrule: {id: x, criterion: correct, min: 0.5, where: {stratum: island0}}\n"
    )
    assert project.cli("gate") == ExitCode.USAGE
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("seeds.yaml:3: rule.where: where: is not supported on the recipe rule; write it in the policy")
    )


def test_a_score_criterion_is_sliced_with_the_betting_interval(project: Project) -> None:
    cases = [
        {"id": f"c{i}", "answer": 0.95 if i % 2 else 0.4, "stratum": f"s{i % 2}", "expected": {}} for i in range(120)
    ]
    project.write(
        cases=cases,
        system_args="--field quality",
        evaluators="  - {type: score, field: quality}",
        rules="    - {id: per, criterion: score, min: 0.6, per: stratum}",
    )
    code, data = report(project)
    rows = _rows(data)
    assert [(row["label"], row["verdict"]) for row in rows] == [("s0", "FAIL"), ("s1", "PASS")]
    assert all(row["interval"]["method"].startswith("betting") and row["p_values"] is None for row in rows)
    assert code == ExitCode.FAIL


def test_a_grouped_set_is_sliced_with_the_clustered_interval(project: Project) -> None:
    # Whatever measure decides the rule decides it on a slice: the betting interval for scores,
    # the clustered (approximate) one for grouped cases.
    cases = [
        {
            "id": f"c{i}",
            "answer": 1,
            "score": 0.9,
            "stratum": f"s{i % 2}",
            "group": f"g{i // 4}",
            "expected": {"label": 1},
        }
        for i in range(80)
    ]
    project.write(cases=cases, rules="    - {id: per, criterion: correct, min: 0.5, per: stratum}")
    _, data = report(project)
    rows = _rows(data)
    assert [row["n"] for row in rows] == [40, 40]
    assert all(row["interval"]["method"].startswith("clustered") for row in rows)
    assert data["rules"][0]["verdict"] == "MANUAL_REVIEW"  # approximate, not allowed by the policy


@pytest.mark.parametrize(
    ("found", "verdict", "low"), [(210, "PASS", 0.9663386418094126), (205, "INSUFFICIENT_EVIDENCE", 0.9331546127294184)]
)
def test_breast_cancer_style_recall_on_the_malignant_class(
    project: Project, found: int, verdict: str, low: float
) -> None:
    # As in scikit-learn's breast-cancer data: 212 malignant, 357 benign cases. The rule the issue
    # asks for: recall on the malignant class >= 0.95. Bounds: scipy beta.ppf(0.025, found, 212 - found + 1).
    cases = [
        {"id": f"m{i}", "answer": "malignant" if i < found else "benign", "expected": {"label": "malignant"}}
        for i in range(212)
    ] + [{"id": f"b{i}", "answer": "benign", "expected": {"label": "benign"}} for i in range(357)]
    project.write(
        cases=cases,
        rules="    - {id: recall_malignant, criterion: correct, min: 0.95, where: {expected.label: malignant}}",
    )
    _, data = report(project)
    rule = data["rules"][0]
    assert (rule["verdict"], rule["n"], rule["passes"]) == (verdict, 212, found)
    assert rule["interval"]["low"] == pytest.approx(low, abs=1e-12)
    assert rule["sentence"].startswith("On 212 of 569 cases where expected.label = malignant:")


def test_labels_beyond_64_bits_are_selected_exactly_and_reported(project: Project) -> None:
    big = 2**64 + 1
    cases = [{"id": f"c{i}", "answer": big if i % 2 else big - 1, "expected": {"label": big}} for i in range(40)]
    project.write(
        cases=cases,
        rules=f"    - {{id: r, criterion: correct, min: 0.1, where: {{output.label: {big}}}}}\n"
        "    - {id: p, criterion: correct, min: 0.1, per: expected.label}",
    )
    _, data = report(project)
    where, per = data["rules"]
    assert (where["n"], where["passes"]) == (20, 20)  # 2**64 is not 2**64 + 1
    assert where["details"]["subset"]["where"] == {"output.label": [str(big)]}
    assert [row["value"] for row in per["details"]["rows"]] == [str(big)]
    assert data["criteria"]["correct"]["details"]["classification"]["matrix"]["labels"] == [str(big - 1), str(big)]


def test_when_every_row_passes_the_rule_shows_the_row_nearest_to_failing(project: Project) -> None:
    """The rule's headline (estimate, interval) is the row whose bound is closest to the threshold,
    not the first row: a reader of a PASS sees the weakest slice."""
    cases = penguins(n_per=80, wrong={"Chinstrap": 6})
    project.write(cases=cases, rules="    - {id: per_species, criterion: correct, min: 0.7, per: expected.label}")
    code, data = report(project)
    assert code == ExitCode.PASS
    rule = data["rules"][0]
    assert [row["verdict"] for row in _rows(data)] == ["PASS", "PASS", "PASS"]
    assert rule["estimate"] == pytest.approx(74 / 80)
    assert "Worst row expected.label = Chinstrap" in rule["sentence"]


@pytest.mark.parametrize(
    ("where", "message"),
    [
        (
            "{expected.label: [Chinstrap, Chinstarp]}",
            'policy.rules[0].where.expected.label: no case has expected.label = "Chinstarp"; it holds "Adelie" (5), '
            '"Chinstrap" (5), "Gentoo" (5) (in data/test.jsonl): each value of a where: list must select some case, '
            "or it would be left out of the rule unseen",
        ),
        (
            "{stratum: [island0, island9]}",
            'policy.rules[0].where.stratum: no case has stratum = "island9"; it holds',
        ),
        (
            "{expected.label: [Adelie, 1]}",
            "policy.rules[0].where.expected.label: no case has expected.label = 1; it holds",
        ),
    ],
)
def test_a_list_value_that_selects_no_case_is_a_config_error_not_a_smaller_rule(
    project: Project,
    run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    message: str,
) -> None:
    # On main the typo'd class was silently dropped and the rule passed on the other one (18-D1).
    project.write(cases=penguins(n_per=5), rules=f"    - {{id: r, criterion: correct, min: 0.1, where: {where}}}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert f"release.yaml:12: {message}" in err


def test_an_output_list_value_no_output_holds_is_refused_unless_it_is_a_class(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=penguins(n_per=5),
        rules="    - {id: r, criterion: correct, min: 0.1, where: {output.label: [Gentoo, Gentooo]}}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        'release.yaml:12: policy.rules[0].where.output.label: no case has output.label = "Gentooo"; it holds '
        "\"Adelie\" (5), \"Chinstrap\" (5), \"Gentoo\" (5) (in the run's outputs): each value of a where: list"
    ) in err
    # A class the system never predicts (every Gentoo answered as Adelie) is a class, not a typo:
    # precision over the classes listed is still what the rule says.
    project.write(
        cases=penguins(n_per=20, wrong={"Gentoo": 20}),
        rules="    - {id: r, criterion: correct, min: 0.5, where: {output.label: [Chinstrap, Gentoo]}}",
    )
    code, data = report(project)
    assert code == ExitCode.PASS
    assert data["rules"][0]["n"] == 20


@pytest.mark.parametrize(
    ("rules", "rows"),
    [
        ("    - {id: r, criterion: correct, min: 0.5, where: {group: g00}}", None),
        ("    - {id: r, criterion: correct, min: 0.5, where: {expected.label: Adelie}}", None),
        ("    - {id: r, criterion: correct, min: 0.5, per: group}", 3),
    ],
)
def test_a_grouped_subset_in_one_group_is_reviewed_not_a_crash(project: Project, rules: str, rows: int | None) -> None:
    # A grouped test set whose subset (or slice) lies in one group: the clustered interval has one
    # independent unit, so there is none to compute. On main: exit 70, ValueError (18-D2).
    cases = penguins(n_per=40)
    for case in cases:
        case["group"] = {"Ad": "g00", "Ch": "g01", "Ge": "g02"}[case["id"][:2]]
    project.write(cases=cases, rules=rules)
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW
    rule = data["rules"][0]
    found = rule["details"]["rows"] if rows else [rule]
    assert len(found) == (rows or 1)
    for row in found:
        assert row["verdict"] == "MANUAL_REVIEW"
        assert "few_clusters" in row["reasons"]
        assert (
            "correct: its 40 cases lie in one group, so a grouped interval has one independent unit to rest on and "
            "none can be computed (the gate needs at least 30 groups); review by hand."
        ) in row["sentence"]


def test_past_ten_rows_the_sentence_keeps_the_failing_row(project: Project) -> None:
    # 18-D3: with 12 slices the sentence listed the first ten in text order, and the one failing
    # slice (the last by name) was among the rows cut off.
    cases = []
    for s in range(12):
        for i in range(60):
            wrong = s == 11 and i < 40
            cases.append({"id": f"s{s:02d}-{i:02d}", "answer": "no" if wrong else "yes", "stratum": f"s{s:02d}",
                          "expected": {"label": "yes"}})
    project.write(cases=cases, rules="    - {id: r, criterion: correct, min: 0.5, per: stratum}")
    code, data = report(project)
    assert code == ExitCode.FAIL
    sentence = data["rules"][0]["sentence"]
    listed = sentence.split("Rows: ", 1)[1]
    assert listed.count("(n=60)") == 10 and "s11 FAIL" in listed, listed
    assert listed.endswith("; and 2 more rows, none worse than these (the JSON report lists all).")
    assert listed.index("s00") < listed.index("s11")  # in row order
