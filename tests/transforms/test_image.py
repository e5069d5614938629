"""Image transforms on real small PNGs made with Pillow: pixels, files, determinism, errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageDraw

from oloproof.transforms.base import ApplyEnv, Changed, Unchanged, ValueProblem
from oloproof.transforms.registry import REGISTRY

BACKGROUND = (200, 200, 190)


def build(kind: str, **params: Any) -> Any:
    spec = REGISTRY[kind]
    values = {key: prop.default for key, prop in spec.schema.props.items()}
    values.update(params)
    return spec.build(values)


@pytest.fixture
def env(tmp_path: Path) -> ApplyEnv:
    return ApplyEnv(base_dir=tmp_path, out_dir=tmp_path / ".oloproof/metamorphic/t/abc", out_rel=".oloproof/metamorphic/t/abc")


def scratch(tmp_path: Path, name: str = "scratch.png", *, mode: str = "RGB", line: bool = True) -> str:
    image = Image.new("RGB", (40, 30), BACKGROUND)
    if line:
        ImageDraw.Draw(image).line([(4, 4), (35, 25)], fill=(20, 20, 20), width=1)
    if mode == "RGBA":
        image = image.convert("RGBA")
        image.putalpha(Image.new("L", image.size, 180))
    elif mode != "RGB":
        image = image.convert(mode)
    image.save(tmp_path / name)
    return name


def opened(env: ApplyEnv, outcome: Any) -> Image.Image:
    assert isinstance(outcome, Changed), outcome
    path = env.base_dir / outcome.value
    assert outcome.value.startswith(env.out_rel + "/") and path.is_file()
    image = Image.open(path)
    image.load()  # keeps .format, which a copy would drop
    return image


def grey(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L"), dtype=float)


def test_blur_lightens_a_thin_scratch_and_leaves_a_flat_image(tmp_path: Path, env: ApplyEnv) -> None:
    blurred = opened(env, build("blur", radius=2.0).apply(scratch(tmp_path), case_id="a", env=env))
    assert blurred.size == (40, 30) and blurred.mode == "RGB" and blurred.format == "PNG"
    assert grey(blurred).min() > 80  # the 1-px scratch (grey 20) is smeared out
    flat = scratch(tmp_path, "flat.png", line=False)
    assert isinstance(build("blur", radius=2.0).apply(flat, case_id="a", env=env), Unchanged)


def test_brightness_scales_colour_and_keeps_alpha(tmp_path: Path, env: ApplyEnv) -> None:
    darker = opened(env, build("brightness", factor=0.5).apply(scratch(tmp_path, mode="RGBA"), case_id="a", env=env))
    assert darker.mode == "RGBA"
    assert np.asarray(darker)[0, 0].tolist() == [100, 100, 95, 180]  # colour halved, alpha kept
    black = Image.new("L", (8, 8), 0)
    black.save(tmp_path / "black.png")
    assert isinstance(build("brightness", factor=0.5).apply("black.png", case_id="a", env=env), Unchanged)


def test_occlusion_is_a_grey_square_at_a_seeded_position(tmp_path: Path, env: ApplyEnv) -> None:
    name = scratch(tmp_path, mode="L")
    occlusion = build("occlusion", size=0.4, seed=3)
    left, top, side = occlusion.patch(40, 30, case_id="a")
    assert side == 12 and 0 <= left <= 28 and 0 <= top <= 18  # 0.4 of the shorter side (30), inside the image
    out = np.asarray(opened(env, occlusion.apply(name, case_id="a", env=env)))
    before = np.asarray(Image.open(tmp_path / name))
    patch = np.zeros(out.shape, dtype=bool)
    patch[top : top + side, left : left + side] = True
    assert (out[patch] == 128).all()
    assert (out[~patch] == before[~patch]).all()  # nothing else moved
    assert occlusion.patch(40, 30, case_id="a") == (left, top, side)  # per case, reproducible
    assert len({occlusion.patch(40, 30, case_id=f"c{i}") for i in range(20)}) > 5


def test_jpeg_writes_a_jpeg_that_differs_from_the_original(tmp_path: Path, env: ApplyEnv) -> None:
    out = opened(env, build("jpeg", quality=10).apply(scratch(tmp_path, mode="RGBA"), case_id="a", env=env))
    assert out.format == "JPEG" and out.mode == "RGB"
    assert next((env.out_dir).glob("*.jpg")).suffix == ".jpg"


def test_image_outputs_are_deterministic_and_content_named(tmp_path: Path, env: ApplyEnv) -> None:
    import hashlib

    name = scratch(tmp_path, mode="P")  # palette images are read as RGB
    for kind, params in (("blur", {"radius": 1.0}), ("occlusion", {"size": 0.2}), ("jpeg", {"quality": 25})):
        first = build(kind, **params).apply(name, case_id="a", env=env)
        again = build(kind, **params).apply(name, case_id="a", env=env)
        assert isinstance(first, Changed) and first == again
        data = (env.base_dir / first.value).read_bytes()
        assert Path(first.value).stem == hashlib.sha256(data).hexdigest()[:32]


def test_unreadable_images_are_value_problems(tmp_path: Path, env: ApplyEnv) -> None:
    blur = build("blur", radius=1.0)
    with pytest.raises(ValueProblem, match=r"image file not found: nope\.png"):
        blur.apply("nope.png", case_id="a", env=env)
    (tmp_path / "text.png").write_text("not an image")
    with pytest.raises(ValueProblem, match=r"cannot read image text\.png"):
        blur.apply("text.png", case_id="a", env=env)
    with pytest.raises(ValueProblem, match="must be a path to an image file, got int"):
        blur.apply(3, case_id="a", env=env)


def test_a_path_with_a_nul_byte_is_a_value_problem(tmp_path: Path, env: ApplyEnv) -> None:
    with pytest.raises(ValueProblem, match=r"an image path must not contain a NUL byte"):
        build("blur", radius=1.0).apply("images/a\x00.png", case_id="a", env=env)


def test_an_image_too_large_to_decode_safely_is_a_value_problem(tmp_path: Path, env: ApplyEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    name = scratch(tmp_path)  # 40 x 30 = 1200 pixels, more than twice the limit below
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 500)
    with pytest.raises(ValueProblem, match=r"cannot read image scratch\.png: .*too large.*decompression bomb"):
        build("blur", radius=1.0).apply(name, case_id="a", env=env)


def test_image_paths_must_stay_under_the_directory_of_release_yaml(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    secret = scratch(outside, "secret.png")
    scratch(project, "inside.png")
    (project / "link.png").symlink_to(outside / secret)
    (project / "linked").symlink_to(outside, target_is_directory=True)
    env = ApplyEnv(base_dir=project, out_dir=project / ".oloproof/metamorphic/t/abc", out_rel=".oloproof/metamorphic/t/abc")
    blur = build("blur", radius=1.0)
    for value in ("../outside/secret.png", str(outside / secret), "link.png", "linked/secret.png", "sub/../../outside/secret.png"):
        with pytest.raises(ValueProblem, match=r"leaves the project: it resolves to .*secret\.png, outside .*project \(the directory of release\.yaml\)"):
            blur.apply(value, case_id="a", env=env)
    assert not (project / ".oloproof").exists()  # nothing was read, transformed or copied in
    assert isinstance(blur.apply(str(project / "inside.png"), case_id="a", env=env), Changed)  # an absolute path inside is fine
    assert isinstance(blur.apply("./sub/../inside.png", case_id="a", env=env), Changed)
