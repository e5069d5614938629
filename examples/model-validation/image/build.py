"""Regenerate every generated file of the image project (run by ../build.py, or on its own).

    python build.py            # from this directory: rebuild in place
    python build.py --check    # rebuild in a temporary directory, compare bytes, write nothing

It writes, under image/:

    images/test/img-<k>.png       200 test images (48 x 48 greyscale), half of them scratched
    images/train/train-<k>.png    400 training images, and one re-saved copy of a test image
    data/test.jsonl               {"id", "image", "expected": {"label"}} per test image
    data/training.jsonl           {"image", "label"} per training image
    model/weights.npz             the scratch detector (logistic regression on model/features.py)
    labels/blur.jsonl             the blur transform's labels, bound with `oloproof metamorphic stamp`
    labels/occlusion.jsonl        the occlusion transform's labels, bound the same way

The surfaces: a grey level, a gentle gradient, two faint low-frequency waves and per-pixel grain,
all from NumPy's PCG64 generator with fixed seeds (no `random` module). A scratch is a straight
line one pixel wide, 12 to 30 pixels long, at any angle, 35 to 65 grey levels brighter or
(one time in five) darker than the surface, drawn with Pillow's ImageDraw on a mask. PNGs are
written by this script (stored, uncompressed deflate blocks), so their bytes do not depend on
the zlib that Pillow or Python was built with; `--check` compares bytes (the detector's .npz up
to floating-point rounding on another CPU, as ../build.py explains).

The re-saved copy: training image `images/train/train-401.png` has exactly the pixels of test
image `images/test/img-042.png`, written with another PNG row filter and a tEXt chunk, so its
bytes (and its name) differ. It is the leak the README shows `oloproof leakage check` finding.

THE LABELS WERE NOT MADE BY A PERSON. The question a label answers is "would a careful person
still give the transformed image the same answer?". Here the generator knows where every
scratch is, and the labels are decided from that ground truth (the rules below), then bound to
the pairs the transforms make with `oloproof metamorphic stamp NAME --confirm`, which writes
each pair's digest into its label. A label's `note` records the measurement it was decided on.

- blur (Gaussian, radius 0.7): a case keeps its meaning when its scratch stays visible after the
  blur: along the scratch's pixels, the blurred image stands at least 8 grey levels and at least
  3 times the blurred surface's grain away from the blurred surface without the scratch. Every
  scratched test image passes (the build fails otherwise); clean images stay clean.
- occlusion (a grey square of 0.3 of the side, seed 11): a scratched case changes meaning when
  no visible piece of its scratch (8-connected pixels outside the patch) has 5 pixels or more:
  a stub that short cannot be told from grain (a scratch showing on both sides of the patch
  counts by its longer piece). A clean case keeps its meaning (a grey square is not a scratch).

You can review every label on the offline page: `oloproof metamorphic label blur` shows each
pair with the stored label filled in.
"""

from __future__ import annotations

import argparse
import filecmp
import functools
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True


