"""In a pull request, whatever the base commit holds about a holdout must still be there.

The set of holdout evidence is taken from the **base commit**, never from the pull request's own
configuration (which the pull request can change): a pull request that deletes the ``holdout:``
section, points ``holdout.log`` somewhere new, or removes the register would otherwise choose what
is checked. From the base commit's tree:

- every holdout register (``<store>/holdouts.jsonl``) and every log its reads name;
- every holdout outcome record (``<store>/holdout/read-*.json``) and the log it names;
- the log the base's own release.yaml declares (``holdout.log``, or its default);
- every file named ``READS.log``;
- and the log the pull request's release.yaml declares, when the base holds a file there.

Each must be in the pull request's checkout at the same path, as a regular file (no path
component a symlink), extending its base version byte for byte: a log keeps its verified prefix,
the register its whole content, an outcome record is unchanged. Anything else is a problem, and
the gate is BLOCKED with it. Applied to every pull request, this makes every merged commit hold
at least what every earlier one held: two pull requests in a row cannot reset a budget either.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import stat
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml

from oloproof.config import Release
from oloproof.errors import StoreError
from oloproof.files import read_evidence
from oloproof.holdout.spec import HOLDOUT
from oloproof.holdout.verify import verify
from oloproof.store import (
    MAX_LOG_BYTES,
    MAX_RECORD_BYTES,
    MAX_REGISTER_BYTES,
    is_outcome_record_name,
    register_path,
    short_digest,
    shown,
)
from oloproof.vcs import git_bytes, git_output

DEFAULT_LOG: str = HOLDOUT.props["log"].default
LOG_NAME = "READS.log"
SYMLINK_MODE = b"120000"


@dataclass(frozen=True, slots=True, kw_only=True)
class Held:
    """One evidence file of the base commit: its path from the repository's top, and its blob."""

    path: str
    kind: str  # log | register | record
    blob: str

    @property
    def what(self) -> str:
        return {
            "log": "the holdout reads log",
            "register": "the holdout register",
            "record": "the holdout outcome record",
        }[self.kind]

    @property
    def cap(self) -> int:
        return {"log": MAX_LOG_BYTES, "register": MAX_REGISTER_BYTES, "record": MAX_RECORD_BYTES}[self.kind]


def repository_top(cwd: Path) -> Path:
    top = git_output(cwd, "rev-parse", "--show-toplevel")
    return Path(top).resolve() if top else cwd.resolve()


def from_top(top: Path, path: Path) -> str | None:
    """``path`` relative to the repository's top, lexically (a symlink on the way is not followed:
    it is what a pull request would use to point a path at another file). None when outside."""
    try:
        return Path(os.path.normpath(path)).relative_to(top).as_posix()
    except ValueError:
        return None


def held_evidence(release: Release, base_sha: str) -> dict[str, Held] | None:
    """Every holdout evidence file the base commit holds (see the module docstring), by path; None
    when git cannot list the base commit's files (then nothing can be shown to be kept)."""
    top = repository_top(release.base_dir)
    listing = _listing(top, base_sha)
    if listing is None:
        return None
    held: dict[str, Held] = {}

    def hold(path: str | None, kind: str) -> None:
        if path is None or path in held:
            return
        found = listing.get(path)
        if found is not None and found[0] != SYMLINK_MODE:
            held[path] = Held(path=path, kind=kind, blob=found[1].decode())

    register = shown("register")
    records = shown("holdout_records")
    for path in sorted(listing):
        folder, _, name = path.rpartition("/")
        if path == register or path.endswith("/" + register):
            hold(path, "register")
            prefix = path[: -len(register)]
            for named in _register_logs(top, base_sha, path):
                hold(_join(prefix, named), "log")
        elif (folder == records or folder.endswith("/" + records)) and is_outcome_record_name(name):
            hold(path, "record")
            recorded = _record_log(top, base_sha, path)
            if recorded is not None:
                hold(_join(folder[: -len(records)], recorded), "log")
        elif name == LOG_NAME:
            hold(path, "log")
    config = from_top(top, release.file)
    if config is not None:
        hold(_base_config_log(top, base_sha, config), "log")
    if release.holdout is not None:
        hold(from_top(top, release.resolve(release.holdout.log)), "log")
    return held


def evidence_problems(release: Release, base_sha: str) -> list[str]:
    """Why the pull request's checkout does not keep what the base commit holds (empty: it does)."""
    top = repository_top(release.base_dir)
    held = held_evidence(release, base_sha)
    if held is None:
        return [
            f"the files of the base commit {short_digest(base_sha)} cannot be listed (git failed or timed out), so "
            "no holdout evidence can be shown to be kept"
        ]
    problems: list[str] = []
    for item in held.values():
        problem = _kept(top, base_sha, item)
        if problem is not None:
            problems.append(problem)
    return problems


