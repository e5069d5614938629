"""Feature encoding shared by train.py and predict.py (NumPy only).

A loan application is a JSON object such as

    {"age": 41, "credit_history_years": 12, "debt_ratio": 0.312,
     "employment": "salaried", "income": 64.5, "loan_amount": 180.0,
     "purpose": "home"}

Numbers are standardised with the training sample's means and scales;
categories are one-hot encoded against a fixed vocabulary. A category the
vocabulary does not hold encodes as all zeros (the model's baseline), so a
swapped or unseen value never crashes a batch.
"""

import math

import numpy as np

NUMERIC = ("income", "debt_ratio", "credit_history_years", "loan_amount", "age")
CATEGORICAL = ("employment", "purpose")
VOCABULARY = {
    "employment": ("salaried", "self_employed", "unemployed", "retired"),
    "purpose": ("home", "car", "education", "business"),
}


class BadCase(ValueError):
    """A case whose features cannot be encoded."""


def raw_matrix(feature_dicts, numeric=NUMERIC):
    """Numeric features as a float matrix; raises BadCase naming the key."""
    out = np.empty((len(feature_dicts), len(numeric)), dtype=np.float64)
    for i, feats in enumerate(feature_dicts):
        if not isinstance(feats, dict):
            raise BadCase("'features' must be an object")
        for j, name in enumerate(numeric):
            value = feats.get(name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise BadCase(f"feature {name!r} must be a number, got {value!r}")
            value = float(value)
            if not math.isfinite(value):
                raise BadCase(f"feature {name!r} is not finite")
            out[i, j] = value
    return out


def one_hot(feature_dicts, categorical, vocabularies):
    """One-hot columns, in the order categorical x vocabulary."""
    width = sum(len(vocabularies[c]) for c in categorical)
    out = np.zeros((len(feature_dicts), width), dtype=np.float64)
    offset = 0
    for name in categorical:
        index = {v: k for k, v in enumerate(vocabularies[name])}
        for i, feats in enumerate(feature_dicts):
            value = feats.get(name)
            if not isinstance(value, str):
                raise BadCase(f"feature {name!r} must be a string, got {value!r}")
            k = index.get(" ".join(value.split()).lower())
            if k is not None:
                out[i, offset + k] = 1.0
        offset += len(vocabularies[name])
    return out


def design(feature_dicts, numeric, mean, scale, categorical, vocabularies):
    """The model's input matrix: standardised numbers, then one-hot categories."""
    z = (raw_matrix(feature_dicts, numeric) - mean) / scale
    return np.hstack([z, one_hot(feature_dicts, categorical, vocabularies)])


def feature_names(numeric, categorical, vocabularies):
    names = list(numeric)
    for name in categorical:
        names.extend(f"{name}={v}" for v in vocabularies[name])
    return names
