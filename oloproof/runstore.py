"""The run store: every run of a system version, under ``.oloproof/runs/``.

Each run is a directory written under a temporary name and renamed into place in one step,
so a crash or Ctrl-C never leaves a half-written run: ``run.json`` holds the metadata and
``outputs.jsonl`` one output object per answered case.

Refs, accepted wherever a run is named: ``latest``, ``latest~N`` (N runs before the
latest), ``version:NAME`` (the latest run of that version, ``version:NAME~N`` earlier ones),
or a run id or unique prefix of one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import secrets
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from oloproof.errors import StoreError, UsageError
from oloproof.files import STORE_DIR, atomic_write_bytes, atomic_write_dir, locked, read_regular, seal, seal_problem
from oloproof.fingerprint import Fingerprint
from oloproof.jsonl import dumps_line, loads

RUN_SCHEMA = "oloproof.run/1"


@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    run_id: str
    version: str
    testset_digest: str
    testset_path: str
    config_digest: str
    command: str | None  # None for imported outputs
    imported_from: str | None
    started_at: str
    ended_at: str
    created_ns: int
    duration_s: float
    status: str  # ok | partial | failed
    failure: str | None
    exit_statuses: tuple[int, ...]
    n_cases: int
    n_outputs: int
    case_errors: dict[str, str] = field(default_factory=dict)
    run_errors: tuple[str, ...] = ()
    stderr_tail: str = ""
    checker: dict[str, str] = field(default_factory=dict)
    kind: str = "system"  # what was run: the system, or a derived set (e.g. "holdout")
    # The files the system ran with (None for imported outputs: nothing here ran them).
    fingerprint: Fingerprint | None = None
    outputs_sha256: str = ""  # of outputs.jsonl as written; checked whenever the outputs are read

    @property
    def imported(self) -> bool:
        return self.imported_from is not None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": RUN_SCHEMA,
            "run_id": self.run_id,
            "version": self.version,
            "kind": self.kind,
            "testset": {"digest": self.testset_digest, "path": self.testset_path},
            "config_digest": self.config_digest,
            "command": self.command,
            "imported_from": self.imported_from,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "created_ns": self.created_ns,
            "duration_s": round(self.duration_s, 6),
            "status": self.status,
            "failure": self.failure,
            "exit_statuses": list(self.exit_statuses),
            "n_cases": self.n_cases,
            "n_outputs": self.n_outputs,
            "case_errors": self.case_errors,
            "run_errors": list(self.run_errors),
            "stderr_tail": self.stderr_tail,
            "checker": self.checker,
            "fingerprint": None if self.fingerprint is None else self.fingerprint.to_json(),
            "outputs_sha256": self.outputs_sha256,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunRecord:
        return cls(
            run_id=data["run_id"],
            version=data["version"],
            kind=data.get("kind", "system"),
            testset_digest=data["testset"]["digest"],
            testset_path=data["testset"]["path"],
            config_digest=data["config_digest"],
            command=data["command"],
            imported_from=data["imported_from"],
            started_at=data["started_at"],
            ended_at=data["ended_at"],
            created_ns=int(data["created_ns"]),
            duration_s=float(data["duration_s"]),
            status=data["status"],
            failure=data["failure"],
            exit_statuses=tuple(data["exit_statuses"]),
            n_cases=int(data["n_cases"]),
            n_outputs=int(data["n_outputs"]),
            case_errors=dict(data["case_errors"]),
            run_errors=tuple(data["run_errors"]),
            stderr_tail=data.get("stderr_tail", ""),
            checker=dict(data["checker"]),
            fingerprint=Fingerprint.from_json(data.get("fingerprint")),
            outputs_sha256=str(data.get("outputs_sha256") or ""),
        )


def utc_now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


class RunStore:
    """Runs under ``<root>/.oloproof/runs``; ``root`` is the directory of release.yaml.

    Every run is sealed when written (a content digest over run.json, and the SHA-256 of
    outputs.jsonl) and checked when read: a run edited by hand, or written before runs were
    sealed, is never used — it is listed in ``refused`` with the reason, and a ref naming it is an
    error that says why. ``admit`` narrows what counts further (in a pull request, only the runs
    the protected branch holds): it returns None for a usable run, or why it is not. Runs this
    store saves itself are always usable.
    """

    def __init__(self, root: Path, *, admit: Callable[[RunRecord], str | None] | None = None) -> None:
        self.root = root
        self.runs_dir = root / STORE_DIR / "runs"
        self.admit = admit
        self.refused: dict[str, str] = {}  # run id -> why it is not used
        self._made: set[str] = set()

    def save(self, record: RunRecord, outputs: dict[str, dict[str, Any]]) -> RunRecord:
        """Write a run (sealed) and return the record as stored (with its outputs' digest)."""
        data = b"".join(dumps_line(output) for output in outputs.values())
        record = replace(record, outputs_sha256="sha256:" + hashlib.sha256(data).hexdigest())
        final = self.runs_dir / record.run_id

        def fill(tmp: Path) -> None:
            (tmp / "run.json").write_bytes(
                orjson.dumps(seal(record.to_json()), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
            )
            (tmp / "outputs.jsonl").write_bytes(data)

        atomic_write_dir(final, fill)
        self._made.add(record.run_id)
        return record

    def records(self) -> list[RunRecord]:
        """Every complete, sealed and admitted run, oldest first (temporary directories are
        skipped; the others are in ``refused``)."""
        if not self.runs_dir.is_dir():
            return []
        found: list[RunRecord] = []
        for entry in os.scandir(self.runs_dir):
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            meta = Path(entry.path) / "run.json"
            try:
                data = orjson.loads(read_regular(meta, str(meta)))
            except UsageError:
                continue  # no run.json: not a run
            except orjson.JSONDecodeError as exc:
                self.refused[entry.name] = f"its run.json is not valid JSON ({exc})"
                continue
            problem = seal_problem(data)
            if problem is not None:
                self.refused[entry.name] = problem
                continue
            try:
                record = RunRecord.from_json(data)
            except (KeyError, TypeError, ValueError) as exc:
                self.refused[entry.name] = f"its run.json is not a valid run record ({exc.__class__.__name__}: {exc})"
                continue
            if record.run_id != entry.name:
                self.refused[entry.name] = f"its run.json names run {record.run_id} (a run copied or renamed by hand)"
                continue
            why = None if self.admit is None or record.run_id in self._made else self.admit(record)
            if why is not None:
                self.refused[entry.name] = why
                continue
            found.append(record)
        found.sort(key=lambda record: (record.created_ns, record.run_id))
        return found

    def outputs(self, record: RunRecord) -> dict[str, dict[str, Any]]:
        path = self.runs_dir / record.run_id / "outputs.jsonl"
        try:
            raw = read_regular(path, str(path))
        except UsageError:
            raise StoreError(f"{path}: missing or unreadable (the run store is damaged)") from None
        if "sha256:" + hashlib.sha256(raw).hexdigest() != record.outputs_sha256:
            raise StoreError(
                f"{path}: the outputs do not match the digest in run {record.run_id}'s run.json (edited after the run "
                "was written); the run cannot be used: restore it from git or delete the run and make it again"
            )
        result: dict[str, dict[str, Any]] = {}
        try:
            for line in raw.splitlines():
                if line.strip():
                    obj = loads(line)
                    result[obj["id"]] = obj
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{path}: not a valid outputs file ({exc})") from None
        return result

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """An exclusive lock named by ``key`` (e.g. version + test-set digest), across processes.

        Lock files live in ``.oloproof/.locks/``, which a ``.gitignore`` written beside them keeps
        out of commits.
        """
        locks = self.root / STORE_DIR / ".locks"
        locks.mkdir(parents=True, exist_ok=True)
        ignore = self.root / STORE_DIR / ".gitignore"
        if not ignore.exists():
            atomic_write_bytes(ignore, b"# written by oloproof: lock files are not evidence\n.locks/\n")
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        with locked(locks / f"{name}.lock"):
            yield

    def resolve(self, ref: str, *, kind: str = "system") -> RunRecord:
        records = [record for record in self.records() if record.kind == kind]
        return resolve_ref(ref, records, refused=self.refused)


_TILDE = re.compile(r"^(?P<base>.+?)~(?P<n>\d+)$")


def resolve_ref(ref: str, records: list[RunRecord], *, refused: dict[str, str] | None = None) -> RunRecord:
    """Resolve a ref against ``records`` (oldest first); ``refused`` (run id -> why) turns a ref that
    names a run which is not used into an error saying why."""
    text = ref.strip()
    back = 0
    match = _TILDE.match(text)
    if match:
        text, back = match["base"], int(match["n"])
    if text == "latest":
        pool = records
        what = "runs"
    elif text.startswith("version:"):
        name = text[len("version:") :]
        pool = [record for record in records if record.version == name]
        what = f"runs of version '{name}'"
        if not pool:
            known = sorted({record.version for record in records})
            hint = f"; known versions: {', '.join(known)}" if known else ""
            raise StoreError(f"ref '{ref}': no run of version '{name}'{hint}")
    else:
        if back:
            raise StoreError(f"ref '{ref}': ~N applies to 'latest' or 'version:NAME', not to a run id")
        matches = [record for record in records if record.run_id.startswith(text)]
        if not matches:
            for run_id, why in sorted((refused or {}).items()):
                if run_id.startswith(text):
                    raise StoreError(f"ref '{ref}': run {run_id} is not used: {why}")
            raise StoreError(f"ref '{ref}': no run id starts with '{text}' (see `oloproof runs`)")
        if len(matches) > 1:
            ids = ", ".join(record.run_id for record in matches[:5])
            raise StoreError(
                f"ref '{ref}': ambiguous, {len(matches)} runs start with it "
                f"({ids}{', ...' if len(matches) > 5 else ''})"
            )
        return matches[0]
    if not pool:
        raise StoreError(f"ref '{ref}': there are no runs yet (make one with `oloproof run`)")
    if back >= len(pool):
        raise StoreError(f"ref '{ref}': only {len(pool)} {what}, so {text}~{back} does not exist")
    return pool[-1 - back]
