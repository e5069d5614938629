"""The run store: every run of a system version, under ``.oloproof/runs/``.

Each run is a directory written under a temporary name and renamed into place in one step,
so a crash or Ctrl-C never leaves a half-written run: ``run.json`` holds the metadata and
``outputs.jsonl`` one output object per answered case.

Refs, accepted wherever a run is named: ``latest``, ``latest~N`` (N runs before the
latest), ``version:NAME`` (the latest run of that version, ``version:NAME~N`` earlier ones),
or a run id or unique prefix of one. Where a command works on a test set, the ``latest`` and
``version:`` forms count only the runs made on it (``RefScope``).
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import re
import secrets
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson

from oloproof.errors import StoreError, UsageError
from oloproof.files import atomic_write_bytes, atomic_write_dir, locked, read_regular, seal, seal_problem
from oloproof.fingerprint import Fingerprint
from oloproof.jsonl import bulk, dumps_line, has_long_integers, loads
from oloproof.store import LAYOUT, gitignore_path, locks_dir, runs_dir, utc_stamp
from oloproof.testset import TestSet

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
    # Case id -> its batch's wall time / the batch's cases, in ms (oloproof.process.Collected);
    # empty for imported outputs and runs recorded before it was kept.
    case_wall_ms: dict[str, float] = field(default_factory=dict)
    # The batch size the wall times were measured with (0: not recorded, the wall times are not read).
    wall_batch_size: int = 0
    # Each criterion's estimate and interval when the run was recorded (``oloproof.runscores``):
    # shown by `run` and `runs`, never decided on. Runs stored before issue 18 have none.
    scores: tuple[dict[str, Any], ...] = ()

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
            "case_wall_ms": self.case_wall_ms,
            **({"wall_batch_size": self.wall_batch_size} if self.wall_batch_size else {}),
            **({"scores": list(self.scores)} if self.scores else {}),  # absent as in runs stored before
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
            case_wall_ms=_wall_ms(data.get("case_wall_ms")),
            wall_batch_size=_batch_size(data.get("wall_batch_size")),
            scores=tuple(item for item in data.get("scores") or () if isinstance(item, dict)),
        )


def _batch_size(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else 0


def _wall_ms(value: Any) -> dict[str, float]:
    """The per-case wall times of a stored run; anything malformed (an edited record) reads as none."""
    if not isinstance(value, dict):
        return {}
    return {
        str(key): float(ms)
        for key, ms in value.items()
        if isinstance(ms, (int, float)) and not isinstance(ms, bool) and math.isfinite(ms) and ms >= 0
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class PinnedRuns:
    """The run list that counts when the working tree is not trusted: in a pull request, the runs
    of its base commit (``oloproof.action.trust``).

    Refs resolve over these runs only, each read as the pin holds it: a run the working tree
    deletes, edits or replaces by a symlink is read from the pin instead (and said so), so neither
    deleting the newest run of a version nor editing it changes what ``version:NAME`` or
    ``latest~N`` names. A run the working tree adds is never used (``added``). Runs this store
    makes itself (the gate's own run) are always used.
    """

    where: str  # how the pin is named in notes, e.g. "the base branch (1a2b3c4d5e6f)"
    files: Mapping[str, Mapping[str, str]]  # run id -> file name (run.json, outputs.jsonl) -> content id
    content_id: Callable[[bytes], str]  # the content id of bytes on disk (git's blob id)
    read: Callable[[str], bytes | None]  # a content id -> the bytes the pin holds
    added: str  # why a run the working tree adds is not used
    unavailable: str | None = None  # why the pin cannot be read: then no stored run is used

    def content(self, run_id: str, name: str, on_disk: bytes | None) -> tuple[bytes | None, bool]:
        """A pinned run's file: the bytes on disk when they are the pinned ones, else the pin's
        (None when it cannot be read); and whether the working tree's copy differs."""
        wanted = self.files.get(run_id, {}).get(name)
        if wanted is None:
            return None, on_disk is not None
        if on_disk is not None and self.content_id(on_disk) == wanted:
            return on_disk, False
        return self.read(wanted), True


def utc_now() -> str:
    """A run's start or end (``oloproof.store.utc_stamp``, to the microsecond: it orders runs)."""
    return utc_stamp("micro")


def new_run_id() -> str:
    return utc_stamp("compact") + "-" + secrets.token_hex(3)


class RunStore:
    """Runs under ``<root>/.oloproof/runs``; ``root`` is the directory of release.yaml.

    Every run is sealed when written (a content digest over run.json, and the SHA-256 of
    outputs.jsonl) and checked when read: a run edited by hand, or written before runs were
    sealed, is never used — it is listed in ``refused`` with the reason, and a ref naming it is an
    error that says why. ``pinned`` replaces the working tree's run list by another (in a pull
    request, the base commit's: ``PinnedRuns``). Runs this store saves itself are always usable.
    """

    def __init__(self, root: Path, *, pinned: PinnedRuns | None = None) -> None:
        self.root = root
        self.runs_dir = runs_dir(root)
        self.pinned = pinned
        self.refused: dict[str, str] = {}  # run id -> why it is not used
        self.substituted: dict[str, str] = {}  # run id -> how the working tree's copy differs from the pinned one
        self._compared: set[str] = set()  # pinned runs whose working-tree copy was compared with the pin
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
        """Every complete, sealed and usable run, oldest first (temporary directories are skipped;
        the others are in ``refused``)."""
        on_disk: dict[str, bytes | None] = {}  # run id -> its run.json (None: not a regular file)
        if self.runs_dir.is_dir():
            for entry in os.scandir(self.runs_dir):
                if entry.name.startswith(".") or not entry.is_dir():
                    continue
                meta = Path(entry.path) / "run.json"
                try:
                    on_disk[entry.name] = read_regular(meta, str(meta))
                except UsageError:
                    on_disk[entry.name] = None
        raws: dict[str, bytes] = {}
        pinned = self.pinned
        for name, raw in on_disk.items():
            if raw is None:
                continue  # no run.json: not a run (or, pinned, read from the pin below)
            if pinned is None or name in self._made:
                raws[name] = raw
            elif pinned.unavailable is not None:
                self.refused[name] = pinned.unavailable
            elif name not in pinned.files:
                self.refused[name] = pinned.added
        if pinned is not None and pinned.unavailable is None:
            for name in pinned.files:
                if name in self._made:
                    continue
                raw, differs = pinned.content(name, "run.json", on_disk.get(name))
                if raw is None:
                    self.refused[name] = f"its run.json on {pinned.where} cannot be read"
                    continue
                if name not in self._compared:
                    self._compared.add(name)
                    how = self._difference(name, pinned, differs, on_disk.get(name) is not None)
                    if how is not None:
                        self.substituted[name] = f"{how} by this pull request: the copy on {pinned.where} is used"
                raws[name] = raw
        found = [record for name, raw in raws.items() if (record := self._parse(name, raw)) is not None]
        found.sort(key=lambda record: (record.created_ns, record.run_id))
        return found

    def _difference(self, name: str, pinned: PinnedRuns, run_json_differs: bool, run_json_exists: bool) -> str | None:
        """How the working tree's copy of a pinned run differs from the pin's (None: it does not)."""
        if run_json_differs:
            return "changed" if run_json_exists else "deleted or replaced"
        outputs = self._read_outputs(name)
        if pinned.content(name, "outputs.jsonl", outputs)[1]:
            return f"changed (its outputs.jsonl {'changed' if outputs is not None else 'deleted or replaced'})"
        return None

    def _read_outputs(self, run_id: str) -> bytes | None:
        path = self.runs_dir / run_id / "outputs.jsonl"
        try:
            return read_regular(path, str(path))
        except UsageError:
            return None

    def _parse(self, name: str, raw: bytes) -> RunRecord | None:
        """A run.json's record, or None (and why, in ``refused``) when it is not a usable run."""
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            self.refused[name] = f"its run.json is not valid JSON ({exc})"
            return None
        problem = seal_problem(data)
        if problem is not None:
            self.refused[name] = problem
            return None
        try:
            record = RunRecord.from_json(data)
        except (KeyError, TypeError, ValueError) as exc:
            self.refused[name] = f"its run.json is not a valid run record ({exc.__class__.__name__}: {exc})"
            return None
        if record.run_id != name:
            self.refused[name] = f"its run.json names run {record.run_id} (a run copied or renamed by hand)"
            return None
        return record

    def outputs(self, record: RunRecord) -> dict[str, dict[str, Any]]:
        path = self.runs_dir / record.run_id / "outputs.jsonl"
        raw = self._read_outputs(record.run_id)
        if self.pinned is not None and record.run_id in self.pinned.files and record.run_id not in self._made:
            raw, _ = self.pinned.content(record.run_id, "outputs.jsonl", raw)  # as the pin holds them
        if raw is None:
            raise StoreError(f"{path}: missing or unreadable (the run store is damaged)")
        if "sha256:" + hashlib.sha256(raw).hexdigest() != record.outputs_sha256:
            raise StoreError(
                f"{path}: the outputs do not match the digest in run {record.run_id}'s run.json (edited after the run "
                "was written); the run cannot be used: restore it from git or delete the run and make it again"
            )
        try:
            # One scan of the whole file for an integer orjson cannot read exactly; without one
            # (the usual case), every line goes straight to orjson.
            parse = loads if has_long_integers([raw]) else orjson.loads
            with bulk():  # each step a C loop over the lines: no Python statement per output
                objects = list(map(parse, filter(None, map(bytes.strip, raw.splitlines()))))
                result = {obj["id"]: obj for obj in objects}
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{path}: not a valid outputs file ({exc})") from None
        return result

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        """An exclusive lock named by ``key`` (e.g. version + test-set digest), across processes.

        Lock files live in ``.oloproof/.locks/``, which a ``.gitignore`` written beside them keeps
        out of commits.
        """
        locks = locks_dir(self.root)
        locks.mkdir(parents=True, exist_ok=True)
        ignore = gitignore_path(self.root)
        if not ignore.exists():
            line = f"{LAYOUT.locks}/\n".encode()
            atomic_write_bytes(ignore, b"# written by oloproof: lock files are not evidence\n" + line)
        name = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        with locked(locks / f"{name}.lock"):
            yield

    def resolve(self, ref: str, *, kind: str = "system", scope: RefScope | None = None) -> RunRecord:
        records = [record for record in self.records() if record.kind == kind]
        return resolve_ref(ref, records, refused=self.refused, scope=scope)


_TILDE = re.compile(r"^(?P<base>.+?)~(?P<n>\d+)$")


@dataclass(frozen=True, slots=True, kw_only=True)
class RefScope:
    """Which runs a ref counts (docs/runs.md, "Refs").

    ``latest~N`` and ``version:NAME~N`` count only the runs made on the test set ``testset_digest``
    (the current one: a stray run of another config never shifts them); a run id names its run
    wherever it was made. ``skip`` (version -> why) leaves runs of those versions out of the
    ``latest`` forms only: in a seeds block, the released system's own runs, which every gate
    adds, so that ``latest~4 … latest`` names the same checkpoints on every gate.
    """

    testset_digest: str
    testset_path: str
    skip: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return f"{self.testset_path} ({self.testset_digest[:19]}…)"

    @classmethod
    def of(cls, testset: TestSet, *, skip: tuple[tuple[str, str], ...] = ()) -> RefScope:
        return cls(testset_digest=testset.digest, testset_path=testset.path, skip=skip)


def resolve_ref(
    ref: str,
    records: list[RunRecord],
    *,
    refused: dict[str, str] | None = None,
    scope: RefScope | None = None,
) -> RunRecord:
    """Resolve a ref against ``records`` (oldest first); ``refused`` (run id -> why) turns a ref that
    names a run which is not used into an error saying why; ``scope`` narrows what the ``latest``
    and ``version:`` forms count (``RefScope``)."""
    text = ref.strip()
    back = 0
    match = _TILDE.match(text)
    if match:
        text, back = match["base"], int(match["n"])
    on_set = (
        records if scope is None else [record for record in records if record.testset_digest == scope.testset_digest]
    )
    where = "" if scope is None else f" on {scope.where}"
    elsewhere = len(records) - len(on_set)
    if text == "latest":
        skipped = dict(scope.skip) if scope is not None else {}
        pool = [record for record in on_set if record.version not in skipped]
        what = f"runs{where}"
        left_out = [
            f"{count} run(s) of version '{version}' ({skipped[version]}; `version:{version}` names them)"
            for version in skipped
            if (count := sum(1 for record in on_set if record.version == version))
        ]
        if left_out:
            what += ", not counting " + " and ".join(left_out)
        if elsewhere:
            what += f" ({elsewhere} more on other test sets are not counted)"
    elif text.startswith("version:"):
        name = text[len("version:") :]
        pool = [record for record in on_set if record.version == name]
        what = f"runs of version '{name}'{where}"
        if not pool:
            other = [record for record in records if record.version == name]
            if other:
                sets = ", ".join(dict.fromkeys(record.testset_digest[:19] + "…" for record in other))
                raise StoreError(
                    f"ref '{ref}': no run of version '{name}'{where}; its {len(other)} run(s) were made on other test "
                    f"sets ({sets}): run version '{name}' on this test set"
                )
            known = sorted({record.version for record in on_set})
            hint = f"; known versions{' there' if scope else ''}: {', '.join(known)}" if known else ""
            raise StoreError(f"ref '{ref}': no run of version '{name}'{where}{hint}{_unused(refused)}")
    else:
        if back:
            raise StoreError(f"ref '{ref}': ~N applies to 'latest' or 'version:NAME', not to a run id")
        matches = [record for record in records if record.run_id.startswith(text)]
        if not matches:
            for run_id, why in sorted((refused or {}).items()):
                if run_id.startswith(text):
                    raise StoreError(f"ref '{ref}': run {run_id} is not used: {why}")
            versions = {record.version for record in records}
            hint = f"; did you mean 'version:{text}'?" if text in versions else " (see `oloproof runs`)"
            raise StoreError(f"ref '{ref}': no run id starts with '{text}'{hint}")
        if len(matches) > 1:
            ids = ", ".join(record.run_id for record in matches[:5])
            raise StoreError(
                f"ref '{ref}': ambiguous, {len(matches)} runs start with it "
                f"({ids}{', ...' if len(matches) > 5 else ''})"
            )
        return matches[0]
    if not pool:
        if not records:
            raise StoreError(f"ref '{ref}': there are no runs yet (make one with `oloproof run`){_unused(refused)}")
        raise StoreError(f"ref '{ref}': there are no {what}{_unused(refused)}")
    if back >= len(pool):
        raise StoreError(f"ref '{ref}': only {len(pool)} {what}, so {text}~{back} does not exist{_unused(refused)}")
    return pool[-1 - back]


def _unused(refused: dict[str, str] | None) -> str:
    """Stored runs a ref did not count because they are not used, said after a ref that found too few."""
    if not refused:
        return ""
    run_id, why = sorted(refused.items())[-1]
    more = f" and {len(refused) - 1} more" if len(refused) > 1 else ""
    return f" (not counted: run {run_id}, {why}{more})"
