"""Train the loan-approval model: logistic regression, NumPy only.

    python model/train.py --seed 5 --out model/weights.npz
    python model/train.py --data data/training.jsonl --seed 3 --out model/seeds/seed_3.npz

The recipe (the same for every seed; only --seed changes):

  1. draw a bootstrap sample of the training rows (n rows, with replacement);
  2. standardise the numeric features with that sample's means and scales,
     one-hot encode the categorical ones;
  3. start from random weights and run minibatch SGD with L2 for a fixed
     number of epochs, visiting the rows in a fresh random order each epoch;
  4. keep the last iterate.

The seed drives the bootstrap, the initial weights and the minibatch order,
so different seeds give genuinely different checkpoints: this is the
run-to-run variation that `oloproof seeds` measures. The hyperparameters
below were fixed once for all seeds, on a separate validation draw, never
on data/test.jsonl (see ../README.md).

The checkpoint is an .npz written byte-for-byte deterministically (fixed
zip timestamps), so retraining with the same seed on the same machine
reproduces the same file.
"""

import argparse
import io
import json
import os
import sys
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # keep the example directory free of __pycache__
sys.path.insert(0, HERE)

from features import CATEGORICAL, NUMERIC, VOCABULARY, design, feature_names, raw_matrix  # noqa: E402

# The recipe's hyperparameters (fixed once, globally).
EPOCHS = 1
BATCH = 10
LEARNING_RATE = 2.0
L2 = 1e-3
INIT_SD = 0.5


def read_training(path):
    """Rows of {"features": {...}, "label": 0|1}."""
    features, labels = [], []
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get("label") not in (0, 1):
                raise SystemExit(f"{path}:{lineno}: label must be 0 or 1")
            features.append(row["features"])
            labels.append(row["label"])
    return features, np.asarray(labels, dtype=np.float64)


def sigmoid(z):
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def train(features, labels, seed, epochs=EPOCHS, batch=BATCH,
          learning_rate=LEARNING_RATE, l2=L2, init_sd=INIT_SD):
    rng = np.random.default_rng(seed)
    n = len(labels)
    sample = rng.integers(0, n, size=n)
    feats = [features[i] for i in sample]
    y = labels[sample]

    raw = raw_matrix(feats, NUMERIC)
    mean = raw.mean(axis=0)
    scale = raw.std(axis=0)
    scale[scale == 0] = 1.0
    X = design(feats, NUMERIC, mean, scale, CATEGORICAL, VOCABULARY)

    w = rng.normal(0.0, init_sd, size=X.shape[1])
    b = 0.0
    for _ in range(epochs):
        order = rng.permutation(n)
        for start in range(0, n, batch):
            idx = order[start:start + batch]
            err = sigmoid(X[idx] @ w + b) - y[idx]
            w -= learning_rate * (X[idx].T @ err / len(idx) + l2 * w)
            b -= learning_rate * float(err.mean())

    return {
        "format": np.array("oloproof-example-logreg-1"),
        "seed": np.array(seed, dtype=np.int64),
        "numeric": np.array(NUMERIC),
        "mean": mean,
        "scale": scale,
        "categorical": np.array(CATEGORICAL),
        **{f"vocab_{c}": np.array(VOCABULARY[c]) for c in CATEGORICAL},
        "feature_names": np.array(feature_names(NUMERIC, CATEGORICAL, VOCABULARY)),
        "coef": w,
        "intercept": np.array(b, dtype=np.float64),
    }


def save_npz(path, arrays):
    """Like np.savez, but with fixed zip timestamps so the bytes are reproducible."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as zf:
        for key in sorted(arrays):
            member = io.BytesIO()
            np.lib.format.write_array(member, np.asarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(key + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            zf.writestr(info, member.getvalue())
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.path.join(HERE, "..", "data", "training.jsonl"))
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    features, labels = read_training(args.data)
    save_npz(args.out, train(features, labels, args.seed))
    print(f"trained seed {args.seed} on {len(labels)} rows -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
