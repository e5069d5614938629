"""What a straddling or unreachable rule tells a person to do: the cases (or groups, or seeds) that
would settle it, from the statistics of issue 10, through the gate."""

from __future__ import annotations

from conftest import Project, labelled_cases, report


def test_a_straddle_says_how_many_cases_would_settle_it(project: Project) -> None:
    project.write(cases=labelled_cases(50, 44), rules="  - {id: accurate, criterion: correct, min: 0.8}")
    _, data = report(project)
    # 44/50 = 0.88: the example (min 0.8, true 0.88) gives 185, where the power stays above 80%.
    assert "if the true rate were 0.880, PASS would need 185 cases or more (the power stays above 80% from there)." in (
        data["rules"][0]["sentence"]
    )


def test_too_few_groups_can_never_clear_a_high_min_and_the_sentence_counts_groups(project: Project) -> None:
    cases = [{**case, "group": f"g{i % 40}"} for i, case in enumerate(labelled_cases(400, 400))]
    project.write(
        cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.95}", policy_extra="  allow_approximate_methods: true\n"
    )
    code, data = report(project)
    rule = data["rules"][0]
    assert code == 4 and "set_too_small" in rule["reasons"]
    assert "these 40 groups can never clear it: even a perfect run's lower bound on 40 groups is 0.912" in rule["sentence"]
    assert "clearing min 0.95 needs at least 72 groups." in rule["sentence"]
    assert rule["details"]["ceiling"] == 0.025 ** (1 / 40)


def test_a_clustered_pass_carries_its_measured_caveat(project: Project) -> None:
    cases = [{**case, "group": f"g{i % 60}"} for i, case in enumerate(labelled_cases(600, 600))]
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.9}", policy_extra="  allow_approximate_methods: true\n")
    code, data = report(project)
    assert code == 0
    assert "its one-sided error was measured at about 3% against a nominal 2.5%" in data["rules"][0]["sentence"]


def test_the_betting_intervals_seed_is_in_the_json(project: Project) -> None:
    cases = [{"id": f"s{i}", "answer": 1, "expected": {"label": 1}} for i in range(30)]
    project.write(cases=cases, evaluators="  - {type: score, field: label, criterion: s}", rules="  - {id: scored, criterion: s, min: 0.5}")
    _, data = report(project)
    interval = data["rules"][0]["interval"]
    assert interval["method"] == "betting-wsr" and isinstance(interval["seed"], int)
    assert f"seed {interval['seed']}" in data["rules"][0]["sentence"]
