"""Files: reading config files with clear errors, how paths are shown, and writes that a crash,
an interrupt or a second writer can never leave half done."""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from oloproof.errors import ConfigError, UsageError

STORE_DIR = ".oloproof"  # the evidence directory beside release.yaml (runs, records), committed


def read_text(file: Path, shown: str) -> str:
    """A config file's text; a missing or unreadable file is a usage error, bad UTF-8 names the line."""
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{shown}: is a directory, expected a YAML file") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(shown, line, "", "not valid UTF-8") from None


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
