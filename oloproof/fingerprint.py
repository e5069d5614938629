"""A fingerprint of the files a system runs with: its weights, prompts and code.

A run is about the files it ran: a model swapped under the same ``system.version`` must never be
judged on the old model's run. The fingerprint is the SHA-256 of every file's relative path and
content digest (sorted, length-framed), and of the text of every symbolic link on the way; the
per-file digests are kept too, so a changed run can be told apart by name ("model/weights.npz
changed"). Directories are walked (``.oloproof/``, ``.git/`` and caches skipped).

Symbolic links are followed (DVC, git-annex and the Hugging Face cache store models as links): a
link's entry is the digest of its target's content, and its text is recorded beside it, so
retargeting a link changes the fingerprint even when the new target has the same bytes. What
cannot be hashed is recorded as a fact instead of a digest, never a crash or a wait: a link to
nothing, a link that loops, a link to a directory that holds it (a cycle), a FIFO or a device.
The walk is bounded (files, entries visited, depth): a tree too large is a usage error that says
to name the model's files.

Cost: every file is read once per fingerprint, streamed in 1 MiB chunks (a 10 GB model is never
held in memory); a file reached through several links is read once. No digest is cached across
gates: a cache keyed by (path, size, mtime, inode) is fooled by a file rewritten with its mtime
set back (``touch -d``, ``rsync -t``, ``cp -p``, a checkout), timestamps are coarse (a rewrite in
the same clock tick keeps them), and the cache would live where a pull request can edit it.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oloproof.errors import UsageError
from oloproof.store import store_name

SKIPPED_DIRS = frozenset({store_name(), ".git", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"})
MAX_FILES = 20_000  # in all; a directory larger than this is named as an artifact by mistake, most likely
MAX_ENTRIES = 200_000  # directory entries visited (links that fan out reach the same files many times)
MAX_DEPTH = 128  # directories below an artifact
MAX_HOPS = 40  # links followed in one chain (the kernel's own limit)
CHUNK = 1 << 20

DANGLING = "not hashed: a link to a path that does not exist"
LOOP = "not hashed: a link that loops"
CYCLE = "not hashed: a link to a directory that holds it (a cycle)"
SPECIAL = "not hashed: not a regular file"
KERNEL = "not hashed: a file of the kernel (/proc, /sys, /dev)"
KERNEL_DIRS = ("/proc/", "/sys/", "/dev/")  # /proc/kcore is a "regular file" of 128 TB; never read one
LINKS_MARK = b"\0links"  # no path holds a NUL: the link records cannot be mistaken for a file's

# What counts as code, not a model: scripts by suffix, and interpreters (named by path, in a bin/).
CODE_SUFFIXES = frozenset(
    ".py .pyc .pyi .pyx .sh .bash .zsh .js .mjs .cjs .ts .rb .pl .r .jl .lua .php .java .go .rs .c .cc .cpp .h "
    ".bat .ps1 .cmd".split()
)
INTERPRETER = re.compile(r"(python|pypy|node|deno|bun|ruby|perl|bash|sh|zsh|rscript|julia|java|php|lua)[0-9.]*(\.exe)?")


@dataclass(frozen=True, slots=True, kw_only=True)
class Fingerprint:
    digest: str  # "sha256:..." over the sorted (path, file digest) pairs, then the link texts
    files: dict[str, str]  # shown path -> "sha256:..." of its content, or a fact ("not hashed: ...")
    links: dict[str, str] = field(default_factory=dict)  # shown path of a symbolic link -> its text

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"digest": self.digest, "files": dict(sorted(self.files.items()))}
        if self.links:
            data["links"] = dict(sorted(self.links.items()))
        return data

    @classmethod
    def from_json(cls, data: Any) -> Fingerprint | None:
        if not isinstance(data, dict) or not isinstance(data.get("digest"), str):
            return None
        files, links = data.get("files"), data.get("links")
        return cls(
            digest=data["digest"],
            files=dict(files) if isinstance(files, dict) else {},
            links=dict(links) if isinstance(links, dict) else {},
        )

    def changes(self, now: Fingerprint) -> str:
        """What differs from ``now``, in a few words: "model/weights.npz changed; b.txt added"."""
        parts: list[str] = []
        for name in sorted(set(self.files) | set(now.files) | set(self.links) | set(now.links)):
            before, after = self.files.get(name), now.files.get(name)
            if before == after and self.links.get(name) == now.links.get(name):
                continue
            parts.append(f"{name} {'added' if before is None else 'removed' if after is None else 'changed'}")
        shown = "; ".join(parts[:5]) + (f"; and {len(parts) - 5} more" if len(parts) > 5 else "")
        return shown or "the set of files differs"

    @property
    def code_only(self) -> bool:
        """Every file covered is code (a script, an interpreter): no model, weights or prompt is in it."""
        return all(is_code(name) for name in self.files)

    def covered(self, *, limit: int = 6) -> tuple[str, ...]:
        """The files covered, shortened for a report: project files first, a directory of several
        files as "model/ (31 files)", a path outside the project by its last two parts, at most
        ``limit`` items and "and N more"."""
        names = sorted(self.files, key=lambda name: (name.startswith("/"), name))
        groups: dict[str, list[str]] = {}
        for name in names:
            top = name.split("/", 1)[0] + "/" if len(names) > limit and "/" in name and name[0] != "/" else name
            groups.setdefault(top, []).append(name)
        shown = [
            _short(items[0]) if len(items) == 1 else f"{key} ({len(items)} files)" for key, items in groups.items()
        ]
        return tuple(shown[:limit]) + ((f"and {len(shown) - limit} more",) if len(shown) > limit else ())


def is_code(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    if Path(base).suffix.lower() in CODE_SUFFIXES:
        return True
    return name.startswith("/") and (INTERPRETER.fullmatch(base.lower()) is not None or "/bin/" in name)


def _short(name: str) -> str:
    if not name.startswith("/"):
        return name
    parts = name.rsplit("/", 2)
    return "…/" + "/".join(parts[-2:]) if len(parts) == 3 and parts[0] else name


def shown_name(text: str) -> str:
    """A file name or link text as recorded: bytes that are not UTF-8 (kept by the file system as
    surrogates) written ``\\xff``, and a backslash then doubled, so two names never record alike
    and the record is always valid JSON."""
    if "\\" not in text and not any("\udc80" <= char <= "\udcff" for char in text):
        return text
    return text.replace("\\", "\\\\").encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _frame(data: bytes) -> bytes:
    return len(data).to_bytes(8, "big") + data


def _file_digest(path: Path, expected: os.stat_result) -> str:
    """The content digest, streamed; opened without waiting (a FIFO swapped in is refused, not read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as handle:
        now = os.fstat(handle.fileno())
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (expected.st_dev, expected.st_ino):
            raise OSError(errno.EAGAIN, "the file changed while it was read")
        hasher = hashlib.sha256()
        while chunk := handle.read(CHUNK):
            hasher.update(chunk)
    return "sha256:" + hasher.hexdigest()


def link_text(path: Path) -> str:
    """The text of a link, and of the links it leads to: "../store/latest -> blob-a"."""
    texts: list[str] = []
    current, seen = path, {path}
    for _ in range(MAX_HOPS):
        try:
            text = os.readlink(current)
        except OSError:
            break
        texts.append(text)
        current = current.parent / text
        if current in seen:  # a loop: its text once is enough
            break
        seen.add(current)
    return " -> ".join(texts)


@dataclass(frozen=True, slots=True)
class Entry:
    path: Path  # as reached (links not resolved)
    rel: str  # relative to the walk's root, "/"-separated
    st: os.stat_result | None  # the target's status; None with a fact
    fact: str | None
    link: str | None  # the link's text when the entry is a link


def _follow(path: Path) -> tuple[os.stat_result | None, str | None]:
    try:
        return os.stat(path), None
    except FileNotFoundError:
        return None, DANGLING
    except OSError as exc:
        return None, LOOP if exc.errno == errno.ELOOP else f"not hashed: {exc.strerror or exc}"


def walk(root: Path, *, descend: Callable[[str], bool] | None = None) -> Iterator[Entry]:
    """Every entry below directory ``root``, links followed, each directory's entries sorted by name.

    A link to a directory that holds the entry (the root or one of the directories on the way,
    or one above them) is a cycle: yielded with a fact, not walked. ``descend(rel)`` False keeps
    the walk out of a directory. Raises UsageError past MAX_ENTRIES entries or MAX_DEPTH levels."""
    real_root = os.path.realpath(root)
    stack: list[tuple[Path, str, tuple[str, ...]]] = [(root, "", (real_root,))]
    visited = 0
    while stack:
        directory, prefix, holders = stack.pop()
        if len(holders) > MAX_DEPTH:
            raise UsageError(f"{directory}: more than {MAX_DEPTH} directories deep; name the model's files instead")
        try:
            names = sorted(os.listdir(directory))
        except FileNotFoundError:
            continue  # removed while walking
        except OSError as exc:
            raise UsageError(f"{directory}: a directory of the system cannot be read ({exc.strerror or exc})") from None
        visited += len(names)
        if visited > MAX_ENTRIES:
            raise UsageError(
                f"the system's files: more than {MAX_ENTRIES} entries under {root} (links that lead to the same "
                "directories many times?): name the files that make the model in system.artifacts"
            )
        below: list[tuple[Path, str, tuple[str, ...]]] = []
        for name in names:
            path, rel = directory / name, f"{prefix}{name}"
            try:
                is_link = stat.S_ISLNK(os.lstat(path).st_mode)
            except OSError:
                continue  # removed while walking
            st, fact = _follow(path)
            text = link_text(path) if is_link else None
            if st is not None and stat.S_ISDIR(st.st_mode):
                if name in SKIPPED_DIRS:
                    continue
                real = os.path.realpath(path)
                if is_link and any(holder == real or holder.startswith(real.rstrip("/") + "/") for holder in holders):
                    yield Entry(path, rel, None, CYCLE, text)
                    continue
                yield Entry(path, rel, st, None, text)
                if descend is None or descend(rel):
                    below.append((path, rel + "/", (*holders, real)))
                continue
            if st is not None and not stat.S_ISREG(st.st_mode):
                st, fact = None, SPECIAL
            elif st is not None and is_link and os.path.realpath(path).startswith(KERNEL_DIRS):
                st, fact = None, KERNEL
            yield Entry(path, rel, st, fact, text)
        stack.extend(reversed(below))


class _Collector:
    def __init__(self, base_dir: Path) -> None:
        self.base_dir = base_dir
        self.files: dict[str, str] = {}
        self.links: dict[str, str] = {}
        self.by_inode: dict[tuple[int, int], str] = {}  # a file reached through several links is read once

    def shown(self, path: Path) -> str:
        try:
            return shown_name(path.relative_to(self.base_dir).as_posix())
        except ValueError:
            return shown_name(str(path))

    def add(self, shown: str, path: Path, st: os.stat_result | None, fact: str | None, origin: Path) -> None:
        if len(self.files) >= MAX_FILES and shown not in self.files:
            raise UsageError(
                f"the system's files: more than {MAX_FILES} files (under {origin}): name the files that make the "
                "model (weights, prompts, code) in system.artifacts instead of a large directory"
            )
        if st is None:
            self.files[shown] = fact or SPECIAL
            return
        key = (st.st_dev, st.st_ino)
        if key not in self.by_inode:
            try:
                self.by_inode[key] = _file_digest(path, st)
            except OSError as exc:
                raise UsageError(f"{shown}: a file of the system cannot be read ({exc.strerror or exc})") from None
        self.files[shown] = self.by_inode[key]

    def links_above(self, path: Path) -> None:
        """Record the links among the directories between the project and ``path`` (a file named
        through a linked directory, ``model/snapshot/weights.json``)."""
        try:
            parts = path.relative_to(self.base_dir).parts[:-1]
        except ValueError:
            return
        current = self.base_dir
        for part in parts:
            current = current / part
            if current.is_symlink():
                self.links[self.shown(current)] = shown_name(link_text(current))

    def top(self, path: Path) -> None:
        shown = self.shown(path)
        self.links_above(path)
        if path.is_symlink():
            self.links[shown] = shown_name(link_text(path))
        st, fact = _follow(path)
        if st is None:
            raise UsageError(f"{shown}: {(fact or DANGLING).removeprefix('not hashed: ')}")
        if stat.S_ISREG(st.st_mode):
            kernel = os.path.realpath(path).startswith(KERNEL_DIRS)  # named on a command line: recorded, not read
            self.add(shown, path, None if kernel else st, KERNEL if kernel else None, path)
            return
        if not stat.S_ISDIR(st.st_mode):
            raise UsageError(f"{shown}: a file of the system is not a regular file or a directory")
        for entry in walk(path):
            name = f"{shown}/{shown_name(entry.rel)}" if shown != "." else shown_name(entry.rel)
            if entry.link is not None:
                self.links[name] = shown_name(entry.link)
            if entry.st is None or not stat.S_ISDIR(entry.st.st_mode):
                self.add(name, entry.path, entry.st, entry.fact, path)


def fingerprint(paths: Iterable[Path], *, base_dir: Path) -> Fingerprint:
    """The fingerprint of ``paths`` (files and directories, links followed); names are shown
    relative to ``base_dir`` when inside it. Unreadable files are a usage error (they cannot be
    vouched for)."""
    collector = _Collector(base_dir)
    for path in paths:
        collector.top(path)
    hasher = hashlib.sha256()
    for name, digest in sorted(collector.files.items()):
        hasher.update(_frame(name.encode("utf-8")))
        hasher.update(_frame(digest.encode("utf-8")))
    if collector.links:  # absent before links were followed: a fingerprint without links keeps its digest
        hasher.update(_frame(LINKS_MARK))
        for name, text in sorted(collector.links.items()):
            hasher.update(_frame(name.encode("utf-8")))
            hasher.update(_frame(text.encode("utf-8")))
    return Fingerprint(digest="sha256:" + hasher.hexdigest(), files=collector.files, links=collector.links)


# --------------------------------------------------------------------------- artifact patterns

GLOB_CHARS = frozenset("*?[")


def is_pattern(value: str) -> bool:
    return any(char in value for char in GLOB_CHARS)


def _component(part: str) -> str:
    out, index = [], 0
    while index < len(part):
        char = part[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and (end := part.find("]", index + 2)) != -1:
            body = part[index + 1 : end]
            body = "^" + body[1:] if body.startswith("!") else body
            out.append("[" + body.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def _translate(parts: list[str]) -> re.Pattern[str]:
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:.*/)?"
        else:
            regex += _component(part) + ("" if last else "/")
    try:
        return re.compile(regex)
    except re.error:
        return re.compile(re.escape("/".join(parts)))  # an odd bracket: taken literally


def expand(base_dir: Path, pattern: str) -> list[Path]:
    """The files and directories a glob in ``system.artifacts`` matches (``*``, ``?``, ``[...]``
    within a name, ``**`` across directories), links followed, sorted; relative to ``base_dir``."""
    parts = os.path.expanduser(pattern).split("/")
    first = next(index for index, part in enumerate(parts) if is_pattern(part))
    fixed = "/".join(parts[:first]) or ("/" if pattern.startswith("/") else ".")
    root = Path(fixed) if Path(fixed).is_absolute() else base_dir / fixed
    if not root.is_dir():
        return []
    regex = _translate([part for part in parts[first:] if part != ""] or ["**"])
    found: list[Path] = []
    matched: set[str] = set()

    def descend(rel: str) -> bool:
        return rel not in matched

    for entry in walk(root, descend=descend):
        if regex.fullmatch(entry.rel):
            matched.add(entry.rel)
            found.append(entry.path)
    return found


def artifact_paths(base_dir: Path, value: str) -> list[Path]:
    """What one entry of ``artifacts`` names: the path, or what a glob matches (a path that exists
    as written is taken as written, even with ``[`` in its name)."""
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else base_dir / path
    if not is_pattern(value) or os.path.lexists(path):
        return [path]
    return expand(base_dir, value)


def artifact_problem(base_dir: Path, value: str) -> str | None:
    """Why an entry of ``artifacts`` cannot be fingerprinted, checked when the config is loaded."""
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else base_dir / path
    if is_pattern(value) and not os.path.lexists(path):
        return None if expand(base_dir, value) else "the pattern matches no file"
    if not os.path.lexists(path):
        return "no such file or directory"
    st, fact = _follow(path)
    if st is None:
        return f"a link to '{link_text(path)}', which {'does not exist' if fact == DANGLING else 'loops'}"
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return "not a regular file or a directory"
    if os.path.realpath(path).startswith(KERNEL_DIRS):
        return KERNEL.removeprefix("not hashed: ")
    return None