def _features():
    """model/features.py, loaded under its own name (the loan model has a features.py too)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("model_validation_image_features", os.path.join(HERE, "model", "features.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_FEATURES = _features()
NAMES, features = _FEATURES.NAMES, _FEATURES.features

SIZE = 48
N_TEST = 200
N_TRAINING = 400
STREAM_TEST = (20250101, 3)
STREAM_TRAINING = (20250101, 4)
LEAKED_TEST = 42  # img-042 is re-saved into the training set as train-401

MIN_VISIBLE_CONTRAST = 8.0  # grey levels
MIN_CONTRAST_TO_GRAIN = 3.0
MIN_VISIBLE_PIECE = 5  # pixels: a shorter piece of line cannot be told from grain


@functools.cache
def declared(name: str) -> dict[str, object]:
    """The perturb of transform `name` as release.yaml declares it (the one source of its size)."""
    import yaml

    with open(os.path.join(HERE, "release.yaml"), encoding="utf-8") as fh:
        release = yaml.safe_load(fh)
    [perturb] = [t["perturb"] for t in release["metamorphic"]["transforms"] if t["name"] == name]
    return perturb


SOURCES = ("release.yaml", "policy.yaml", "model/features.py", "model/predict.py")  # what a build needs besides itself


# ------------------------------------------------------------------------------------ images


def surface(rng: np.random.Generator) -> np.ndarray:
    """A scratch-free surface: float greys, SIZE x SIZE."""
    y, x = np.mgrid[0:SIZE, 0:SIZE].astype(np.float64)
    base = rng.uniform(95.0, 165.0)
    gx, gy = rng.uniform(-0.4, 0.4, size=2)
    img = base + gx * (x - SIZE / 2) + gy * (y - SIZE / 2)
    for _ in range(2):
        period = rng.uniform(16.0, 48.0)
        angle = rng.uniform(0.0, np.pi)
        phase = rng.uniform(0.0, 2 * np.pi)
        amplitude = rng.uniform(2.0, 7.0)
        img += amplitude * np.sin(2 * np.pi * (x * np.cos(angle) + y * np.sin(angle)) / period + phase)
    grain = rng.uniform(3.5, 6.5)
    return img + grain * rng.standard_normal((SIZE, SIZE))


def scratch_mask(rng: np.random.Generator) -> np.ndarray:
    """A straight one-pixel line drawn by Pillow: a boolean SIZE x SIZE mask."""
    from PIL import Image, ImageDraw

    length = rng.uniform(12.0, 30.0)
    angle = rng.uniform(0.0, np.pi)
    dx, dy = 0.5 * length * np.cos(angle), 0.5 * length * np.sin(angle)
    margin = 3.0
    cx = rng.uniform(margin + abs(dx), SIZE - 1 - margin - abs(dx))
    cy = rng.uniform(margin + abs(dy), SIZE - 1 - margin - abs(dy))
    mask = Image.new("L", (SIZE, SIZE), 0)
    ImageDraw.Draw(mask).line([(round(cx - dx), round(cy - dy)), (round(cx + dx), round(cy + dy))], fill=255, width=1)
    return np.asarray(mask) > 0


def draw_image(rng: np.random.Generator, scratched: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pixels uint8, surface without the scratch uint8, scratch mask)."""
    plain = surface(rng)
    mask = scratch_mask(rng) if scratched else np.zeros((SIZE, SIZE), dtype=bool)
    contrast = rng.uniform(35.0, 65.0) * (-1.0 if rng.random() < 0.2 else 1.0)
    img = plain + contrast * mask
    as_bytes = lambda a: np.clip(np.rint(a), 0, 255).astype(np.uint8)  # noqa: E731
    return as_bytes(img), as_bytes(plain), mask


