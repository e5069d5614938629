"""Say whether each image shows a scratch (the system under test).

    python model/predict.py --weights model/weights.npz < data/test.jsonl

Reads JSONL cases on stdin, one object per line with an `id` and an `image` (a path to an image
file, relative to the working directory; any other key, such as `expected`, is ignored). Writes
one JSON object per case on stdout, in input order:

    {"id": "img-001", "label": 1, "score": 0.981234}

`score` is the detector's probability of a scratch and `label` is 1 when it is at least 0.5.
Any batch size works, including an empty one. A case whose image cannot be read gets
{"id": ..., "error": "..."} instead of a label (and a note on stderr); the rest of the batch is
still answered. A line that is not a JSON object stops the run with exit status 2.
NumPy and Pillow only.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the example directory free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from features import NAMES, features  # noqa: E402


def load(path):
    with np.load(path, allow_pickle=False) as z:
        names = tuple(str(n) for n in z["feature_names"])
        if names != NAMES:
            raise SystemExit(f"{path}: made for features {names}, this detector computes {NAMES}")
        return {"mean": z["mean"], "scale": z["scale"], "coef": z["coef"], "intercept": float(z["intercept"])}


def read_image(value):
    from PIL import Image, UnidentifiedImageError

    if not isinstance(value, str) or not value:
        raise ValueError(f"'image' must be a path to an image file, got {value!r}")
    try:
        with Image.open(value) as im:
            return np.asarray(im.convert("L"))
    except (OSError, UnidentifiedImageError) as exc:
        raise ValueError(f"cannot read image {value}: {exc}") from None


def score(model, pixels):
    z = (features(pixels) - model["mean"]) / model["scale"]
    return float(0.5 * (1.0 + np.tanh(0.5 * (z @ model["coef"] + model["intercept"]))))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Find scratches in images (JSONL in, JSONL out).")
    parser.add_argument("--weights", required=True, help="a detector written by ../build.py")
    args = parser.parse_args(argv)
    model = load(args.weights)
    out = []
    for lineno, line in enumerate(sys.stdin, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            print(f"stdin line {lineno}: not JSON: {exc}", file=sys.stderr)
            return 2
        if not isinstance(case, dict):
            print(f"stdin line {lineno}: not a JSON object", file=sys.stderr)
            return 2
        try:
            p = round(score(model, read_image(case.get("image"))), 6)
        except ValueError as exc:
            print(f"case {case.get('id')!r}: {exc}", file=sys.stderr)
            out.append({"id": case.get("id"), "error": str(exc)})
            continue
        out.append({"id": case.get("id"), "label": int(p >= 0.5), "score": p})
    sys.stdout.write("".join(json.dumps(o) + "\n" for o in out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
