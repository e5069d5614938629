"""git, asked read-only and bounded in time: who is making a change, at which commit.

Never ``GITHUB_*``: in GitHub Actions the action (``oloproof.action``) says who and where.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

GIT_TIMEOUT_S = 10.0


def git_output(cwd: Path, *args: str, timeout_s: float = GIT_TIMEOUT_S) -> str | None:
    """``git ARGS`` run in ``cwd``: its stripped stdout, or None when git fails, is missing or is slow."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out else None


def git_bytes(cwd: Path, *args: str, timeout_s: float = GIT_TIMEOUT_S) -> bytes | None:
    """``git ARGS`` run in ``cwd``: its stdout as bytes (a file's content, a -z listing), or None."""
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, timeout=timeout_s, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


def local_identity(base_dir: Path, environ: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(who, commit) of a change made from this machine: ``git config user.name``, else $USER
    ($USERNAME), else "unknown"; HEAD of the repository holding ``base_dir`` (12 hex digits), else
    "unknown"."""
    env = os.environ if environ is None else environ
    who = git_output(base_dir, "config", "user.name") or env.get("USER") or env.get("USERNAME") or "unknown"
    return who, head_commit(base_dir) or "unknown"


def head_commit(base_dir: Path) -> str | None:
    return git_output(base_dir, "rev-parse", "--short=12", "HEAD")
