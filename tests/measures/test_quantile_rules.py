"""`{criterion: latency_ms, quantile: 0.95, max: 800}` through the CLI: decided on the exact
order-statistic interval of the output's numbers (issue 18, point 5)."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pytest

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, config_error, report
from tests.measures.conftest import latency_cases, measured

P95 = "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 800}"


def test_p95_passes_when_the_upper_bound_is_under_max(project: Project) -> None:
    latencies = [float(100 + 5 * i) for i in range(100)]  # 100 .. 595 ms
    measured(project, latency_cases(latencies), P95)
    code, data = report(project)
    assert code == ExitCode.PASS
    rule = data["rules"][0]
    # n = 100, p = 0.95, 95%: ranks (90, 100) (scipy.stats.quantile_test gives the same bounds).
    assert rule["interval"]["low"] == 545.0 and rule["interval"]["high"] == 595.0
    assert rule["estimate"] == np.quantile(latencies, 0.95, method="inverted_cdf") == 570.0
    assert rule["interval"]["method"] == "order statistics (binomial)" and rule["interval"]["approximate"] is False
    assert rule["verdict"] == "PASS" and rule["reasons"] == ["interval_clears_threshold"]
    assert rule["sentence"].startswith("latency_ms is 570.000 (p95 of 100 values), 95% interval [545.000, 595.000]")
    assert "the upper bound 595.000 clears max 800" in rule["sentence"]


def test_p95_fails_when_even_the_lower_bound_is_over_max(project: Project) -> None:
    latencies = [900.0 + i for i in range(100)]
    measured(project, latency_cases(latencies), P95)
    code, data = report(project)
    assert code == ExitCode.FAIL
    assert data["rules"][0]["reasons"] == ["interval_misses_threshold"]
    assert data["rules"][0]["interval"]["low"] == 989.0


def test_a_slow_tail_the_mean_would_hide_fails(project: Project) -> None:
    # 80 fast answers and 20 slow ones: the mean is 280 ms, but the p95's lower bound (rank 90) is
    # 1000 ms. (With 90 fast and 10 slow the rule is only undecided: 90/100 at 100 ms is consistent
    # with a true p95 of 100 ms.)
    latencies = [100.0] * 80 + [1000.0] * 20
    measured(project, latency_cases(latencies), P95)
    assert report(project)[0] == ExitCode.FAIL


def test_too_few_cases_to_bound_a_p95_says_how_many(project: Project) -> None:
    measured(project, latency_cases([10.0] * 71), P95)
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert rule["interval"]["high"] is None or rule["interval"]["high"] == float("inf")
    assert rule["sentence"].endswith(
        "no set of 71 values bounds the p95 from above at 0.95 confidence: that needs at least 72 cases, every one "
        "answered."
    )
    measured(project, latency_cases([10.0] * 72), P95)
    assert report(project)[0] == ExitCode.PASS  # one more case and a perfect set clears it


def test_missing_latencies_count_against_the_rule(project: Project) -> None:
    # 100 cases at 100 ms, 6 without latency_ms: the 6 could be anything, so the upper bound is
    # unbounded (taken as +inf): the rule cannot PASS, and cannot FAIL on them either.
    measured(project, latency_cases([100.0] * 94 + [None] * 6), P95)
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    rule = data["rules"][0]
    assert rule["missing"] == 6 and "missing_outputs" in rule["reasons"]
    assert data["criteria"]["latency_ms"]["failed_ids"] == []


def test_a_string_latency_is_a_missing_value_not_a_number(project: Project) -> None:
    cases = latency_cases([100.0] * 100)
    cases[0]["out"]["latency_ms"] = "100"
    cases[1]["out"]["latency_ms"] = True
    measured(project, cases, P95)
    code, data = report(project)
    assert data["rules"][0]["missing"] == 2
    assert code == ExitCode.INSUFFICIENT_EVIDENCE


def test_a_min_quantile_rule(project: Project) -> None:
    # A median throughput of at least 50: min on the lower bound.
    cases = [{"id": f"c{i}", "out": {"tps": 60.0 + i % 7}, "expected": {"label": 1}} for i in range(40)]
    measured(project, cases, "  - {id: tps, criterion: tps, quantile: 0.5, min: 50}")
    assert report(project)[0] == ExitCode.PASS


def test_wall_time_stands_in_when_the_system_reports_no_latency(project: Project) -> None:
    # batch_size: 1: every case is its own call of the command, so each wall time is one observation.
    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(75)]
    rule = "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}"
    measured(project, cases, rule, batch_size=1)
    code, data = report(project)
    assert code == ExitCode.PASS, data["rules"][0]["sentence"]
    rule_json = data["rules"][0]
    assert "wall time measured by oloproof" in rule_json["details"]["source"]
    assert rule_json["interval"]["approximate"] is False and "(p95 of 75 values)" in rule_json["sentence"]
    record = RunStore(project.root).records()[-1]
    assert set(record.case_wall_ms) == {case["id"] for case in cases}
    assert 0 < rule_json["interval"]["high"] < 600000


def test_wall_time_of_a_batch_is_one_observation_and_approximate(project: Project) -> None:
    # The default batch holds all 80 cases: one call, one observation (its time / 80 for each case).
    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(80)]
    rule = "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}"
    measured(project, cases, rule)
    code, data = report(project)
    record = RunStore(project.root).records()[-1]
    assert len(set(record.case_wall_ms.values())) == 1
    assert code == ExitCode.MANUAL_REVIEW
    result = data["rules"][0]
    assert result["interval"]["approximate"] is True and "(p95 of 1 batches" in result["sentence"]
    assert "the p95 of batch means is not the p95 of single requests" in " ".join(result["caveats"])
    assert result["interval"]["method"] == "order statistics (binomial) over batch means"
    measured(project, cases, rule, policy_extra="  allow_approximate_methods: true\n")
    code, data = report(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "that needs at least 72 batches, every one answered." in data["rules"][0]["sentence"]


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            "{id: p95, criterion: latency_ms, quantile: 1.5, max: 800}",
            "policy.rules[0].quantile: expected a number in (0, 1), got 1.5",
        ),
        (
            "{id: p95, criterion: latency_ms, quantile: 0.95, baseline: latest, max_drop: 0.1}",
            "policy.rules[0].baseline: no paired interval is implemented for the 0.95 quantile, so it cannot guard "
            "against a regression; use min or max",
        ),
        (
            "{id: p95, criterion: correct, quantile: 0.95, max: 800}",
            "policy.rules[0].criterion: criterion 'correct' is read as a numeric output key here, but an evaluator "
            "also produces it; give the evaluator another criterion",
        ),
        (
            "{id: p95, criterion: latency_ms, max: 800}",
            "policy.rules[0].max: expected a number in (0, 1), got 800: max: 1 could never fail",
        ),
        (
            "{id: p95, criterion: latency_ms, quantile: 0.95, max: 800, method: t}",
            "policy.rules[0].method: method applies to evaluator criteria; 'latency_ms' has its own interval",
        ),
    ],
)
def test_config_errors(
    project: Project,
    run_cli: Callable[..., int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    rule: str,
    message: str,
) -> None:
    measured(project, latency_cases([1.0] * 5), f"  - {rule}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert f"release.yaml:12: {message}" in err


def test_no_output_holds_the_key_is_a_config_error(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i}", "out": {"cost": 1.0}, "expected": {"label": 1}} for i in range(5)]
    measured(project, cases, "  - {id: c95, criterion: cost_usd, quantile: 0.95, max: 2}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    # The key a quantile rule reads is its criterion, and the error names that setting (18-D6).
    assert "release.yaml:12: policy.rules[0].criterion: 5 of 5 outputs have no 'cost_usd' (they have: cost)" in err
    assert "or name the key it writes in criterion:" in err


def test_edited_wall_times_are_never_read(project: Project) -> None:
    # A pull request that shrinks the recorded wall times breaks the run's seal: it is not used.
    import json

    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(75)]
    measured(project, cases, "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}", batch_size=1)
    assert report(project)[0] == ExitCode.PASS
    (path,) = (project.root / ".oloproof" / "runs").glob("*/run.json")
    data = json.loads(path.read_text())
    data["case_wall_ms"] = dict.fromkeys(data["case_wall_ms"], 0.001)
    path.write_text(json.dumps(data))
    code, again = report(project)
    assert code == ExitCode.PASS
    assert again["run"]["run_id"] != path.parent.name
    assert any("does not match its digest" in note for note in again["run_notes"])


def test_run_lists_the_built_in_measures_scores(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """`oloproof run` scores the rules that read outputs themselves too (a quantile here), under the
    name `latency_ms p95`, with the same interval the gate decides on."""
    measured(
        project,
        latency_cases([float(i) for i in range(1, 201)]),
        "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 250}",
    )
    capsys.readouterr()
    assert project.cli("run", "-q") == 0
    out = capsys.readouterr().out
    code, data = report(project)
    assert code == ExitCode.PASS
    interval = data["rules"][0]["interval"]
    line = f"latency_ms p95 {data['rules'][0]['estimate']:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]"
    assert line in out, out


def test_a_self_reported_latency_the_measured_wall_time_contradicts_is_reviewed_not_passed(project: Project) -> None:
    # RT-H6: the system writes latency_ms: 1 on every case; each call of it (batch_size: 1) takes a
    # Python start-up, tens of ms of wall time. On main the p95 of its own figures passed max 5.
    rule = "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 5}"
    measured(project, latency_cases([1.0] * 75), rule, batch_size=1)
    code, data = report(project)
    result = data["rules"][0]
    assert code == ExitCode.MANUAL_REVIEW, result["sentence"]
    assert result["verdict"] == "MANUAL_REVIEW"
    assert result["reasons"] == ["interval_clears_threshold", "latency_unconfirmed"]
    assert result["interval"]["high"] == 1.0  # the self-report, shown as it is
    assert "The system reports its own latency_ms, but oloproof measured a p95 of " in result["sentence"]
    assert (
        "ms of wall time per case (start-up included), above 5: the self-reported figure is not borne out"
        in (result["sentence"])
    )
    # Where the measurement bears the report out, the report decides as before.
    measured(
        project,
        latency_cases([1.0] * 75),
        "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}",
        batch_size=1,
    )
    code, data = report(project, "--rerun")
    assert code == ExitCode.PASS and data["rules"][0]["reasons"] == ["interval_clears_threshold"]


def test_run_scores_a_latency_rule_on_the_wall_time_as_the_gate_does(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # 18-D5: `oloproof run` said "not scored: no 'latency_ms'" (naming field:) for a system that
    # reports none, while the gate decides the rule on the run's wall time.
    cases = [{"id": f"c{i:03d}", "out": {"label": 1}, "expected": {"label": 1}} for i in range(75)]
    measured(project, cases, "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 600000}", batch_size=1)
    assert project.cli("run") == 0
    out = capsys.readouterr().out
    [line] = [line for line in out.splitlines() if "latency_ms p95" in line]
    assert "not scored" not in line and "(95%, order statistics (binomial), exact; 75 cases)" in line, line
    assert project.cli("runs") == 0
    assert "latency_ms p95 " in capsys.readouterr().out


def test_self_reported_latency_of_imported_outputs_is_said_to_be_unchecked(project: Project) -> None:
    # Imported outputs carry no wall time: their latency_ms decides, and every report says it is the
    # system's own unchecked figure.
    cases = latency_cases([float(100 + i) for i in range(100)])
    project.write(cases=cases, rules=P95, command=None)
    out = project.root / "outputs.jsonl"
    out.write_text("".join(json.dumps({"id": case["id"], **case["out"]}) + "\n" for case in cases))
    assert project.cli("run", "--outputs", str(out), "--version", "v1") == 0
    code, data = report(project)
    assert code == ExitCode.PASS
    assert (
        "The interval rests on latency_ms figures the system reported itself, which oloproof could not check against "
        "a wall time it measured (the outputs were imported, or the run kept no wall times)."
    ) in data["rules"][0]["caveats"]


def test_a_team_may_accept_self_reported_latency_and_every_report_says_who(project: Project) -> None:
    accepted = (
        "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 5, "
        "accepted: {by: ml-platform, reason: timed in-process around predict()}}"
    )
    measured(project, latency_cases([1.0] * 75), accepted, batch_size=1)
    code, data = report(project)
    result = data["rules"][0]
    assert code == ExitCode.PASS, result["sentence"]
    assert result["reasons"] == ["interval_clears_threshold", "latency_reported_accepted"]
    assert result["accepted"] == {"by": "ml-platform", "reason": "timed in-process around predict()"}
    assert "the self-reported figure is not borne out" in result["sentence"]
    assert (
        "[self-reported latency_ms accepted by ml-platform: timed in-process around predict()]" in result["sentence"]
    )


def test_accepted_on_a_rule_that_is_not_a_latency_quantile_is_refused(
    project: Project, run_cli: Callable[..., int], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(
        cases=latency_cases([1.0] * 5),
        rules="  - {id: r, criterion: correct, min: 0.5, accepted: {by: me, reason: trust me}}",
    )
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        "release.yaml:12: policy.rules[0].accepted: accepted: on a rule applies to a latency_ms quantile rule (the "
        "system's self-reported latency); a declared transform's accepted: goes on the transform"
    ) in err
