"""Metamorphic checks through the real CLI and real systems: flip rates, label states, verdicts, exits."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from oloproof.cli.main import main
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
        bind: bool = True,
    ) -> Gate:
        """``bind``: give each label without a ``digest`` the digest of its current pair, as the
        labelling page would (False: write the labels as given, e.g. hand-written ones)."""
        write_cases(self.root / "data" / "test.jsonl", cases)
        labels_line = "      labels: labels/t.jsonl\n" if labels is not None else ""
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
        if labels is not None:
            digests = self.digests() if bind else {}
            write_cases(self.root / "labels" / "t.jsonl", [
                {**label, "digest": digests[label["id"]]} if "digest" not in label and label["id"] in digests else label
                for label in labels
            ])
        return self

    def digests(self) -> dict[str, str]:
        """Each changed case's digest of the pair a labeller would see now."""
        from oloproof.config import load_release
        from oloproof.gate import load_dev_testset
        from oloproof.metamorphic.variants import transformed_cases

        release = load_release(self.root / "release.yaml")
        return transformed_cases(release, load_dev_testset(release), "t").pair_digests

    def labels(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in (self.root / "labels" / "t.jsonl").read_text().splitlines()]

    def error(self, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
        """Run a command that must fail with a usage error (exit 2); its one-line message."""
        capsys.readouterr()
        code = main([*argv, "-c", "release.yaml"])
        err = capsys.readouterr().err
        assert code == ExitCode.USAGE, err
        assert "Traceback" not in err and "internal error" not in err and err.startswith("oloproof: error: "), err
        return err.removeprefix("oloproof: error: ").strip()

    def gate(self, *argv: str) -> tuple[int, dict[str, Any]]:
        out = self.root / "report.json"
        code = main(["gate", "-c", str(self.root / "release.yaml"), "--json", str(out), *argv])
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


def test_labels_without_a_digest_are_not_bound_to_what_anyone_saw(project: Gate) -> None:
    # Hand-written labels, all "preserved", for `case: upper` ...
    labels = [{"id": f"t{i:03d}", "preserved": True} for i in range(100)]
    project.write(texts(100), field="text", perturb="{kind: case, to: upper}", labels=labels, bind=False,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE, rule(report)
    assert rule(report)["reasons"][-1] == "transform_unlabelled"
    info = meta(report)["labels"]
    assert (meta(report)["status"], info["preserved"], info["unlabelled"], info["unbound"]) == ("unlabelled", 0, 100, 100)
    assert any("100 of 100 changed case(s) have no human label, 100 of them labelled without a digest" in p for p in report["problems"])
    assert "oloproof metamorphic stamp t" in " ".join(report["problems"])
    # ... used to let the rule PASS after the transform was changed to something nobody looked at.
    project.write(texts(100), field="text", perturb="{kind: word_swap, mapping: {film: movie}}", labels=labels, bind=False,
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and meta(report)["flips"] == 0
    assert rule(report)["verdict"] == "INSUFFICIENT_EVIDENCE" and "transform_unlabelled" in rule(report)["reasons"]


def test_stamp_binds_hand_written_labels_only_when_confirmed_and_logs_each(
    project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(project.root)
    labels = [{"id": f"t{i:03d}", "preserved": i != 2, "note": "checked by hand"} for i in range(4)]
    labels.append({"id": "gone", "preserved": True})
    project.write([*texts(4), {"id": "plain", "text": "a fine film", "expected": {"label": 0}}], field="text",
                  perturb="{kind: word_swap, mapping: {film: movie}}", labels=labels, bind=False)
    before = (project.root / "labels" / "t.jsonl").read_bytes()
    message = project.error(capsys, "metamorphic", "stamp", "t")
    assert message.startswith("stamping binds 4 label(s) in labels/t.jsonl to the pairs transform 't' makes now")
    assert "--confirm" in message and (project.root / "labels" / "t.jsonl").read_bytes() == before  # nothing written

    assert main(["metamorphic", "stamp", "t", "-c", "release.yaml", "--confirm"]) == 0
    out = capsys.readouterr().out
    assert "stamped t000: preserved (had no digest)" in out and "stamped t002: changed meaning (had no digest)" in out
    assert "stamped 4 label(s) in labels/t.jsonl" in out and "1 label(s) for cases the transform does not change: left as they were" in out
    digests = project.digests()
    stamped = project.labels()
    assert stamped[:4] == [{**label, "digest": digests[label["id"]]} for label in labels[:4]]  # notes kept, order kept
    assert stamped[4] == {"id": "gone", "preserved": True}
    code, report = project.gate()
    assert code == ExitCode.PASS and "transform_changes_meaning" in report["criteria"]["flips_under_t"]["reasons"]  # no rule reads it
    assert meta(report)["status"] == "changes_meaning" and meta(report)["labels"]["changed_meaning_ids"] == ["t002"]

    # The transform changes: the stamped labels are stale, and a second stamp says so, case by case.
    project.write([*texts(4)], field="text", perturb="{kind: case, to: upper}", labels=stamped, bind=False)
    assert meta(project.gate()[1])["labels"]["stale"] == 4
    assert main(["metamorphic", "stamp", "t", "-c", "release.yaml", "--labels", "labels/t.jsonl", "--confirm"]) == 0
    assert "stamped t001: preserved (was labelled on another change: stale)" in capsys.readouterr().out
    assert main(["metamorphic", "stamp", "t", "-c", "release.yaml", "--confirm"]) == 0
    assert "nothing to stamp: every label of a changed case in labels/t.jsonl is bound to its current pair" in capsys.readouterr().out


def test_a_declared_labels_file_that_does_not_exist_yet_leaves_every_case_unlabelled(
    project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(project.root)
    project.write(texts(6), field="text", perturb="{kind: case, to: upper}", extra="      labels: labels/t.jsonl\n",
                  rule="{id: stable, criterion: flips_under_t, max: 0.05}")
    assert not (project.root / "labels").exists()
    code, report = project.gate()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert rule(report)["reasons"][-1] == "transform_unlabelled" and meta(report)["status"] == "unlabelled"
    assert meta(report)["labels"]["unlabelled"] == 6 and meta(report)["labels"]["file_exists"] is False
    said = "labels/t.jsonl does not exist yet: make it with `oloproof metamorphic label t`"
    assert any(said in problem for problem in report["problems"])
    assert said in rule(report)["sentence"]
    assert main(["metamorphic", "show", "-c", "release.yaml"]) == 0
    out = capsys.readouterr().out
    assert "6 changed, 0 not applicable; unlabelled" in out and said in " ".join(out.split())


# --------------------------------------------------------------------------- bad input: exit 2 with file:line


def test_an_image_path_with_a_nul_byte_names_the_case_line(project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    cases = scratches(project.root, 3)
    cases[1]["image"] = "images/s1.png\u0000.txt"
    project.write(cases, field="image", perturb="{kind: blur, radius: 2}")
    for argv in (["gate"], ["metamorphic", "show"], ["metamorphic", "label", "t"]):
        assert project.error(capsys, *argv) == (
            "data/test.jsonl:2: case 's1': image: an image path must not contain a NUL byte: 'images/s1.png\\x00.txt' (transform 't')"
        )


def test_a_decompression_bomb_names_the_case_line(project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    cases = scratches(project.root, 3)
    Image.new("L", (64, 64), 200).save(project.root / "images" / "s2.png")  # 4096 pixels, over twice the limit below
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 1500)
    project.write(cases, field="image", perturb="{kind: occlusion, size: 0.2}")
    message = project.error(capsys, "gate")
    assert message.startswith("data/test.jsonl:3: case 's2': image: cannot read image images/s2.png: too large to decode safely (")
    assert message.endswith(" (transform 't')")


@pytest.mark.parametrize("where", ["../outside/secret.png", "ABSOLUTE", "images/link.png"])
def test_an_image_outside_the_project_is_never_read(
    project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, where: str,
) -> None:
    root = project.root / "project"
    root.mkdir()
    project = Gate(root)
    monkeypatch.chdir(root)
    outside = root.parent / "outside"
    outside.mkdir()
    Image.new("L", (16, 16), 100).save(outside / "secret.png")  # the scratches are 32 x 32
    cases = scratches(root, 3)
    (root / "images" / "link.png").symlink_to(outside / "secret.png")
    cases[1]["image"] = str(outside / "secret.png") if where == "ABSOLUTE" else where
    project.write(cases, field="image", perturb="{kind: brightness, factor: 1.5}")
    for argv in (["gate"], ["metamorphic", "label", "t"], ["metamorphic", "cases", "t", "-o", "copies.jsonl"]):
        message = project.error(capsys, *argv)
        assert message.startswith(f"data/test.jsonl:2: case 's1': image: image path {cases[1]['image']} leaves the project: it resolves to ")
        assert f"outside {root} (the directory of release.yaml)" in message
    copied = list((root / ".oloproof" / "metamorphic").rglob("*.png")) if (root / ".oloproof" / "metamorphic").exists() else []
    assert copied and all(Image.open(path).size == (32, 32) for path in copied)  # the secret was never copied in
    assert not (root / "t-labels.html").exists() and not (root / "copies.jsonl").exists()


def test_a_symlinked_output_directory_is_refused(project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)
    elsewhere = project.root.parent / f"{project.root.name}-elsewhere"
    elsewhere.mkdir()
    (project.root / ".oloproof" / "metamorphic").mkdir(parents=True)
    (project.root / ".oloproof" / "metamorphic" / "t").symlink_to(elsewhere, target_is_directory=True)
    project.write(scratches(project.root, 3), field="image", perturb="{kind: blur, radius: 2}")
    message = project.error(capsys, "gate")
    assert message.startswith("refusing to write transformed images of 't' to ") and str(elsewhere) in message
    assert ".oloproof/metamorphic/t/" in message and "outside .oloproof/" in message
    assert list(elsewhere.iterdir()) == []
    # A symlinked .oloproof/ as a whole (the store on another disk) is the store: allowed.
    (project.root / ".oloproof" / "metamorphic" / "t").unlink()
    store = project.root.parent / f"{project.root.name}-store"
    (project.root / ".oloproof").rename(store)
    (project.root / ".oloproof").symlink_to(store, target_is_directory=True)
    assert project.gate()[0] == ExitCode.PASS
    assert len(list((store / "metamorphic" / "t").glob("*/*.png"))) == 3 and list(elsewhere.iterdir()) == []


def test_a_labels_path_outside_the_project_is_a_config_error(
    project: Gate, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = project.root / "project"
    root.mkdir()
    project = Gate(root)
    monkeypatch.chdir(root)
    (root.parent / "outside.jsonl").write_text('{"id": "t000", "preserved": true}\n')
    project.write(texts(3), field="text", perturb="{kind: case, to: upper}", extra="      labels: ../outside.jsonl\n")
    for argv in (["gate"], ["metamorphic", "show"], ["metamorphic", "label", "t"], ["metamorphic", "stamp", "t", "--confirm"]):
        assert project.error(capsys, *argv) == (
            f"release.yaml:15: metamorphic.transforms[0].labels: ../outside.jsonl leaves the project: it resolves to "
            f"{root.parent / 'outside.jsonl'}, outside {root} (the directory of release.yaml); keep the labels file under that directory"
        )


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
    config = project.root / "release.yaml"
    # The system runs elsewhere (a GPU job): release.yaml declares no command, outputs are imported.
    config.write_text("\n".join(line for line in config.read_text().splitlines() if "command:" not in line) + "\n")
    transformed = project.root / "copies.jsonl"
    assert main(["metamorphic", "cases", "t", "-c", str(config), "-o", str(transformed)]) == 0
    capsys.readouterr()
    lines = [json.loads(line) for line in transformed.read_text().splitlines()]
    assert lines and all(set(line) == {"id", "answer"} for line in lines)  # never `expected`
    echo = [sys.executable, str(ECHO)]
    answers = subprocess.run(echo, input=transformed.read_bytes(), capture_output=True, check=True).stdout
    (project.root / "answers.jsonl").write_bytes(answers)
    originals = b"".join(json.dumps({"id": case["id"], "answer": case["answer"]}).encode() + b"\n" for case in cases)
    (project.root / "main.jsonl").write_bytes(subprocess.run(echo, input=originals, capture_output=True, check=True).stdout)
    assert main(["run", "-c", str(config), "--outputs", str(project.root / "main.jsonl"), "--version", "v1"]) == 0
    assert main(["metamorphic", "import", "t", "-c", str(config), "--outputs", str(project.root / "answers.jsonl"), "--version", "v1"]) == 0
    imported = capsys.readouterr().out.splitlines()[-1].split()[1]
    _, report = project.gate()
    assert meta(report)["run"]["run_id"] == imported and meta(report)["run"]["reused"] is True
    assert main(["metamorphic", "show", "-c", str(config), "--json", str(project.root / "show.json")]) == 0
    shown = json.loads((project.root / "show.json").read_text())["transforms"][0]
    assert shown["applicable"] == len(lines) and shown["status"] == "declared"



def test_imported_copies_never_stand_in_for_the_declared_command(project: Gate, capsys: pytest.CaptureFixture[str]) -> None:

    cases = [{"id": f"c{i}", "answer": i, "expected": {"label": i}} for i in range(20)]
    project.write(cases, field="answer", perturb="{kind: numeric_noise, scale: 3.0, seed: 1}", system=ECHO)
    config = str(project.root / "release.yaml")
    transformed = project.root / "copies.jsonl"
    assert main(["metamorphic", "cases", "t", "-c", config, "-o", str(transformed)]) == 0
    flat = b"".join(json.dumps({"id": json.loads(line)["id"], "label": -1}).encode() + b"\n" for line in transformed.read_bytes().splitlines())
    (project.root / "forged.jsonl").write_bytes(flat)  # every copy "flipped": not what the system says
    assert main(["metamorphic", "import", "t", "-c", config, "--outputs", str(project.root / "forged.jsonl"), "--version", "v1"]) == 0
    imported = capsys.readouterr().out.splitlines()[-1].split()[1]
    _, report = project.gate()
    assert meta(report)["run"]["run_id"] != imported and meta(report)["run"]["reused"] is False  # the system ran them
