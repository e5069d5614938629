"""Score loan applications with a trained checkpoint (the system under test).

    python model/predict.py --weights model/weights.npz < data/test.jsonl

Reads JSONL cases on stdin, one object per line with an `id` and a
`features` object (any other key, such as `expected`, is ignored and never
needed). Writes one JSON object per case on stdout, in input order:

    {"id": "case-0001", "label": 1, "score": 0.912345}

`score` is the model's probability of approval and `label` is 1 when it is
at least 0.5. Any batch size works, including an empty one. A case whose
features cannot be read gets {"id": ..., "error": "..."} instead of a label
(and a note on stderr); the rest of the batch is still scored. A line that
is not a JSON object stops the run with exit status 2. NumPy only.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # keep the example directory free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from features import BadCase, design  # noqa: E402


def load(path):
    with np.load(path, allow_pickle=False) as z:
        categorical = [str(c) for c in z["categorical"]]
        return {
            "numeric": [str(n) for n in z["numeric"]],
            "mean": z["mean"],
            "scale": z["scale"],
            "categorical": categorical,
            "vocabularies": {c: [str(v) for v in z[f"vocab_{c}"]] for c in categorical},
            "coef": z["coef"],
            "intercept": float(z["intercept"]),
        }


def score(model, feature_dicts):
    X = design(feature_dicts, model["numeric"], model["mean"], model["scale"],
               model["categorical"], model["vocabularies"])
    logit = X @ model["coef"] + model["intercept"]
    return 0.5 * (1.0 + np.tanh(0.5 * logit))


def main(argv=None):
    parser = argparse.ArgumentParser(description="Score loan applications (JSONL in, JSONL out).")
    parser.add_argument("--weights", required=True, help="a checkpoint written by train.py")
    args = parser.parse_args(argv)
    model = load(args.weights)

    cases = []
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
        cases.append(case)

    out = []
    good, good_at = [], []
    for i, case in enumerate(cases):
        try:
            score(model, [case.get("features")])  # validates this one case
        except BadCase as exc:
            print(f"case {case.get('id')!r}: {exc}", file=sys.stderr)
            out.append({"id": case.get("id"), "error": str(exc)})
            continue
        out.append(None)
        good.append(case["features"])
        good_at.append(i)

    if good:
        probs = score(model, good)
        for i, p in zip(good_at, probs, strict=True):
            p = round(float(p), 6)
            out[i] = {"id": cases[i].get("id"), "label": int(p >= 0.5), "score": p}

    sys.stdout.write("".join(json.dumps(o) + "\n" for o in out))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
