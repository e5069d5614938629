"""The model-validation example: its generator is deterministic, and its files tell the guide's story.

The guide (seed 000, docs/examples/model-validation.md) quotes this example's figures; the data
were tuned to give them (examples/model-validation/build.py). These tests regenerate every
generated file and compare bytes, then run the commands of the example's README on a copy made
by `oloproof init`, and check what each says against the page.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from oloproof.cli.main import main as cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "examples" / "model-validation"


def test_the_build_regenerates_every_file_byte_for_byte() -> None:
    done = subprocess.run([sys.executable, str(EXAMPLE / "build.py"), "--check"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    last = done.stdout.strip().splitlines()[-1]
    # 8 loan files + 601 images, 2 JSONL files, the detector and 2 labels files. On another CPU
    # the checkpoints may differ in floating-point rounding only (and are listed as such).
    assert re.fullmatch(r"all 614 generated files are byte-identical|\d+ of 614 generated files are byte-identical, "
                        r"\d+ equal up to floating-point rounding", last), done.stdout
    rounding = [line for line in done.stdout.splitlines() if line.startswith("differs in floating-point rounding only")]
    assert all(line.endswith(".npz") for line in rounding), done.stdout


def image_build() -> Any:
    spec = importlib.util.spec_from_file_location("image_build_under_test", EXAMPLE / "image" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_check_tells_rounding_from_a_different_checkpoint(tmp_path: Path) -> None:
    compare = image_build().compare
    coef = np.array([0.1, -2.5, 3.25])
    np.savez(tmp_path / "shipped.npz", coef=coef, names=np.array(["a", "b", "c"]))
    np.savez(tmp_path / "rounded.npz", coef=coef * (1 + 1e-15), names=np.array(["a", "b", "c"]))
    np.savez(tmp_path / "other.npz", coef=coef * (1 + 1e-6), names=np.array(["a", "b", "c"]))
    np.savez(tmp_path / "renamed.npz", coef=coef, names=np.array(["a", "b", "d"]))
    shipped = str(tmp_path / "shipped.npz")
    assert compare(shipped, shipped) is None
    assert compare(str(tmp_path / "rounded.npz"), shipped) == "rounding"
    assert compare(str(tmp_path / "other.npz"), shipped) == "differs"
    assert compare(str(tmp_path / "renamed.npz"), shipped) == "differs"
    assert compare(shipped, str(tmp_path / "absent.npz")) == "missing"
    (tmp_path / "a.jsonl").write_text('{"x": 1.0}\n')
    (tmp_path / "b.jsonl").write_text('{"x": 1.0000000000000002}\n')
    assert compare(str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl")) == "differs"  # data files: bytes only


@pytest.fixture()
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "demo"
    assert cli(["init", "--example", "model-validation", str(target)]) == 0
    monkeypatch.chdir(target)
    return target


def report(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def rules(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {rule["id"]: rule for rule in doc["rules"]}


def one_decimal(value: float) -> float:
    return round(100 * value, 1)


def test_the_guide_figures_with_seed_runs_made_by_hand(demo: Path, tmp_path: Path) -> None:
    # (tests/test_example_model_validation.py runs the README's own commands, each in a process.)
    # 1. leakage: required and nothing recorded: BLOCKED.
    assert cli(["gate", "--json", str(tmp_path / "blocked.json")]) == 3
    assert {r["verdict"] for r in report(tmp_path / "blocked.json")["rules"]} == {"BLOCKED"}
    # 2. the leakage check is clean and recorded.
    assert cli(["leakage", "check", "--training", "data/training.jsonl", "--record", "--quiet"]) == 0
    # 3. the five seed runs made by hand, as `oloproof run --command` makes them: the seeds file's
    # command checkpoints then reuse them (same command, same files), in the gate and in `oloproof seeds`.
    for k in range(1, 6):
        assert cli(["run", "--version", f"seed_{k}", "--command", f"python model/predict.py --weights model/seeds/seed_{k}.npz", "--quiet"]) == 0
    # 4. the gate: accuracy PASS, the declared noise transform undecided, the recipe PASS.
    assert cli(["gate", "--json", str(tmp_path / "gate.json")]) == 4
    gate = report(tmp_path / "gate.json")
    assert gate["verdict"] == "INSUFFICIENT_EVIDENCE"
    by_id = rules(gate)
    assert by_id["accurate"]["verdict"] == "PASS" and by_id["accurate"]["passes"] == 316
    assert by_id["stable_under_noise"]["verdict"] == "INSUFFICIENT_EVIDENCE"
    assert by_id["stable_under_noise"]["reasons"] == ["transform_declared"]
    assert by_id["recipe_accurate"]["verdict"] == "PASS"
    # 5. the seeds command: the page's figures, to one decimal of a percent.
    assert cli(["seeds", "seeds.yaml", "--policy", "recipe.yaml", "--json", str(tmp_path / "seeds.json")]) == 0
    seeds = report(tmp_path / "seeds.json")
    assert [cp["run"] for cp in seeds["checkpoints"]] == ["reused"] * 5
    rates = [one_decimal(cp["pass_rate"]) for cp in seeds["checkpoints"]]
    assert (min(rates), max(rates)) == (85.7, 90.3)
    interval = seeds["rule"]["interval"]
    assert (one_decimal(interval["estimate"]), one_decimal(interval["low"]), one_decimal(interval["high"])) == (88.2, 83.2, 91.9)
    assert seeds["rule"]["verdict"] == "PASS" and seeds["rule"]["threshold"] == 0.8
    # 6. without allow_approximate_methods: MANUAL_REVIEW, the same interval.
    assert cli(["seeds", "seeds.yaml", "--policy", "recipe-strict.yaml", "--json", str(tmp_path / "strict.json")]) == 5
    strict = report(tmp_path / "strict.json")["rule"]
    assert strict["verdict"] == "MANUAL_REVIEW" and "approximate_method" in strict["reasons"]
    assert strict["interval"] == interval


def test_the_image_project_fails_the_blur_and_cannot_decide_the_occlusion(
    demo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(demo / "image")
    assert cli(["gate", "--json", str(tmp_path / "image.json")]) == 1
    by_id = rules(report(tmp_path / "image.json"))
    assert by_id["accurate"]["verdict"] == "PASS"
    blur = by_id["stable_under_blur"]
    assert blur["verdict"] == "FAIL" and blur["interval"]["low"] > 0.05  # over the cap, not merely straddling it
    occlusion = by_id["stable_under_occlusion"]
    assert occlusion["verdict"] == "INSUFFICIENT_EVIDENCE" and occlusion["reasons"] == ["transform_changes_meaning"]
    criteria = report(tmp_path / "image.json")["criteria"]
    assert criteria["flips_under_blur"]["details"]["metamorphic"]["status"] == "validated"
    labels = criteria["flips_under_occlusion"]["details"]["metamorphic"]["labels"]
    assert labels["changed_meaning_ids"] == ["img-008", "img-026", "img-121"] and labels["unlabelled"] == 0


def test_the_training_set_holds_a_resaved_copy_of_one_test_image() -> None:
    image = EXAMPLE / "image"
    cases = {c["id"]: c for c in map(json.loads, (image / "data/test.jsonl").read_text().splitlines())}
    rows = [json.loads(line) for line in (image / "data/training.jsonl").read_text().splitlines()]

    def pixels(rel: str) -> np.ndarray:
        with Image.open(image / rel) as im:
            return np.asarray(im.convert("L"))

    original = cases["img-042"]["image"]
    copies = [row for row in rows if np.array_equal(pixels(row["image"]), pixels(original))]
    assert [row["image"] for row in copies] == ["images/train/train-401.png"]
    assert copies[0]["label"] == cases["img-042"]["expected"]["label"]
    assert (image / original).read_bytes() != (image / copies[0]["image"]).read_bytes()
    # No other test image is in the training set, by content.
    train_digests = {pixels(row["image"]).tobytes() for row in rows}
    assert [cid for cid, c in cases.items() if pixels(c["image"]).tobytes() in train_digests] == ["img-042"]
