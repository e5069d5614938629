"""Leakage sees images, not file names: an image key is compared by its pictures' decoded pixels
(mode, size, palette, pixel bytes), whatever the paths; files are read as regular files only, with
the decoded size bounded; a picture that cannot be read is an error naming file and line."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import Project
from PIL import Image, PngImagePlugin

from oloproof.config import load_release
from oloproof.errors import ExitCode
from oloproof.leakage import images
from oloproof.leakage.record import run_check
from oloproof.testset import load_testset


def picture(seed: int, size: tuple[int, int] = (24, 16)) -> Image.Image:
    rng = np.random.default_rng(seed)
    return Image.fromarray(rng.integers(0, 256, size=(size[1], size[0]), dtype=np.uint8), mode="L")


def save(image: Image.Image, path: Path, **options: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    image.save(path, **options)
    return path.as_posix()


def png_header(path: Path, width: int, height: int, *, colour: int = 0) -> None:
    """A PNG whose header claims width × height (and no real pixels): never decoded by a careful reader."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))


@pytest.fixture
def pictures(project: Project) -> Project:
    """Three test pictures; the training set holds a re-saved copy of a (other name, other bytes), a
    resized copy of b, a JPEG of c, and an unrelated picture."""
    root = project.root
    a, b, c = picture(1), picture(2), picture(3)
    save(a, root / "images/test/a.png")
    save(b, root / "images/test/b.png")
    save(c, root / "images/test/c.png")
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "re-saved")
    save(a, root / "images/train/copy-of-a.png", pnginfo=info, compress_level=1)
    save(b.resize((25, 16)), root / "images/train/b-resized.png")
    save(c, root / "images/train/c.jpg", quality=95)
    save(picture(4), root / "images/train/other.png")
    cases = [{"id": name, "image": f"images/test/{name}.png", "expected": {"label": 1}} for name in "abc"]
    project.write(cases=cases)
    rows = ["images/train/other.png", "images/train/copy-of-a.png", "images/train/b-resized.png", "images/train/c.jpg"]
    write_rows(root / "data/training.jsonl", [{"image": row, "label": 1} for row in rows])
    assert (root / "images/test/a.png").read_bytes() != (root / "images/train/copy-of-a.png").read_bytes()
    return project


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def check(project: Project, *options: str, training: str = "data/training.jsonl") -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(project.root / training), "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


