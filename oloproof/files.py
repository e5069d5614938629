"""Files: reading config files with clear errors, how paths are shown, and writes that a crash,
an interrupt or a second writer can never leave half done."""

from __future__ import annotations

import contextlib
import errno
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

from oloproof.errors import ConfigError, DataError, OloproofError, StoreError, UsageError
from oloproof.store import store_name


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


def open_regular(
    path: str | os.PathLike[str],
    shown: str,
    *,
    expected: str = "a file",
    data: bool = False,
    follow_symlinks: bool = True,
    max_bytes: int | None = None,
) -> BinaryIO:
    """Open a file to read, refusing at once anything that is not a regular file.

    A FIFO, a device (``/dev/zero``, ``/dev/stdin``) or a socket could block forever or never end;
    opening without blocking and checking the open file itself (not its name, which could change
    in between) means no read ever starts on one. Symlinks are followed unless ``follow_symlinks``
    is False (evidence: a symlink is refused). ``max_bytes``: a larger file is refused before it is
    read. ``data``: problems are ``DataError`` (a data file, for the action's annotations), else
    ``UsageError``.
    """

    def error(message: str) -> OloproofError:
        return DataError(shown, None, message) if data else UsageError(f"{shown}: {message}")

    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= os.O_NOFOLLOW
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise error("file not found") from None
    except IsADirectoryError:
        raise error(f"is a directory, expected {expected}") from None
    except ValueError:  # a NUL byte: no file has that name
        raise error("a path cannot contain a NUL byte") from None
    except OSError as exc:
        if not follow_symlinks and os.path.islink(path):
            raise error(f"is a symbolic link, expected {expected} (a symlink is never read as evidence)") from None
        raise error(f"cannot read it ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if stat.S_ISDIR(mode):
            raise error(f"is a directory, expected {expected}")
        if not stat.S_ISREG(mode):
            raise error(f"is {_kind(mode)}, expected {expected} (only regular files are read)")
        if max_bytes is not None and info.st_size > max_bytes:
            raise error(f"is {_size(info.st_size)}, more than the {_size(max_bytes)} {expected} can hold; not read")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _size(n: int) -> str:
    return f"{n / 1024 / 1024:.0f} MiB" if n >= 1024 * 1024 else f"{n} bytes"


def read_regular(
    path: str | os.PathLike[str],
    shown: str,
    *,
    expected: str = "a file",
    data: bool = False,
    follow_symlinks: bool = True,
    max_bytes: int | None = None,
) -> bytes:
    """The bytes of a regular file (see ``open_regular``). With ``max_bytes``, a file that grows
    past it while being read is refused too."""
    with open_regular(
        path, shown, expected=expected, data=data, follow_symlinks=follow_symlinks, max_bytes=max_bytes
    ) as handle:
        try:
            content = handle.read() if max_bytes is None else handle.read(max_bytes + 1)
        except OSError as exc:
            message = f"cannot read it ({exc.strerror or exc})"
            raise (DataError(shown, None, message) if data else UsageError(f"{shown}: {message}")) from None
    if max_bytes is not None and len(content) > max_bytes:
        message = f"grew past the {_size(max_bytes)} {expected} can hold while it was read; not read"
        raise DataError(shown, None, message) if data else UsageError(f"{shown}: {message}")
    return content


def read_evidence(path: str | os.PathLike[str], shown: str, *, expected: str, max_bytes: int) -> bytes | None:
    """An evidence file's bytes (a READS.log, the holdout register, an outcome record), or None when
    it does not exist. Evidence is a regular file read as it is: a symlink (it could point at a
    rewritten copy, or at a file outside the repository), a FIFO, a device or a file over
    ``max_bytes`` is refused (``StoreError``, exit 2), never followed or read to the end."""
    if "\0" in os.fspath(path):
        raise StoreError(f"{shown}: a path cannot contain a NUL byte")
    try:
        return read_regular(path, shown, expected=expected, follow_symlinks=False, max_bytes=max_bytes)
    except UsageError as exc:
        if not os.path.lexists(path):
            return None
        raise StoreError(str(exc)) from None


def read_text(file: Path, shown: str) -> str:
    """A config file's text; a missing or unreadable file is a usage error, bad UTF-8 names the line."""
    raw = read_regular(file, shown, expected="a YAML file")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(shown, line, "", "not valid UTF-8") from None


def check_report_paths(
    paths: Iterable[str | os.PathLike[str] | None], *, inputs: Iterable[Path] = (), within: Path | None = None
) -> None:
    """Refuse, before any work, a report path that would destroy something or could not be written.

    A report is never written over an input of the command (release.yaml, the policy, the test
    set, the holdout, the training file, a labels or seeds file, the system's files), into
    ``.oloproof/`` (the evidence: runs, holdout outcome records, the register, locks), to a
    directory, a block device or a socket, or twice by one command. A path is judged by what it
    points to: a symlink by its target (``/dev/stdout`` by the pipe or terminal behind it), so a
    link to an input or into ``.oloproof/`` is refused like the file itself. A character device or
    a FIFO is accepted: ``write_report`` writes into it, never replaces it. A symlink to a file is
    followed only within the link's own directory (a checkout's ``report.json -> ~/.bashrc`` is
    refused), and with ``within`` (the action's workspace) no report lands outside that directory.
    The directory of a new file is created now, so that a verdict is never computed and then lost.
    """
    protected: dict[tuple[int, int], Path] = {}
    resolved_inputs: dict[Path, Path] = {}
    input_dirs: dict[Path, Path] = {}  # a declared directory (a model folder): nothing inside it is replaced
    for item in inputs:
        with contextlib.suppress(OSError, ValueError):  # a path that cannot exist cannot be overwritten
            resolved_inputs[Path(os.path.realpath(item))] = Path(item)
            found = os.stat(item)
            protected[(found.st_dev, found.st_ino)] = Path(item)
            if stat.S_ISDIR(found.st_mode):
                input_dirs[Path(os.path.realpath(item))] = Path(item)
    seen: dict[object, str] = {}
    for path in paths:
        if path is None:
            continue
        shown = os.fspath(path)
        if "\0" in str(shown):
            raise UsageError(f"{shown!r}: a path cannot contain a NUL byte")
        info: os.stat_result | None
        try:
            info = os.stat(path)  # follows every link, /proc's magic ones (/dev/stdout) included
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise UsageError(f"{shown}: cannot check it ({exc.strerror or exc})") from None
        target = Path(os.path.realpath(path))
        streamed = info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode))
        key: object = (info.st_dev, info.st_ino) if info is not None else target
        if key in seen and not (info is not None and _is_devnull(info)):
            raise UsageError(f"{shown}: named for two reports ({seen[key]} and {shown}); give each its own file")
        seen[key] = shown
        if info is not None and not (stat.S_ISREG(info.st_mode) or streamed):
            raise UsageError(f"{shown}: is {_kind(info.st_mode)}; give a file name for the report")
        pipe_or_null = info is not None and (stat.S_ISFIFO(info.st_mode) or _is_devnull(info))
        if os.path.islink(path) and not pipe_or_null:  # /dev/stderr -> /dev/pts/3 stays inside /dev
            home = Path(os.path.realpath(os.path.dirname(os.path.abspath(path))))
            if target != home and home not in target.parents:
                raise UsageError(
                    f"{shown}: is a symlink to {target}, outside its own directory; a report follows a link only "
                    "within it (name the target itself to write there)"
                )
        if streamed:
            continue  # written into, never replaced; not an input, nothing under .oloproof/ is a device
        if within is not None:
            root = Path(os.path.realpath(within))
            if target != root and root not in target.parents:
                raise UsageError(f"{shown}: resolves to {target}, outside {within}; reports are written inside it")
        if target in resolved_inputs:
            raise UsageError(
                f"{shown}: is an input of this command ({resolved_inputs[target]}); a report never replaces an input"
            )
        inside = next((given for folder, given in input_dirs.items() if folder in target.parents), None)
        if inside is not None:
            raise UsageError(
                f"{shown}: is inside {display_path(inside)}/, an input of this command (a declared directory: "
                "everything in it is the system's); a report never replaces an input"
            )
        if store_name() in target.parts[:-1]:
            raise UsageError(
                f"{shown}: is inside {store_name()}/, where oloproof keeps its evidence (runs, holdout records, the "
                "register); write reports elsewhere"
            )
        if info is not None:
            same = protected.get((info.st_dev, info.st_ino))
            if same is not None:
                raise UsageError(f"{shown}: is an input of this command ({same}); a report never replaces an input")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"{shown}: cannot create its directory ({exc.strerror or exc})") from None