def draw_set(stream: tuple[int, int], n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    rng = np.random.default_rng(stream)
    labels = rng.permutation(np.arange(n) % 2)  # exactly half scratched, in a random order
    return [(*draw_image(rng, bool(y)), int(y)) for y in labels]


def png(pixels: np.ndarray, *, row_filter: int = 0, text: dict[str, str] | None = None) -> bytes:
    """An 8-bit greyscale PNG, deflate in stored blocks: the same bytes with any zlib."""
    height, width = pixels.shape
    rows = []
    for row in pixels.astype(np.int64):
        if row_filter == 1:  # Sub: each byte minus its left neighbour
            row = np.concatenate([row[:1], (row[1:] - row[:-1]) % 256])
        rows.append(bytes([row_filter]) + bytes(row.astype(np.uint8)))
    raw = b"".join(rows)
    blocks = [raw[i:i + 65535] for i in range(0, len(raw), 65535)] or [b""]
    deflate = b"".join(
        bytes([1 if i == len(blocks) - 1 else 0]) + struct.pack("<HH", len(block), 0xFFFF ^ len(block)) + block
        for i, block in enumerate(blocks)
    )
    stream = b"\x78\x01" + deflate + struct.pack(">I", zlib.adler32(raw))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    extra = b"".join(chunk(b"tEXt", k.encode("latin-1") + b"\0" + v.encode("latin-1")) for k, v in (text or {}).items())
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + extra + chunk(b"IDAT", stream) + chunk(b"IEND", b"")


# ------------------------------------------------------------------------------- the detector


def train_detector(images: list[np.ndarray], labels: np.ndarray) -> dict[str, np.ndarray]:
    """Logistic regression on the standardised features, fitted by Newton's method (deterministic)."""
    F = np.array([features(img) for img in images])
    mean, scale = F.mean(axis=0), F.std(axis=0)
    X = np.hstack([np.ones((len(F), 1)), (F - mean) / scale])
    y = labels.astype(np.float64)
    w = np.zeros(X.shape[1])
    l2 = 1e-2
    for _ in range(50):
        p = 1.0 / (1.0 + np.exp(-(X @ w)))
        gradient = X.T @ (p - y) + l2 * np.r_[0.0, w[1:]]
        hessian = (X * (p * (1 - p))[:, None]).T @ X + l2 * np.diag(np.r_[0.0, np.ones(len(w) - 1)])
        w -= np.linalg.solve(hessian, gradient)
    return {
        "format": np.array("oloproof-example-scratch-1"), "feature_names": np.array(NAMES),
        "mean": mean, "scale": scale, "intercept": np.array(w[0]), "coef": w[1:],
    }


def save_npz(path: str, arrays: dict[str, np.ndarray]) -> None:
    """Like np.savez, but with fixed zip timestamps so the bytes are reproducible."""
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for name in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(arrays[name]), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())


# ------------------------------------------------------------------------------------ labels


def blur_label(image: np.ndarray, plain: np.ndarray, mask: np.ndarray) -> tuple[bool, str]:
    """Does the scratch stay visible under the blur? Decided on the generator's ground truth."""
    from PIL import Image, ImageFilter

    if not mask.any():
        return True, "generator: no scratch, and a blur draws none"
    radius = float(declared("blur")["radius"])
    blurred = np.asarray(Image.fromarray(image).filter(ImageFilter.GaussianBlur(radius)), dtype=np.float64)
    without = np.asarray(Image.fromarray(plain).filter(ImageFilter.GaussianBlur(radius)), dtype=np.float64)
    contrast = float(np.abs(blurred[mask] - without[mask]).mean())
    smooth = np.asarray(Image.fromarray(plain).filter(ImageFilter.GaussianBlur(4)), dtype=np.float64)
    grain = float((without - smooth)[~mask].std())
    visible = contrast >= MIN_VISIBLE_CONTRAST and contrast >= MIN_CONTRAST_TO_GRAIN * grain
    return visible, (f"generator: after the blur the scratch stands {contrast:.1f} grey levels from the surface, "
                     f"{contrast / grain:.1f} x its grain ({grain:.1f})")


def find_patch(before: np.ndarray, after: np.ndarray, side: int, fill: int) -> tuple[int, int]:
    """(left, top) of the one side x side square, all `fill` in `after`, holding every changed pixel."""
    rows, cols = np.nonzero(before != after)
    if not len(rows):
        raise SystemExit("the occlusion changed no pixel of an image")
    found = [
        (left, top)
        for top in range(max(0, rows.max() - side + 1), min(rows.min(), SIZE - side) + 1)
        for left in range(max(0, cols.max() - side + 1), min(cols.min(), SIZE - side) + 1)
        if (after[top:top + side, left:left + side] == fill).all()
    ]
    if len(found) != 1:
        raise SystemExit(f"cannot tell where the occluding patch is ({len(found)} candidate squares)")
    return found[0]


def longest_piece(pixels: np.ndarray) -> int:
    """Pixels in the largest 8-connected piece of a boolean mask."""
    seen = np.zeros_like(pixels)
    best = 0
    for start in zip(*np.nonzero(pixels), strict=True):
        if seen[start]:
            continue
        seen[start] = True
        stack, size = [start], 0
        while stack:
            r, c = stack.pop()
            size += 1
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    q = (r + dr, c + dc)
                    if 0 <= q[0] < pixels.shape[0] and 0 <= q[1] < pixels.shape[1] and pixels[q] and not seen[q]:
                        seen[q] = True
                        stack.append(q)
        best = max(best, size)
    return best


