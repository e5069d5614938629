"""Tabular transforms: seeded Gaussian noise on numbers, declared swaps of categories.

Both are *declared* transforms (SPEC §5): nobody can look at a row of numbers and say whether
``income + 0.7`` still means the same applicant, so their flip rates are reported but never
decide a rule (``transform_declared``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from oloproof.schema import AnyOf, MapOf, Obj, Prop, Scalar
from oloproof.transforms.base import (
    ABSENT,
    SEED_MAX,
    ApplyEnv,
    Changed,
    Family,
    Outcome,
    SpecError,
    TransformKind,
    Unchanged,
    ValueProblem,
    case_rng,
    get_path,
    set_path,
    split_path,
)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind_of(value: Any) -> str:
    return "null" if value is None else type(value).__name__


# --------------------------------------------------------------------------- numeric_noise


@dataclass(frozen=True, slots=True)
class NumericNoise:
    """Adds N(0, scale²) to each named number. ``scales`` maps a path under the field to a
    standard deviation in the number's own units; the empty path means the field itself."""

    scales: tuple[tuple[str, float], ...]  # sorted by path: draws do not depend on YAML order
    seed: int
    keep_integers: bool
    kind: str = "numeric_noise"
    family: Family = "tabular"

    def describe(self) -> str:
        shown = ", ".join(f"{path} {scale:g}" if path else f"{scale:g}" for path, scale in self.scales)
        return f"Gaussian noise (sd {shown}), seed {self.seed}"

    def params(self) -> dict[str, Any]:
        scale: Any = self.scales[0][1] if self.scales[0][0] == "" else dict(self.scales)
        return {"scale": scale, "seed": self.seed, "keep_integers": self.keep_integers}

    def paths(self) -> tuple[str, ...]:
        """The keys under the field this noise is declared for (each must exist in some case)."""
        return tuple(path for path, _ in self.scales if path)

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        rng = case_rng(self.seed, case_id)
        # One draw per declared path, always, so a case that lacks one number still gets the
        # same noise on the others as it would with it.
        draws = rng.standard_normal(len(self.scales))
        out = value
        changed: list[str] = []
        for (path, scale), draw in zip(self.scales, draws, strict=True):
            keys = split_path(path) if path else ()
            old = get_path(out, keys) if keys else out
            if old is ABSENT or old is None:
                continue
            if not _is_number(old):
                where = f"'{path}'" if path else "the value"
                raise ValueProblem(f"numeric_noise needs a number at {where}, got {_kind_of(old)}")
            new: float | int = float(old) + scale * float(draw)
            if isinstance(old, int) and self.keep_integers:
                new = round(new)
            if not math.isfinite(new) or new == old:
                continue
            changed.append(path)
            out = set_path(out, keys, new) if keys else new
        if not changed:
            return Unchanged(
                "the noise left every named number as it was (absent, null, or an integer that rounded back)"
            )
        return Changed(out)


def _build_noise(values: dict[str, Any]) -> NumericNoise:
    scale = values["scale"]
    if isinstance(scale, dict):
        for path in scale:
            if not path or any(not part for part in split_path(path)):
                raise SpecError(f"scale.{path}", "a key must be a path under the field, e.g. income or address.zip")
        scales = tuple(sorted((path, float(sd)) for path, sd in scale.items()))
    else:
        scales = (("", float(scale)),)
    if all(sd == 0.0 for _, sd in scales):
        raise SpecError("scale", "every scale is 0: the noise would change nothing")
    return NumericNoise(scales=scales, seed=int(values["seed"]), keep_integers=bool(values["keep_integers"]))


NUMERIC_NOISE = TransformKind(
    name="numeric_noise",
    family="tabular",
    schema=Obj(
        {
            "scale": Prop(
                AnyOf((Scalar("number", minimum=0.0), MapOf(Scalar("number", minimum=0.0), min_items=1))),
                required=True,
                doc="Standard deviation of the Gaussian noise, in each number's own units: one number when the field "
                "is a number, or a mapping from keys under the field (dotted paths allowed) to their scales.",
            ),
            "seed": Prop(
                Scalar("int", minimum=0, maximum=SEED_MAX),
                default=0,
                doc="Seed; each case's noise is seeded from it and the case id.",
            ),
            "keep_integers": Prop(
                Scalar("bool"),
                default=True,
                doc="Round the noisy value of an integer input to the nearest integer, so a count stays a count.",
            ),
        },
        doc="Add seeded Gaussian noise to numbers (declared: reported, never decides a rule).",
    ),
    build=_build_noise,
)


# --------------------------------------------------------------------------- categorical_swap


@dataclass(frozen=True, slots=True)
class CategoricalSwap:
    """Replaces category strings by a declared mapping; ``swaps`` maps a path under the field
    (the empty path: the field itself) to its {from: to} mapping."""

    swaps: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    kind: str = "categorical_swap"
    family: Family = "tabular"

    def describe(self) -> str:
        parts = []
        for path, mapping in self.swaps:
            pairs = ", ".join(f"{old}→{new}" for old, new in mapping)
            parts.append(f"{path}: {pairs}" if path else pairs)
        return "swap categories (" + "; ".join(parts) + ")"

    def params(self) -> dict[str, Any]:
        if len(self.swaps) == 1 and self.swaps[0][0] == "":
            return {"mapping": dict(self.swaps[0][1])}
        return {"mapping": {path: dict(mapping) for path, mapping in self.swaps}}

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        out = value
        changed = False
        for path, mapping in self.swaps:
            keys = split_path(path) if path else ()
            old = get_path(out, keys) if keys else out
            if old is ABSENT or old is None:
                continue
            if not isinstance(old, str):
                where = f"'{path}'" if path else "the value"
                raise ValueProblem(f"categorical_swap maps strings; {where} is {_kind_of(old)} {old!r}")
            new = dict(mapping).get(old)
            if new is None or new == old:
                continue
            changed = True
            out = set_path(out, keys, new) if keys else new
        if not changed:
            return Unchanged("no value of this case is in the declared mapping")
        return Changed(out)


def _build_swap(values: dict[str, Any]) -> CategoricalSwap:
    mapping = values["mapping"]
    nested = [key for key, to in mapping.items() if isinstance(to, dict)]
    if nested and len(nested) != len(mapping):
        raise SpecError(
            "mapping",
            "give either the field's own values ({from: to}) or mappings per key under the field "
            "({key: {from: to}}), not both",
        )
    if not nested:
        return CategoricalSwap(swaps=(("", tuple(mapping.items())),))
    for path in nested:
        if any(not part for part in split_path(path)):
            raise SpecError(f"mapping.{path}", "a key must be a path under the field, e.g. region or address.country")
    return CategoricalSwap(swaps=tuple(sorted((path, tuple(mapping[path].items())) for path in nested)))


CATEGORICAL_SWAP = TransformKind(
    name="categorical_swap",
    family="tabular",
    schema=Obj(
        {
            "mapping": Prop(
                MapOf(AnyOf((Scalar("str"), MapOf(Scalar("str"), min_items=1))), min_items=1),
                required=True,
                doc="Declared replacements: {from: to} for the field's own value, or {key: {from: to}} for keys "
                "under the field (dotted paths allowed). Values not in the mapping are left alone.",
            ),
        },
        doc="Replace category values by a declared mapping (declared: reported, never decides a rule).",
    ),
    build=_build_swap,
)
