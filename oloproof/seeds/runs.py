"""Each checkpoint's run: a declared ref resolved, or a declared command run (or its stored run reused).

A command checkpoint is run exactly as ``oloproof run --version V --command C`` would run it
(``oloproof.run.execute``: batched, sealed, fingerprinted by ``system.artifacts``, the
checkpoint's ``artifacts`` and every file its command line names), and reused exactly as the
gate reuses its own run (``oloproof.run.find_reusable``): the latest run of that version on this
test set, made by the same command with the same files, not imported, not failed. A changed
weights file therefore means a new run, and ``rerun`` forces one. Finding and making a run
happen under the same lock per (version, test set) as the gate's, so two commands started
together run a checkpoint once.

Refs are resolved before any command runs, so a checkpoint run made now can never shift a
``latest~N`` ref onto itself; and ``latest~N`` never counts the runs gates and command
checkpoints add (``ref_scope``), so it names the same runs on the next gate too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from oloproof.errors import ConfigError, StoreError, UsageError
from oloproof.run import execute, find_reusable, reuse_notes, system_fingerprint
from oloproof.runstore import RefScope, RunRecord, RunStore, resolve_ref
from oloproof.seeds.spec import baseline_clash

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.policy import Rule
    from oloproof.seeds.spec import CheckpointSpec, SeedsSpec
    from oloproof.testset import TestSet


@dataclass(frozen=True, slots=True, kw_only=True)
class Checkpoint:
    name: str
    ref: str  # as declared: the run ref, or the command
    run: RunRecord | None
    problem: str | None  # why no run can be used
    origin: str = "ref"  # ref: named by a ref; new: run now; reused: a stored run of its command; pending
    command: str | None = None  # a command checkpoint's command
    notes: tuple[str, ...] = ()  # why a stored run was not reused


def ref_scope(spec: SeedsSpec, release: Release, testset: TestSet) -> RefScope:
    """What a checkpoint's ref counts: the runs on this test set, and for ``latest~N`` not the runs
    that gates and this block make themselves — of release.yaml's ``system.version`` (every gate
    adds one) and of the block's command checkpoints — so ``latest~4 … latest`` names the same
    five runs on every gate and every ``oloproof seeds``."""
    skip = {release.system.version: "the released system, whose runs gates add"}
    for cp in spec.checkpoints:
        if cp.command is not None and cp.version is not None:
            skip.setdefault(cp.version, f"run by checkpoint {cp.name}'s command")
    return RefScope.of(testset, skip=tuple(skip.items()))


def baseline_versions(release: Release, store: RunStore, testset: TestSet) -> dict[str, Rule]:
    """The version each regression rule's baseline names (resolved as the gate resolves it; a
    baseline that does not resolve is the gate's error to report)."""
    found: dict[str, Rule] = {}
    for rule in release.policy.rules:
        if rule.baseline is None:
            continue
        try:
            found.setdefault(store.resolve(rule.baseline, scope=RefScope.of(testset)).version, rule)
        except StoreError:
            continue
    return found


def resolve_refs(spec: SeedsSpec, release: Release, store: RunStore, testset: TestSet) -> tuple[Checkpoint, ...]:
    """Every ref checkpoint's run (command checkpoints stay ``pending``), counted as ``ref_scope``
    says. A test set with groups, a ref'd run on another test set, or two checkpoints of one version
    are usage errors (exit 2); a checkpoint of a regression baseline's version is a config error at
    its line (exit 2): all found before any checkpoint runs."""
    if testset.has_groups:
        raise UsageError(
            f"seeds: {testset.path} declares groups; the crossed cases × seeds interval assumes independent cases, "
            "so a grouped test set cannot judge a recipe"
        )
    records = [record for record in store.records() if record.kind == "system"]
    scope = ref_scope(spec, release, testset)
    baselines = baseline_versions(release, store, testset)
    out: list[Checkpoint] = []
    for cp in spec.checkpoints:
        if cp.ref is None:
            assert cp.version is not None
            if cp.version in baselines:
                raise ConfigError(cp.source, cp.line, cp.key_path, baseline_clash(cp.version, baselines[cp.version]))
            out.append(
                Checkpoint(name=cp.name, ref=cp.declared, run=None, problem=None, origin="pending", command=cp.command)
            )
            continue
        try:
            record = resolve_ref(cp.ref, records, refused=store.refused, scope=scope)
        except StoreError as exc:
            out.append(Checkpoint(name=cp.name, ref=cp.ref, run=None, problem=str(exc)))
            continue
        if record.version in baselines:
            raise ConfigError(
                cp.source,
                cp.line,
                cp.key_path,
                f"{cp.ref} is run {record.run_id}: {baseline_clash(record.version, baselines[record.version])}",
            )
        out.append(Checkpoint(name=cp.name, ref=cp.ref, run=record, problem=None))
    _check_together(out, spec, testset)
    return tuple(out)