def occlusion_label(before: np.ndarray, after: np.ndarray, mask: np.ndarray) -> tuple[bool, str]:
    """Does the patch leave enough of the scratch to see? Decided on the generator's ground truth."""
    perturb = declared("occlusion")
    side = max(1, min(SIZE, round(float(perturb["size"]) * SIZE)))
    left, top = find_patch(before, after, side, int(perturb.get("fill", 128)))
    if not mask.any():
        return True, f"generator: no scratch; the patch at ({left}, {top}) is not one"
    patch = np.zeros_like(mask)
    patch[top:top + side, left:left + side] = True
    total, covered = int(mask.sum()), int((mask & patch).sum())
    piece = longest_piece(mask & ~patch)
    return piece >= MIN_VISIBLE_PIECE, (
        f"generator: the patch at ({left}, {top}) hides {covered} of the scratch's {total} pixels; "
        f"its longest visible piece has {piece}"
    )


# ------------------------------------------------------------------------------------- build


def test_name(k: int) -> str:
    return f"images/test/img-{k:03d}.png"


def train_name(k: int) -> str:
    return f"images/train/train-{k:03d}.png"


def generated_files() -> list[str]:
    return ([test_name(k) for k in range(1, N_TEST + 1)] + [train_name(k) for k in range(1, N_TRAINING + 2)]
            + ["data/test.jsonl", "data/training.jsonl", "model/weights.npz", "labels/blur.jsonl", "labels/occlusion.jsonl"])


def stray_files(root: str) -> list[str]:
    """Files under images/ that the build does not write (left from an older build)."""
    expected = set(generated_files())
    out = []
    for sub in ("images/test", "images/train"):
        folder = os.path.join(root, sub)
        if os.path.isdir(folder):
            out.extend(f"{sub}/{name}" for name in sorted(os.listdir(folder)) if f"{sub}/{name}" not in expected)
    return out


def write(root: str, rel: str, data: bytes | str) -> None:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def jsonl(objs: list[dict[str, object]]) -> str:
    return "".join(json.dumps(o, sort_keys=True) + "\n" for o in objs)


def oloproof(work: str, *args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "oloproof", *args], cwd=work, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"oloproof {' '.join(args)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def load(path: str) -> np.ndarray:
    from PIL import Image

    with Image.open(path) as im:
        return np.asarray(im.convert("L"))


def build_in(work: str) -> None:
    """Generate everything in `work`, which holds a copy of SOURCES."""
    test = draw_set(STREAM_TEST, N_TEST)
    training = draw_set(STREAM_TRAINING, N_TRAINING)
    for k, (pixels, _, _, _) in enumerate(test, 1):
        write(work, test_name(k), png(pixels))
    for k, (pixels, _, _, _) in enumerate(training, 1):
        write(work, train_name(k), png(pixels))
    leaked_pixels, _, _, leaked_label = test[LEAKED_TEST - 1]
    write(work, train_name(N_TRAINING + 1), png(leaked_pixels, row_filter=1, text={"Comment": "re-saved by the example's build"}))
    cases = [{"id": f"img-{k:03d}", "image": test_name(k), "expected": {"label": y}} for k, (_, _, _, y) in enumerate(test, 1)]
    rows = [{"image": train_name(k), "label": y} for k, (_, _, _, y) in enumerate(training, 1)]
    rows.append({"image": train_name(N_TRAINING + 1), "label": leaked_label})
    write(work, "data/test.jsonl", jsonl(cases))
    write(work, "data/training.jsonl", jsonl(rows))

    # Trained the way a user would: from the training file, the images read back from disk.
    images = [load(os.path.join(work, row["image"])) for row in rows]
    save_npz(os.path.join(work, "model", "weights.npz"), train_detector(images, np.array([row["label"] for row in rows])))

    blur = []
    for case, (pixels, plain, mask, _) in zip(cases, test, strict=True):
        preserved, note = blur_label(pixels, plain, mask)
        if not preserved:
            raise SystemExit(f"{case['id']}: the blur would hide its scratch ({note}); raise the scratches' contrast")
        blur.append({"id": case["id"], "preserved": preserved, "note": note})
    write(work, "labels/blur.jsonl", jsonl(blur))
    oloproof(work, "metamorphic", "stamp", "blur", "--confirm")

    oloproof(work, "metamorphic", "cases", "occlusion", "-o", "occlusion-cases.jsonl")
    with open(os.path.join(work, "occlusion-cases.jsonl"), encoding="utf-8") as fh:
        transformed = {obj["id"]: obj["image"] for obj in map(json.loads, fh)}
    occlusion = []
    for case, (pixels, _, mask, _) in zip(cases, test, strict=True):
        preserved, note = occlusion_label(pixels, load(os.path.join(work, transformed[case["id"]])), mask)
        occlusion.append({"id": case["id"], "preserved": preserved, "note": note})
    write(work, "labels/occlusion.jsonl", jsonl(occlusion))
    oloproof(work, "metamorphic", "stamp", "occlusion", "--confirm")


