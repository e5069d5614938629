"""Red-team attacks on issue 18's capabilities, each a failure found through the CLI and fixed."""

from __future__ import annotations

import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, report
from tests.measures.conftest import measured

P95_WALL = "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}"


def test_wall_time_batches_are_those_the_run_was_made_with_not_the_config_now(project: Project) -> None:
    # The run is made in one batch of 80 (the default batch_size): every case holds that batch's
    # mean, one observation. Setting batch_size: 1 afterwards does not change the outputs, so the run
    # is reused; its wall times must still count as one batch, never as 80 exact per-case values.
    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(80)]
    measured(project, cases, P95_WALL)
    code, data = report(project)
    assert code == ExitCode.MANUAL_REVIEW
    run_id = data["run"]["run_id"]
    measured(project, cases, P95_WALL, batch_size=1)
    code, data = report(project)
    assert data["run"]["run_id"] == run_id  # reused
    rule = data["rules"][0]
    assert code == ExitCode.MANUAL_REVIEW, rule["sentence"]
    assert rule["interval"]["approximate"] is True and "(p95 of 1 batches" in rule["sentence"]
    # and the other way: made one case per call, read as such under batch_size: 1000 now
    measured(project, cases, P95_WALL, batch_size=1)
    code, data = report(project, "--rerun")
    measured(project, cases, P95_WALL, batch_size=1000)
    code, data = report(project)
    rule = data["rules"][0]
    assert rule["interval"]["approximate"] is False and "(p95 of 80 values)" in rule["sentence"], rule["sentence"]
    assert code == ExitCode.PASS


def test_a_null_value_and_a_missing_key_are_two_rows_with_two_labels(project: Project) -> None:
    # expected.k is null on some cases, absent on others, and the text "(none)" on a third set:
    # three rows, and no two may read the same in a report.
    values: list[object] = [None, "(none)", "x"]
    cases = []
    for i in range(60):
        expected: dict[str, object] = {"label": 1}
        if i % 4 != 3:
            expected["k"] = values[i % 4]
        cases.append({"id": f"c{i:03d}", "out": {"label": 1}, "expected": expected})
    measured(project, cases, "  - {id: per_k, criterion: correct, min: 0.5, per: expected.k}")
    _, data = report(project)
    labels = [row["label"] for row in data["rules"][0]["details"]["rows"]]
    assert len(labels) == 4 and len(set(labels)) == 4, labels
    assert "null" in labels and "(none)" in labels


# A hostile pull request narrows, re-targets or weakens a rule with issue 18's keys behind a dozen
# harmless edits: each such key is listed among the first changed settings, listed among the first OPEN (every one is listed: the first are read first).
FILLERS = "".join(f"    - {{id: filler{i}, criterion: correct, min: 0.5, description: note {i}}}\n" for i in range(14))
BASE_RULES = (
    "policy:\n  rules:\n"
    "    - {id: recall, criterion: correct, min: 0.9, where: {expected.label: 1}}\n"
    "    - {id: slices, criterion: correct, min: 0.9, per: stratum}\n"
    "    - {id: auc, criterion: auc, score: score, min: 0.8}\n"
    "    - {id: mae, criterion: mae, field: value, max: 5, bound: 40}\n"
    "    - {id: accurate, criterion: correct, min: 0.9}\n"
)


@pytest.mark.parametrize(
    ("old", "new", "listed"),
    [
        (
            "where: {expected.label: 1}}",
            "where: {expected.label: 1, output.label: 1}}",
            "policy.rules[id=recall].where.output.label: (unset) -> 1",
        ),
        ("per: stratum}", "per: stratum, fwer: none}", "policy.rules[id=slices].fwer: (unset) -> none"),
        ("min: 0.8}", "min: 0.8, positive: 0}", "policy.rules[id=auc].positive: (unset) -> 0"),
        ("bound: 40}", "bound: 1000000}", "policy.rules[id=mae].bound: 40 -> 1000000"),
        (
            "{id: accurate, criterion: correct, min: 0.9}",
            "{id: accurate, criterion: latency_ms, quantile: 0.5, max: 100000}",
            "policy.rules[id=accurate].criterion: correct -> latency_ms",
        ),
        (
            "{id: accurate, criterion: correct, min: 0.9}",
            "{id: accurate, criterion: latency_ms, quantile: 0.5, max: 100000}",
            "policy.rules[id=accurate].quantile: (unset) -> 0.5",
        ),
        ("per: stratum}", "per: expected.label}", "policy.rules[id=slices].per: stratum -> expected.label"),
    ],
)
def test_a_rule_narrowed_or_retargeted_in_a_pull_request_is_listed_first(old: str, new: str, listed: str) -> None:
    from oloproof.action.config_diff import changed_settings
    from oloproof.report.pr_evidence import OPEN

    base = BASE_RULES + FILLERS
    head = BASE_RULES.replace(old, new) + FILLERS.replace("min: 0.5", "min: 0.4")
    lines = changed_settings(base.encode(), head.encode(), "release.yaml")
    assert listed in lines[:OPEN], lines