def run_pending(
    spec: SeedsSpec,
    release: Release,
    testset: TestSet,
    store: RunStore,
    checkpoints: tuple[Checkpoint, ...],
    *,
    rerun: bool = False,
    on_batch: Callable[[int, int], None] | None = None,
    on_start: Callable[[Checkpoint], None] | None = None,
) -> tuple[Checkpoint, ...]:
    """Run (or reuse the stored run of) every pending command checkpoint, in the order declared."""
    declared = {cp.name: cp for cp in spec.checkpoints}
    out: list[Checkpoint] = []
    for checkpoint in checkpoints:
        if checkpoint.origin != "pending":
            out.append(checkpoint)
            continue
        if on_start is not None:
            on_start(checkpoint)
        out.append(_obtain(declared[checkpoint.name], release, testset, store, rerun=rerun, on_batch=on_batch))
    _check_together(out, spec, testset)
    return tuple(out)


def _as_release(cp: CheckpointSpec, release: Release) -> Release:
    """release.yaml with the checkpoint's timeout and artifacts: what its run is made and fingerprinted with."""
    system = replace(
        release.system,
        timeout_s=cp.timeout_s if cp.timeout_s is not None else release.system.timeout_s,
        artifacts=release.system.artifacts + cp.artifacts,
    )
    return replace(release, system=system)


def _obtain(
    cp: CheckpointSpec,
    release: Release,
    testset: TestSet,
    store: RunStore,
    *,
    rerun: bool,
    on_batch: Callable[[int, int], None] | None,
) -> Checkpoint:
    assert cp.command is not None and cp.version is not None
    as_run = _as_release(cp, release)
    with store.lock(f"{cp.version}\0{testset.digest}"):
        current = system_fingerprint(as_run, command=cp.command)
        found, notes = (
            (None, ())
            if rerun
            else find_reusable(
                store.records(),
                version=cp.version,
                testset_digest=testset.digest,
                kind="system",
                command=cp.command,
                current=current,
            )
        )
        if found is not None:
            return Checkpoint(
                name=cp.name,
                ref=cp.declared,
                run=found,
                problem=None,
                origin="reused",
                command=cp.command,
                notes=reuse_notes(found),  # what its fingerprint covered (a code-only one is called out)
            )
        try:
            record, _ = execute(
                as_run, testset, store, command=cp.command, version=cp.version, on_batch=on_batch, files=current
            )
        except UsageError as exc:  # the command cannot be started: a mistake in the seeds file
            raise ConfigError(
                cp.source, cp.line, f"{cp.key_path}.command", str(exc).removeprefix("--command: ")
            ) from None
    return Checkpoint(
        name=cp.name,
        ref=cp.declared,
        run=record,
        problem=None,
        origin="new",
        command=cp.command,
        notes=tuple(f"{note}: run again" for note in notes),
    )


def _check_together(checkpoints: list[Checkpoint], spec: SeedsSpec, testset: TestSet) -> None:
    """Every checkpoint's run is on this test set, and no two checkpoints share a version (a
    pending checkpoint counts by the version it will be recorded as)."""
    versions = {cp.name: cp.version for cp in spec.checkpoints}
    seen: dict[str, str] = {}
    for checkpoint in checkpoints:
        record = checkpoint.run
        if record is not None and record.testset_digest != testset.digest:
            raise UsageError(
                f"seeds: checkpoint {checkpoint.name} ({checkpoint.ref} = run {record.run_id}) was made on test set "
                f"{record.testset_digest[:19]}…, "
                f"not on {testset.path} ({testset.digest[:19]}…): every checkpoint must run the same test set"
            )
        version = record.version if record is not None else versions.get(checkpoint.name)
        if version is None:
            continue
        if version in seen:
            raise UsageError(
                f"seeds: checkpoints {seen[version]} and {checkpoint.name} are both version '{version}': "
                "each checkpoint must map to its own system version"
            )
        seen[version] = checkpoint.name
