"""Near copies of test pictures: perceptual hashes (``imagehash``: pHash and dHash, 64 bits each).

A training picture is a near copy of a test picture when both hashes are within the declared
Hamming distance of the test picture's. Resized, JPEG re-encoded, slightly cropped or re-coloured
copies keep their hashes within a few bits; different pictures differ in about half of them. The
pictures are opened with the same guards as the exact comparison (regular files only, the decoded
size bounded before any pixel is decoded).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oloproof.leakage.images import MAX_DECODED_BYTES, ImageProblem, image_path, opened_image

CACHE_SIZE = 4096


def perceptual(path: Path) -> tuple[int, int]:
    """(pHash, dHash) of the picture at ``path`` as 64-bit integers. Raises ``ImageProblem``."""
    import imagehash  # lazy: start-up (an optional extra)

    with opened_image(path) as image:
        width, height = image.size
        if width * height * 4 > MAX_DECODED_BYTES:
            raise ImageProblem(f"image too large to decode safely ({width} × {height})")
        image.draft("L", (256, 256))  # JPEG: decode at a reduced scale, enough for 8×8 and 9×8 hashes
        grey = image.convert("L")
        return int(str(imagehash.phash(grey)), 16), int(str(imagehash.dhash(grey)), 16)


class ImageIndex:
    """The test pictures' hashes per key; a training picture is compared with every one of them."""

    def __init__(self, pictures: dict[str, list[tuple[int, tuple[int, int]]]], *, hamming: int, root: Path) -> None:
        self.pictures = pictures  # key → [(case, (phash, dhash))]
        self.hamming = hamming
        self.root = root
        self._cache: dict[str, tuple[int, int] | None] = {}

    def scan(self, key: str, value: Any) -> list[tuple[int, int]]:
        """(case, distance) for every test picture at ``key`` the training value's picture is near;
        the distance is the larger of the two hashes' Hamming distances. Raises ``ImageProblem``."""
        if type(value) is not str or not value or key not in self.pictures:
            return []
        hashes = self._cache.get(value)
        if value not in self._cache:
            try:
                hashes = perceptual(image_path(value, self.root))
            except ImageProblem as exc:
                raise ImageProblem(
                    f"the image named at key '{key}' (relative to {self.root}; --image-root DIR for another root): "
                    f"{exc.message}"
                ) from None
            if len(self._cache) >= CACHE_SIZE:
                self._cache.clear()
            self._cache[value] = hashes
        assert hashes is not None
        phash, dhash = hashes
        found = []
        for case, (their_p, their_d) in self.pictures[key]:
            distance = max((phash ^ their_p).bit_count(), (dhash ^ their_d).bit_count())
            if distance <= self.hamming:
                found.append((case, distance))
        return found
