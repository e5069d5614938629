"""Which files under ``.oloproof/`` a pull request adds, changes or removes, for the reviewer.

Nothing the pull request puts there is trusted (``trust``: runs come from the base commit, holdout
evidence must extend the base's, leakage records are named), but the reviewer reads the check run
and the comment, not the diff of a directory of JSON: every file that differs is listed, beside
the changed settings. Compared with git: the checkout's files (tracked, and untracked ones that are
not ignored) against the base commit's tree; no file is read.
"""

from __future__ import annotations

from pathlib import Path

from oloproof.vcs import git_bytes

CHANGES = {b"A": "added", b"D": "removed", b"M": "changed", b"T": "changed (its type)"}


def store_changes(top: Path, base_sha: str, folders: list[str]) -> list[tuple[str, str]] | None:
    """``(path, change)`` for every file under ``folders`` (POSIX paths from the repository's top)
    that differs from ``base_sha``: added, changed, removed; None when git cannot tell."""
    out: dict[str, str] = {}
    for folder in dict.fromkeys(folders):
        scope = "." if folder in ("", ".") else folder + "/"
        raw = git_bytes(top, "diff", "--no-renames", "--no-ext-diff", "--name-status", "-z", base_sha, "--", scope)
        untracked = git_bytes(top, "ls-files", "--others", "--exclude-standard", "-z", "--", scope)
        if raw is None or untracked is None:
            return None
        fields = raw.split(b"\0")
        for status, path in zip(fields[0::2], fields[1::2], strict=False):
            if path:
                out.setdefault(path.decode("utf-8", "replace"), CHANGES.get(status[:1], "changed"))
        for path in untracked.split(b"\0"):
            if path:
                out.setdefault(path.decode("utf-8", "replace"), "added")
    return sorted(out.items())