def test_a_resaved_copy_is_found_whatever_its_name_and_bytes(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code, result = check(pictures, "--record")
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert result["leaked_ids"] == ["a"]  # the resized b and the JPEG of c have other pixels: near-duplicates
    assert result["images"] == {"keys": ["image"], "compared_by": images.PIXELS}
    assert result["counts"]["rows_matched"] == 1
    out = capsys.readouterr().out
    assert "images compared by their decoded pixels (mode, size, pixels), not their paths: image" in out
    assert "images/train" not in out  # training values (paths included) are never shown


def test_the_same_path_with_other_pixels_is_not_a_match(pictures: Project, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    save(picture(9), other / "images/test/a.png")  # the test set's path, another picture
    write_rows(pictures.root / "data/training.jsonl", [{"image": "images/test/a.png", "label": 1}])
    code, result = check(pictures, "--image-root", str(other))
    assert code == ExitCode.PASS and result["leaked_ids"] == []
    code, result = check(pictures)  # the same path under the project's own root is the same picture
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and result["leaked_ids"] == ["a"]


def test_palette_and_mode_are_part_of_the_picture(pictures: Project) -> None:
    root = pictures.root
    save(picture(1).convert("RGB"), root / "images/train/a-rgb.png")  # the same greys, stored as RGB
    write_rows(root / "data/training.jsonl", [{"image": "images/train/a-rgb.png", "label": 1}])
    assert check(pictures)[1]["leaked_ids"] == []


def test_csv_and_parallel_scans_find_it_too(pictures: Project) -> None:
    root = pictures.root
    (root / "data/training.csv").write_text("image,label\nimages/train/other.png,0\nimages/train/copy-of-a.png,1\n,0\n")
    assert check(pictures, training="data/training.csv")[1]["leaked_ids"] == ["a"]
    rows = [{"image": "images/train/other.png", "label": 0}] * 300 + [{"image": "images/train/copy-of-a.png", "label": 1}]
    write_rows(root / "data/big.jsonl", rows)
    release = load_release(pictures.config)
    testset = load_testset(root / "data/test.jsonl", display="data/test.jsonl")
    result = run_check(release, testset, str(root / "data/big.jsonl"), jobs=2, parallel_min_bytes=1)
    assert result.leaked_ids == ("a",) and result.rows_scanned == 301


def test_a_key_with_one_text_value_is_compared_as_text(project: Project) -> None:
    cases = [{"id": "t1", "text": "open logo.png", "expected": {"label": 1}},
             {"id": "t2", "text": "hello", "expected": {"label": 1}}]
    project.write(cases=cases)
    write_rows(project.root / "data/training.jsonl", [{"text": "Open  LOGO.png"}])
    _, result = check(project)
    assert result["leaked_ids"] == ["t1"] and result["images"]["keys"] == []


# --------------------------------------------------------------------------- what cannot be read


def error(project: Project, capsys: pytest.CaptureFixture[str], *options: str) -> str:
    capsys.readouterr()
    code, _ = check(project, *options)
    assert code == ExitCode.USAGE
    return capsys.readouterr().err.strip()


def point_case(project: Project, name: str, value: str) -> None:
    lines = (project.root / "data/test.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in lines]
    next(case for case in cases if case["id"] == name)["image"] = value
    project.write(cases=cases)


def test_a_test_image_that_does_not_exist(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    point_case(pictures, "b", "images/test/gone.png")
    assert error(pictures, capsys).endswith(
        f"data/test.jsonl:2: case 'b': image: image images/test/gone.png (relative to {pictures.root}): file not found"
    )


def test_a_test_image_that_is_a_directory_or_a_fifo(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (pictures.root / "images/test/dir.png").mkdir()
    point_case(pictures, "b", "images/test/dir.png")
    assert error(pictures, capsys).endswith("image images/test/dir.png (relative to "
                                            f"{pictures.root}): is a directory, expected an image file")
    os.mkfifo(pictures.root / "images/test/pipe.png")
    point_case(pictures, "b", "images/test/pipe.png")
    assert error(pictures, capsys).endswith(
        "image images/test/pipe.png (relative to "
        f"{pictures.root}): is a FIFO (named pipe), expected an image file (only regular files are read)"
    )


def test_a_file_that_is_not_an_image(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (pictures.root / "images/test/notes.png").write_text("not a picture")
    point_case(pictures, "c", "images/test/notes.png")
    assert error(pictures, capsys).endswith("images/test/notes.png (relative to "
                                            f"{pictures.root}): not an image Pillow can read")
    png_header(pictures.root / "images/test/cut.png", 24, 16)  # a header, then pixels that do not decode
    point_case(pictures, "c", "images/test/cut.png")
    assert "cannot decode the image (" in error(pictures, capsys)


def test_a_huge_image_is_refused_before_it_is_decoded(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    png_header(pictures.root / "images/test/big.png", 12_000, 12_000, colour=6)  # 576 MB as RGBA; Pillow only warns
    point_case(pictures, "a", "images/test/big.png")
    assert error(pictures, capsys).endswith(
        "image too large to decode safely (12000 × 12000 RGBA, 549 MiB decoded; the bound is 256 MiB)"
    )
    png_header(pictures.root / "images/test/bomb.png", 20_000, 20_000)  # 400 M pixels: Pillow refuses to open it
    point_case(pictures, "a", "images/test/bomb.png")
    assert error(pictures, capsys).endswith(
        "image too large to decode safely (Pillow refuses it as a decompression bomb)"
    )


def test_a_training_image_that_cannot_be_read_is_a_malformed_row(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    root = pictures.root
    os.mkfifo(root / "images/train/pipe.png")
    rows = [{"image": "images/train/copy-of-a.png"}, {"image": "images/train/missing.png"}, {"image": "images/train/pipe.png"}]
    write_rows(root / "data/training.jsonl", rows)
    message = error(pictures, capsys)
    assert message.endswith(
        f"training.jsonl:2: the image named at key 'image' (relative to {root}; --image-root DIR for another root): "
        "file not found (training row; pass --skip-malformed to skip and count such rows)"
    )
    assert "missing.png" not in message  # a training value is never shown
    code, result = check(pictures, "--skip-malformed")
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and result["leaked_ids"] == ["a"]
    assert result["counts"]["rows_malformed_skipped"] == 2 and result["malformed_lines"] == [2, 3]


def test_an_image_root_that_is_not_a_directory(pictures: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert error(pictures, capsys, "--image-root", str(pictures.root / "release.yaml")).endswith(
        f"--image-root: {pictures.root / 'release.yaml'}: not a directory"
    )


# --------------------------------------------------------------------------- the gate, and start-up


def test_a_record_that_compared_image_paths_as_text_is_stale(pictures: Project) -> None:
    text = (pictures.root / "release.yaml").read_text() + "leakage: required\n"
    (pictures.root / "release.yaml").write_text(text)
    write_rows(pictures.root / "data/training.jsonl", [{"image": "images/train/other.png"}])
    assert check(pictures, "--record")[0] == ExitCode.PASS
    record_file = next((pictures.root / ".oloproof/evidence/leakage").glob("*.json"))
    record = json.loads(record_file.read_text())
    del record["images"]  # as an older oloproof wrote it
    record_file.write_text(json.dumps(record))
    out = pictures.root / "gate.json"
    assert pictures.cli("gate", "--json", str(out)) == ExitCode.BLOCKED
    leakage = next(check for check in json.loads(out.read_text())["checks"] if check["name"] == "leakage")
    assert leakage["status"] == "stale: the recorded check compared image paths as text"
    assert leakage["reasons"] == ["leakage_stale"]


def test_pillow_is_loaded_only_for_images(tmp_path: Path) -> None:
    probe = "import sys, oloproof.cli.main, oloproof.leakage.plan, oloproof.leakage.record; print('PIL' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"

