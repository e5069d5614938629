"""Red-team attacks on issue 18's capabilities, each a failure found through the CLI and fixed."""

from __future__ import annotations

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