def build(root: str) -> None:
    """Generate every file of generated_files() into `root` (an image/ directory, or a new one)."""
    with tempfile.TemporaryDirectory() as work:
        for rel in SOURCES:
            os.makedirs(os.path.dirname(os.path.join(work, rel)) or work, exist_ok=True)
            shutil.copyfile(os.path.join(HERE, rel), os.path.join(work, rel))
        build_in(work)
        for rel in generated_files():
            os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(work, rel), os.path.join(root, rel))


def compare(built: str, shipped: str) -> str | None:
    """None when the two files are byte-identical; otherwise what differs.

    Two .npz checkpoints whose arrays agree to 1e-9 (relative) are reported as differing in
    floating-point rounding only: BLAS and NumPy's SIMD loops round the last bit differently on
    other CPUs, and a checkpoint trained there is the same model."""
    if not os.path.exists(shipped):
        return "missing"
    if filecmp.cmp(built, shipped, shallow=False):
        return None
    if built.endswith(".npz"):
        with np.load(built, allow_pickle=False) as a, np.load(shipped, allow_pickle=False) as b:
            if sorted(a.files) == sorted(b.files) and all(
                a[k].dtype == b[k].dtype and a[k].shape == b[k].shape
                and (np.array_equal(a[k], b[k]) if a[k].dtype.kind not in "fc" else np.allclose(a[k], b[k], rtol=1e-9, atol=0))
                for k in a.files
            ):
                return "rounding"
    return "differs"


def report_check(built_root: str, shipped_root: str, files: list[str], stray: list[str]) -> int:
    """Print what --check found; 0 when every file is byte-identical or differs by rounding only."""
    results = {rel: compare(os.path.join(built_root, rel), os.path.join(shipped_root, rel)) for rel in files}
    differ = [rel for rel, what in results.items() if what in ("missing", "differs")]
    rounding = [rel for rel, what in results.items() if what == "rounding"]
    for rel in differ:
        print(f"{results[rel]}: {rel}")
    for rel in rounding:
        print(f"differs in floating-point rounding only (arrays equal to 1e-9): {rel}")
    for rel in stray:
        print(f"not generated: {rel}")
    if differ or stray:
        print(f"{len(differ)} file(s) differ, {len(stray)} stray file(s)")
        return 1
    same = len(files) - len(rounding)
    print(f"all {len(files)} generated files are byte-identical" if not rounding
          else f"{same} of {len(files)} generated files are byte-identical, {len(rounding)} equal up to floating-point rounding")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the image project's generated files.")
    parser.add_argument("--check", action="store_true", help="rebuild in a temporary directory and compare with the files in place")
    args = parser.parse_args(argv)
    if not args.check:
        build(HERE)
        print(f"wrote {len(generated_files())} files under image/")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp)
        return report_check(tmp, HERE, generated_files(), stray_files(HERE))


if __name__ == "__main__":
    sys.exit(main())
