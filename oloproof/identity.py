"""The checker's identity (SPEC §9): its version and a digest of its own sources.

A change of checker between a baseline and today is drift in the measuring apparatus;
the digest is the same for a wheel and an editable install of one commit (tests/install/);
every run and record carries this identity so it can be reported.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from oloproof import __version__

# Renderers and the CLI shape how results look, not what they are; everything else decides.
_NOT_BEHAVIOUR = ("report/", "cli/", "examples/")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckerIdentity:
    version: str
    source_digest: str

    def to_json(self) -> dict[str, str]:
        return {"version": self.version, "source_digest": self.source_digest}


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _in_package(root: Path, file: Path) -> bool:
    """Whether the file is a module that an install ships: every folder down to it is a package.

    A wheel holds only packages (setup.py discovers them), an editable install sees the whole
    source tree: a stray script in a plain folder must not make the two digests differ.
    """
    folder = file.parent
    while folder != root:
        if not (folder / "__init__.py").is_file():
            return False
        folder = folder.parent
    return True


@functools.lru_cache(maxsize=1)
def checker_identity() -> CheckerIdentity:
    root = Path(__file__).resolve().parent
    hasher = hashlib.sha256()
    for file in sorted(root.rglob("*.py")):
        relative = file.relative_to(root).as_posix()
        if relative.startswith(_NOT_BEHAVIOUR) or not _in_package(root, file):
            continue
        hasher.update(_frame(relative.encode()))
        hasher.update(_frame(file.read_bytes().replace(b"\r\n", b"\n")))
    return CheckerIdentity(version=__version__, source_digest="sha256:" + hasher.hexdigest())
