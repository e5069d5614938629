"""Regenerate every data file of the `model-validation` example.

    python examples/build_model_validation.py            # from the repository root
    python examples/build_model_validation.py --check    # rebuild in a temp dir, compare bytes
    python examples/build_model_validation.py --tuning-report
                      # the recipe on the separate tuning draw (seeds 101..120), not the test set

It writes, under examples/model-validation/:

    data/training.jsonl          5000 synthetic loan applications {"features", "label"}
    data/test.jsonl              350 test cases {"id", "features", "expected": {"label"}}
    model/seeds/seed_<k>.npz     the recipe (model/train.py) trained with seeds 1..5
    model/weights.npz            the released checkpoint: a byte copy of seed_5.npz

Everything is deterministic: NumPy's PCG64 generator with fixed seeds (no
`random` module), numbers rounded to fixed decimals, JSON with sorted keys,
and .npz files with fixed zip timestamps. Running it twice on the same machine
gives byte-identical files (`--check` verifies this).

The data: each applicant gets an age, an employment status, an income (in
thousands), a debt ratio, years of credit history, a loan purpose and a loan
amount (in thousands), drawn from plausible, mutually consistent
distributions. The label `approved` comes from a noisy ground-truth rule: a
score that is non-linear in the features (log income, loan-to-income ratio,
square root of history) plus logistic noise. A linear logistic regression on
the raw features therefore cannot be perfect: about 88% accuracy.

The test set is clean: no test case's `features` equals any training row's
`features` after strings are lowercased and whitespace collapsed (the build
fails if one did). Only numpy is needed.
"""

import argparse
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "model-validation")

N_TRAINING = 5000
N_TEST = 350
SEEDS = (1, 2, 3, 4, 5)
RELEASED_SEED = 5

# Independent generator streams for each file. STREAM_TUNING is a separate draw,
# never shipped, on which the noise level and the recipe were chosen
# (--tuning-report reproduces those figures without touching the test set).
STREAM_TRAINING = (20250101, 1)
STREAM_TEST = (20250101, 2)
STREAM_TUNING = (20250101, 99)
N_TUNING = 20000
TUNING_SEEDS = tuple(range(101, 121))

# Ground truth: logit = NOISE_GAIN * score(features); label ~ Bernoulli(sigmoid(logit)).
NOISE_GAIN = 2.35


def applicants(rng, n):
    """n applicants' features as a list of dicts (plain Python numbers and strings)."""
    age = rng.integers(21, 71, size=n)

    employment = np.empty(n, dtype=object)
    u = rng.random(n)
    older = age >= 60
    employment[:] = np.where(
        u < 0.62, "salaried", np.where(u < 0.84, "self_employed", np.where(u < 0.95, "unemployed", "retired"))
    )
    v = rng.random(n)
    employment[older & (v < 0.6)] = "retired"

    base = {"salaried": 62.0, "self_employed": 70.0, "unemployed": 26.0, "retired": 38.0}
    spread = {"salaried": 0.40, "self_employed": 0.55, "unemployed": 0.25, "retired": 0.35}
    mu = np.log(np.array([base[e] for e in employment]))
    sd = np.array([spread[e] for e in employment])
    income = np.exp(mu + sd * rng.standard_normal(n))
    income = np.clip(income, 20.0, 200.0)

    max_history = age - 18
    history = np.floor(max_history * rng.beta(2.0, 1.5, size=n)).astype(int)

    debt_ratio = np.clip(rng.beta(2.2, 4.0, size=n), 0.0, 0.95)

    purposes = np.array(["home", "car", "education", "business"], dtype=object)
    purpose = purposes[rng.choice(4, size=n, p=[0.35, 0.30, 0.15, 0.20])]
    loan_mu = {"home": np.log(160.0), "car": np.log(22.0), "education": np.log(25.0), "business": np.log(60.0)}
    loan_sd = {"home": 0.45, "car": 0.45, "education": 0.5, "business": 0.7}
    loan = np.exp(
        np.array([loan_mu[p] for p in purpose]) + np.array([loan_sd[p] for p in purpose]) * rng.standard_normal(n)
    )
    loan = np.clip(loan, 2.0, 600.0)

    rows = []
    for i in range(n):
        rows.append(
            {
                "age": int(age[i]),
                "credit_history_years": int(history[i]),
                "debt_ratio": round(float(debt_ratio[i]), 3),
                "employment": str(employment[i]),
                "income": round(float(income[i]), 1),
                "loan_amount": round(float(loan[i]), 1),
                "purpose": str(purpose[i]),
            }
        )
    return rows


def true_score(rows):
    """The ground-truth rule's score (before noise); > 0 leans towards approval."""
    inc = np.array([r["income"] for r in rows])
    debt = np.array([r["debt_ratio"] for r in rows])
    hist = np.array([r["credit_history_years"] for r in rows], dtype=float)
    loan = np.array([r["loan_amount"] for r in rows])
    age = np.array([r["age"] for r in rows], dtype=float)
    emp = {"salaried": 0.6, "self_employed": 0.0, "unemployed": -2.2, "retired": -0.2}
    pur = {"home": 1.2, "car": 0.5, "education": 0.0, "business": -0.6}
    s = (
        2.2 * np.log(inc / 55.0)
        - 7.0 * (debt - 0.33)
        + 0.9 * (np.sqrt(hist) - 3.0)
        - 0.9 * np.log(loan / inc)
        - 0.0006 * (age - 45.0) ** 2
        + np.array([emp[r["employment"]] for r in rows])
        + np.array([pur[r["purpose"]] for r in rows])
        - 0.5
    )
    return s


