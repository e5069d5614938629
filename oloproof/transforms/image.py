"""Image transforms: Gaussian blur, brightness, a grey occluding patch, JPEG re-encoding.

An image input is a path to an image file, relative to release.yaml. The transformed image is
written once, named by the SHA-256 of its bytes, under ``.oloproof/metamorphic/<transform>/
<digest of the declaration>/`` (PNG, or JPEG for ``jpeg``), and the system receives that path.
Encoding is deterministic, so the same declaration on the same images gives the same files and
the same transformed test-set digest (which is what lets a stored run be reused).

Sizes used elsewhere: ImageNet-C (Hendrycks & Dietterich 2019) blur sigma 1-6 and JPEG quality
25-7; imgaug's Cutout, one square patch of ~20% of the side filled with 128. The size of every
change is required here: a gate only says something about the change that was declared.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.files import atomic_write_bytes
from oloproof.schema import Obj, Prop, Scalar
from oloproof.store import store_dir
from oloproof.transforms.base import (
    SEED_MAX,
    ApplyEnv,
    Changed,
    Family,
    Outcome,
    SpecError,
    TransformKind,
    Unchanged,
    ValueProblem,
    case_rng,
)

if TYPE_CHECKING:
    from PIL import Image as PILImage

GREY = 128  # imgaug Cutout's fill; the middle of the 8-bit range


def resolve_image(value: Any, base_dir: Path) -> Path:
    """The file an image input names, resolved (symlinks followed). Relative paths are relative
    to release.yaml; the file must be under its directory, so a test set cannot make the tool
    read, copy into .oloproof/ or embed in a labelling page a file from elsewhere. Files under
    .oloproof/ (transformed images) count as the project's even when the store is a symlink."""
    if not isinstance(value, str) or not value.strip():
        kind = "null" if value is None else type(value).__name__
        raise ValueProblem(f"an image input must be a path to an image file, got {kind}")
    if "\x00" in value:
        raise ValueProblem(f"an image path must not contain a NUL byte: {value!r}")

    root = base_dir.resolve()
    try:
        path = (root / value).resolve()  # an absolute value replaces root
        store = store_dir(root).resolve()  # the store may be a symlink (another disk): it is the project's too
    except (OSError, RuntimeError) as exc:  # a symlink loop, an unreadable directory
        raise ValueProblem(f"cannot resolve image path {value}: {exc}") from None
    if not (path.is_relative_to(root) or path.is_relative_to(store)):
        raise ValueProblem(
            f"image path {value} leaves the project: it resolves to {path}, outside {root} (the directory of "
            "release.yaml); keep images under that directory (a symlink out of it counts as outside)"
        )
    if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
        raise ValueProblem(f"image path {value} is not a regular file (a directory, a FIFO or a device)")
    return path


def load_image(value: Any, base_dir: Path) -> PILImage.Image:
    """Open an image input as L, RGB or RGBA (palette and other modes are converted)."""
    from PIL import Image, UnidentifiedImageError  # lazy: start-up

    path = resolve_image(value, base_dir)
    try:
        with Image.open(path) as handle:
            handle.load()
            image = handle.copy()
    except FileNotFoundError:
        raise ValueProblem(f"image file not found: {value}") from None
    except Image.DecompressionBombError as exc:
        raise ValueProblem(f"cannot read image {value}: too large to decode safely ({exc})") from None
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise ValueProblem(f"cannot read image {value}: {exc}") from None
    if image.mode in ("L", "RGB", "RGBA"):
        return image
    has_alpha = "A" in image.mode or "transparency" in image.info
    return image.convert("RGBA" if has_alpha else ("L" if image.mode in ("1", "I", "I;16", "F") else "RGB"))


def _same_pixels(before: PILImage.Image, after: PILImage.Image) -> bool:
    import numpy as np  # lazy: start-up

    if before.size != after.size:
        return False
    return bool(np.array_equal(np.asarray(before.convert(after.mode)), np.asarray(after)))


