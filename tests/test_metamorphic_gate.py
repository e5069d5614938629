"""Metamorphic checks through the real CLI and real systems: flip rates, label states, verdicts, exits."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from oloproof.cli import main
from oloproof.errors import ExitCode
from tests.conftest import ECHO, FIXTURES, write_cases

SYSTEM = FIXTURES / "metamorphic" / "system.py"


class Gate:
    """A project on disk: release.yaml with one transform, the system, the test set, the labels."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def write(
        self, cases: list[dict[str, Any]], *, field: str, perturb: str, rule: str | None = None, system: Path = SYSTEM,
        relation: str = "relation: same_label, field: label", labels: list[dict[str, Any]] | None = None, extra: str = "",
    ) -> Gate:
        write_cases(self.root / "data" / "test.jsonl", cases)
        labels_line = ""
        if labels is not None:
            write_cases(self.root / "labels" / "t.jsonl", labels)
            labels_line = "      labels: labels/t.jsonl\n"
        rules = "    - {id: accurate, criterion: correct, min: 0.01}\n" + (f"    - {rule}\n" if rule else "")
        (self.root / "release.yaml").write_text(
            f"system:\n  version: v1\n  command: {json.dumps([sys.executable, str(system)])}\n  timeout_s: 30\n"
            "testset:\n  cases: data/test.jsonl\n"
            "evaluators:\n  - {type: label_match, field: label}\n"
            f"  - {{type: metamorphic_relation, transform: t, {relation}}}\n"
            f"metamorphic:\n  transforms:\n    - name: t\n      field: {field}\n      perturb: {perturb}\n{labels_line}{extra}"
            f"policy:\n  rules:\n{rules}",
            encoding="utf-8",
        )
        return self

    def gate(self, *argv: str) -> tuple[int, dict[str, Any]]:
        out = self.root / "report.json"
        code = main(["gate", "-c", str(self.root / "release.yaml"), "--json", str(out), "-q", *argv])
        return code, json.loads(out.read_text())


@pytest.fixture
def project(tmp_path: Path) -> Gate:
    return Gate(tmp_path)


def meta(report: dict[str, Any], criterion: str = "flips_under_t") -> dict[str, Any]:
    return report["criteria"][criterion]["details"]["metamorphic"]


def rule(report: dict[str, Any], rule_id: str = "stable") -> dict[str, Any]:
    return next(item for item in report["rules"] if item["id"] == rule_id)


def texts(n: int, text: str = "a good film") -> list[dict[str, Any]]:
    return [{"id": f"t{i:03d}", "text": text, "expected": {"label": 1}} for i in range(n)]


# --------------------------------------------------------------------------- declared


