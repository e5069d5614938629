"""Applying a declared transform to a test set: the transformed copies, and what did not change.

A case the transform leaves as it was (no such input, a value outside the declared mapping, an
image whose pixels come out identical, a text with nothing to edit) is **not applicable**: it
is reported with the reason and excluded from the rate, never counted as a pass (CheckList's
"filtered", Giskard's "changed rows only"). Only applicable cases go to the system.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.errors import DataError, UsageError
from oloproof.jsonl import canonical, dumps_line
from oloproof.metamorphic.spec import TransformSpec
from oloproof.store import metamorphic_dir, shown, store_dir, store_name
from oloproof.testset import Case, TestSet, canonical_digest
from oloproof.transforms.base import ABSENT, ApplyEnv, Unchanged, ValueProblem, get_path, set_path
from oloproof.transforms.image import resolve_image


@dataclass(frozen=True, slots=True, kw_only=True)
class TransformedSet:
    """The applicable cases with transformed inputs (a TestSet the system runs on), in test-set order."""

    spec: TransformSpec
    source: TestSet  # the original test set
    base_dir: Path  # the directory of release.yaml: image paths are relative to it
    testset: TestSet  # applicable cases only, inputs transformed; its digest identifies the variant run
    originals: dict[str, Any]  # case id -> the original value at the field (applicable cases)
    transformed: dict[str, Any]  # case id -> the transformed value
    not_applicable: dict[str, str]  # case id -> why the transform left it as it was
    pair_digests: dict[str, str]  # case id -> digest of (original, transformed): binds a human label to what was shown

    @property
    def applicable(self) -> tuple[str, ...]:
        return tuple(case.id for case in self.testset.cases)


def output_env(spec: TransformSpec, base_dir: Path) -> ApplyEnv:
    """Where the transform writes its files: ``.oloproof/metamorphic/<name>/<digest>/``. For a
    transform that writes (images), that directory must resolve under ``.oloproof/`` (itself
    possibly a symlink: the store on another disk): a symlink inside the store pointing
    elsewhere would make the gate write outside it, so it is refused (exit 2)."""
    relative = f"{shown('metamorphic')}/{spec.name}/{spec.digest}"
    env = ApplyEnv(base_dir=base_dir, out_dir=metamorphic_dir(base_dir) / spec.name / spec.digest, out_rel=relative)
    if spec.family == "image":
        store = store_dir(base_dir).resolve()
        target = env.out_dir.resolve()
        if not target.is_relative_to(store):
            raise UsageError(
                f"refusing to write transformed images of '{spec.name}' to {target}: {relative}/ resolves outside "
                f"{store_name()}/ ({store}); a symlink under {shown('metamorphic')}/ points elsewhere: remove it "
                "(the directory is rebuilt on the next run)"
            )
    return env


def transform_testset(spec: TransformSpec, testset: TestSet, base_dir: Path) -> TransformedSet:
    """Apply ``spec`` to every case. Pure except that image transforms write their output files."""
    env = output_env(spec, base_dir)
    cases: list[Case] = []
    lines: list[bytes] = []
    originals: dict[str, Any] = {}
    transformed: dict[str, Any] = {}
    not_applicable: dict[str, str] = {}
    digests: dict[str, str] = {}
    for case in testset.cases:
        value = get_path(case.inputs, spec.path)
        if value is ABSENT:
            not_applicable[case.id] = f"no input '{spec.field}'"
            continue
        try:
            outcome = spec.transform.apply(value, case_id=case.id, env=env)
            if not isinstance(outcome, Unchanged) and spec.validated:
                digests[case.id] = pair_digest(spec, value, outcome.value, base_dir)
        except ValueProblem as exc:
            raise DataError(
                testset.path, case.line, f"case '{case.id}': {spec.field}: {exc} (transform '{spec.name}')"
            ) from None
        if isinstance(outcome, Unchanged):
            not_applicable[case.id] = outcome.why
            continue
        inputs = set_path(case.inputs, spec.path, outcome.value)
        cases.append(case._replace(inputs=inputs))
        originals[case.id] = value
        transformed[case.id] = outcome.value
        obj: dict[str, Any] = {"id": case.id, **inputs, "expected": case.expected}
        if case.group is not None:
            obj["group"] = case.group
        if case.stratum is not None:
            obj["stratum"] = case.stratum
        lines.append(dumps_line(obj))
    variant = TestSet(
        path=f"{testset.path} (metamorphic: {spec.name})",
        cases=tuple(cases),
        digest=canonical_digest(lines),
        has_groups=any(case.group is not None for case in cases),
    )
    return TransformedSet(
        spec=spec,
        source=testset,
        base_dir=base_dir,
        testset=variant,
        originals=originals,
        transformed=transformed,
        not_applicable=not_applicable,
        pair_digests=digests,
    )


def _shown(spec: TransformSpec, value: Any, base_dir: Path) -> Any:
    """What a person judges: an image's bytes (by digest), or the value itself."""
    if spec.family == "image":
        return {"sha256": hashlib.sha256(resolve_image(value, base_dir).read_bytes()).hexdigest()}
    return value


def pair_digest(spec: TransformSpec, original: Any, transformed: Any, base_dir: Path) -> str:
    """Digest of what a labeller saw for one case; a label made on another pair is stale."""
    blob = canonical(
        {
            "transform": spec.digest,
            "original": _shown(spec, original, base_dir),
            "transformed": _shown(spec, transformed, base_dir),
        }
    )
    return "sha256:" + hashlib.sha256(blob).hexdigest()