def _encode(image: PILImage.Image, fmt: str, quality: int | None = None) -> bytes:
    buffer = io.BytesIO()
    if fmt == "JPEG":
        # Pillow's defaults otherwise (4:2:0 subsampling, as ImageNet-C's PIL re-encoding); no
        # optimisation pass and no progressive scan, so the bytes are reproducible.
        image.save(buffer, format="JPEG", quality=quality, optimize=False, progressive=False)
    else:
        image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def _write(data: bytes, suffix: str, env: ApplyEnv) -> str:
    name = hashlib.sha256(data).hexdigest()[:32] + suffix
    target = env.out_dir / name
    if not target.is_file() or target.read_bytes() != data:
        atomic_write_bytes(target, data)
    return f"{env.out_rel}/{name}"


class _ImageTransform:
    """Shared I/O: read the image, transform its pixels (pure), compare, write, name."""

    kind = ""
    family: Family = "image"
    fmt = "PNG"

    def pixels(self, image: PILImage.Image, *, case_id: str) -> PILImage.Image:
        raise NotImplementedError

    def quality(self) -> int | None:
        return None

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        from PIL import Image  # lazy: start-up

        original = load_image(value, env.base_dir)
        transformed = self.pixels(original, case_id=case_id)
        data = _encode(transformed, self.fmt, self.quality())
        if self.fmt == "JPEG":
            with Image.open(io.BytesIO(data)) as handle:
                handle.load()
                transformed = handle.copy()
        if _same_pixels(original, transformed):
            return Unchanged("the transform leaves this image's pixels exactly as they were")
        return Changed(_write(data, ".jpg" if self.fmt == "JPEG" else ".png", env))


def _split_alpha(image: PILImage.Image) -> tuple[PILImage.Image, PILImage.Image | None]:
    if image.mode == "RGBA":
        return image.convert("RGB"), image.getchannel("A")
    return image, None


def _join_alpha(image: PILImage.Image, alpha: PILImage.Image | None) -> PILImage.Image:
    if alpha is None:
        return image
    out = image.convert("RGBA")
    out.putalpha(alpha)
    return out


@dataclass(frozen=True, slots=True)
class Blur(_ImageTransform):
    radius: float
    kind: str = "blur"

    def describe(self) -> str:
        return f"Gaussian blur, radius {self.radius:g} px"

    def params(self) -> dict[str, Any]:
        return {"radius": self.radius}

    def pixels(self, image: PILImage.Image, *, case_id: str) -> PILImage.Image:
        from PIL import ImageFilter  # lazy: start-up

        color, alpha = _split_alpha(image)
        return _join_alpha(color.filter(ImageFilter.GaussianBlur(self.radius)), alpha)


@dataclass(frozen=True, slots=True)
class Brightness(_ImageTransform):
    factor: float
    kind: str = "brightness"

    def describe(self) -> str:
        return f"brightness × {self.factor:g}"

    def params(self) -> dict[str, Any]:
        return {"factor": self.factor}

    def pixels(self, image: PILImage.Image, *, case_id: str) -> PILImage.Image:
        from PIL import ImageEnhance  # lazy: start-up

        color, alpha = _split_alpha(image)  # transparency is not brightness
        return _join_alpha(ImageEnhance.Brightness(color).enhance(self.factor), alpha)


@dataclass(frozen=True, slots=True)
class Occlusion(_ImageTransform):
    size: float  # side of the square patch, as a fraction of the image's shorter side
    seed: int
    fill: int
    kind: str = "occlusion"

    def describe(self) -> str:
        return f"grey ({self.fill}) square patch, {self.size:g} of the shorter side, seed {self.seed}"

    def params(self) -> dict[str, Any]:
        return {"size": self.size, "seed": self.seed, "fill": self.fill}

    def patch(self, width: int, height: int, *, case_id: str) -> tuple[int, int, int]:
        """(left, top, side) of the patch: seeded per case, wholly inside the image."""
        side = max(1, min(width, height, round(self.size * min(width, height))))
        rng = case_rng(self.seed, case_id)
        left = int(rng.integers(0, width - side + 1))
        top = int(rng.integers(0, height - side + 1))
        return left, top, side

    def pixels(self, image: PILImage.Image, *, case_id: str) -> PILImage.Image:
        left, top, side = self.patch(*image.size, case_id=case_id)
        fill: int | tuple[int, ...] = (
            self.fill if image.mode == "L" else (self.fill,) * 3 if image.mode == "RGB" else (self.fill,) * 3 + (255,)
        )
        out = image.copy()
        out.paste(fill, (left, top, left + side, top + side))
        return out