def test_declared_noise_reports_its_rate_and_never_decides(project: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    # The echo system answers its input `answer`: a case flips exactly when the noise changed it.
    cases = [{"id": f"c{i}", "answer": i % 3, "expected": {"label": i % 3}} for i in range(60)]
    project.write(cases, field="answer", perturb="{kind: numeric_noise, scale: 0.6, seed: 7}", system=ECHO,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    info = meta(report)
    assert info["status"] == "declared" and info["kind"] == "numeric_noise" and info["params"]["seed"] == 7
    assert info["applicable"] + info["not_applicable"] == 60 and 10 < info["applicable"] < 50
    assert info["flips"] == info["applicable"] and info["flip_rate"] == 1.0  # every changed answer is a flipped label
    assert report["criteria"]["flips_under_t"]["n"] == info["applicable"]  # not-applicable cases are not in the rate
    assert rule(report)["verdict"] == "INSUFFICIENT_EVIDENCE" and "transform_declared" in rule(report)["reasons"]
    assert rule(report)["interval"]["method"] == "clopper-pearson" and rule(report)["n"] == info["applicable"]
    assert any("attacker's search" in line for line in report["limitations"])
    assert any("Certified" in line or "certified" in line for line in report["limitations"])
    out = capsys.readouterr().out
    assert f"t (numeric_noise on answer; flips_under_t): flip rate 1.000 ({info['flips']}/{info['applicable']} changed cases; " in out
    assert "declared" in out

    # The variant run is stored as kind metamorphic:t and reused; --rerun makes a new one.
    first = info["run"]
    assert first["reused"] is False
    stored = json.loads((project.root / ".oloproof/runs" / first["run_id"] / "run.json").read_text())
    assert stored["kind"] == "metamorphic:t" and stored["testset"]["digest"] == first["testset_digest"]
    assert stored["n_cases"] == info["applicable"]
    _, again = project.gate()
    assert meta(again)["run"] == {**first, "reused": True}
    _, rerun = project.gate("--rerun")
    assert meta(rerun)["run"]["run_id"] != first["run_id"] and meta(rerun)["run"]["testset_digest"] == first["testset_digest"]


def test_categorical_swap_is_declared_too(project: Gate) -> None:
    cases = [{"id": f"c{i}", "answer": ["yes", "no", "maybe"][i % 3], "expected": {"label": "yes"}} for i in range(9)]
    project.write(cases, field="answer", perturb="{kind: categorical_swap, mapping: {'yes': 'no', 'no': 'yes'}}", system=ECHO)
    code, report = project.gate()
    assert code == ExitCode.PASS  # no rule reads the flip rate; it is reported all the same
    info = meta(report)
    assert (info["applicable"], info["not_applicable"], info["flips"], info["status"]) == (6, 3, 6, "declared")
    assert info["not_applicable_reasons"] == {"no value of this case is in the declared mapping": 3}


# --------------------------------------------------------------------------- validated: the three label states


def test_all_labels_preserved_lets_the_rule_pass(project: Gate) -> None:
    # A case-insensitive system under a change of case: no flips in 100 cases, upper bound 0.036 <= 0.05.
    cases = [*texts(100), {"id": "upper", "text": "ALREADY UPPER", "expected": {"label": 0}}]
    labels = [{"id": f"t{i:03d}", "preserved": True} for i in range(100)]
    project.write(cases, field="text", perturb="{kind: case, to: upper}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.PASS, rule(report)
    info = meta(report)
    assert info["status"] == "validated" and info["flips"] == 0 and info["not_applicable"] == 1
    assert info["labels"]["preserved"] == 100 and info["labels"]["unused"] == 0
    assert rule(report)["verdict"] == "PASS" and rule(report)["interval"]["high"] == pytest.approx(1 - 0.025 ** (1 / 100))


def test_all_labels_preserved_and_many_flips_fail(project: Gate) -> None:
    cases = texts(10)
    labels = [{"id": f"t{i:03d}", "preserved": True} for i in range(10)]
    project.write(cases, field="text", perturb="{kind: word_swap, mapping: {good: fine}}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.FAIL
    assert rule(report)["verdict"] == "FAIL" and rule(report)["reasons"][0] == "interval_misses_threshold"
    assert meta(report)["flip_rate"] == 1.0 and meta(report)["flipped_ids"][:2] == ["t000", "t001"]


def test_a_case_labelled_as_changing_meaning_stops_the_rule(project: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    labels = [{"id": f"t{i:03d}", "preserved": i != 3} for i in range(10)]
    project.write(texts(10), field="text", perturb="{kind: word_swap, mapping: {good: fine}}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert "transform_changes_meaning" in rule(report)["reasons"]
    assert meta(report)["status"] == "changes_meaning"
    assert meta(report)["labels"]["changed_meaning_ids"] == ["t003"]
    assert "People labelled 1 changed case(s) as changing meaning (t003)." in rule(report)["sentence"]
    assert "t003" in capsys.readouterr().out


def test_missing_and_stale_labels_leave_the_rule_undecided(project: Gate) -> None:
    labels = [{"id": f"t{i:03d}", "preserved": True} for i in range(8)]  # t008, t009 unlabelled
    labels[0]["digest"] = "sha256:made-on-another-change"  # stale: counts as no label
    labels.append({"id": "not-in-the-set", "preserved": True})
    project.write(texts(10), field="text", perturb="{kind: word_swap, mapping: {good: fine}}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert rule(report)["reasons"][-1] == "transform_unlabelled"
    info = meta(report)
    assert info["status"] == "unlabelled"
    assert info["labels"]["unlabelled_ids"] == ["t000", "t008", "t009"] and info["labels"]["stale_ids"] == ["t000"]
    assert info["labels"]["unused"] == 1
    assert any("3 of 10 changed case(s) have no human label, 1 of them labelled on a different change (stale)" in p for p in report["problems"])


def test_no_labels_file_is_unlabelled(project: Gate) -> None:
    project.write(texts(5), field="text", perturb="{kind: typos, rate: 0.05, seed: 1}", rule="{id: stable, criterion: flips_under_t, max: 0.5}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert meta(report)["status"] == "unlabelled" and meta(report)["labels"]["unlabelled"] == 5
    assert "`oloproof metamorphic label t`" in rule(report)["sentence"]


# --------------------------------------------------------------------------- applicability and missing outputs


def test_a_transform_that_changes_nothing_has_no_rate(project: Gate) -> None:
    project.write(texts(5, "nothing to swap here"), field="text", perturb="{kind: word_swap, mapping: {good: fine}}",
                  labels=[], rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert rule(report)["reasons"] == ["no_applicable_cases"] and rule(report)["n"] == 0
    info = meta(report)
    assert info["applicable"] == 0 and info["not_applicable"] == 5 and info["run"] is None and info["flip_rate"] is None
    assert info["not_applicable_reasons"] == {"none of the declared words occurs in the text": 5}


def test_a_system_that_crashes_on_the_copies_leaves_their_outputs_missing(project: Gate) -> None:
    cases = [*texts(4), {"id": "x", "text": "no such word", "expected": {"label": 0}}]
    labels = [{"id": f"t{i:03d}", "preserved": True} for i in range(4)]
    project.write(cases, field="text", perturb="{kind: word_swap, mapping: {good: CRASH}}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.5}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    criterion = report["criteria"]["flips_under_t"]
    assert criterion["missing"] == 4 and criterion["missing_ids"] == ["t000", "t001", "t002", "t003"]
    assert criterion["notes"]["t000"] == "no output 'label' on the transformed case"
    assert "run_failed" in criterion["reasons"] and "missing_outputs" in rule(report)["reasons"]
    assert rule(report)["interval"]["low"] == 0.0 and rule(report)["interval"]["high"] == 1.0
    assert meta(report)["run"]["status"] == "failed"


def test_same_score_within_and_passes_when_unchanged(project: Gate) -> None:
    cases = [{"id": f"c{i}", "features": {"x": float(i - 5)}, "expected": {"label": int(i > 5)}} for i in range(11)]
    project.write(cases, field="features", perturb="{kind: numeric_noise, scale: {x: 0.5}, seed: 2}",
                  relation="relation: same_score_within, field: score, tolerance: 0.5, passes_when: unchanged")
    code, report = project.gate()
    assert code == ExitCode.PASS
    info = meta(report, "stable_under_t")
    assert info["relation"] == "same_score_within" and info["applicable"] == 11
    moved = report["criteria"]["stable_under_t"]["failed_ids"]
    assert moved == info["flipped_ids"] and info["flips"] == len(moved)  # unchanged passes; a move past 0.5 fails
    assert 0 < info["flips"] < 11


# --------------------------------------------------------------------------- images


def scratches(root: Path, n: int) -> list[dict[str, Any]]:
    (root / "images").mkdir(parents=True, exist_ok=True)
    cases = []
    for i in range(n):
        image = Image.new("L", (32, 32), 205)
        ImageDraw.Draw(image).line([(3, 3 + i), (28, 20)], fill=25, width=1)
        image.save(root / "images" / f"s{i}.png")
        cases.append({"id": f"s{i}", "image": f"images/s{i}.png", "expected": {"label": 1}})
    return cases


def test_a_labelled_blur_whose_flip_rate_is_over_its_cap_fails(project: Gate) -> None:
    cases = scratches(project.root, 8)
    labels = [{"id": f"s{i}", "preserved": True} for i in range(8)]
    project.write(cases, field="image", perturb="{kind: blur, radius: 2}", labels=labels,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.FAIL
    assert meta(report)["flips"] == 8 and meta(report)["family"] == "image"
    written = sorted((project.root / ".oloproof" / "metamorphic" / "t").glob("*/*.png"))
    assert len(written) == 8


def test_a_grey_patch_labelled_as_covering_the_scratch_does_not_decide(project: Gate) -> None:
    cases = scratches(project.root, 6)
    project.write(cases, field="image", perturb="{kind: occlusion, size: 0.5, seed: 4}",
                  labels=[{"id": f"s{i}", "preserved": i % 2 == 0} for i in range(6)],
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert meta(report)["labels"]["changed_meaning_ids"] == ["s1", "s3", "s5"]


# --------------------------------------------------------------------------- outputs produced elsewhere


def test_cases_and_import_let_a_system_run_elsewhere(project: Gate, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    cases = [{"id": f"c{i}", "answer": i, "expected": {"label": i}} for i in range(20)]
    project.write(cases, field="answer", perturb="{kind: numeric_noise, scale: 3.0, seed: 1}", system=ECHO)
    config = str(project.root / "release.yaml")
    transformed = project.root / "copies.jsonl"
    assert main(["metamorphic", "cases", "t", "-c", config, "-o", str(transformed)]) == 0
    capsys.readouterr()
    lines = [json.loads(line) for line in transformed.read_text().splitlines()]
    assert lines and all(set(line) == {"id", "answer"} for line in lines)  # never `expected`
    answers = subprocess.run([sys.executable, str(ECHO)], input=transformed.read_bytes(), capture_output=True, check=True).stdout
    (project.root / "answers.jsonl").write_bytes(answers)
    assert main(["metamorphic", "import", "t", "-c", config, "--outputs", str(project.root / "answers.jsonl"), "--version", "v1"]) == 0
    imported = capsys.readouterr().out.split()[1]
    _, report = project.gate()
    assert meta(report)["run"]["run_id"] == imported and meta(report)["run"]["reused"] is True

    assert main(["metamorphic", "show", "-c", config, "--json", str(project.root / "show.json")]) == 0
    shown = json.loads((project.root / "show.json").read_text())["transforms"][0]
    assert shown["applicable"] == len(lines) and shown["status"] == "declared"
