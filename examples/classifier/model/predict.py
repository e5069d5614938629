"""Classify tumours with the exported model (the system under test). NumPy only.

    python model/predict.py --weights model/weights.npz < data/test.jsonl

Reads JSONL cases on stdin, one object per line with an `id` and a `features` object (any other
key, such as `expected`, is ignored and never needed). Writes one JSON object per case on stdout,
in input order:

    {"id": "tumour-004", "label": "malignant", "score": 0.998113, "latency_ms": 0.021}

`score` is the model's probability that the tumour is malignant, `label` is "malignant" when
it is at least 0.5, and `latency_ms` is the wall time spent scoring that one case (each case is
scored on its own, as a service answering one request would). A case whose features are missing
or not numbers gets {"id": ..., "error": "..."} instead (and a note on stderr); the rest of the
batch is still scored. A line that is not a JSON object stops the run with exit status 2.
"""

import argparse
import json
import math
import sys
import time

import numpy as np

sys.dont_write_bytecode = True


def load(path):
    with np.load(path, allow_pickle=False) as z:
        return {
            "features": [str(name) for name in z["features"]],
            "mean": z["mean"],
            "scale": z["scale"],
            "coef": z["coef"],
            "intercept": float(z["intercept"]),
            "positive": str(z["positive"]),
            "negative": str(z["negative"]),
        }


def row(model, features):
    if not isinstance(features, dict):
        raise ValueError("features is not an object")
    values = []
    for name in model["features"]:
        value = features.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise ValueError(f"feature {name!r} is missing or not a finite number")
        values.append(float(value))
    return np.array(values)


def classify(model, features):
    x = (row(model, features) - model["mean"]) / model["scale"]
    logit = float(x @ model["coef"] + model["intercept"])
    p = round(0.5 * (1.0 + math.tanh(0.5 * logit)), 6)
    return (model["positive"] if p >= 0.5 else model["negative"]), p


def main(argv=None):
    parser = argparse.ArgumentParser(description="Classify tumours (JSONL in, JSONL out).")
    parser.add_argument("--weights", required=True, help="a model written by train.py")
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
        started = time.perf_counter()
        try:
            label, p = classify(model, case.get("features"))
        except ValueError as exc:
            print(f"case {case.get('id')!r}: {exc}", file=sys.stderr)
            out.append({"id": case.get("id"), "error": str(exc)})
            continue
        took = (time.perf_counter() - started) * 1000.0
        out.append({"id": case.get("id"), "label": label, "score": p, "latency_ms": round(took, 3)})
    sys.stdout.write("".join(json.dumps(o) + "\n" for o in out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
