"""Image inputs compared by what they show, not by their file names (docs/leakage.md, "Images").

A compared case key is an **image key** when every case that gives it a value (not null) gives a
path ending in an image suffix (``.png``, ``.jpg``, ``.jpeg``, ``.gif``, ``.bmp``, ``.tif``,
``.tiff``, ``.webp``, in any case). Decided on the test set alone, so one text case that happens
to end in ``.png`` never turns a text key into an image key, and a key whose values are all image
paths is never compared as text.

At an image key both sides are compared by a digest of the decoded picture: its mode, its size,
its palette (for palette images) and its raw pixel bytes (the first frame of a multi-frame file),
so a copy re-saved under another name, with another PNG filter or another metadata chunk, is
found. A resized, cropped or re-encoded (JPEG) copy has other pixels and is not: that is a
near-duplicate, out of scope like every other.

Paths: relative paths resolve against one root, the directory of release.yaml (where the system
and the image transforms read them) unless ``--image-root`` names another for the training file.
Every file is opened as a regular file only (a directory, a FIFO or a device is refused before a
read starts), and its decoded size is bounded before any pixel is decoded. A test image that
cannot be read is an error naming the test set's line; a training image that cannot be read is a
malformed training row (its line, never its path: training content is not shown).

Pillow is imported on first use (``# lazy: start-up``): a project without images never loads it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oloproof.errors import OloproofError
from oloproof.files import open_regular

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".tif", ".tiff", ".webp")
PIXELS = "mode-size-palette-pixels-sha256/1"  # how an image is compared; recorded, a record without it is stale
MAX_DECODED_BYTES = 256 << 20  # a picture larger than this when decoded is refused, not decoded
CACHE_SIZE = 4096  # training images remembered by path within one scan (the key-order sample reads some twice)
_BYTES_PER_BAND = {"1": 1, "I": 4, "F": 4, "I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2}


@dataclass(frozen=True, slots=True)
class Pixels:
    """A decoded picture's digest: what an image key compares (never equal to a string or number)."""

    digest: str
    shape: tuple[str, int, int] = field(compare=False, default=("", 0, 0))  # mode, width, height


@dataclass(frozen=True, slots=True)
class OtherShape:
    """A training picture whose mode and size no test picture has: it cannot match, so it is not decoded."""

    mode: str
    width: int
    height: int


class ImageProblem(Exception):
    """A picture that cannot be compared; ``message`` never quotes a training value."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def is_image_path(value: Any) -> bool:
    return type(value) is str and value.lower().endswith(IMAGE_SUFFIXES) and "\0" not in value


def image_keys(leaves: Iterable[dict[str, Any]]) -> frozenset[str]:
    """The compared keys that hold an image path in every case that gives them a value."""
    seen: dict[str, bool] = {}
    for case in leaves:
        for name, value in case.items():
            if value is None:
                continue
            seen[name] = seen.get(name, True) and is_image_path(value)
    return frozenset(name for name, images in seen.items() if images)


def image_path(value: str, root: Path) -> Path:
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else root / path


@contextlib.contextmanager
def opened_image(path: Path) -> Iterator[Any]:
    """The picture at ``path``, opened with the guards every comparison uses: a regular file only,
    Pillow's decompression-bomb warning replaced by our own bound (checked by the caller before any
    pixel is decoded), and every decoding failure, inside the block too, an ``ImageProblem``."""
    from PIL import Image, UnidentifiedImageError  # lazy: start-up

    try:
        handle = open_regular(path, str(path), expected="an image file")
    except OloproofError as exc:
        raise ImageProblem(str(exc).removeprefix(f"{path}: ")) from None
    with handle:
        try:
            with warnings.catch_warnings():
                # Pillow warns past 89 M pixels and refuses past twice that; the bound is ours.
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(handle) as image:
                    yield image
        except Image.DecompressionBombError:
            raise ImageProblem("image too large to decode safely (Pillow refuses it as a decompression bomb)") from None
        except UnidentifiedImageError:
            raise ImageProblem("not an image Pillow can read") from None
        except (OSError, ValueError, SyntaxError, EOFError) as exc:  # truncated or damaged files
            raise ImageProblem(f"cannot decode the image ({type(exc).__name__})") from None


def read_pixels(path: Path, *, shapes: frozenset[tuple[str, int, int]] | None = None) -> Pixels | OtherShape:
    """The digest of the picture at ``path`` (or, when ``shapes`` is given and the picture's mode and
    size are not among them, its shape only: it cannot match). Raises ``ImageProblem``."""
    with opened_image(path) as image:
        width, height = image.size
        shape = (image.mode, width, height)
        if shapes is not None and shape not in shapes:
            return OtherShape(mode=image.mode, width=width, height=height)
        decoded = width * height * len(image.getbands()) * _BYTES_PER_BAND.get(image.mode, 1)
        if decoded > MAX_DECODED_BYTES:
            raise ImageProblem(
                f"image too large to decode safely ({width} × {height} {image.mode}, "
                f"{decoded >> 20} MiB decoded; the bound is {MAX_DECODED_BYTES >> 20} MiB)"
            )
        image.load()
        hasher = hashlib.sha256(b"oloproof-pixels/1\0")
        hasher.update(f"{image.mode}\0{width}x{height}\0".encode())
        if image.mode in ("P", "PA"):
            hasher.update(bytes(image.getpalette() or ()))
        hasher.update(b"\0")
        hasher.update(image.tobytes())
    return Pixels("sha256:" + hasher.hexdigest(), shape=shape)


class TrainingImages:
    """Turns the value a training row holds at an image key into what is compared: every string is
    a path to a picture (resolved against ``root``); other values are left as they are (they can
    never equal a picture). Pictures whose mode and size no test picture has are not decoded."""

    def __init__(self, root: Path, shapes: frozenset[tuple[str, int, int]], key: str) -> None:
        self.root = root
        self.shapes = shapes
        self.key = key
        self._cache: dict[str, Pixels | OtherShape] = {}

    def __call__(self, value: Any) -> Any:
        if type(value) is not str or not value:  # null, a number, an empty CSV cell: never a picture
            return value
        found = self._cache.get(value)
        if found is not None:
            return found
        try:
            token = read_pixels(image_path(value, self.root), shapes=self.shapes)
        except ImageProblem as exc:
            raise ImageProblem(
                f"the image named at key '{self.key}' (relative to {self.root}; --image-root DIR for another root): "
                f"{exc.message}"
            ) from None
        if len(self._cache) >= CACHE_SIZE:
            self._cache.clear()
        self._cache[value] = token
        return token
