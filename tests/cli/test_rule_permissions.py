"""Issue 18 §6-7 through the CLI: a rule's own `approximate: allow`, `advisory: true`, and a declared
transform accepted with `accepted: {by, reason}` — each decided as declared and said in every report
(terminal, JSON, JUnit, Markdown)."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from tests.conftest import ECHO, Project, config_error, write_cases
from tests.seeds.test_check import five_seeds

GROUPED = "  - {id: grouped, criterion: correct, min: 0.8%s}"


def grouped_cases(n: int = 120, groups: int = 40, wrong: int = 2) -> list[dict[str, Any]]:
    """n cases in ``groups`` groups (only a clustered, approximate interval exists); ``wrong`` fail."""
    return [
        {"id": f"c{i:05d}", "answer": 0 if i < wrong else 1, "group": f"g{i % groups}", "expected": {"label": 1}}
        for i in range(n)
    ]


def gate(project: Project, *extra: str) -> tuple[int, dict[str, Any], str, str, ET.Element]:
    """The gate's exit code, JSON report, terminal text, Markdown summary and JUnit root."""
    out, md, junit = (project.root / name for name in ("r.json", "r.md", "r.xml"))
    code = project.cli("gate", "--json", str(out), "--markdown", str(md), "--junit", str(junit), *extra)
    return code, json.loads(out.read_text()), "", md.read_text(), ET.fromstring(junit.read_text())


def by_id(report: dict[str, Any], rule_id: str) -> dict[str, Any]:
    return next(rule for rule in report["rules"] if rule["id"] == rule_id)


# ---------------------------------------------------------------- §6 approximate: allow


def test_approximate_allow_lets_that_rule_decide_and_every_report_names_it(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(
        cases=grouped_cases(),
        rules=(GROUPED % ", approximate: allow") + "\n  - {id: strict, criterion: correct, min: 0.8}",
    )
    capsys.readouterr()
    code, report, _, md, junit = gate(project)
    terminal = capsys.readouterr().out
    permitted, strict = by_id(report, "grouped"), by_id(report, "strict")
    assert report["policy"]["allow_approximate_methods"] is False  # the policy stays exact
    assert report["policy"]["rules_allowing_approximate"] == ["grouped"]
    assert permitted["interval"]["approximate"] is True and permitted["verdict"] == "PASS"
    assert permitted["approximate_permission"] is True and strict["approximate_permission"] is False
    # the other rule, on the same approximate interval, still needs a person
    assert strict["verdict"] == "MANUAL_REVIEW" and "approximate_method" in strict["reasons"]
    assert code == ExitCode.MANUAL_REVIEW
    assert "set approximate: allow on the rule (or allow_approximate_methods: true in the policy)" in strict["sentence"]
    mark = "approximate: allow: decided on an approximate interval by this rule's own permission"
    assert f"grouped: {mark}" in terminal
    assert f"<code>grouped</code>: {mark}" in md
    [case] = [case for case in junit.iter("testcase") if case.get("name") == "grouped"]
    assert case.findtext("system-out") == mark
    assert mark in permitted["sentence"]


def test_approximate_refuse_keeps_a_rule_exact_under_a_permissive_policy(project: Project) -> None:
    project.write(
        cases=grouped_cases(),
        policy_extra="  allow_approximate_methods: true\n",
        rules=(GROUPED % ", approximate: refuse") + "\n  - {id: loose, criterion: correct, min: 0.8}",
    )
    code, report, *_ = gate(project)
    assert by_id(report, "grouped")["verdict"] == "MANUAL_REVIEW" and by_id(report, "loose")["verdict"] == "PASS"
    assert by_id(report, "loose")["approximate_permission"] is False  # the policy's permission, not its own
    assert code == ExitCode.MANUAL_REVIEW


def test_a_seeds_rule_carries_its_own_permission_while_the_policy_stays_exact(project: Project) -> None:
    five_seeds(project)
    (project.root / "seeds.yaml").write_text(
        "recipe: r1\ncheckpoints: {"
        + ", ".join(f"s{k}: 'version:s{k}'" for k in range(1, 6))
        + "}\nrule: {id: recipe_ok, criterion: correct, min: 0.7, approximate: allow}\n"
    )
    project.write(extra="seeds: seeds.yaml\n", rules="  - {id: accurate, criterion: correct, min: 0.1}")
    code, report, _, md, _ = gate(project, "--run", "version:s1")
    recipe = by_id(report, "recipe_ok")
    assert report["policy"]["allow_approximate_methods"] is False
    assert report["policy"]["rules_allowing_approximate"] == ["recipe_ok"]
    assert recipe["verdict"] == "PASS" and recipe["interval"]["approximate"] is True
    assert recipe["approximate_permission"] is True and code == ExitCode.PASS
    assert "<code>recipe&#95;ok</code>: approximate: allow" in md
    # without it, the recipe rule asks for a person (and says how to allow it on that rule alone)
    (project.root / "seeds.yaml").write_text(
        (project.root / "seeds.yaml").read_text().replace(", approximate: allow", "")
    )
    code, report, *_ = gate(project, "--run", "version:s1")
    assert code == ExitCode.MANUAL_REVIEW
    assert "set approximate: allow on the recipe rule" in by_id(report, "recipe_ok")["sentence"]
    # `oloproof seeds` reads the rule's own permission too (no --policy needed)
    seeds = project.root / "seeds.yaml"
    seeds.write_text(seeds.read_text().replace("min: 0.7}", "min: 0.7, approximate: allow}"))
    out = project.root / "seeds.json"
    assert project.cli("seeds", str(seeds), "--json", str(out)) == ExitCode.PASS
    assert json.loads(out.read_text())["rule"]["verdict"] == "PASS"


def test_a_misspelt_permission_is_a_config_error(project: Project, run_cli: Any, capsys: Any, monkeypatch: Any) -> None:
    project.write(cases=grouped_cases(), rules=GROUPED % ", approximate: yes")  # YAML reads yes as true
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert "release.yaml:12: policy.rules[0].approximate: expected a string, got True" in err, err
    project.write(cases=grouped_cases(), rules=GROUPED % ", approximate: allowed")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        "release.yaml:12: policy.rules[0].approximate: expected one of: allow, refuse; got 'allowed' (did you mean "
        "'allow'?)"
    ) in err, err
    project.write(cases=grouped_cases(), rules=GROUPED % ", aproximate: allow")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert "release.yaml:12: policy.rules[0].aproximate: unknown key" in err and "did you mean 'approximate'" in err


