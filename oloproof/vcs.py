"""git, asked read-only and bounded in time: who is making a change, at which commit.

Never ``GITHUB_*``: in GitHub Actions the action (``oloproof.action``) says who and where.
"""

from __future__ import annotations

import os
import re
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


def head_sha(base_dir: Path) -> str | None:
    """The full commit id of HEAD of the repository holding ``base_dir``: git's answer, else (the
    action's image has no git) what the repository's own files say; None when neither tells (no
    repository, no commit yet, a layout this reader does not know)."""
    return git_output(base_dir, "rev-parse", "--verify", "--quiet", "HEAD^{commit}") or head_from_files(base_dir)


_COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_REF = re.compile(r"refs/[A-Za-z0-9._/-]+")


def head_from_files(base_dir: Path) -> str | None:
    """HEAD read from ``.git`` without git: a detached HEAD's commit id (what actions/checkout leaves
    for a ``ref:`` that is a sha), or the loose or packed ref it names. Read only, never guessed:
    anything else (no ``.git``, an odd ref, a missing ref) is None."""
    try:
        git_dir = _git_dir(base_dir)
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _COMMIT_ID.fullmatch(head):
            return head
        ref = head.removeprefix("ref:").strip() if head.startswith("ref:") else ""
        if not _REF.fullmatch(ref) or ".." in ref:
            return None
        common = git_dir / "commondir"  # a worktree: its branches live in the main repository's .git
        roots = [git_dir, git_dir / common.read_text(encoding="utf-8").strip()] if common.is_file() else [git_dir]
        return next((sha for root in roots if (sha := _ref_in(root, ref)) is not None), None)
    except (OSError, UnicodeDecodeError):
        return None


def _git_dir(base_dir: Path) -> Path | None:
    """The ``.git`` of the repository holding ``base_dir`` (a ``gitdir:`` file followed), or None."""
    start = base_dir.resolve()
    found = next((d / ".git" for d in (start, *start.parents) if (d / ".git").exists()), None)
    if found is None or found.is_dir():
        return found
    text = found.read_text(encoding="utf-8").strip()  # a worktree or a submodule: "gitdir: <path>"
    return found.parent / text.removeprefix("gitdir:").strip() if text.startswith("gitdir:") else None


def _ref_in(root: Path, ref: str) -> str | None:
    loose = root / ref
    if loose.is_file():
        sha = loose.read_text(encoding="utf-8").strip()
        return sha if _COMMIT_ID.fullmatch(sha) else None
    packed = root / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            sha, _, name = line.partition(" ")
            if name == ref and _COMMIT_ID.fullmatch(sha):
                return sha
    return None
