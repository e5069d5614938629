"""``oloproof compare --criterion auc|mae`` through the CLI (issue 18, point 4: "paired forms for
compare and the regression guard"): the same interval and verdict as the gate's ``max_drop`` rule
on the same two stored runs, each run's own estimate, the MAE's drop in the field's units, and the
criteria compare cannot pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.stats import mannwhitneyu
from sklearn.metrics import roc_auc_score

from oloproof.errors import ExitCode
from oloproof.runstore import RunStore
from tests.conftest import Project, report, write_cases
from tests.measures.conftest import measured
from tests.measures.test_paired_rules import two_versions

MAE_GUARD = "  - {id: no_worse, criterion: mae, field: value, bound: 10, baseline: 'version:v1', max_drop: 0.5}"
AUC_GUARD = "  - {id: auc_kept, criterion: auc, score: score, baseline: 'version:v1', max_drop: 0.05}"


def two_runs(project: Project, cases: list[dict[str, Any]], rules: str, **extra: str) -> None:
    """Runs of v1 (each case's ``out``) and v2 (``out_v2``) on the same cases, stored; release.yaml
    then holds ``rules`` (the v1 run is made under a rule without a baseline)."""
    measured(project, cases, "  - {id: any, criterion: mae, field: value, max: 1000, bound: 1000}", version="v1")
    assert project.cli("run") == 0
    measured(project, cases, rules, key="out_v2", version="v2", **extra)
    assert project.cli("run") == 0


def compare(project: Project, *extra: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "compare.json"
    out.unlink(missing_ok=True)
    code = project.cli("compare", "version:v1", "version:v2", "--json", str(out), *extra)
    return code, json.loads(out.read_text()) if out.exists() else {}


def gate(project: Project) -> tuple[int, dict[str, Any]]:
    code, data = report(project, "--run", "version:v2")
    return code, data["rules"][0]


def same_as_the_guard(project: Project, criterion: str, drop: str) -> tuple[int, dict[str, Any]]:
    """Compare with ``--max-drop drop`` and the gate's guard: one verdict, one interval, one exit code."""
    code, data = compare(project, "--criterion", criterion, "--max-drop", drop)
    gate_code, rule = gate(project)
    assert rule["kind"] == "regression" and rule["threshold"] == float(drop)
    assert data["decision"]["verdict"] == rule["verdict"], (data["decision"]["sentence"], rule["sentence"])
    assert code == gate_code == ExitCode[rule["verdict"]]
    assert data["difference"] == rule["interval"]  # estimate, bounds, level, method, approximate, seed
    assert data["decision"]["reasons"] == rule["reasons"]
    return code, data


@pytest.mark.parametrize(
    ("drift", "drop", "verdict"),
    [
        (0.0, "0.5", "PASS"),  # the same error: the upper bound is well below +0.5
        (2.0, "0.5", "FAIL"),  # v2 errs about 2 more: even the lower bound is above +0.5
        (0.15, "0.2", "INSUFFICIENT_EVIDENCE"),  # a rise near the allowed one: the interval holds +0.2
    ],
)
def test_mae_compare_decides_as_the_guard_decides(project: Project, drift: float, drop: str, verdict: str) -> None:
    rule = MAE_GUARD.replace("max_drop: 0.5", f"max_drop: {drop}")
    two_runs(project, two_versions(300, drift=drift), rule)
    _code, data = same_as_the_guard(project, "mae", drop)
    assert data["decision"]["verdict"] == verdict, data["decision"]["sentence"]
    assert data["difference"]["approximate"] is False  # bound: the exact betting interval
    assert data["keys"] == {"field": "value", "bound": 10.0} and data["rule"] == "no_worse"
    assert data["lower_is_better"] is True and data["schema"] == "oloproof.compare.measure/1"


def test_auc_exact_compare_decides_as_the_guard_decides(project: Project) -> None:
    two_runs(project, two_versions(300, drift=0.0), AUC_GUARD.replace("0.05", "0.3"))
    code, data = same_as_the_guard(project, "auc", "0.3")
    assert code == ExitCode.PASS and data["difference"]["approximate"] is False
    two_runs(project, two_versions(300, drift=2.5), AUC_GUARD.replace("0.05", "0.1"))
    code, data = same_as_the_guard(project, "auc", "0.1")
    assert code == ExitCode.FAIL, data["decision"]["sentence"]


def test_auc_delong_is_approximate_and_decides_only_when_allowed(project: Project) -> None:
    delong = AUC_GUARD.replace("}", ", method: delong}")
    two_runs(project, two_versions(300, drift=2.0), delong)
    code, data = same_as_the_guard(project, "auc", "0.05")
    assert code == ExitCode.MANUAL_REVIEW and "approximate_method" in data["decision"]["reasons"]
    assert data["difference"]["approximate"] is True and data["difference"]["method"] == "delong"
    allowed = delong.replace("method: delong", "method: delong, approximate: allow")
    measured(project, two_versions(300, drift=2.0), allowed, key="out_v2", version="v2")
    code, data = same_as_the_guard(project, "auc", "0.05")
    assert code == ExitCode.FAIL
    measured(
        project,
        two_versions(300, drift=2.0),
        delong,
        key="out_v2",
        version="v2",
        policy_extra="  allow_approximate_methods: true\n",
    )
    code, data = same_as_the_guard(project, "auc", "0.05")
    assert code == ExitCode.FAIL


def test_each_runs_estimate_matches_an_independent_computation(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = two_versions(120, drift=0.5)
    two_runs(project, cases, MAE_GUARD + "\n" + AUC_GUARD)
    capsys.readouterr()
    code, data = compare(project, "--criterion", "mae")
    out = capsys.readouterr().out
    assert code == 0 and data["decision"] is None
    truth = np.array([c["expected"]["value"] for c in cases])
    for side, key in (("a", "out"), ("b", "out_v2")):
        mae = float(np.mean(np.abs(np.array([c[key]["value"] for c in cases]) - truth)))
        assert data[side]["estimate"] == pytest.approx(mae, abs=1e-12)
        assert f"dev mae {mae:.3f}" in out
    assert data["difference"]["estimate"] == pytest.approx(data["b"]["estimate"] - data["a"]["estimate"], abs=1e-9)
    assert "positive means B errs more: the error rose, a drop in quality" in out
    code, data = compare(project, "--criterion", "auc")
    labels = [c["expected"]["label"] for c in cases]
    for side, key in (("a", "out"), ("b", "out_v2")):
        scores = [c[key]["score"] for c in cases]
        # two references: scikit-learn's roc_auc_score and the Mann–Whitney U / (m·n)
        positive = [s for s, y in zip(scores, labels, strict=True) if y == 1]
        negative = [s for s, y in zip(scores, labels, strict=True) if y == 0]
        u = mannwhitneyu(positive, negative).statistic / (len(positive) * len(negative))
        assert data[side]["estimate"] == pytest.approx(roc_auc_score(labels, scores), abs=1e-12)
        assert data[side]["estimate"] == pytest.approx(u, abs=1e-12)
    assert data["keys"] == {"score": "score", "positive": None, "method": "exact"}
    doc = (Path(__file__).resolve().parents[2] / "docs" / "compare.md").read_text(encoding="utf-8")
    for name in [*data, *data["a"], *data["difference"], *data["keys"], "oloproof.compare.measure/1"]:
        assert f"`{name}`" in doc, name  # every field of the report is documented


def test_mae_max_drop_is_in_the_fields_units(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    two_runs(project, two_versions(200, drift=2.0), MAE_GUARD.replace("max_drop: 0.5", "max_drop: 5"))
    capsys.readouterr()
    code, _data = same_as_the_guard(project, "mae", "5")  # above 1: accepted for an error
    assert code == ExitCode.PASS
    assert "a rise of the error of at most 5 (a drop of mae is its error rising)" in capsys.readouterr().out
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", "mae", "--max-drop", "5pt") == 2
    assert "--max-drop for an error is in the field's units (such as 0.5), not in points" in capsys.readouterr().err
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", "mae", "--max-drop", "-1") == 2
    assert "--max-drop for an error is a number >= 0 in the field's units, got '-1'" in capsys.readouterr().err
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", "mae", "--min-gain", "nan") == 2
    capsys.readouterr()


def test_auc_max_drop_stays_a_fraction(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    two_runs(project, two_versions(60, drift=0.0), AUC_GUARD)
    capsys.readouterr()
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", "auc", "--max-drop", "7") == 2
    assert "--max-drop must lie in [0, 1] (a fraction; 5pt = 0.05), got '7'" in capsys.readouterr().err


@pytest.mark.parametrize(("gain", "verdict"), [("0.1", "PASS"), ("0.45", "INSUFFICIENT_EVIDENCE"), ("1.0", "FAIL")])
def test_mae_min_gain_asks_for_the_error_to_fall(project: Project, gain: str, verdict: str) -> None:
    # v2 errs about 0.4 less than v1 (errors ~U(0.1, 1.1) against ~U(0.5, 1.5))
    two_runs(project, two_versions(300, drift=-0.4), MAE_GUARD)
    code, data = compare(project, "--criterion", "mae", "--min-gain", gain)
    interval = data["difference"]
    assert data["decision"]["verdict"] == verdict, (interval, data["decision"]["sentence"])
    assert code == ExitCode[verdict]
    # the decision rule, read off the interval: PASS iff high <= -G, FAIL iff low > -G
    g = float(gain)
    expected = "PASS" if interval["high"] <= -g else "FAIL" if interval["low"] > -g else "INSUFFICIENT_EVIDENCE"
    assert expected == verdict


@pytest.mark.parametrize(
    ("criterion", "rules", "message"),
    [
        (
            "rmse",
            "  - {id: r, criterion: rmse, field: value, max: 5, bound: 10}",
            "criterion 'rmse' has no paired interval, so compare cannot pair it: compare pairs the pass/fail criteria "
            "of evaluators and the built-in measures auc and mae (given a rule on them); here: correct",
        ),
        (
            "latency_ms",
            "  - {id: p95, criterion: latency_ms, quantile: 0.95, max: 800}",
            "criterion the quantile rule on 'latency_ms' has no paired interval, so compare cannot pair it",
        ),
        (
            "mae",
            "  - {id: ok, criterion: correct, min: 0.5}",
            "reads criterion 'mae': compare takes its field (and bound) from such a rule",
        ),
        ("nonsense", "  - {id: ok, criterion: correct, min: 0.5}", "criterion 'nonsense' is not declared"),
    ],
)
def test_criteria_compare_cannot_pair_are_usage_errors(
    project: Project, capsys: pytest.CaptureFixture[str], criterion: str, rules: str, message: str
) -> None:
    cases = [{**case, "out": {**case["out"], "latency_ms": 5}} for case in two_versions(40, drift=0.0)]
    two_runs(project, cases, rules)
    capsys.readouterr()
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", criterion) == ExitCode.USAGE
    assert message in capsys.readouterr().err


def test_runs_on_different_test_sets_are_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = two_versions(60, drift=0.0)
    two_runs(project, cases, MAE_GUARD)
    measured(project, cases[1:], MAE_GUARD, key="out_v2", version="v3")  # one case fewer
    assert project.cli("run") == 0
    ids = {record.version: record.run_id for record in RunStore(project.root).records()}
    capsys.readouterr()
    # refs by version count the runs on the set as it is now
    assert project.cli("compare", "version:v1", "version:v3", "--criterion", "mae") == ExitCode.USAGE
    assert "ref 'version:v1': no run of version 'v1' on" in " ".join(capsys.readouterr().err.split())
    # run ids name runs on any set: two sets, or two runs on a set that has changed since
    for a, b in ((ids["v1"], ids["v3"]), (ids["v1"], ids["v2"])):
        code = project.cli("compare", a, b, "--criterion", "mae", "--max-drop", "0.5")
        assert code == ExitCode.USAGE
        err = " ".join(capsys.readouterr().err.split())
        assert "a paired comparison needs both" in err and "on the same cases" in err, err
        assert "were made on different test sets" in err or "re-run that version on this set" in err, err


def test_a_missing_output_is_bounded_as_the_guard_bounds_it(project: Project) -> None:
    cases = two_versions(200, drift=0.0)
    cases[3]["out_v2"] = {"label": 1}  # v2 gives no value on one case: counted at +bound at the high end
    two_runs(project, cases, MAE_GUARD)
    _code, data = same_as_the_guard(project, "mae", "0.5")
    assert data["b"]["missing"] == 1 and "missing_outputs" in data["decision"]["reasons"]


def test_a_failed_run_decides_nothing(project: Project) -> None:
    cases = two_versions(100, drift=0.0)
    two_runs(project, cases, MAE_GUARD)
    # v2 again, with a system that dies half-way: a failed run is stored, and its evidence is invalid
    script = project.root / "system.py"
    script.write_text(script.read_text() + "\nraise SystemExit(3)\n", encoding="utf-8")
    project.cli("run")  # stored as a failed run (its exit code is the run command's business)
    code, data = compare(project, "--criterion", "mae", "--max-drop", "0.5")
    assert data["b"]["failure"] is not None and data["b"]["status"] != "ok"
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and "run_failed" in data["decision"]["reasons"]


def test_a_known_leak_keeps_a_measured_comparison_undecided(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = two_versions(100, drift=0.0)
    two_runs(project, cases, MAE_GUARD)
    monkeypatch.chdir(project.root)
    train = [{key: value for key, value in case.items() if key not in ("id", "expected")} for case in cases]
    write_cases(project.root / "train.jsonl", train)  # every case's input: all leaked
    assert project.cli("leakage", "check", "--training", "train.jsonl", "--record", "--quiet") == 4
    code, data = compare(project, "--criterion", "mae", "--max-drop", "0.5")
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and "leaked_cases" in data["decision"]["reasons"]
    assert data["difference"]["approximate"] is False  # the difference is still shown
    assert any(note.startswith("leakage: ") for note in data["notes"])


def test_keys_come_from_a_min_rule_and_compare_pairs_every_case(project: Project) -> None:
    # no guard: the keys (score, positive) come from the min rule; its where: is not applied by compare
    cases = two_versions(120, drift=0.0)
    for case in cases:
        case["expected"]["label"] = "sick" if case["expected"]["label"] == 1 else "well"
        case["stratum"] = "a" if case["id"] < "c0060" else "b"
    rule = "  - {id: auc, criterion: auc, score: score, positive: sick, min: 0.6, where: {stratum: a}}"
    two_runs(project, cases, rule)
    code, data = compare(project, "--criterion", "auc", "--min-gain", "0.01")
    assert data["keys"] == {"score": "score", "positive": "sick", "method": "exact"}
    assert data["set"]["n"] == 120 and code == ExitCode.INSUFFICIENT_EVIDENCE  # two equal versions: no gain shown
    labels = [1 if c["expected"]["label"] == "sick" else 0 for c in cases]
    assert data["a"]["estimate"] == pytest.approx(roc_auc_score(labels, [c["out"]["score"] for c in cases]))


def test_swapping_the_runs_turns_the_delong_difference_around(project: Project) -> None:
    # DeLong's paired difference is symmetric: B − A is −(A − B), bound for bound
    two_runs(project, two_versions(200, drift=1.0), AUC_GUARD.replace("}", ", method: delong}"))
    _, forward = compare(project, "--criterion", "auc")
    out = project.root / "back.json"
    assert project.cli("compare", "version:v2", "version:v1", "--criterion", "auc", "--json", str(out)) == 0
    back = json.loads(out.read_text())["difference"]
    there = forward["difference"]
    assert back["estimate"] == pytest.approx(-there["estimate"], abs=1e-12)
    assert (back["low"], back["high"]) == pytest.approx((-there["high"], -there["low"]), abs=1e-12)


@pytest.mark.parametrize("broken", ["one_class", "groups"])
def test_no_paired_interval_is_insufficient_and_says_why(
    project: Project, capsys: pytest.CaptureFixture[str], broken: str
) -> None:
    cases = two_versions(80, drift=0.0)
    for i, case in enumerate(cases):
        if broken == "one_class":
            case["expected"]["label"] = 1
        else:
            case["group"] = f"g{i // 4}"
    two_runs(project, cases, AUC_GUARD)
    capsys.readouterr()
    code, data = compare(project, "--criterion", "auc", "--max-drop", "0.05")
    gate_code, rule = gate(project)
    assert code == gate_code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["difference"] is None and data["decision"]["verdict"] == rule["verdict"]
    why = "grouped cases" if broken == "groups" else "one positive (label 1) and one negative (label 0) case"
    assert why in data["no_interval"] and why in capsys.readouterr().out


def test_the_terminal_rendering_matches_its_gold_file(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import re

    from tests.report.golden import HOSTILE, check_gold, scrub

    monkeypatch.setenv("COLUMNS", "160")
    # A rule id can no longer carry markup (policy.RULE_ID_PATTERN refuses it); the hostile text rides
    # in the rule's description, which compare does not print, and the id stays a plain name.
    two_runs(project, two_versions(120, drift=0.3), MAE_GUARD.replace("}", f", description: {HOSTILE[:12]!r}}}"))
    capsys.readouterr()
    assert project.cli("compare", "version:v1", "version:v2", "--criterion", "mae", "--max-drop", "0.5") == 4
    text = re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "<run>", scrub(capsys.readouterr().out, project.root))
    check_gold("compare-measure.txt", text)


def test_mae_without_bound_is_approximate_and_decides_only_when_allowed(project: Project) -> None:
    unbounded = MAE_GUARD.replace("bound: 10, ", "")
    two_runs(project, two_versions(200, drift=2.0), unbounded)
    code, data = same_as_the_guard(project, "mae", "0.5")
    assert code == ExitCode.MANUAL_REVIEW and data["difference"]["approximate"] is True
    assert data["keys"] == {"field": "value", "bound": None}
    measured(project, two_versions(200, drift=2.0), unbounded.replace("}", ", approximate: allow}"), key="out_v2", version="v2")
    code, data = same_as_the_guard(project, "mae", "0.5")
    assert code == ExitCode.FAIL and data["difference"]["method"] == "bca-bootstrap"
