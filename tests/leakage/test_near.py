"""`oloproof leakage check --near`: near copies of test cases in the training data, as a separate
finding (text by n-gram overlap and MinHash + LSH, pictures by perceptual hashes, numbers within a
declared tolerance), and what the gate makes of them under `near: report|invalidate`."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

pytest.importorskip("datasketch", reason="SKIPPED LOUDLY: near-duplicate tests need pip install 'oloproof[near]'")
pytest.importorskip("imagehash", reason="SKIPPED LOUDLY: near-duplicate tests need pip install 'oloproof[near]'")

from PIL import Image, ImageEnhance

MARKER = "zq-private-marker-7731"
RNG = random.Random(20)
VOCAB = sorted({"".join(RNG.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(RNG.randint(3, 9))) for _ in range(4000)})


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(VOCAB) for _ in range(n))


def edits() -> dict[str, Any]:
    def case_punct(t: str) -> str:
        return "  " + t.upper().replace(" ", " ,  ", 6) + " ?!"

    def truncate(t: str) -> str:
        return " ".join(t.split()[:30])

    def swap(t: str) -> str:
        w = t.split()
        for i in range(0, len(w) - 1, 6):
            w[i], w[i + 1] = w[i + 1], w[i]
        return " ".join(w)

    def insert(t: str) -> str:
        out = []
        for i, word in enumerate(t.split()):
            out.append(word)
            if i % 8 == 3:
                out.append("indeed")
        return " ".join(out)

    def embed(t: str) -> str:
        return words(random.Random(1), 40) + " " + t + " " + words(random.Random(2), 40)

    return {"p00": case_punct, "p01": truncate, "p02": swap, "p03": insert, "p04": embed}


def text_project(project: Project, extra: str = "") -> Path:
    rng = random.Random(7)
    cases = [{"id": f"p{i:02d}", "prompt": words(rng, 40), "answer": 1, "expected": {"label": 1}} for i in range(30)]
    project.write(cases=cases, system_args="--field label", extra=extra)
    rows = [{"prompt": words(rng, rng.randint(20, 80)), "label": 0} for _ in range(600)]
    by_id = {case["id"]: case["prompt"] for case in cases}
    for case_id, edit in edits().items():
        rows.append({"prompt": edit(by_id[case_id]), "label": 1})
    rows.append({"prompt": by_id["p05"], "label": 1})  # an exact copy: found as a leak, not as a near copy
    rows.append({"prompt": f"{MARKER} " + words(rng, 30), "label": 1, MARKER: MARKER})
    training = project.root / "training.jsonl"
    training.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return training


def check(project: Project, training: Path, *options: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(training), "--field", "prompt", "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


def test_text_near_copies_found_by_id_with_similarity_and_count(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    training = text_project(project)
    code, result = check(project, training, "--near")
    assert result["leaked_ids"] == ["p05"]
    near = result["near"]
    assert [case["id"] for case in near["cases"]] == ["p00", "p01", "p02", "p03", "p04"]  # every edit, nothing unrelated
    assert all(case["kind"] == "text" and case["count"] == 1 for case in near["cases"])
    scores = {case["id"]: case for case in near["cases"]}
    assert scores["p00"]["ngram"] == 1.0 and scores["p04"]["ngram"] == 1.0  # punctuation/case; embedded in a longer text
    assert scores["p01"]["ngram"] == pytest.approx(18 / 28, abs=1e-4)  # 30 of 40 words kept: 18 of the 28 13-grams
    assert scores["p02"]["jaccard"] == 1.0 and scores["p02"]["ngram"] < 0.5  # swaps break every 13-gram, not the word set
    assert near["thresholds"] == {"ngram": 13, "ngram_threshold": 0.5, "jaccard_threshold": 0.8, "hamming": 10, "tolerance": {}}
    assert result["near_duplicates_checked"] is True
    assert code == 4  # the exact leak; near copies alone decide nothing (below)
    out = capsys.readouterr().out
    assert "Near-duplicates are not checked" not in out
    assert "Near-duplicates checked on prompt (text: 13-gram overlap ≥ 0.5 or word-set Jaccard ≥ 0.8 (MinHash + LSH)" in out
    assert "  p02: text, similarity 1.00, ngram 0, jaccard 1, 1 training row(s)" in out


def test_near_copies_alone_exit_0_and_thresholds_are_flags(project: Project) -> None:
    training = text_project(project)
    lines = [line for line in training.read_text().splitlines() if "p05" not in line]
    training.write_text("\n".join(line for line in lines if json.loads(line)["prompt"] != "") + "\n")
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    training.write_text("".join(json.dumps(row) + "\n" for row in rows[:-2] + rows[-1:]))  # drop the exact copy
    code, result = check(project, training, "--near")
    assert (code, result["leaked_ids"], result["near"]["n_cases"]) == (0, [], 5)
    code, result = check(project, training, "--near", "--ngram-threshold", "1", "--jaccard-threshold", "1")
    assert [case["id"] for case in result["near"]["cases"]] == ["p00", "p02", "p04"]
    assert result["near"]["thresholds"]["ngram_threshold"] == 1.0


def test_without_near_nothing_changes(project: Project) -> None:
    training = text_project(project)
    _, result = check(project, training)
    assert result["near_duplicates_checked"] is False and "near" not in result
    assert result["note"].startswith("Near-duplicates are not checked")


def _gate(project: Project) -> dict[str, Any]:
    out = project.root / "gate.json"
    out.unlink(missing_ok=True)
    code = project.cli("gate", "--json", str(out))
    report = json.loads(out.read_text())
    report["exit"] = code
    return report


def test_near_invalidate_through_the_gate(project: Project) -> None:
    training = text_project(project, extra="leakage: {required: true, near: invalidate}\n")
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    training.write_text("".join(json.dumps(row) + "\n" for row in rows[:-2] + rows[-1:]))
    code, result = check(project, training, "--record")  # near: declared, so the check looks for near copies
    assert code == 4 and result["leaked_ids"] == [] and result["near"]["n_cases"] == 5
    report = _gate(project)
    assert report["exit"] == 4 and report["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert all("near_duplicate_cases" in rule["reasons"] for rule in report["rules"])
    leakage = next(item for item in report["checks"] if item["name"] == "leakage")
    assert leakage["data"]["near_ids"] == ["p00", "p01", "p02", "p03", "p04"]


def test_near_report_changes_no_verdict(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    training = text_project(project, extra="leakage: {required: true, near: report}\n")
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    training.write_text("".join(json.dumps(row) + "\n" for row in rows[:-2] + rows[-1:]))
    code, result = check(project, training, "--record")
    assert code == 0 and result["near"]["n_cases"] == 5
    report = _gate(project)
    assert report["verdict"] == "PASS" and report["exit"] == 0
    assert not any("near_duplicate_cases" in rule["reasons"] for rule in report["rules"])
    capsys.readouterr()
    assert project.cli("gate") == 0
    out = capsys.readouterr().out
    assert "near copies of rows of training.jsonl (5, reported only" in out
    assert "13-gram overlap ≥ 0.5" in out  # the thresholds, said where the near copies are listed
    assert "p00, p01, p02, p03, p04" in out
    assert "near copies edited beyond the declared near-duplicate thresholds" in out.replace("\n", " ")


def test_near_required_blocks_on_a_record_without_near(project: Project) -> None:
    training = text_project(project, extra="leakage: required\n")
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    training.write_text("".join(json.dumps(row) + "\n" for row in rows[:-2] + rows[-1:]))
    assert check(project, training, "--record")[0] == 0
    project.write(system_args="--field label", extra="leakage: {required: true, near: invalidate}\n")
    report = _gate(project)
    assert report["exit"] == 3 and report["verdict"] == "BLOCKED"
    leakage = next(item for item in report["checks"] if item["name"] == "leakage")
    assert "did not look for near-duplicates" in leakage["sentence"]


def test_no_training_value_reaches_any_output_or_file_with_near(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    training = text_project(project, extra="leakage: {required: true, near: report}\n")
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    rng = random.Random(3)
    prompts = [json.loads(line)["prompt"] for line in (project.root / "data" / "test.jsonl").read_text().splitlines()]
    rows.append({"prompt": prompts[9] + f" {MARKER}", "label": 1})  # a near copy holding the marker
    rows.append({"prompt": words(rng, 3) + MARKER, "label": 1})
    training.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, result = check(project, training, "--near", "--record")
    assert code == 4  # p05 is an exact copy
    assert "p09" in [item["id"] for item in result["near"]["cases"]]
    project.cli("gate", "--json", str(project.root / "gate.json"))
    captured = capsys.readouterr()
    assert MARKER not in captured.out + captured.err
    for path in project.root.rglob("*"):
        if path.is_file() and path != training:
            assert MARKER.encode() not in path.read_bytes(), path


# --------------------------------------------------------------------------- images


def picture(seed: int) -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("RGB", (96, 64))
    for _ in range(12):  # blocks of colour: structure a perceptual hash sees
        x, y = rng.randrange(80), rng.randrange(48)
        colour = tuple(rng.randrange(256) for _ in range(3))
        image.paste(colour, (x, y, x + rng.randint(8, 40), y + rng.randint(8, 30)))
    return image


def test_image_near_copies_resized_reencoded_cropped_recoloured(project: Project, tmp_path: Path) -> None:
    (project.root / "img").mkdir()
    cases = []
    for i in range(12):
        picture(i).save(project.root / "img" / f"t{i}.png")
        cases.append({"id": f"i{i:02d}", "image": f"img/t{i}.png", "expected": {"label": 1}})
    project.write(cases=cases)
    planted = {
        "i00": picture(0).resize((192, 128)),
        "i01": picture(1).resize((48, 32)),
        "i03": picture(3).crop((2, 2, 94, 62)),
        "i04": ImageEnhance.Brightness(picture(4)).enhance(1.1),
        "i05": picture(5).convert("L").convert("RGB"),
    }
    rows = []
    for case_id, image in planted.items():
        image.save(project.root / "img" / f"n-{case_id}.png")
        rows.append({"image": f"img/n-{case_id}.png"})
    picture(2).save(project.root / "img" / "n-i02.jpg", quality=60)  # JPEG re-encoded
    rows.append({"image": "img/n-i02.jpg"})
    for seed in range(100, 160):  # unrelated pictures
        picture(seed).save(project.root / "img" / f"u{seed}.png")
        rows.append({"image": f"img/u{seed}.png"})
    training = project.root / "training.jsonl"
    training.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = project.root / "leakage.json"
    code = project.cli("leakage", "check", "--training", str(training), "--near", "--json", str(out), "-q")
    result = json.loads(out.read_text())
    assert code == 0 and result["leaked_ids"] == []
    near = result["near"]
    assert [case["id"] for case in near["cases"]] == ["i00", "i01", "i02", "i03", "i04", "i05"]
    assert all(case["kind"] == "image" and case["count"] == 1 and case["hamming"] <= 10 for case in near["cases"])
    assert near["image_keys"] == ["image"]
    # split across two forked workers: the same near section
    code = project.cli("leakage", "check", "--training", str(training), "--near", "--jobs", "2", "--json", str(out), "-q")
    assert code == 0 and json.loads(out.read_text())["near"] == near


# --------------------------------------------------------------------------- tabular


def test_tabular_tolerance_per_column(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        {"id": f"r{i}", "features": {"income": 10.0 + i, "age": 30 + i, "job": "clerk"}, "expected": {"label": 1}}
        for i in range(6)
    ]
    project.write(cases=cases, extra="leakage:\n  required: false\n  near: report\n  tolerance: {features.income: 0.05}\n")
    rows = [
        {"features": {"income": 10.04, "age": 30, "job": "Clerk"}},  # r0: within 0.05
        {"features": {"income": 10.96, "age": 31, "job": "clerk"}},  # r1: within 0.05
        {"features": {"income": 12.06, "age": 32, "job": "clerk"}},  # r2: 0.06 away: not near
        {"features": {"income": 13.0, "age": 34, "job": "clerk"}},  # age differs, no tolerance on age
        {"features": {"income": 14.01, "age": 34, "job": "nurse"}},  # job differs
        {"features": {"income": 15.0, "age": 35, "job": "clerk"}},  # r5 exactly: a leak, not a near copy
    ]
    training = project.root / "training.jsonl"
    training.write_text("".join(json.dumps(row) + "\n" for row in rows))
    out = project.root / "leakage.json"
    code = project.cli("leakage", "check", "--training", str(training), "--json", str(out), "-q")
    result = json.loads(out.read_text())
    assert code == 4 and result["leaked_ids"] == ["r5"]
    assert [(c["id"], c["kind"], c["count"]) for c in result["near"]["cases"]] == [("r0", "tabular", 1), ("r1", "tabular", 1)]
    assert result["near"]["cases"][0]["similarity"] == pytest.approx(0.2)  # 0.04 of 0.05 used
    # the flag adds a tolerance; the CSV form of the same rows
    csv = project.root / "training.csv"
    csv.write_text("income,age,job\n" + "".join(f"{r['features']['income']},{r['features']['age']},{r['features']['job']}\n" for r in rows))
    code = project.cli("leakage", "check", "--training", str(csv), "--near", "--tolerance", "features.age=1", "--json", str(out), "-q")
    result = json.loads(out.read_text())
    assert [c["id"] for c in result["near"]["cases"]] == ["r0", "r1", "r3"]
    assert result["near"]["thresholds"]["tolerance"] == {"features.age": 1.0, "features.income": 0.05}


# --------------------------------------------------------------------------- careless users


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--near", "--ngram", "0"], "--ngram: expected a number of words from 1 to 64, got 0"),
        (["--near", "--ngram-threshold", "1.5"], "--ngram-threshold: expected a fraction in (0, 1], got 1.5"),
        (["--near", "--jaccard-threshold", "0"], "--jaccard-threshold: expected a fraction in (0, 1], got 0"),
        (["--near", "--hamming", "40"], "--hamming: expected a number of bits from 0 to 32 (of 64), got 40"),
        (["--near", "--tolerance", "features.income"], "--tolerance: expected KEY=X with X a number >= 0"),
        (["--near", "--tolerance", "prompt=-1"], "--tolerance: expected KEY=X with X a number >= 0"),
        (["--near", "--tolerance", "nosuch=1"], "--tolerance: nosuch is not a compared case key (compared: prompt)"),
        (["--hamming", "4"], "--ngram, --ngram-threshold, --jaccard-threshold, --hamming and --tolerance need --near"),
    ],
)
def test_bad_near_options(project: Project, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    training = text_project(project)
    code, _ = check(project, training, *argv)
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("leakage", "message"),
    [
        ("{required: true, near: always}", "leakage.near: expected one of: report, invalidate; got 'always'"),
        ("{near: report}", "leakage: missing required key 'required'"),
        ("{required: true, ngram_threshold: 2}", "leakage.ngram_threshold: expected a number in (0, 1], got 2"),
        ("{required: true, hamming: -1}", "leakage.hamming: expected a number in [0, 32], got -1"),
        ("{required: true, tolerance: {a: -1}}", "leakage.tolerance.a: expected a number >= 0, got -1"),
        ("{required: true, nearr: report}", "leakage.nearr: unknown key"),
    ],
)
def test_bad_release_yaml_near(project: Project, leakage: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    training = text_project(project, extra=f"leakage: {leakage}\n")
    code, _ = check(project, training)
    assert code == 2
    lines = (project.root / "release.yaml").read_text().splitlines()
    at = lines.index(f"leakage: {leakage}") + 1
    assert f"release.yaml:{at}: {message}" in capsys.readouterr().err


def test_near_without_the_extra_exits_2_naming_it(project: Project) -> None:
    """A real subprocess in which datasketch cannot be found, as on an install without the extra."""
    import subprocess

    training = text_project(project)
    env_code = (
        "import importlib.util, sys\n"
        "real = importlib.util.find_spec\n"
        "importlib.util.find_spec = lambda name, *a: None if name == 'datasketch' else real(name, *a)\n"
        "from oloproof.cli.main import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    src = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", env_code, "leakage", "check", "-c", project.config, "--training", str(training), "--near", "-q"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "--near needs datasketch, which is not installed: pip install 'oloproof[near]'" in done.stderr


# --------------------------------------------------------------------------- hostile records


@pytest.mark.parametrize(
    "forged",
    [
        {"cases": "p00"},
        {"cases": [{"id": 7, "kind": "text", "similarity": 1, "count": 1}]},
        {"cases": [{"id": "p00", "kind": "text", "similarity": "high", "count": 1}]},
        {"thresholds": None, "cases": []},
    ],
)
def test_a_forged_near_section_is_an_invalid_record(
    project: Project, forged: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    training = text_project(project, extra="leakage: {required: true, near: invalidate}\n")
    check(project, training, "--record")
    record = next((project.root / ".oloproof" / "evidence" / "leakage").glob("*.json"))
    data = json.loads(record.read_text())
    data["near"] = data["near"] | forged
    record.write_text(json.dumps(data))
    capsys.readouterr()
    assert project.cli("gate") == 2
    assert "not a valid leakage record" in capsys.readouterr().err


def test_csv_text_fields_longer_than_the_csv_default_are_near_checked(project: Project) -> None:
    """The csv module's default field cap is 128 KiB; the exact pass reads up to 1 MiB, so must the near pass."""
    text_project(project)
    prompts = [json.loads(line)["prompt"] for line in (project.root / "data" / "test.jsonl").read_text().splitlines()]
    long_text = words(random.Random(9), 30_000) + " " + prompts[7]  # about 200 KB, holding case p07 at its end
    csv_file = project.root / "training.csv"
    csv_file.write_text("prompt,label\n" + f'"{long_text}",1\n' + "unrelated words here and there,0\n")
    code, result = check(project, csv_file, "--near")
    assert code == 0 and result["counts"]["rows_scanned"] == 2
    assert [case["id"] for case in result["near"]["cases"]] == ["p07"]