@dataclass(frozen=True, slots=True)
class Jpeg(_ImageTransform):
    jpeg_quality: int
    kind: str = "jpeg"
    fmt = "JPEG"

    def describe(self) -> str:
        return f"JPEG re-encoding at quality {self.jpeg_quality}"

    def params(self) -> dict[str, Any]:
        return {"quality": self.jpeg_quality}

    def quality(self) -> int | None:
        return self.jpeg_quality

    def pixels(self, image: PILImage.Image, *, case_id: str) -> PILImage.Image:
        return image.convert("L" if image.mode == "L" else "RGB")  # JPEG has no alpha channel


def _build_blur(values: dict[str, Any]) -> Blur:
    return Blur(radius=float(values["radius"]))


def _build_brightness(values: dict[str, Any]) -> Brightness:
    if values["factor"] == 1.0:
        raise SpecError("factor", "a factor of 1 leaves every image as it was")
    return Brightness(factor=float(values["factor"]))


def _build_occlusion(values: dict[str, Any]) -> Occlusion:
    return Occlusion(size=float(values["size"]), seed=int(values["seed"]), fill=int(values["fill"]))


def _build_jpeg(values: dict[str, Any]) -> Jpeg:
    return Jpeg(jpeg_quality=int(values["quality"]))


BLUR = TransformKind(
    name="blur",
    family="image",
    schema=Obj(
        {
            "radius": Prop(
                Scalar("number", exclusive_minimum=0.0, maximum=100.0),
                required=True,
                doc="Gaussian blur radius in pixels (Pillow GaussianBlur; ImageNet-C uses sigma 1 to 6).",
            )
        },
        doc="Blur the image (Pillow GaussianBlur).",
    ),
    build=_build_blur,
)
BRIGHTNESS = TransformKind(
    name="brightness",
    family="image",
    schema=Obj(
        {
            "factor": Prop(
                Scalar("number", exclusive_minimum=0.0, maximum=10.0),
                required=True,
                doc="Brightness multiplier (Pillow ImageEnhance.Brightness): 0.8 darkens by 20%, 1.2 brightens by 20%.",
            )
        },
        doc="Scale the image's brightness (alpha is kept).",
    ),
    build=_build_brightness,
)
OCCLUSION = TransformKind(
    name="occlusion",
    family="image",
    schema=Obj(
        {
            "size": Prop(
                Scalar("number", exclusive_minimum=0.0, maximum=1.0),
                required=True,
                doc="Side of the square patch as a fraction of the image's shorter side (imgaug Cutout: about 0.2).",
            ),
            "seed": Prop(
                Scalar("int", minimum=0, maximum=SEED_MAX),
                default=0,
                doc="Seed; each case's patch position comes from it and the case id.",
            ),
            "fill": Prop(
                Scalar("int", minimum=0, maximum=255), default=GREY, doc="Grey level of the patch (default 128)."
            ),
        },
        doc="Cover a square of the image with a grey patch at a seeded position.",
    ),
    build=_build_occlusion,
)
JPEG = TransformKind(
    name="jpeg",
    family="image",
    schema=Obj(
        {
            "quality": Prop(
                Scalar("int", minimum=1, maximum=95),
                required=True,
                doc="JPEG quality 1-95 (ImageNet-C uses 25, 18, 15, 10, 7; 95 and up is nearly lossless).",
            )
        },
        doc="Re-encode the image as JPEG (written as .jpg; alpha is dropped).",
    ),
    build=_build_jpeg,
)
