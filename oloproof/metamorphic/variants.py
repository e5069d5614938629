"""The system's outputs on the transformed copies: one stored run per transform.

The gate asks for a transform's variant only when an evaluator needs it (lazily, once). The
variant run is a normal run of the system (batched, stored under ``.oloproof/runs/``) with
``kind = "metamorphic:<name>"`` and the transformed test set's digest; it is reused whenever a
run of the same system version (and command) on the same transformed digest exists.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from oloproof.config import Release
from oloproof.errors import ConfigError, UsageError
from oloproof.evaluators.base import LabelStatus, Variant, VariantRun
from oloproof.files import display_path
from oloproof.metamorphic.apply import TransformedSet, transform_testset
from oloproof.metamorphic.labels import Label, label_status, load_labels
from oloproof.metamorphic.spec import TransformSpec
from oloproof.run import execute, find_reusable, system_fingerprint
from oloproof.runstore import RunRecord, RunStore
from oloproof.schema import did_you_mean
from oloproof.testset import TestSet
from oloproof.transforms.base import get_path


def _and(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


# What a flip rate cannot tell (SPEC §5, the guide's "What this cannot tell you"): added to the
# gate's limitations whenever metamorphic transforms are declared. Only a transform the system
# was run on (or whose stored run was reused) counts as tried: one no evaluator reads, or one that
# changed no case, was declared and not tried, and is said so.
def limitations(names: tuple[str, ...], *, not_run: tuple[str, ...] = ()) -> tuple[str, ...]:
    """What the flip rates of the transforms ``names`` (run) cannot tell; ``not_run``: declared
    transforms this gate did not run."""
    said: list[str] = []
    if names:
        said.append(
            f"Perturbations nobody declared: only {_and(names)} {'was' if len(names) == 1 else 'were'} tried, at the "
            "declared size; a low flip rate says nothing about larger changes or an attacker's search."
        )
    if not_run:
        said.append(
            f"Declared but not tried: {_and(not_run)} ({'its' if len(not_run) == 1 else 'their'} flip rate was not "
            "measured: no metamorphic_relation evaluator reads it, or it changed no case)."
            if names
            else f"Perturbations: none was tried ({_and(not_run)} declared, but no flip rate was measured: no "
            "metamorphic_relation evaluator reads it, or it changed no case)."
        )
    if names:
        said.append("Certified robustness: a flip rate is a rate over these cases, not a bound proven for any input.")
    return tuple(said)


def run_kind(name: str) -> str:
    return f"metamorphic:{name}"


def find_variant_run(
    release: Release, variant: TransformedSet, store: RunStore, *, version: str, imported: bool = False
) -> RunRecord | None:
    """The latest run of ``version`` on exactly these transformed cases that can stand in for
    running the system on them now (same command and system files). When the gated run was itself
    imported (``imported``), imported outputs of the copies are what there is, and they count."""
    command = None if imported or version != release.system.version else release.system.command_text
    current = system_fingerprint(release) if command is not None else None
    found, _ = find_reusable(
        store.records(),
        version=version,
        testset_digest=variant.testset.digest,
        kind=run_kind(variant.spec.name),
        command=command,
        current=current,
    )
    return found


def transformed_cases(release: Release, testset: TestSet, name: str) -> TransformedSet:
    """Apply the declared transform ``name`` (a usage error names the declared ones)."""
    spec = release.metamorphic.get(name) if release.metamorphic is not None else None
    if spec is None:
        declared = release.metamorphic.names() if release.metamorphic is not None else []
        if not declared:
            raise UsageError(f"{release.path} declares no metamorphic transforms (metamorphic.transforms)")
        raise UsageError(f"no transform named '{name}'{did_you_mean(name, declared)}; declared: {', '.join(declared)}")
    check_declared_paths(release, spec, testset)
    return transform_testset(spec, testset, release.base_dir)


def check_declared_paths(release: Release, spec: TransformSpec, testset: TestSet) -> None:
    """Every key a transform is declared for (``numeric_noise``'s ``scale`` keys) exists under its
    field in at least one case: a misspelt ``incme`` would otherwise leave that feature without
    noise, and the flip rate would silently measure less than was declared."""
    paths: tuple[str, ...] = getattr(spec.transform, "paths", tuple)()
    if not paths:
        return
    present: set[str] = set()
    for case in testset.cases:
        value = get_path(case.inputs, spec.path)
        if isinstance(value, dict):
            present.update(_dotted_keys(value))
    for path in paths:
        if path in present:
            continue
        key_path = f"{spec.key_path}.perturb.scale.{path}"
        seen = sorted(present)
        raise ConfigError(
            release.path,
            release.document.line(key_path),
            key_path,
            f"no case of {testset.path} has '{spec.field}.{path}'{did_you_mean(path, seen)}"
            + (f"; keys under {spec.field}: {', '.join(seen[:12])}{', …' if len(seen) > 12 else ''}" if seen else ""),
        )


def _dotted_keys(value: dict[str, Any], prefix: str = "", depth: int = 0) -> set[str]:
    keys: set[str] = set()
    for key, item in value.items():
        name = f"{prefix}{key}"
        keys.add(name)
        if isinstance(item, dict) and depth < 8:
            keys |= _dotted_keys(item, f"{name}.", depth + 1)
    return keys


def labels_file(release: Release, spec: TransformSpec) -> Path:
    """The declared ``labels:`` file, resolved; it must stay under the directory of release.yaml
    (a config error names the line and key otherwise). It need not exist yet."""
    assert spec.labels is not None
    key_path = f"{spec.key_path}.labels"

    def error(message: str) -> ConfigError:
        return ConfigError(release.path, release.document.line(key_path), key_path, message)

    if "\x00" in spec.labels:
        raise error(f"{spec.labels!r}: a path must not contain a NUL byte")
    root = release.base_dir.resolve()
    try:
        file = (root / spec.labels).resolve()
    except (OSError, RuntimeError) as exc:
        raise error(f"cannot resolve {spec.labels}: {exc}") from None
    if not file.is_relative_to(root):
        raise error(
            f"{spec.labels} leaves the project: it resolves to {file}, outside {root} (the directory of release.yaml); "
            "keep the labels file under that directory"
        )
    if file.exists() and not file.is_file():
        raise error(f"{spec.labels} is not a file")
    return file


def read_labels(release: Release, spec: TransformSpec) -> tuple[Path, dict[str, Label] | None]:
    """The declared labels file and its labels; None when it does not exist yet."""
    file = labels_file(release, spec)
    if not file.is_file():
        return file, None
    assert spec.labels is not None
    return file, load_labels(file, shown=display_path(release.base_dir / spec.labels))


def labels_of(release: Release, variant: TransformedSet) -> LabelStatus:
    """The label status of ``variant``. A declared labels file that does not exist yet leaves
    every changed case unlabelled (SPEC §5: missing labels are transform_unlabelled)."""
    spec = variant.spec
    if spec.labels is None or not spec.validated:
        return label_status(variant, None, file=None)
    _, labels = read_labels(release, spec)
    return label_status(variant, labels, file=spec.labels, file_exists=labels is not None)


class VariantProvider:
    """Lazily computes (and caches) each transform's variant for one gate."""

    def __init__(
        self,
        release: Release,
        testset: TestSet,
        store: RunStore,
        *,
        version: str,
        rerun: bool = False,
        imported: bool = False,
        on_batch: Callable[[int, int], None] | None = None,
    ) -> None:
        self.release = release
        self.testset = testset
        self.store = store
        self.version = version
        self.imported = imported  # the gated run was imported: so may the copies' runs be
        self.rerun = rerun
        self.on_batch = on_batch
        self._cache: dict[str, Variant] = {}

    def __call__(self, name: str) -> Variant:
        if name not in self._cache:
            self._cache[name] = self._make(name)
        return self._cache[name]

    def tried(self) -> tuple[str, ...]:
        """The transforms whose copies the system answered in this gate (run now or reused), in the
        order they were declared."""
        declared = self.release.metamorphic.names() if self.release.metamorphic is not None else []
        return tuple(name for name in declared if name in self._cache and self._cache[name].run is not None)

    def _make(self, name: str) -> Variant:
        cases = transformed_cases(self.release, self.testset, name)
        labels = labels_of(self.release, cases)
        if not cases.testset.cases:
            return variant_of(cases, {}, None, reused=False, labels=labels)
        record = (
            None
            if self.rerun
            else find_variant_run(self.release, cases, self.store, version=self.version, imported=self.imported)
        )
        if record is not None:
            return variant_of(cases, self.store.outputs(record), record, reused=True, labels=labels)
        system = self.release.system
        if system.command is None or self.version != system.version:
            why = (
                "release.yaml declares no system command"
                if system.command is None
                else f"the declared command runs version '{system.version}', not '{self.version}'"
            )
            raise UsageError(
                f"no run of version '{self.version}' on the cases transformed by '{name}' "
                f"({cases.testset.digest[:19]}…), "
                f"and {why}: write them with `oloproof metamorphic cases {name} -o FILE`, run the system on them, and "
                f"import "
                f"the outputs with `oloproof metamorphic import {name} --outputs FILE --version {self.version}`"
            )
        record, outputs = execute(self.release, cases.testset, self.store, kind=run_kind(name), on_batch=self.on_batch)
        return variant_of(cases, outputs, record, reused=False, labels=labels)


def variant_of(
    cases: TransformedSet,
    outputs: Mapping[str, dict[str, Any]],
    record: RunRecord | None,
    *,
    reused: bool,
    labels: LabelStatus,
) -> Variant:
    """The evaluators' record of one transform's variant (plain data, see ``evaluators.base``)."""
    spec = cases.spec
    return Variant(
        name=spec.name,
        kind=spec.kind,
        family=spec.family,
        input_field=spec.field,
        description=spec.transform.describe(),
        params=spec.transform.params(),
        validated=spec.validated,
        applicable=cases.applicable,
        not_applicable=cases.not_applicable,
        n_cases=len(cases.source),
        outputs=outputs,
        run=None
        if record is None
        else VariantRun(
            run_id=record.run_id,
            status=record.status,
            failure=record.failure,
            testset_digest=record.testset_digest,
        ),
        reused=reused,
        labels=labels,
    )
