"""The transform interface: one input value in, a changed value (or "not applicable") out.

A transform sees only the value at its ``field`` (already looked up in the case's input); the
caller walks dotted paths, copies the case and records which cases the transform changed.
Randomness is seeded **per case** from the transform's seed and the case id (HELM's
``seed + case id``), so a case's transformed value does not depend on the order of the cases,
on batching or on which other cases are in the set.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from oloproof.jsonl import canonical
from oloproof.schema import Obj

if TYPE_CHECKING:
    import numpy as np

Family = Literal["tabular", "image", "text"]

# The largest seed a transform accepts (a signed 64-bit integer): larger ones could not be written
# in run records and digests (orjson), nor reproduced by most other tools.
SEED_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Changed:
    """The transform changed this case's value; ``value`` is what the system receives."""

    value: Any


@dataclass(frozen=True, slots=True)
class Unchanged:
    """The transform leaves this case as it was: not applicable (reported, never a pass)."""

    why: str


Outcome = Changed | Unchanged


class ValueProblem(Exception):
    """A case's value cannot be transformed (wrong type, unreadable image): a data error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyEnv:
    """Where files live: image paths are relative to ``base_dir`` (the directory of release.yaml);
    transformed images are written to ``out_dir`` and named to the system as ``out_rel/<file>``."""

    base_dir: Path
    out_dir: Path
    out_rel: str


class Transform(Protocol):
    """One declared perturbation, built from its ``perturb:`` mapping."""

    @property
    def kind(self) -> str: ...

    @property
    def family(self) -> Family: ...

    def describe(self) -> str:
        """A short phrase for reports, e.g. "Gaussian blur, radius 2"."""
        ...

    def params(self) -> dict[str, Any]:
        """The declared parameters (JSON values), for digests and reports."""
        ...

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        """Transform one case's value; raise ValueProblem when the value cannot be transformed."""
        ...


def is_validated(family: Family) -> bool:
    """Image and text changes can be judged by a person (labels); tabular ones only declared."""
    return family != "tabular"


class SpecError(Exception):
    """A ``perturb:`` value is wrong; the loader adds file, line and ``perturb.<key>``."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key
        self.message = message


@dataclass(frozen=True, slots=True)
class TransformKind:
    """How one ``kind:`` is declared (schema, without ``kind``) and built (typed)."""

    name: str
    family: Family
    schema: Obj
    build: Callable[[dict[str, Any]], Transform]


def case_seed(seed: int, case_id: str) -> int:
    """A 128-bit seed from the declared seed and the case id (SHA-256, so ids never collide
    into correlated streams the way ``seed + hash(id)`` could, and Python's salted ``hash`` is
    never used)."""
    digest = hashlib.sha256(f"{seed}\x00{case_id}".encode()).digest()
    return int.from_bytes(digest[:16], "big")


def case_rng(seed: int, case_id: str) -> np.random.Generator:
    import numpy as np  # lazy: start-up

    return np.random.default_rng(case_seed(seed, case_id))


def params_digest(kind: str, params: dict[str, Any]) -> str:
    """A short, stable digest of a transform's declaration (names its output directory)."""

    blob = canonical({"kind": kind, "params": params})
    return hashlib.sha256(blob).hexdigest()[:16]


# --------------------------------------------------------------------------- dotted paths

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "<absent>"})()


def split_path(path: str) -> tuple[str, ...]:
    """``features.income`` -> ("features", "income"). Keys that contain a dot cannot be named."""
    return tuple(path.split("."))


def get_path(value: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` inside nested objects, or ABSENT."""
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return ABSENT
        value = value[key]
    return value


def set_path(value: dict[str, Any], path: tuple[str, ...], new: Any) -> dict[str, Any]:
    """A copy of ``value`` with ``path`` set to ``new``; only the objects along the path are copied."""
    head, rest = path[0], path[1:]
    out = dict(value)
    out[head] = set_path(value[head], rest, new) if rest else new
    return out
