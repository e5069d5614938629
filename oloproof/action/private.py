"""Keeping the action's token and the runner's file commands from the system it tests.

A process's initial environment stays readable at ``/proc/<pid>/environ`` for its whole life
(deleting a variable from ``os.environ`` does not change it), and the system under test runs as
the same user as the action (root, in its container). So the entry point, before anything else:

1. makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``): without ``CAP_SYS_PTRACE`` (which
   a Docker container does not get by default) no other process, whatever its user, can read its
   ``/proc/<pid>/environ`` or ``mem``;
2. when the environment holds a private variable (``INPUT_*`` with the token, ``ACTIONS_*``, the
   runner's ``GITHUB_OUTPUT``/``GITHUB_STEP_SUMMARY``/``GITHUB_ENV``/``GITHUB_PATH``/``GITHUB_STATE``,
   ``GITHUB_TOKEN``), re-executes itself with an environment without them, handing their values
   over on an anonymous in-memory file whose descriptor is read and closed at once. Its
   ``/proc/<pid>/environ`` then holds no secret even for a reader with ``CAP_SYS_PTRACE``.

What this does not do: a process with ``CAP_SYS_PTRACE`` (root outside a container, or a
container started with ``--cap-add SYS_PTRACE`` or ``--privileged``) can still read the action's
memory, where the token must live to call the Checks API; and a system running as the same user
can still write any file the action can, the runner's file-command files included, if it finds
them on disk. Run an untrusted system in its own sandbox.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Sequence

from oloproof.process import is_private

HANDOVER = "OLOPROOF_PRIVATE_FD"  # the descriptor holding the private variables, after the re-exec
PR_SET_DUMPABLE = 4  # <linux/prctl.h>


def private_environ(argv: Sequence[str] | None = None) -> dict[str, str]:
    """The action's whole environment (private variables included) as a dict, with the process's
    own environment, and so every child's, left without the private variables.

    In the first process this re-executes ``argv`` (default: how Python was started) and does not
    return; the re-executed process gets the values back here.
    """
    no_dumpable()
    handed = _receive(os.environ.pop(HANDOVER, None))
    if handed is not None:
        return {**os.environ, **handed}
    private = {name: value for name, value in os.environ.items() if is_private(name)}
    if private:
        _reexec(private, list(argv if argv is not None else sys.orig_argv))
        # exec failed: keep going, with at least the process's own environment scrubbed
        for name in private:
            os.environ.pop(name, None)
    return {**os.environ, **private}


def no_dumpable() -> None:
    """``prctl(PR_SET_DUMPABLE, 0)``: this process's ``/proc`` files (environ, mem) are readable
    only with ``CAP_SYS_PTRACE``. Reset by the kernel when a child executes a program."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # lazy: start-up

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)


def _reexec(private: dict[str, str], argv: list[str]) -> None:
    payload = json.dumps(private).encode("utf-8")
    try:
        fd = os.memfd_create("oloproof-private", 0)
        os.write(fd, payload)
        os.lseek(fd, 0, os.SEEK_SET)
        os.set_inheritable(fd, True)
    except (OSError, AttributeError):
        return
    env = {name: value for name, value in os.environ.items() if not is_private(name)}
    env[HANDOVER] = str(fd)
    with contextlib.suppress(OSError):
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, argv, env)
    os.close(fd)


def _receive(value: str | None) -> dict[str, str] | None:
    """The private variables handed over on descriptor ``value``; None when there are none."""
    if value is None or not value.isdigit():
        return None
    fd = int(value)
    chunks: list[bytes] = []
    try:
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        data = json.loads(b"".join(chunks))
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return {name: text for name, text in data.items() if isinstance(text, str) and is_private(name)}
