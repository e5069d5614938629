"""Trace identity: versions, the split's commitment and a digest of the installed sources.

The source digest hashes this package's own ``.py`` files (every one of them bears behaviour:
corpus, rules, scanner, reward, splits, the taskset wrapper), read from where the package was
imported: sorted relative POSIX paths, each framed with its content, CRLF turned into LF so a
Windows checkout hashes the same. ``importlib.metadata.files()`` is not used: for an editable
install it lists only a ``.pth`` file.
"""

from __future__ import annotations

import hashlib
import platform
from pathlib import Path
from typing import Any

import regex

from redaction_pressure import versions
from redaction_pressure.framing import frame
from redaction_pressure.splits import TaskRef, split_commitment

SOURCE_DOMAIN = "redaction-pressure/source-digest/v1"
PACKAGE_DIR = Path(__file__).resolve().parent


def source_files(root: Path = PACKAGE_DIR) -> list[Path]:
    return sorted((p for p in root.rglob("*.py") if "__pycache__" not in p.parts), key=lambda p: p.relative_to(root).as_posix())


def source_digest(root: Path = PACKAGE_DIR) -> str:
    digest = hashlib.sha256(frame(SOURCE_DOMAIN))
    for path in source_files(root):
        content = path.read_bytes().replace(b"\r\n", b"\n")
        digest.update(frame(path.relative_to(root).as_posix(), content))
    return "sha256:" + digest.hexdigest()


def identity(ref: TaskRef, *, root: Path = PACKAGE_DIR) -> dict[str, Any]:
    """What a task and its trace record about the environment that built and scored it."""
    out: dict[str, Any] = {
        "environment": versions.ENVIRONMENT,
        "environment_version": versions.ENVIRONMENT_VERSION,
        "corpus_version": versions.CORPUS_VERSION,
        "reward_schema_version": versions.REWARD_SCHEMA_VERSION,
        "split": ref.split,
        "split_commitment": split_commitment(ref.split, commitment=ref.secret_commitment),
        "source_sha256": source_digest(root),
        # What else decides a score: the regex engine runs every rule, Python runs the rest.
        "regex_version": regex.__version__,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
    }
    if ref.is_private:
        out["secret_commitment"] = ref.secret_commitment
    return out
