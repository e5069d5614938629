"""A fingerprint of the files a system runs with: its weights, prompts and code.

A run is about the files it ran: a model swapped under the same ``system.version`` must never be
judged on the old model's run. The fingerprint is the SHA-256 of every file's relative path and
content digest (sorted, length-framed); the per-file digests are kept too, so a changed run can be
told apart by name ("model/weights.npz changed"). Directories are walked (regular files only,
``.oloproof/``, ``.git/`` and ``__pycache__/`` skipped, symlinks not followed out of them).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.errors import UsageError
from oloproof.store import store_name

SKIPPED_DIRS = frozenset({store_name(), ".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
MAX_FILES = 20_000  # in all; a directory larger than this is named as an artifact by mistake, most likely
CHUNK = 1 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    digest: str  # "sha256:..." over the sorted (path, file digest) pairs
    files: dict[str, str]  # shown path -> "sha256:..." of its content

    def to_json(self) -> dict[str, Any]:
        return {"digest": self.digest, "files": dict(sorted(self.files.items()))}

    @classmethod
    def from_json(cls, data: Any) -> Fingerprint | None:
        if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
            return None
        files = data.get("files")
        return cls(digest=data["digest"], files=dict(files) if isinstance(files, dict) else {})

    def changes(self, now: Fingerprint) -> str:
        """What differs from ``now``, in a few words: "model/weights.npz changed; b.txt added"."""
        parts: list[str] = []
        for name in sorted(set(self.files) | set(now.files)):
            before, after = self.files.get(name), now.files.get(name)
            if before == after:
                continue
            parts.append(f"{name} {'added' if before is None else 'removed' if after is None else 'changed'}")
        shown = "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more" if len(parts) > 5 else "")
        return shown or "the set of files differs"


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _file_digest(path: Path) -> str:
    hasher = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def _walk(root: Path) -> Iterable[Path]:
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(current) / name
            try:
                if stat.S_ISREG(os.lstat(path).st_mode):
                    yield path
            except OSError:
                continue


def fingerprint(paths: Iterable[Path], *, base_dir: Path) -> Fingerprint:
    """The fingerprint of ``paths`` (files and directories); names are shown relative to
    ``base_dir`` when inside it. Unreadable files are a usage error (they cannot be vouched for)."""
    files: dict[str, str] = {}
    for path in paths:
        targets = list(_walk(path)) if path.is_dir() else [path]
        for target in targets:
            try:
                shown = target.relative_to(base_dir).as_posix()
            except ValueError:
                shown = str(target)
            if shown in files:
                continue
            if len(files) >= MAX_FILES:
                raise UsageError(
                    f"the system's files hold more than {MAX_FILES} files (under {path}): name the files that make "
                    "the model (weights, prompts, code) in system.artifacts instead of a large directory"
                )
            try:
                files[shown] = _file_digest(target)
            except OSError as exc:
                raise UsageError(f"{shown}: a file of the system cannot be read ({exc.strerror or exc})") from None
    hasher = hashlib.sha256()
    for name, digest in sorted(files.items()):
        hasher.update(_frame(name.encode("utf-8")))
        hasher.update(_frame(digest.encode("ascii")))
    return Fingerprint(digest="sha256:" + hasher.hexdigest(), files=files)
