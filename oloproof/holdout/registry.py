"""The repository's register of holdout sets and of every read of them.

A read budget is bound to a holdout's *content*, not to one release.yaml, one log or one directory:
a second config naming the same cases, a copy of the project elsewhere in the repository, a renamed
or deleted READS.log, or the holdout minus one case all meet the reads already made. And a dev set
that shares any case with a registered holdout is refused wherever it is named.

The register is ``<repository root>/.oloproof/holdouts.jsonl`` (committed with the logs; the root
is the git work tree holding release.yaml, or release.yaml's directory outside git). It is
append-only, one JSON object a line:

- ``{"kind": "salt", "salt": HEX}``: the first line, made once; it keys every case commitment;
- ``{"kind": "set", "set": DIGEST, "n": N, "cases": [C, ...], "near": [C, ...], "fields": [[K, ...]]}``:
  a holdout set, once per content, with one commitment per case: the first 32 hex digits of SHA-256
  over the salt and the case's canonical *input* (not its id, expected value, group or stratum), so
  a copy with renamed ids or edited labels still shares its cases; ``near``: the same over the
  input as the holdout guard compares it (``oloproof.normalise.near_copy_fields``: the leakage
  normaliser, edge punctuation dropped), and ``fields``: the distinct sets of input key paths (names,
  never values), so a dev case with a space or a ``!`` added, or an extra field, still meets it. A
  set registered before ``near`` existed gains a second ``set`` line with it at its next read
  (readers merge them; older readers take the second line's ``cases``, which are the same);
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
from collections.abc import Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oloproof.errors import StoreError
from oloproof.files import locked, read_evidence
from oloproof.jsonl import dumps_line
from oloproof.normalise import near_copy_bytes, near_copy_fields
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
    near: dict[str, frozenset[str]] = field(default_factory=dict)  # set digest -> near-copy commitments
    fields: dict[str, frozenset[frozenset[str]]] = field(default_factory=dict)  # set digest -> input key sets

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

    def near_overlapping(self, testset: TestSet) -> tuple[dict[str, int], set[str]]:
        """Registered set digest -> how many of ``testset``'s cases are near copies of its cases,
        for sets sharing any, and the ids of those dev cases (``near_copy_fields``: a holdout case's
        fields, all present in the dev case with equal normalised values)."""
        prefix = (self.salt or "").encode("ascii")
        found: dict[str, int] = {}
        ids: set[str] = set()
        for case in testset.cases:
            dev = near_copy_fields(case.inputs)
            names = dev.keys()
            for digest, key_sets in self.fields.items():
                commitments = self.near.get(digest, frozenset())
                for keys in key_sets:
                    if keys <= names and _near_commitment(prefix, {key: dev[key] for key in keys}) in commitments:
                        found[digest] = found.get(digest, 0) + 1
                        ids.add(case.id)
                        break
        return found, ids

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


def _near_commitment(prefix: bytes, fields: dict[str, Hashable]) -> str:
    return hashlib.sha256(prefix + b"\0near\0" + near_copy_bytes(fields)).hexdigest()[:COMMITMENT_HEX]


def near_commitments(testset: TestSet, salt: str) -> tuple[list[str], list[list[str]]]:
    """The set's near-copy commitments (sorted) and its distinct input key sets (names only)."""
    prefix = salt.encode("ascii")
    commitments: set[str] = set()
    key_sets: set[tuple[str, ...]] = set()
    for case in testset.cases:
        fields = near_copy_fields(case.inputs)
        if fields:
            commitments.add(_near_commitment(prefix, fields))
            key_sets.add(tuple(sorted(fields)))
    return sorted(commitments), [list(keys) for keys in sorted(key_sets)]


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
        digest = str(entry["set"])
        register.sets[digest] = register.sets.get(digest, frozenset()) | frozenset(str(c) for c in entry["cases"])
        if "near" in entry:
            register.near[digest] = register.near.get(digest, frozenset()) | frozenset(str(c) for c in entry["near"])
            register.fields[digest] = register.fields.get(digest, frozenset()) | frozenset(
                frozenset(str(key) for key in keys) for keys in entry["fields"]
            )
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
    near: tuple[list[str], list[list[str]]] | None = None
    if testset.digest not in register.sets or testset.digest not in register.near:
        cases = sorted(set(case_commitments(testset, salt).values()))
        near = near_commitments(testset, salt)
        lines.append(
            {
                "kind": "set",
                "set": testset.digest,
                "n": len(testset),
                "cases": cases,
                "near": near[0],
                "fields": near[1],
            }
        )
    read = RegisteredRead(
        set_digest=testset.digest, log=relative_to_root(register.root, log), seq=seq, when=when, budget=budget
    )
    lines.append({"kind": "read", "set": read.set_digest, "log": read.log, "read": seq, "when": when, "budget": budget})
    _append(register.path, b"".join(dumps_line(line) for line in lines))
    updated = Register(
        root=register.root,
        salt=salt,
        sets=dict(register.sets),
        reads=[*register.reads, read],
        near=dict(register.near),
        fields=dict(register.fields),
    )
    if testset.digest not in updated.sets:
        updated.sets[testset.digest] = frozenset(case_commitments(testset, salt).values())
    if near is not None:
        updated.near[testset.digest] = frozenset(near[0])
        updated.fields[testset.digest] = frozenset(frozenset(keys) for keys in near[1])
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
