"""Files: reading config files with clear errors, how paths are shown, and writes that a crash,
an interrupt or a second writer can never leave half done."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from oloproof.errors import ConfigError, DataError, OloproofError, UsageError

STORE_DIR = ".oloproof"  # the evidence directory beside release.yaml (runs, records), committed


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_regular(path: str | os.PathLike[str], shown: str, *, expected: str = "a file", data: bool = False) -> BinaryIO:
    """Open a file to read, refusing at once anything that is not a regular file.

    A FIFO, a device (``/dev/zero``, ``/dev/stdin``) or a socket could block forever or never end;
    opening without blocking and checking the open file itself (not its name, which could change
    in between) means no read ever starts on one. Symlinks are followed. ``data``: problems are
    ``DataError`` (a data file, for the action's annotations), else ``UsageError``.
    """

    def error(message: str) -> OloproofError:
        return DataError(shown, None, message) if data else UsageError(f"{shown}: {message}")

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error("file not found") from None
    except IsADirectoryError:
        raise error(f"is a directory, expected {expected}") from None
    except OSError as exc:
        raise error(f"cannot read it ({exc.strerror or exc})") from None
    except ValueError:  # a NUL byte: no file has such a name
        raise error("a path cannot contain a NUL byte") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise error(f"is a directory, expected {expected}")
        if not stat.S_ISREG(mode):
            raise error(f"is {_kind(mode)}, expected {expected} (only regular files are read)")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], shown: str, *, expected: str = "a file", data: bool = False) -> bytes:
    """The bytes of a regular file (see ``open_regular``)."""
    with open_regular(path, shown, expected=expected, data=data) as handle:
        try:
            return handle.read()
        except OSError as exc:
            message = f"cannot read it ({exc.strerror or exc})"
            raise (DataError(shown, None, message) if data else UsageError(f"{shown}: {message}")) from None


def read_text(file: Path, shown: str) -> str:
    """A config file's text; a missing or unreadable file is a usage error, bad UTF-8 names the line."""
    raw = read_regular(file, shown, expected="a YAML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(shown, line, "", "not valid UTF-8") from None


def check_report_paths(paths: Iterable[str | os.PathLike[str] | None], *, inputs: Iterable[Path] = ()) -> None:
    """Refuse, before any work, a report path that would destroy something or could not be written.

    A report is never written over an input of the command (release.yaml, the policy, the test
    set, the holdout, the training file, a labels or seeds file, the system's files), into
    ``.oloproof/`` (the evidence: runs, holdout outcome records, the register, locks), over
    something that is not a regular file (a directory, a FIFO, a device: as root, replacing
    ``/dev/null`` replaces the device node), or twice by one command. Its directory is created
    now, so that a verdict is never computed and then lost.
    """
    protected: dict[tuple[int, int], Path] = {}
    resolved_inputs: dict[Path, Path] = {}
    for item in inputs:
        with contextlib.suppress(OSError, ValueError):  # a path that cannot exist cannot be overwritten
            resolved_inputs[Path(os.path.realpath(item))] = Path(item)
            found = os.stat(item)
            protected[(found.st_dev, found.st_ino)] = Path(item)
    seen: dict[Path, str] = {}
    for path in paths:
        if path is None:
            continue
        shown = os.fspath(path)
        if "\0" in str(shown):
            raise UsageError(f"{shown!r}: a path cannot contain a NUL byte")
        target = Path(os.path.realpath(path))
        if target in seen:
            raise UsageError(f"{shown}: named for two reports ({seen[target]} and {shown}); give each its own file")
        seen[target] = shown
        if target in resolved_inputs:
            raise UsageError(
                f"{shown}: is an input of this command ({resolved_inputs[target]}); a report never replaces an input"
            )
        if STORE_DIR in target.parts[:-1]:
            raise UsageError(
                f"{shown}: is inside {STORE_DIR}/, where oloproof keeps its evidence (runs, holdout records, the "
                "register); write reports elsewhere"
            )
        info: os.stat_result | None
        try:
            info = os.stat(target)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise UsageError(f"{shown}: cannot check it ({exc.strerror or exc})") from None
        if info is not None:
            if not stat.S_ISREG(info.st_mode):
                raise UsageError(f"{shown}: is {_kind(info.st_mode)}; give a file name for the report")
            same = protected.get((info.st_dev, info.st_ino))
            if same is not None:
                raise UsageError(f"{shown}: is an input of this command ({same}); a report never replaces an input")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{shown}: cannot create its directory ({exc.strerror or exc})") from None


def display_path(file: Path) -> str:
    """How a file is named to people: relative to the working directory when that is shorter."""
    try:
        relative = os.path.relpath(file)
    except ValueError:  # pragma: no cover - different drive on Windows
        return str(file)
    return relative if not relative.startswith("../../") else str(file)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a mix."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would have.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_dir(final: Path, fill: Callable[[Path], None]) -> None:
    """Build a directory under a temporary name, then rename it into place in one step.

    ``fill(tmpdir)`` writes the files. If it raises (or the process is interrupted) the
    temporary directory is removed and ``final`` never appears half-written.
    """
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp creates 0700
        fill(tmp)
        for child in tmp.iterdir():
            if child.is_file():
                with open(child, "rb") as handle:
                    os.fsync(handle.fileno())
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(final.parent)


@contextlib.contextmanager
def locked(lock_path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive advisory lock (``flock``) on ``lock_path`` for the block.

    The lock is released by the kernel if the process dies, so a crash never leaves it held.
    """
    path = Path(lock_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


# --------------------------------------------------------------------------- sealed records

SEAL_KEY = "digest"


def seal(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its content digest added (``"digest": "sha256:..."`` over the canonical JSON
    of everything else). A record is sealed when written and checked whenever it is read, so an
    edit by hand is caught; it is integrity, not authenticity (anyone can recompute it)."""
    body = {key: value for key, value in data.items() if key != SEAL_KEY}
    return {**body, SEAL_KEY: "sha256:" + hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()}


def seal_problem(data: Any) -> str | None:
    """Why a loaded record fails its seal, or None when its digest matches its content."""
    if not isinstance(data, dict):
        return "not a JSON object"
    stored = data.get(SEAL_KEY)
    if not isinstance(stored, str):
        return "it has no content digest (written by an older oloproof, or by hand)"
    body = {key: value for key, value in data.items() if key != SEAL_KEY}
    actual = "sha256:" + hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    if actual != stored:
        return "its content does not match its digest (it was edited after it was written)"
    return None