# ---------------------------------------------------------------- §7 advisory


def test_an_advisory_rule_is_shown_and_never_changes_the_verdict_or_exit(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = [{"id": f"c{i:05d}", "answer": 1 if i < 98 else 0, "expected": {"label": 1}} for i in range(100)]
    project.write(
        cases=cases,
        rules="  - {id: ok, criterion: correct, min: 0.8}\n"
        "  - {id: stretch, criterion: correct, min: 0.99, advisory: true}",
    )
    capsys.readouterr()
    code, report, _, md, junit = gate(project)
    terminal = capsys.readouterr().out
    stretch = by_id(report, "stretch")
    assert stretch["verdict"] in ("FAIL", "INSUFFICIENT_EVIDENCE") and stretch["advisory"] is True
    assert code == ExitCode.PASS and report["verdict"] == "PASS" and report["exit_code"] == 0
    assert f"{stretch['verdict']} (advisory)" in terminal
    assert "stretch: advisory: shown, never changes the gate's verdict or exit code" in terminal
    assert f"**{stretch['verdict']}, advisory**" in md and "<br><sub>advisory</sub>" in md  # the why, the table
    assert "oloproof gate: PASS" in md
    [case] = [case for case in junit.iter("testcase") if case.get("name") == "stretch"]
    assert case.find("skipped") is not None and case.find("failure") is None
    assert junit.get("failures") == "0" and junit.get("skipped") == "1"


def test_an_advisory_rule_does_not_hide_a_blocked_gate(project: Project) -> None:
    # leakage: required with no record blocks the gate; advisory rules do not change that.
    cases = [{"id": f"c{i:05d}", "answer": 1, "expected": {"label": 1}} for i in range(100)]
    project.write(
        cases=cases,
        extra="leakage: required\n",
        rules="  - {id: ok, criterion: correct, min: 0.8}\n  - {id: soft, criterion: correct, min: 0.5, advisory: true}",
    )
    code, report, *_ = gate(project)
    assert code == ExitCode.BLOCKED and report["verdict"] == "BLOCKED"
    assert by_id(report, "soft")["verdict"] == "BLOCKED" and by_id(report, "soft")["advisory"] is True


def test_a_policy_of_advisory_rules_only_is_refused(
    project: Project, run_cli: Any, capsys: Any, monkeypatch: Any
) -> None:
    project.write(cases=grouped_cases(), rules="  - {id: soft, criterion: correct, min: 0.5, advisory: true}")
    err = config_error(project, run_cli, capsys, monkeypatch)
    assert (
        "release.yaml:11: policy.rules: every rule is advisory: a gate needs at least one rule that decides (advisory "
        "rules never change the gate's verdict)"
    ) in err, err


# ---------------------------------------------------------------- §7 accepted transforms

HOSTILE = "::error::x <img src=x onerror=alert(1)> \x1b[31mred\x1b]0;title\x07 ##[warning]y"


def noise_project(root: Path, accepted: str) -> None:
    cases = [{"id": f"c{i}", "answer": i % 3, "expected": {"label": i % 3}} for i in range(400)]
    write_cases(root / "data" / "test.jsonl", cases)
    (root / "release.yaml").write_text(
        f"system:\n  version: v1\n  command: {json.dumps([sys.executable, str(ECHO)])}\n  timeout_s: 30\n"
        "testset:\n  cases: data/test.jsonl\n"
        "evaluators:\n  - {type: label_match, field: label}\n"
        "  - {type: metamorphic_relation, transform: sensor, relation: same_label, field: label}\n"
        "metamorphic:\n  transforms:\n    - name: sensor\n      field: answer\n"
        f"      perturb: {{kind: numeric_noise, scale: 0.6, seed: 7}}\n{accepted}"
        "policy:\n  rules:\n    - {id: accurate, criterion: correct, min: 0.5}\n"
        "    - {id: robust, criterion: flips_under_sensor, max: 0.5}\n",
        encoding="utf-8",
    )


def test_a_declared_transform_never_decides_until_a_person_accepts_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noise_project(tmp_path, "")
    project = Project(tmp_path)
    code, report, *_ = gate(project)
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and "transform_declared" in by_id(report, "robust")["reasons"]
    # The echo system flips every changed case: with the transform accepted its rate decides (FAIL).
    noise_project(tmp_path, "      accepted: {by: Dana Reyes, reason: sensor noise of this size is in the spec}\n")
    capsys.readouterr()
    code, report, _, md, junit = gate(project)
    terminal = capsys.readouterr().out
    robust = by_id(report, "robust")
    assert robust["verdict"] == "FAIL" and code == ExitCode.FAIL
    assert "transform_accepted" in robust["reasons"] and "transform_declared" not in robust["reasons"]
    accepted = {"transform": "sensor", "by": "Dana Reyes", "reason": "sensor noise of this size is in the spec"}
    assert robust["accepted"] == accepted
    assert report["criteria"]["flips_under_sensor"]["details"]["metamorphic"]["accepted"] == accepted
    said = "transform 'sensor' accepted by Dana Reyes: sensor noise of this size is in the spec"
    assert f"robust: {said}" in terminal and said in md and said in robust["sentence"]
    [case] = [case for case in junit.iter("testcase") if case.get("name") == "robust"]
    assert said in (case.findtext("system-out") or "")


def test_accepted_text_is_inert_in_every_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reason = json.dumps(HOSTILE)  # a YAML double-quoted string holds the escapes as characters
    by = json.dumps("::warning::me\n::error::z\r\n##[group]g")
    noise_project(tmp_path, f"      accepted: {{by: {by}, reason: {reason}}}\n")
    project = Project(tmp_path)
    capsys.readouterr()
    _, report, _, md, _ = gate(project)
    terminal = capsys.readouterr().out
    assert by_id(report, "robust")["accepted"]["reason"] == HOSTILE  # the JSON keeps the data as written...
    for text in (terminal, md, by_id(report, "robust")["sentence"]):
        assert "\x1b" not in text and "\x07" not in text and "##[warning]" not in text and "##[group]" not in text
        assert "\n::error::z" not in text and "\r" not in text  # the newline in `by` is shown, never made
        assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert "<img" not in md and "&lt;img" in md
    assert "\\x1b[31mred" in terminal  # ...every rendering shows the escape instead of acting on it
    # the annotations a CI log reads (the action writes them): each one line, no second command in it
    from oloproof.config import load_release
    from oloproof.gate import run_gate
    from oloproof.report import annotations

    result = run_gate(load_release(tmp_path / "release.yaml"))
    lines = annotations.render(result).splitlines()
    assert lines and all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)
    assert all(annotations.inert(line.split("::", 2)[2]) for line in lines)


def test_accepted_is_refused_on_a_transform_people_can_label(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    noise_project(tmp_path, "      accepted: {by: me, reason: fine}\n")
    text = (tmp_path / "release.yaml").read_text().replace("{kind: numeric_noise, scale: 0.6, seed: 7}", "{kind: case, to: upper}")
    (tmp_path / "release.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["gate", "-c", "release.yaml"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert (
        "release.yaml:15: metamorphic.transforms[0].accepted: case is a text transform: people confirm it keeps "
        "meaning with labels (labels: FILE); accepted applies to declared (tabular) transforms only"
    ) in err, err