def unverifiable_problems(release: Release, why: str) -> list[str]:
    """Without the base commit nothing can be compared: every holdout evidence file present is named."""
    top = repository_top(release.base_dir)
    paths = [register_path(top)]
    if release.holdout is not None:
        paths.insert(0, release.resolve(release.holdout.log))
    return [
        f"{from_top(top, path) or path} cannot be checked against the base branch: {why}"
        for path in paths
        if os.path.lexists(path)
    ]


def current_bytes(top: Path, relative: str, *, expected: str, cap: int) -> bytes | None:
    """A file of the checkout for comparison: None when missing; StoreError for a symlink on the
    way, a non-regular file or one over ``cap``."""
    link = _symlink_on_path(top, relative)
    if link is not None:
        raise StoreError(f"{link} is a symbolic link in this pull request (evidence is a regular file, never a link)")
    return read_evidence(top / relative, relative, expected=expected, max_bytes=cap)


def _kept(top: Path, base_sha: str, item: Held) -> str | None:
    short = short_digest(base_sha)
    try:
        current = current_bytes(top, item.path, expected=item.what, cap=item.cap)
    except StoreError as exc:
        return f"{item.what} {item.path} is held by the base branch ({short}) but here: {exc}"
    if current is None:
        if item.kind == "record":
            return (
                f"the holdout outcome record {item.path} is removed by this pull request: a read's outcomes never "
                "change after the read"
            )
        return (
            f"{item.what} {item.path} is removed by this pull request: whatever the base branch ({short}) holds about "
            "a holdout stays (renaming or deleting a log, or removing the holdout: section, does not reset its budget)"
        )
    old = git_bytes(top, "cat-file", "blob", item.blob)
    if old is None:
        return f"{item.what} {item.path}: its version on the base branch ({short}) cannot be read"
    if item.kind == "record":
        if current != old:
            return (
                f"the holdout outcome record {item.path} is changed by this pull request: a read's outcomes never "
                "change after the read"
            )
        return None
    kept = old[: verify(old, shown=item.path).append_offset] if item.kind == "log" else old
    if not current.startswith(kept):
        return (
            f"{item.path} is not an extension of its version on the base branch ({short}): entries were changed or "
            "removed in this pull request (the log and the register are append-only)"
        )
    return None


def _symlink_on_path(top: Path, relative: str) -> str | None:
    """The first component of ``relative`` (under ``top``) that is a symlink, or None."""
    current = top
    parts = relative.split("/")
    for index, part in enumerate(parts):
        current = current / part
        try:
            mode = os.lstat(current).st_mode
        except OSError:
            return None
        if stat.S_ISLNK(mode):
            return "/".join(parts[: index + 1])
    return None


def _listing(top: Path, base_sha: str) -> dict[str, tuple[bytes, bytes]] | None:
    """Every file of the base commit: path -> (mode, object id); None when git fails."""
    raw = git_bytes(top, "ls-tree", "-r", "-z", "--full-tree", base_sha, timeout_s=60.0)
    if raw is None:
        return None
    out: dict[str, tuple[bytes, bytes]] = {}
    for item in raw.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        parts = meta.split()
        if len(parts) == 3 and parts[1] == b"blob":
            out[name.decode("utf-8", "surrogateescape")] = (parts[0], parts[2])
    return out


def _join(prefix: str, relative: str) -> str | None:
    """``relative`` (as a record or the register names it) from the directory ``prefix`` (``""`` or
    ending in ``/``), normalised; None when absolute or leaving the repository."""
    if not relative or relative.startswith("/") or relative.startswith("~"):
        return None
    joined = posixpath.normpath(prefix + relative)
    return None if joined == ".." or joined.startswith("../") else joined


def _register_logs(top: Path, base_sha: str, path: str) -> set[str]:
    data = git_bytes(top, "show", f"{base_sha}:{path}") or b""
    logs: set[str] = set()
    for line in data.splitlines():
        with contextlib.suppress(orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
            entry = orjson.loads(line)
            if entry.get("kind") == "read" and isinstance(entry.get("log"), str):
                logs.add(entry["log"])
    return logs


def _record_log(top: Path, base_sha: str, path: str) -> str | None:
    with contextlib.suppress(orjson.JSONDecodeError, TypeError, ValueError, AttributeError):
        log = orjson.loads(git_bytes(top, "show", f"{base_sha}:{path}") or b"").get("log")
        return log if isinstance(log, str) else None
    return None


def _base_config_log(top: Path, base_sha: str, config: str) -> str | None:
    """The log the base commit's own release.yaml (at the same path) declares, or None."""
    text = git_bytes(top, "show", f"{base_sha}:{config}")
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    holdout = data.get("holdout") if isinstance(data, dict) else None
    if not isinstance(holdout, dict):
        return None
    log = holdout.get("log", DEFAULT_LOG)
    folder = config.rpartition("/")[0]
    return _join(folder + "/" if folder else "", log) if isinstance(log, str) else None