def labelled(rng, n, gain=NOISE_GAIN):
    rows = applicants(rng, n)
    p = 1.0 / (1.0 + np.exp(-gain * true_score(rows)))
    labels = (rng.random(n) < p).astype(int)
    return rows, [int(v) for v in labels]


def normalise(value):
    """The leakage check's normal form: lowercase strings, collapse whitespace."""
    if isinstance(value, str):
        return " ".join(value.split()).lower()
    if isinstance(value, dict):
        return {k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    return value


def key(features):
    return json.dumps(normalise(features), sort_keys=True)


def jsonl(objs):
    return "".join(json.dumps(o, sort_keys=True, allow_nan=False) + "\n" for o in objs)


def build(root):
    os.makedirs(os.path.join(root, "data"), exist_ok=True)
    os.makedirs(os.path.join(root, "model", "seeds"), exist_ok=True)

    train_rows, train_labels = labelled(np.random.default_rng(STREAM_TRAINING), N_TRAINING)
    test_rows, test_labels = labelled(np.random.default_rng(STREAM_TEST), N_TEST)

    seen = {key(r) for r in train_rows}
    leaked = [i for i, r in enumerate(test_rows) if key(r) in seen]
    if leaked:
        raise SystemExit(f"test rows {leaked} also occur in the training data")
    if len({key(r) for r in test_rows}) != N_TEST:
        raise SystemExit("the test set holds duplicate cases")

    training = [{"features": r, "label": y} for r, y in zip(train_rows, train_labels, strict=True)]
    test = [
        {"id": f"case-{i + 1:04d}", "features": r, "expected": {"label": y}}
        for i, (r, y) in enumerate(zip(test_rows, test_labels, strict=True))
    ]
    with open(os.path.join(root, "data", "training.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(jsonl(training))
    with open(os.path.join(root, "data", "test.jsonl"), "w", encoding="utf-8", newline="\n") as fh:
        fh.write(jsonl(test))

    train_py = os.path.join(ROOT, "model", "train.py")
    data = os.path.join(root, "data", "training.jsonl")
    for seed in SEEDS:
        out = os.path.join(root, "model", "seeds", f"seed_{seed}.npz")
        subprocess.run([sys.executable, train_py, "--data", data, "--seed", str(seed), "--out", out], check=True)
    shutil.copyfile(
        os.path.join(root, "model", "seeds", f"seed_{RELEASED_SEED}.npz"), os.path.join(root, "model", "weights.npz")
    )


def tuning_report():
    """How the recipe does on the tuning draw: the figures its settings were chosen on."""
    import itertools

    sys.path.insert(0, os.path.join(ROOT, "model"))
    sys.dont_write_bytecode = True
    import predict
    import train

    train_rows, train_labels = labelled(np.random.default_rng(STREAM_TRAINING), N_TRAINING)
    rows, labels = labelled(np.random.default_rng(STREAM_TUNING), N_TUNING)
    labels = np.asarray(labels)
    p = 1.0 / (1.0 + np.exp(-NOISE_GAIN * true_score(rows)))
    y = np.asarray(train_labels, dtype=np.float64)
    preds = []
    for seed in TUNING_SEEDS:
        model = train.train(train_rows, y, seed)
        checkpoint = {
            "numeric": [str(n) for n in model["numeric"]],
            "mean": model["mean"],
            "scale": model["scale"],
            "categorical": [str(c) for c in model["categorical"]],
            "vocabularies": {str(c): [str(v) for v in model[f"vocab_{c}"]] for c in model["categorical"]},
            "coef": model["coef"],
            "intercept": float(model["intercept"]),
        }
        preds.append((predict.score(checkpoint, rows) >= 0.5).astype(int))
    acc = np.array([np.mean(q == labels) for q in preds])
    flips = [np.mean(a != b) for a, b in itertools.combinations(preds, 2)]
    print(f"tuning draw: {N_TUNING} applicants, seeds {TUNING_SEEDS[0]}..{TUNING_SEEDS[-1]}")
    print(f"  best possible accuracy (true probabilities): {np.mean(np.maximum(p, 1 - p)):.1%}")
    print(f"  recipe accuracy: mean {acc.mean():.1%}, min {acc.min():.1%}, max {acc.max():.1%}")
    print(f"  cases changing label between two seeds: {np.mean(flips):.1%} (mean over pairs)")


GENERATED = ["data/training.jsonl", "data/test.jsonl", "model/weights.npz"] + [
    f"model/seeds/seed_{s}.npz" for s in SEEDS
]


def main(argv=None):
    parser = argparse.ArgumentParser(description="Regenerate the model-validation example's data.")
    parser.add_argument(
        "--check", action="store_true", help="rebuild in a temporary directory and compare with the files in place"
    )
    parser.add_argument(
        "--tuning-report",
        action="store_true",
        help="print the recipe's figures on the separate tuning draw; writes nothing",
    )
    args = parser.parse_args(argv)
    if args.tuning_report:
        tuning_report()
        return 0
    if not args.check:
        build(ROOT)
        for rel in GENERATED:
            print(f"wrote examples/model-validation/{rel}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        build(tmp)
        differ = [
            rel
            for rel in GENERATED
            if not os.path.exists(os.path.join(ROOT, rel))
            or not filecmp.cmp(os.path.join(tmp, rel), os.path.join(ROOT, rel), shallow=False)
        ]
    for rel in differ:
        print(f"differs: examples/model-validation/{rel}")
    print("all generated files are byte-identical" if not differ else f"{len(differ)} file(s) differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