def test_new_rules_cannot_crowd_out_a_narrowed_where_or_an_advisory_rule() -> None:
    # Fourteen new rules each bring a criterion (a re-targeting key): the loosening and
    # narrowing keys of existing rules still come first.
    from oloproof.action.config_diff import changed_settings
    from oloproof.report.pr_evidence import OPEN

    head = BASE_RULES.replace("min: 0.9, where: {expected.label: 1}}", "min: 0.9, where: {output.label: 1}}")
    head = head.replace("{id: accurate, criterion: correct, min: 0.9}", "{id: accurate, criterion: correct, min: 0.9, advisory: true}")
    lines = changed_settings(BASE_RULES.encode(), (head + FILLERS).encode(), "release.yaml")
    assert lines[0] == "policy.rules[id=accurate].advisory: (unset) -> true", lines
    assert "policy.rules[id=recall].where.output.label: (unset) -> 1" in lines[:OPEN]
    assert "policy.rules[id=recall].where.expected.label: 1 -> (unset)" in lines[:OPEN]


def test_an_undecided_auc_gives_no_binomial_sizing_advice(project: Project) -> None:
    # 2 positives among 150 cases, ranked perfectly: the AUC's interval is [0, 1]. The sizing a
    # pass rate would get ("resolves distances of 0.08", "PASS would need 8 cases") is false here:
    # the width of an AUC's interval is set by the smaller class, not the number of cases.
    cases = [
        {"id": f"c{i:03d}", "out": {"score": 10.0 if i < 2 else i / 1000}, "expected": {"label": 1 if i < 2 else 0}}
        for i in range(150)
    ]
    measured(project, cases, "  - {id: auc, criterion: auc, score: score, min: 0.6}")
    code, data = report(project)
    sentence = data["rules"][0]["sentence"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE, sentence
    assert "PASS would need" not in sentence and "resolves only distances" not in sentence, sentence
    assert sentence.endswith("contains min 0.6: add cases to settle it."), sentence


def test_a_p95_left_unbounded_by_missing_values_says_so_not_that_the_set_is_too_small(project: Project) -> None:
    # 200 cases, the 30 slow ones report no latency: 200 values would bound a p95, the missing ones
    # (counted as unbounded) are what leaves it open. "no set of 200 values bounds the p95" is false.
    from tests.measures.conftest import latency_cases

    measured(project, latency_cases([50.0] * 170 + [None] * 30), "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 800}")
    code, data = report(project)
    sentence = data["rules"][0]["sentence"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE, sentence
    assert "no set of 200" not in sentence, sentence
    assert sentence.endswith(
        "30 of 200 cases have no usable value, counted as unbounded (they could be the largest), so the p95 has "
        "no upper bound: make the system report it on every case."
    ), sentence


@pytest.mark.parametrize(
    ("old", "new", "listed"),
    [
        ("policy:\n", "policy:\n  confidence: 0.5\n", "policy.confidence: (unset) -> 0.5"),
        ("{id: recall, criterion: correct, min: 0.9,", "{id: recall, criterion: correct, min: 0.6,", "policy.rules[id=recall].min: 0.9 -> 0.6"),
    ],
)
def test_a_lowered_confidence_or_threshold_is_not_counted_away_behind_new_rules(old: str, new: str, listed: str) -> None:
    # Fourteen new rules (each with its criterion and min) come before the edit in file order.
    from oloproof.action.config_diff import changed_settings
    from oloproof.report.pr_evidence import OPEN

    head = BASE_RULES.replace("  rules:\n", "  rules:\n" + FILLERS, 1).replace(old, new)
    assert head.count(new) == 1
    lines = changed_settings(BASE_RULES.encode(), head.encode(), "release.yaml")
    assert listed in lines[:OPEN], lines


def test_a_run_whose_wall_times_have_no_batch_size_leaves_the_latency_rule_undecided(project: Project) -> None:
    # A run recorded before the batch size was kept (wall times, no wall_batch_size): its wall times
    # cannot be read as observations, so the rule is undecided and says why (not "outputs have no
    # latency_ms", a configuration error that sends the user to the wrong file).
    import json

    from oloproof.files import seal

    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(80)]
    measured(project, cases, P95_WALL, batch_size=1)
    assert report(project)[0] == ExitCode.PASS
    (path,) = (project.root / ".oloproof" / "runs").glob("*/run.json")
    data = json.loads(path.read_text())
    del data["wall_batch_size"], data["digest"]
    path.write_text(json.dumps(seal(data)))
    code, again = report(project)
    rule = again["rules"][0]
    assert again["run"]["run_id"] == path.parent.name
    assert code == ExitCode.INSUFFICIENT_EVIDENCE, rule["sentence"]
    assert "recorded without the batch size they were measured in" in " ".join(again["problems"]), again["problems"]


def test_a_renamed_rule_cannot_carry_a_narrowing_where_into_and_n_more() -> None:
    # The rule is removed and comes back under a new id with where: {stratum: [easy, easier]} (a list
    # value): the new rule's where is still listed among the first changes.
    from oloproof.action.config_diff import changed_settings
    from oloproof.report.pr_evidence import OPEN

    head = BASE_RULES.replace(
        "{id: accurate, criterion: correct, min: 0.9}",
        "{id: accurate_v2, criterion: correct, min: 0.9, where: {stratum: [easy, easier]}}",
    )
    head = head.replace("  rules:\n", "  rules:\n" + FILLERS, 1)  # fourteen new rules before it
    lines = changed_settings(BASE_RULES.encode(), head.encode(), "release.yaml")
    assert "policy.rules[id=accurate_v2].where.stratum[0]: (unset) -> easy" in lines[:OPEN], lines
