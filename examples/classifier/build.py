"""Regenerate every generated file of the `classifier` example.

    python build.py            # from this directory (or give its path from anywhere)
    python build.py --check    # rebuild in a temporary directory, compare, write nothing

Needs scikit-learn (`pip install scikit-learn`): the data are scikit-learn's bundled copy of the
Breast Cancer Wisconsin (Diagnostic) data set (569 tumours, 30 measurements each, 212 malignant),
read from the installed package, never downloaded. The gate itself does not need scikit-learn:
model/predict.py scores with NumPy from the exported weights.

    data/training.jsonl   341 tumours {"features", "label"} (60%, stratified, seed 0)
    data/test.jsonl       228 cases {"id", "features", "expected": {"label"}, "stratum"}
    model/weights.npz     the released model, trained by model/train.py on data/training.jsonl

A case's `stratum` is the tumour's size (its mean radius: small < 12, medium 12 to 15, large
>= 15), the slice the per-slice rule in policy.yaml reads. Nothing was tuned to the test set: the
split's seed is 0 and the model's settings are scikit-learn's defaults.

Deterministic: fixed seeds, numbers as the data set gives them, JSON with sorted keys, .npz with
fixed zip timestamps. On another CPU or BLAS the weights may differ in the last bits; `--check`
then reports weights.npz as "equal up to floating-point rounding" and still insists that the data
files are byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
FILES = ("data/training.jsonl", "data/test.jsonl", "model/weights.npz")


def size(radius: float) -> str:
    return "small" if radius < 12 else "medium" if radius < 15 else "large"


def build(root: str) -> None:
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    data = load_breast_cancer()
    names = [str(name).replace(" ", "_") for name in data.feature_names]
    diagnosis = [str(data.target_names[t]) for t in data.target]  # 0 malignant, 1 benign
    rows = [{name: float(value) for name, value in zip(names, row, strict=True)} for row in data.data]
    train_at, test_at = train_test_split(np.arange(len(rows)), test_size=0.4, stratify=data.target, random_state=0)
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    training = [{"features": rows[i], "label": diagnosis[i]} for i in sorted(train_at)]
    test = [
        {"id": f"tumour-{i:03d}", "features": rows[i], "expected": {"label": diagnosis[i]},
         "stratum": size(rows[i]["mean_radius"])}
        for i in sorted(test_at)
    ]
    for rel, objs in (("data/training.jsonl", training), ("data/test.jsonl", test)):
        with open(os.path.join(root, rel), "w", encoding="utf-8", newline="\n") as fh:
            fh.write("".join(json.dumps(o, sort_keys=True) + "\n" for o in objs))
    train_py = os.path.join(HERE, "model", "train.py")
    out = os.path.join(root, "model", "weights.npz")
    subprocess.run([sys.executable, train_py, "--data", os.path.join(root, "data", "training.jsonl"), "--out", out], check=True)


def same(rel: str, a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        if fa.read() == fb.read():
            return True
    if not rel.endswith(".npz"):
        return False
    with np.load(a) as za, np.load(b) as zb:
        if sorted(za.files) != sorted(zb.files):
            return False
        return all(np.allclose(za[k], zb[k], rtol=1e-9, atol=0) if za[k].dtype.kind == "f" else np.array_equal(za[k], zb[k]) for k in za.files)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Regenerate the classifier example's data and model.")
    parser.add_argument("--check", action="store_true", help="rebuild in a temporary directory and compare with the files in place")
    args = parser.parse_args(argv)
    if not args.check:
        build(HERE)
        for rel in FILES:
            print(f"wrote {rel}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp)
        bad = [rel for rel in FILES if not same(rel, os.path.join(HERE, rel), os.path.join(tmp, rel))]
    for rel in FILES:
        print(f"{'DIFFERS' if rel in bad else 'same'}: {rel}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