def test_near_says_so_when_no_key_could_be_near_checked(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """--near on numbers without a tolerance and short texts checks nothing near: it must not look checked."""
    cases = [{"id": f"r{i}", "x": i, "job": "clerk", "expected": {"label": 1}} for i in range(3)]
    project.write(cases=cases)
    training = project.root / "training.jsonl"
    training.write_text('{"x": 0.001, "job": "Clerk"}\n')
    out = project.root / "leakage.json"
    assert project.cli("leakage", "check", "--training", str(training), "--near", "--json", str(out), "-q") == 0
    near = json.loads(out.read_text())["near"]
    assert near["cases"] == [] and near["text_keys"] == [] and near["image_keys"] == []
    assert "Near-duplicates: no compared key could be checked for near copies" in capsys.readouterr().out


# --------------------------------------------------------------------------- split across workers (--jobs)


def test_near_pass_split_across_workers_equals_one_process(project: Project) -> None:
    """--jobs 2 splits the JSONL file into two byte ranges scanned by forked workers: the same ids,
    similarity figures and row counts as one process, for text and tabular near copies; copies
    planted in both halves (so counts add across workers)."""
    training = text_project(project)
    rows = [json.loads(line) for line in training.read_text().splitlines()]
    prompts = {case["id"]: case["prompt"] for case in map(json.loads, (project.root / "data" / "test.jsonl").read_text().splitlines())}
    edit = edits()
    rows.insert(0, {"prompt": edit["p01"](prompts["p01"]), "label": 1})  # p01's second copy, in the first half
    rows.insert(1, {"prompt": edit["p02"](prompts["p02"]) + " extra words here", "label": 1})
    training.write_text("".join(json.dumps(row) + "\n" for row in rows))
    _, one = check(project, training, "--near", "--jobs", "1")
    assert [(case["id"], case["count"]) for case in one["near"]["cases"]][:3] == [("p00", 1), ("p01", 2), ("p02", 2)]
    for jobs in ("2", "3"):
        _, split = check(project, training, "--near", "--jobs", jobs)
        assert split["near"] == one["near"], jobs
        assert split["leaked_ids"] == one["leaked_ids"] == ["p05"]


def test_a_near_worker_that_dies_is_an_error_not_a_hang(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A worker killed mid-scan (the OOM killer, a signal) ends the check with an error naming it,
    never with a partial near section."""
    import os

    from oloproof.leakage import near as near_module

    training = text_project(project)
    parent = os.getpid()
    real = near_module.NearScanner.scan_all

    def dying(self: Any, rows: Any, *, skip_malformed: bool) -> tuple[int, ...]:
        if os.getpid() != parent:
            os._exit(9)
        return real(self, rows, skip_malformed=skip_malformed)

    monkeypatch.setattr(near_module.NearScanner, "scan_all", dying)
    out = project.root / "leakage.json"
    code = project.cli("leakage", "check", "--training", str(training), "--field", "prompt", "--near", "--jobs", "2", "--json", str(out), "-q")
    assert code not in (0, 4) and not out.exists()
    assert "RuntimeError: near-duplicate worker 0 died" in capsys.readouterr().err  # as the exact pass says it
