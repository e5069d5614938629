"""Making runs: executing the system on a test set, or importing outputs made elsewhere."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from oloproof.config import Release
from oloproof.errors import ConfigError, UsageError
from oloproof.files import read_regular
from oloproof.fingerprint import Fingerprint, fingerprint
from oloproof.identity import checker_identity
from oloproof.process import Collected, CommandNotFound, collect_lines, run_batches
from oloproof.runstore import RunRecord, RunStore, new_run_id, utc_now
from oloproof.system import check_command
from oloproof.testset import TestSet

# Each criterion's score on a run's outputs, stored with the run (``oloproof.runscores``).
# (outputs, wall time per case in ms, the batch size it was measured with) -> the run's scores
Scorer = Callable[[dict[str, dict[str, object]], dict[str, float], int], tuple[dict[str, object], ...]]


def execute(
    release: Release,
    testset: TestSet,
    store: RunStore,
    *,
    kind: str = "system",
    on_batch: Callable[[int, int], None] | None = None,
    command: str | None = None,
    version: str | None = None,
    files: Fingerprint | None = None,
    scorer: Scorer | None = None,
) -> tuple[RunRecord, dict[str, dict[str, object]]]:
    """Run the declared system command (or ``command`` as ``version``) on ``testset`` and store the run.
    ``files``: the system's fingerprint when the caller has just taken it (each file is read once).

    The run is stored even when it failed: a failed run is evidence too.
    """
    system = release.system
    if command is not None:
        if not (version or "").strip():
            raise UsageError("a command given on the command line needs a --version")
        check_command(command, lambda message: UsageError(f"--command: {message}"))
        argv: str | tuple[str, ...] = command
    elif system.command is None:
        raise ConfigError(
            release.path,
            system.line,
            "system.command",
            "no command declared; import outputs with `oloproof run --outputs FILE --version NAME`",
        )
    else:
        argv = system.command
    requests = [{"id": case.id, **case.inputs} for case in testset.cases]  # never `expected`
    files = files if files is not None else system_fingerprint(release, command=command)
    started_at, created_ns = utc_now(), time.time_ns()
    try:
        collected = run_batches(
            argv,
            requests,
            cwd=release.base_dir,
            timeout_s=system.timeout_s,
            batch_size=system.batch_size,
            on_batch=on_batch,
        )
    except CommandNotFound as exc:
        if command is not None:
            raise UsageError(f"--command: {exc}") from None
        raise ConfigError(release.path, system.line, "system.command", str(exc)) from None
    return _store(
        release,
        testset,
        store,
        collected,
        started_at=started_at,
        created_ns=created_ns,
        version=version or system.version,
        command=command or system.command_text,
        imported_from=None,
        kind=kind,
        fingerprint=files,
        scorer=scorer,
    )


def system_fingerprint(release: Release, *, command: str | None = None) -> Fingerprint:
    """The fingerprint of the files the system runs with: ``system.artifacts`` and the files its
    command line (``command``, else ``system.command``) names."""
    return fingerprint(release.system.files(release.base_dir, command), base_dir=release.base_dir)


def import_outputs(
    release: Release,
    testset: TestSet,
    store: RunStore,
    outputs_file: Path,
    *,
    version: str,
    shown: str,
    kind: str = "system",
    scorer: Scorer | None = None,
) -> tuple[RunRecord, dict[str, dict[str, object]]]:
    """Record outputs produced elsewhere (e.g. on a GPU job) as a run of ``version``."""
    if not version.strip():
        raise UsageError("--version must not be empty")
    started_at, created_ns = utc_now(), time.time_ns()
    raw = read_regular(outputs_file, shown, expected="a JSONL file of outputs", data=True)
    collected = Collected()
    collect_lines(raw.splitlines(), [case.id for case in testset.cases], collected, source=shown)
    return _store(
        release,
        testset,
        store,
        collected,
        started_at=started_at,
        created_ns=created_ns,
        version=version,
        command=None,
        imported_from=shown,
        kind=kind,
        scorer=scorer,
    )


def _store(
    release: Release,
    testset: TestSet,
    store: RunStore,
    collected: Collected,
    *,
    started_at: str,
    created_ns: int,
    version: str,
    command: str | None,
    imported_from: str | None,
    kind: str,
    fingerprint: Fingerprint | None = None,
    scorer: Scorer | None = None,
) -> tuple[RunRecord, dict[str, dict[str, object]]]:
    record = RunRecord(
        run_id=new_run_id(),
        version=version,
        kind=kind,
        testset_digest=testset.digest,
        testset_path=testset.path,
        config_digest=release.digest,
        command=command,
        imported_from=imported_from,
        started_at=started_at,
        ended_at=utc_now(),
        created_ns=created_ns,
        duration_s=collected.duration_s,
        status=collected.status,
        failure=collected.failure,
        exit_statuses=tuple(collected.exit_statuses),
        n_cases=len(testset.cases),
        n_outputs=len(collected.outputs),
        case_errors=collected.case_errors,
        run_errors=tuple(collected.run_errors),
        stderr_tail=collected.stderr_tail,
        checker=checker_identity().to_json(),
        fingerprint=fingerprint,
        case_wall_ms=collected.case_wall_ms,
        wall_batch_size=collected.batch_size,
        scores=scorer(collected.outputs, collected.case_wall_ms, collected.batch_size) if scorer is not None else (),
    )
    return store.save(record, collected.outputs), collected.outputs


def describe_problems(record: RunRecord, *, limit: int = 5) -> list[str]:
    """Short lines naming what went wrong in a run, for terminal output."""
    lines: list[str] = []
    if record.failure:
        lines.append(f"run failed: {record.failure}")
    by_reason: dict[str, list[str]] = {}
    for case_id, reason in record.case_errors.items():
        by_reason.setdefault(reason, []).append(case_id)
    for reason, ids in sorted(by_reason.items(), key=lambda item: -len(item[1])):
        shown = ", ".join(ids[:limit]) + (f", … (+{len(ids) - limit})" if len(ids) > limit else "")
        lines.append(f"{len(ids)} case(s): {reason}: {shown}")
    for problem in record.run_errors[:limit]:
        lines.append(problem)
    if len(record.run_errors) > limit:
        lines.append(f"… and {len(record.run_errors) - limit} more output problem(s)")
    return lines


def why_not_reused(record: RunRecord, *, command: str | None, current: Fingerprint | None) -> str | None:
    """Why a stored run of the right version and test set cannot stand in for running ``command``
    now (None: it can). A failed run is never reused (fixing what broke it is enough to run again);
    imported outputs never stand in for a declared command (name them with ``--run REF``); a run
    made with other system files (weights, prompts, code) is not about this system."""
    if record.status == "failed":
        return f"run {record.run_id} failed ({record.failure})"
    if command is None:
        return None  # nothing declared to run: imported outputs are all there is (reports say "imported")
    if record.imported:
        return (
            f"run {record.run_id} was imported from {record.imported_from}, not made by the declared command; "
            "imported outputs decide only when named (`--run REF`)"
        )
    if record.command != command:
        return f"run {record.run_id} was made by another command ({record.command})"
    if record.fingerprint is None or current is None:
        return f"run {record.run_id} has no fingerprint of the system's files (made by an older oloproof)"
    if record.fingerprint.digest != current.digest:
        return f"run {record.run_id} was made with other system files ({record.fingerprint.changes(current)} since)"
    return None


def reuse_notes(record: RunRecord) -> tuple[str, ...]:
    """What a reused run's fingerprint covered, said with every reused run: the files (shortened),
    and — when they are only code (scripts, the interpreter) — that a model the command loads
    without naming it is invisible to it, and how to fix that."""
    if record.fingerprint is None:
        return ()
    fp = record.fingerprint
    count = f"{len(fp.files)} file{'s' if len(fp.files) != 1 else ''}"
    shown = ", ".join(fp.covered())
    if not fp.code_only:
        return (f"run {record.run_id} was reused: its fingerprint covers {count}: {shown}",)
    return (
        f"run {record.run_id} was reused: its fingerprint covers only code ({count}: {shown}): a model or data file "
        "the system reads without naming it (a default path, a download) is not in it and may have changed since "
        "that run: declare the model in `system.artifacts` (or run again with `--rerun`)",
    )


UNDECLARED_FILES = (
    "Files the system reads that neither its command line names nor system.artifacts declares (a model loaded from "
    "a default path, weights downloaded at run time, an installed package) are not in the run's fingerprint: a "
    "stored run is reused after they change unless the system is run fresh (`--rerun`; in the action, the default "
    "`reuse: baseline-only`)."
)


def find_reusable(
    records: list[RunRecord],
    *,
    version: str,
    testset_digest: str,
    kind: str,
    command: str | None,
    current: Fingerprint | None,
) -> tuple[RunRecord | None, tuple[str, ...]]:
    """The latest stored run that can stand in for running ``command`` as ``version`` on this test
    set now, and — when there is none — why the latest candidate was not reused."""
    notes: list[str] = []
    for record in reversed(records):
        if record.kind != kind or record.version != version or record.testset_digest != testset_digest:
            continue
        why = why_not_reused(record, command=command, current=current)
        if why is None:
            return record, ()
        if not notes:
            notes.append(f"not reused: {why}")
    return None, tuple(notes)
