"""The repository's register of holdout sets and of every read of them.

A read budget is bound to a holdout's *content*, not to one release.yaml, one log or one directory:
a second config naming the same cases, a copy of the project elsewhere in the repository, a renamed
or deleted READS.log, or the holdout minus one case all meet the reads already made. And a dev set
that shares any case with a registered holdout is refused wherever it is named.

The register is ``<repository root>/.oloproof/holdouts.jsonl`` (committed with the logs; the root
is the git work tree holding release.yaml, or release.yaml's directory outside git). It is
append-only, one JSON object a line:

- ``{"kind": "salt", "salt": HEX}``: the first line, made once; it keys every case commitment;
- ``{"kind": "set", "set": DIGEST, "n": N, "cases": [C, ...]}``: a holdout set, once per content,
  with one commitment per case: the first 32 hex digits of SHA-256 over the salt and the case's
  canonical *input* (not its id, expected value, group or stratum), so a copy with renamed ids or
  edited labels still shares its cases;
- ``{"kind": "read", "set": DIGEST, "log": PATH, "read": SEQ, "when": TIME, "budget": B}``: a read,
  written before the system sees a case (a read killed half-way still counts).

The commitments hold no case content, but they are not secret: someone holding a candidate input
and the register can test whether that input is in the holdout. For inputs with few possible values
(a handful of categorical features) that says which rows were reserved; say so where it matters.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oloproof.errors import StoreError
from oloproof.files import locked, read_evidence
from oloproof.jsonl import dumps_line
from oloproof.store import MAX_REGISTER_BYTES, locks_dir
from oloproof.store import register_path as _register_path
from oloproof.store import shown as store_shown
from oloproof.testset import TestSet
from oloproof.vcs import git_output

COMMITMENT_HEX = 32


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredRead:
    set_digest: str
    log: str  # relative to the repository root
    seq: int
    when: str
    budget: int | None

    @property
    def key(self) -> tuple[str, int]:
        return (self.log, self.seq)


@dataclass(slots=True, kw_only=True)
class Register:
    root: Path
    salt: str | None = None
    sets: dict[str, frozenset[str]] = field(default_factory=dict)  # set digest -> case commitments
    reads: list[RegisteredRead] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return register_path(self.root)

    def commitments(self, testset: TestSet) -> dict[str, str]:
        """Case id -> commitment, under this register's salt (one is made if none exists yet)."""
        return case_commitments(testset, self.salt or "")

    def overlapping(self, cases: Iterable[str]) -> dict[str, int]:
        """Registered set digest -> how many of ``cases`` (commitments) it holds, for sets sharing any."""
        wanted = set(cases)
        found = {digest: len(wanted & members) for digest, members in self.sets.items()}
        return {digest: count for digest, count in found.items() if count}

    def reads_of(self, sets: Iterable[str]) -> list[RegisteredRead]:
        chosen = set(sets)
        return [read for read in self.reads if read.set_digest in chosen]


def repository_root(base_dir: Path) -> Path:
    """The git work tree holding ``base_dir``, else ``base_dir`` itself."""
    top = git_output(base_dir, "rev-parse", "--show-toplevel")
    if top:
        with contextlib.suppress(OSError):
            return Path(top).resolve()
    return base_dir.resolve()


def register_path(root: Path) -> Path:
    """The register of the repository rooted at ``root`` (``oloproof.store`` owns the layout)."""
    return _register_path(root)


def register_shown() -> str:
    """The register as named to people: ``.oloproof/holdouts.jsonl``, relative to the repository root."""
    return store_shown("register")


def relative_to_root(root: Path, path: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path.resolve())


def case_commitments(testset: TestSet, salt: str) -> dict[str, str]:
    out: dict[str, str] = {}
    prefix = salt.encode("ascii")
    for case in testset.cases:
        digest = hashlib.sha256(prefix + b"\0" + dumps_line(case.inputs)).hexdigest()[:COMMITMENT_HEX]
        out[case.id] = digest
    return out


def load_register(root: Path) -> Register:
    """The register at ``root`` (empty when there is none). A line that is not a register entry is
    a damaged register: refused (StoreError), never skipped, since skipping a read would give
    budget back."""
    register = Register(root=root)
    path = register_path(root)
    raw = read_evidence(path, register_shown(), expected="the holdout register", max_bytes=MAX_REGISTER_BYTES)
    if raw is None:
        return register
    for number, line in enumerate(raw.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
            _take(register, entry)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            if number == len(raw.splitlines()) and not raw.endswith(b"\n"):
                continue  # a line torn by a crash mid-append: nothing after it, the next append ends it
            raise StoreError(
                f"{register_shown()}:{number}: not a holdout register entry ({type(exc).__name__}); "
                "the register is append-only: restore it from git"
            ) from None
    return register


def _take(register: Register, entry: Any) -> None:
    kind = entry["kind"]
    if kind == "salt":
        register.salt = str(entry["salt"])
    elif kind == "set":
        register.sets[str(entry["set"])] = frozenset(str(c) for c in entry["cases"])
    elif kind == "read":
        budget = entry.get("budget")
        register.reads.append(
            RegisteredRead(
                set_digest=str(entry["set"]),
                log=str(entry["log"]),
                seq=int(entry["read"]),
                when=str(entry["when"]),
                budget=int(budget) if budget is not None else None,
            )
        )
    else:
        raise ValueError(f"unknown kind {kind!r}")


@contextlib.contextmanager
def register_lock(root: Path) -> Iterator[None]:
    """Held for a whole holdout read: reads of one repository's holdouts serialise, so no two can
    both see budget left when only one read remains."""
    with locked(locks_dir(root) / "holdouts.lock"):
        yield


def record_read(
    register: Register, testset: TestSet, *, log: Path, seq: int, when: str, budget: int | None
) -> Register:
    """Append the read (and, the first time, the salt and the set) to the register, durably, before
    the system sees a case; returns the register as it now stands. Call under ``register_lock``."""
    lines: list[dict[str, Any]] = []
    salt = register.salt
    if salt is None:
        salt = secrets.token_hex(16)
        lines.append({"kind": "salt", "salt": salt})
    if testset.digest not in register.sets:
        cases = sorted(set(case_commitments(testset, salt).values()))
        lines.append({"kind": "set", "set": testset.digest, "n": len(testset), "cases": cases})
    read = RegisteredRead(
        set_digest=testset.digest, log=relative_to_root(register.root, log), seq=seq, when=when, budget=budget
    )
    lines.append({"kind": "read", "set": read.set_digest, "log": read.log, "read": seq, "when": when, "budget": budget})
    _append(register.path, b"".join(dumps_line(line) for line in lines))
    updated = Register(root=register.root, salt=salt, sets=dict(register.sets), reads=[*register.reads, read])
    if testset.digest not in updated.sets:
        updated.sets[testset.digest] = frozenset(case_commitments(testset, salt).values())
    return updated


def _append(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise StoreError(
            f"{path}: cannot append to the holdout register ({exc.strerror or exc}); a symlink is never written"
        ) from None
    try:
        size = os.fstat(fd).st_size
        if size:
            with open(path, "rb") as handle:
                handle.seek(size - 1)
                if handle.read(1) != b"\n":
                    data = b"\n" + data  # end a line torn by an earlier crash first
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
