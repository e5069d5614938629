"""Train the released tumour classifier (scikit-learn) and export it for NumPy.

    python model/train.py --data data/training.jsonl --out model/weights.npz

Reads training rows {"features": {...30 numbers...}, "label": "malignant" | "benign"} and fits
scikit-learn's StandardScaler + LogisticRegression with its default settings (no tuning, no look
at the test set). The fitted numbers are exported to an .npz (feature order, scaler mean and
scale, coefficients, intercept, and which label the probability is of) so that predict.py scores
with NumPy alone. Fixed zip timestamps: the same data on the same machine give the same bytes.
"""

import argparse
import io
import json
import os
import sys
import zipfile

import numpy as np

sys.dont_write_bytecode = True


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
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    parser = argparse.ArgumentParser(description="Train the tumour classifier.")
    parser.add_argument("--data", required=True, help="training JSONL")
    parser.add_argument("--out", required=True, help="where to write the .npz")
    args = parser.parse_args(argv)
    with open(args.data, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    names = sorted(rows[0]["features"])
    X = np.array([[row["features"][name] for name in names] for row in rows], dtype=np.float64)
    y = np.array([row["label"] == "malignant" for row in rows], dtype=np.int64)
    model = make_pipeline(StandardScaler(), LogisticRegression(random_state=0)).fit(X, y)
    scaler, logistic = model.named_steps["standardscaler"], model.named_steps["logisticregression"]
    save_npz(args.out, {
        "features": np.array(names),
        "mean": scaler.mean_,
        "scale": scaler.scale_,
        "coef": logistic.coef_[0],
        "intercept": np.array(logistic.intercept_[0]),
        "positive": np.array("malignant"),
        "negative": np.array("benign"),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
