"""The ``leakage:`` key of release.yaml: whether a clean leakage check is a precondition, and
whether near-duplicates are looked for and what they decide (``near: report|invalidate``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from oloproof.schema import AnyOf, MapOf, Obj, Prop, Scalar

# Near-duplicate defaults (docs/leakage.md, "Near-duplicates"; measured in benchmarks/near_duplicates.py).
NGRAM = 13  # the GPT-3 paper's contamination analysis: 13-gram overlap
NGRAM_THRESHOLD = 0.5  # a case is a near copy when at least this fraction of its n-grams is in the corpus
JACCARD_THRESHOLD = 0.8  # ... or when a training text's word set is this similar to the case's (MinHash + LSH)
HAMMING = 10  # pHash and dHash (64 bits each) both within this many bits: a near copy of a picture

NearMode = Literal["report", "invalidate"]

LEAKAGE = Prop(
    AnyOf(
        (
            Scalar("str", enum=("required", "optional")),
            Obj(
                {
                    "required": Prop(
                        Scalar("bool"),
                        required=True,
                        doc="true: the gate is BLOCKED until a clean leakage check of this test set is recorded.",
                    ),
                    "near": Prop(
                        Scalar("str", enum=("report", "invalidate")),
                        doc="Look for near-duplicates too (`oloproof leakage check` runs with --near): report them, "
                        "or let them invalidate the evidence like exact leaks.",
                    ),
                    "ngram": Prop(
                        Scalar("int", minimum=1, maximum=64), doc=f"n of the n-gram overlap (default {NGRAM})."
                    ),
                    "ngram_threshold": Prop(
                        Scalar("number", exclusive_minimum=0.0, maximum=1.0),
                        doc=f"fraction of a case's n-grams found in the corpus that makes it a near copy (default "
                        f"{NGRAM_THRESHOLD}).",
                    ),
                    "jaccard_threshold": Prop(
                        Scalar("number", exclusive_minimum=0.0, maximum=1.0),
                        doc=f"word-set Jaccard similarity that makes a case a near copy (default {JACCARD_THRESHOLD}).",
                    ),
                    "hamming": Prop(
                        Scalar("int", minimum=0, maximum=32),
                        doc=f"bits within which pHash and dHash must both agree (default {HAMMING}).",
                    ),
                    "tolerance": Prop(
                        MapOf(Scalar("number", minimum=0.0), min_items=1),
                        doc="per numeric case key (dotted), the absolute difference within which values meet.",
                    ),
                }
            ),
        )
    ),
    doc="required | optional, or {required: true|false, near: report|invalidate, thresholds}: a clean leakage check "
    "as a precondition, and near-duplicates.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class NearOptions:
    """How near-duplicates are looked for (CLI flags over release.yaml over the defaults)."""

    ngram: int = NGRAM
    ngram_threshold: float = NGRAM_THRESHOLD
    jaccard_threshold: float = JACCARD_THRESHOLD
    hamming: int = HAMMING
    tolerance: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "ngram": self.ngram,
            "ngram_threshold": self.ngram_threshold,
            "jaccard_threshold": self.jaccard_threshold,
            "hamming": self.hamming,
            "tolerance": dict(sorted(self.tolerance.items())),
        }

    def text(self) -> str:
        tolerance = ", ".join(f"{key} ±{value:g}" for key, value in sorted(self.tolerance.items()))
        return (
            f"text: {self.ngram}-gram overlap ≥ {self.ngram_threshold:g} or word-set Jaccard ≥ "
            f"{self.jaccard_threshold:g} (MinHash + LSH); images: pHash and dHash within {self.hamming} of 64 bits; "
            f"numbers: {'within ' + tolerance if tolerance else 'no tolerance declared (only --round)'}"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class LeakagePolicy:
    """The ``leakage:`` key read: ``mode`` as before; ``near`` None when near-duplicates are not declared."""

    mode: Literal["required", "optional"] | None
    near: NearMode | None = None
    options: NearOptions = field(default_factory=NearOptions)


def leakage_policy(value: Any) -> LeakagePolicy:
    """The validated ``leakage:`` value (a string, a mapping or None) as a policy."""
    if not isinstance(value, dict):
        return LeakagePolicy(mode=value)
    defaults = NearOptions()
    options = NearOptions(
        ngram=value.get("ngram") or defaults.ngram,
        ngram_threshold=float(value.get("ngram_threshold") or defaults.ngram_threshold),
        jaccard_threshold=float(value.get("jaccard_threshold") or defaults.jaccard_threshold),
        hamming=defaults.hamming if value.get("hamming") is None else int(value["hamming"]),
        tolerance={str(key): float(tol) for key, tol in (value.get("tolerance") or {}).items()},
    )
    return LeakagePolicy(mode="required" if value["required"] else "optional", near=value.get("near"), options=options)
