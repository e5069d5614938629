"""The leakage check's normalisation: the shared normaliser (``oloproof.normalise``, also used by
the holdout guard) and the leakage check's own words about it."""

from __future__ import annotations

from oloproof.normalise import (
    MISSING,
    NORMALISATION,
    Domain,
    Token,
    normalise_case_value,
    normalise_string,
    normalise_text,
    normalise_value,
    value_as_text,
)

NEAR_DUPLICATES = "Near-duplicates are not checked: only cases equal to a training row after normalisation are found."

__all__ = [
    "MISSING",
    "NEAR_DUPLICATES",
    "NORMALISATION",
    "Domain",
    "Token",
    "normalise_case_value",
    "normalise_string",
    "normalise_text",
    "normalise_value",
    "value_as_text",
]