def _is_devnull(info: os.stat_result) -> bool:
    try:
        null = os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(info.st_mode) and info.st_rdev == null.st_rdev


def same_file_as_fd(path: str | os.PathLike[str], fd: int) -> bool:
    """Whether ``path`` names the open file ``fd`` (``/dev/stdout`` or ``/proc/self/fd/1`` for 1)."""
    try:
        named, open_file = os.stat(path), os.fstat(fd)
    except (OSError, ValueError):
        return False
    return (named.st_dev, named.st_ino) == (open_file.st_dev, open_file.st_ino)


def same_file_as_path(path: str | os.PathLike[str], other: str | os.PathLike[str]) -> bool:
    """Whether two paths name one existing file (through any links), or resolve to one new path."""
    try:
        one, two = os.stat(path), os.stat(other)
    except FileNotFoundError:
        return os.path.realpath(path) == os.path.realpath(other)
    except (OSError, ValueError):
        return False
    return (one.st_dev, one.st_ino) == (two.st_dev, two.st_ino)


def write_report(path: str | os.PathLike[str], data: bytes, *, append: bool = False) -> None:
    """Write a report where ``path`` points, never replacing the path itself.

    A regular file (or a new one) is replaced atomically; when ``path`` is a symlink, its target is
    (the link stays a link). ``append``: added to the end of the file instead (GitHub's step
    summary, which the runner reads after the step). A character device, a FIFO or a pipe
    (``/dev/stdout`` in a pipeline, ``/dev/null``) is written into directly; a FIFO nobody reads is
    an error at once, not a wait. Anything else (a directory, a socket) is refused. Raises
    ``OSError`` (with ``UsageError`` for the refusals).
    """
    shown = os.fspath(path)
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and (stat.S_ISCHR(info.st_mode) or stat.S_ISFIFO(info.st_mode)):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                raise UsageError(f"{shown}: is a FIFO (named pipe) that nothing is reading") from None
            raise
        try:
            os.set_blocking(fd, True)
            _write_all(fd, data)
        finally:
            os.close(fd)
        return
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise UsageError(f"{shown}: is {_kind(info.st_mode)}; give a file name for the report")
    target = Path(os.path.realpath(path))
    if append:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o666)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return
    atomic_write_bytes(target, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


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
