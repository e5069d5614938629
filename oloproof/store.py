"""Where oloproof keeps its evidence: every path under ``.oloproof/``, in one place.

Everything that reads or writes the evidence directory asks this module for the path — the run
store, the holdout register and outcome records, leakage records, transformed images, locks, and
the action's pull-request trust check, which must know every kind of evidence a pull request could
add, change or remove. A path built by hand elsewhere drifts when the layout moves, and a check
that looks in the old place passes silently; ``tests/test_store.py`` moves the layout and asserts
the trust check still blocks.

The layout is read at call time (``LAYOUT``), never copied into another module at import time.

Also here, because every record needs them and they must agree: the one way a digest is shortened
for people (``short_digest``) and the one way a UTC time is stamped into a record (``utc_stamp``).
Nothing of oloproof is imported: ``files`` (reading evidence with a size cap, refusing symlinks)
builds on this module, not the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    """The evidence directory and what lives in it, as POSIX paths relative to the directory that
    holds it (release.yaml's directory; for the register, the repository root)."""

    store: str = ".oloproof"  # committed; beside release.yaml
    runs: str = "runs"  # <run id>/run.json and outputs.jsonl
    holdout_records: str = "holdout"  # read-NNNN-<hash12>.json, one per holdout read
    register: str = "holdouts.jsonl"  # at the repository root's store: every holdout set and read
    leakage: str = "evidence/leakage"  # <test-set digest hex>.json
    metamorphic: str = "metamorphic"  # <transform>/<digest>/: files a transform wrote (images)
    gates: str = "gates"  # <release.yaml's file name>.json: what the last gate saw (a note, never evidence)
    locks: str = ".locks"  # lock files: not evidence, git-ignored
    gitignore: str = ".gitignore"  # written by oloproof beside the locks


LAYOUT = Layout()

# Size caps for evidence files (a log pointed at /dev/zero, or a huge file, is refused, not read).
# A READS.log line is about 400 bytes: 16 MiB is tens of thousands of reads. The register holds
# 33 bytes per holdout case per set; records one value per case.
MAX_LOG_BYTES = 16 * 1024 * 1024
MAX_RECORD_BYTES = 64 * 1024 * 1024
MAX_REGISTER_BYTES = 256 * 1024 * 1024


def store_name() -> str:
    """The evidence directory's name (``.oloproof``)."""
    return LAYOUT.store


def _under(base: Path, relative: str) -> Path:
    return base.joinpath(LAYOUT.store, *PurePosixPath(relative).parts)


def store_dir(base_dir: Path) -> Path:
    return base_dir / LAYOUT.store


def runs_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.runs)


def holdout_records_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.holdout_records)


def register_path(root: Path) -> Path:
    """The holdout register of the repository whose root (git work tree) is ``root``."""
    return _under(root, LAYOUT.register)


def leakage_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.leakage)


def metamorphic_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.metamorphic)


def gates_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.gates)


def locks_dir(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.locks)


def gitignore_path(base_dir: Path) -> Path:
    return _under(base_dir, LAYOUT.gitignore)


def shown(kind: Literal["runs", "holdout_records", "register", "leakage", "metamorphic", "gates", "locks"]) -> str:
    """How a place in the store is named to people and in git paths: ``.oloproof/holdout``."""
    return f"{LAYOUT.store}/{getattr(LAYOUT, kind)}"


def is_outcome_record_name(name: str) -> bool:
    """A holdout outcome record's file name (``read-0003-0123456789ab.json``)."""
    return name.startswith("read-") and name.endswith(".json")


def outcome_record_name(seq: int, entry_hash: str) -> str:
    return f"read-{seq:04d}-{entry_hash[:12]}.json"


# --------------------------------------------------------------------------- stamps and digests


def short_digest(digest: str, *, ellipsis: bool = False) -> str:
    """A digest as people see it: ``sha256:`` and 12 hex digits (``…`` after them with ``ellipsis``).
    A value without an algorithm prefix keeps its first 12 characters."""
    algo, sep, hexpart = digest.partition(":")
    text = f"{algo}:{hexpart[:12]}" if sep else digest[:12]
    return text + ("…" if ellipsis and len(text) < len(digest) else "")


def utc_stamp(style: Literal["seconds", "micro", "compact"] = "seconds", *, now: datetime | None = None) -> str:
    """The one way a UTC time is written into evidence and reports.

    ``seconds``: ``2026-12-01T21:19:18Z`` (reads, records, reports); ``micro``: with microseconds
    (a run's start and end, which order runs); ``compact``: ``20261201T211918Z`` (in run ids).
    """
    moment = (now or datetime.now(timezone.utc)).astimezone(timezone.utc)
    if style == "micro":
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if style == "compact":
        return moment.strftime("%Y%m%dT%H%M%SZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
