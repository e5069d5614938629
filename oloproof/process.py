"""Running a command that answers JSONL cases: the system under test, or a judge.

The command reads one JSON object per line on stdin and writes one JSON object per line
(with the same ``id``) on stdout. It is called once per batch, in its own process group so
a timeout or Ctrl-C kills everything it started. Nothing passes through a shell.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from oloproof.jsonl import MAX_DEPTH, dumps_line, has_duplicate_keys, loads, too_deep

STDERR_TAIL_BYTES = 4096
UTF8_BOM = b"\xef\xbb\xbf"  # some editors start a UTF-8 file with it; it is not part of the first object
KILL_GRACE_S = 2.0  # after a kill, how long to collect what the system already wrote
STDOUT_PER_CASE = 1 << 20  # stdout a batch may hold, per case in it ...
STDOUT_MIN_CAP = 64 << 20  # ... and at least this much
READ_CHUNK = 1 << 16


@dataclass(slots=True, kw_only=True)
class Collected:
    """What came back for a list of requests: outputs, and why the rest did not."""

    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    case_errors: dict[str, str] = field(default_factory=dict)  # case id -> reason
    run_errors: list[str] = field(default_factory=list)  # problems not tied to one case
    failure: str | None = None  # crash or timeout: the run is failed
    exit_statuses: list[int] = field(default_factory=list)
    stderr_tail: str = ""
    duration_s: float = 0.0
    # Case id -> its batch's wall time (the command started, fed, read and exited) divided by the
    # batch's number of cases, in ms: a latency for systems that report none (process start included).
    case_wall_ms: dict[str, float] = field(default_factory=dict)
    batch_size: int = 0  # the cases per call the wall times were measured with

    @property
    def status(self) -> str:
        if self.failure is not None:
            return "failed"
        if self.case_errors or self.run_errors:
            return "partial"
        return "ok"


# What a system (or judge) must never see from the gate's own environment: the action's inputs
# (the GitHub token among them, also inside the composite action's OLOPROOF_ACTION_INPUTS) and the
# runner's file commands, through which it could set the step's outputs, write the job summary, or
# change later steps' environment.
_PRIVATE_PREFIXES = ("INPUT_", "ACTIONS_")
_PRIVATE_NAMES = frozenset(
    {
        "OLOPROOF_ACTION_INPUTS",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_STATE",
    }
)


def is_private(name: str) -> bool:
    """Whether an environment variable is the gate's own, never a system's (see ``_PRIVATE_NAMES``)."""
    return name.upper() in _PRIVATE_NAMES or name.upper().startswith(_PRIVATE_PREFIXES)


def system_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a system command runs with: the gate's, minus what is private to it."""
    source = os.environ if environ is None else environ
    return {name: value for name, value in source.items() if not is_private(name)}


def command_argv(command: str | Sequence[str]) -> list[str]:
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if argv and argv[0] in ("python", "python3") and shutil.which(argv[0]) is None:
        # A machine with only python3 (or a venv without `python`): use the interpreter
        # running oloproof rather than failing on the name.
        argv[0] = sys.executable
    return argv


class CommandNotFound(Exception):
    pass


def collect_lines(lines: Sequence[bytes], expected_ids: Sequence[str], into: Collected, *, source: str) -> None:
    """Match output lines to requested ids; record missing, duplicate, extra and malformed ones.

    ``source`` names where the lines came from ("stdout of batch 2", "preds.jsonl") so every
    problem can be traced to its line.
    """
    wanted = set(expected_ids)
    seen: dict[str, int] = {}
    duplicates: set[str] = set()
    got: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(lines, start=1):
        stripped = raw.strip().removeprefix(UTF8_BOM) if number == 1 else raw.strip()
        if not stripped:
            continue
        try:
            obj = loads(stripped)  # integers of any size kept exact (a label beyond 2**64)
        except ValueError:
            into.run_errors.append(f"{source}:{number}: not valid JSON")
            continue
        if too_deep(stripped):
            into.run_errors.append(f"{source}:{number}: nested more than {MAX_DEPTH} levels deep")
            continue
        twice = has_duplicate_keys(stripped, obj)
        if twice is not None:
            into.run_errors.append(f"{source}:{number}: the key {json.dumps(twice)} is given twice in one object")
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            into.run_errors.append(f"{source}:{number}: expected a JSON object with a string 'id'")
            continue
        case_id = obj["id"]
        if case_id not in wanted:
            into.run_errors.append(f"{source}:{number}: output for unknown case id '{case_id}'")
            continue
        if case_id in seen:
            duplicates.add(case_id)
            continue
        seen[case_id] = number
        got[case_id] = obj
    for case_id in expected_ids:
        if case_id in duplicates:
            into.case_errors[case_id] = f"duplicate outputs ({source}:{seen[case_id]} and later); none is used"
        elif case_id in got:
            into.outputs[case_id] = got[case_id]
        elif case_id not in into.case_errors:
            into.case_errors[case_id] = "no output"


def run_batches(
    command: str | Sequence[str],
    requests: Sequence[dict[str, Any]],
    *,
    cwd: Path,
    timeout_s: float,
    batch_size: int,
    on_batch: Callable[[int, int], None] | None = None,
) -> Collected:
    """Run ``command`` once per batch of ``requests`` (each holds an ``id``)."""
    argv = command_argv(command)
    if not argv:
        raise CommandNotFound("the command is empty")
    result = Collected(batch_size=batch_size)
    started = time.monotonic()
    total = len(requests)
    for offset in range(0, total, batch_size):
        batch = requests[offset : offset + batch_size]
        ids = [str(item["id"]) for item in batch]
        # U+2028/U+2029 are legal raw in JSON strings but split lines for readers using
        # str.splitlines(); escaped they mean the same and cannot break a system's parsing.
        payload = (
            b"".join(dumps_line(item) for item in batch)
            .replace(b"\xe2\x80\xa8", b"\\u2028")
            .replace(b"\xe2\x80\xa9", b"\\u2029")
        )
        number = offset // batch_size + 1
        batch_started = time.monotonic()
        stdout, stderr, status, problem = _invoke(
            argv, payload, cwd=cwd, timeout_s=timeout_s, cap=stdout_cap(len(batch))
        )
        per_case_ms = (time.monotonic() - batch_started) * 1000.0 / len(batch)
        result.case_wall_ms.update(dict.fromkeys(ids, round(per_case_ms, 3)))
        result.exit_statuses.append(status)
        tail = (result.stderr_tail.encode("utf-8") + stderr)[-STDERR_TAIL_BYTES:]
        result.stderr_tail = tail.decode("utf-8", "replace")
        collect_lines(stdout.splitlines(), ids, result, source=f"stdout of batch {number}")
        if problem is not None:
            result.failure = f"batch {number}: {problem}"
            for case_id in ids:
                if case_id not in result.outputs:
                    result.case_errors[case_id] = problem
            # Later batches are not attempted: a crashed or hung system is not retried.
            for item in requests[offset + batch_size :]:
                result.case_errors[str(item["id"])] = "not run: an earlier batch failed"
            break
        if on_batch is not None:
            on_batch(min(offset + batch_size, total), total)
    result.duration_s = time.monotonic() - started
    return result


def stdout_cap(batch: int) -> int:
    """Bytes a batch's stdout may hold: 1 MiB per case, at least 64 MiB. A system that prints
    without end fails its run (the reason says so) instead of filling the gate's memory."""
    return max(STDOUT_MIN_CAP, STDOUT_PER_CASE * batch)


def _invoke(
    argv: list[str], payload: bytes, *, cwd: Path, timeout_s: float, cap: int = STDOUT_MIN_CAP
) -> tuple[bytes, bytes, int, str | None]:
    # stderr goes to a file, not a pipe: a verbose system cannot fill memory, and only the tail is
    # kept. stdout is read here, in chunks, up to ``cap`` bytes, against one deadline for the batch.
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                start_new_session=True,
                env=system_environment(),
            )
        except FileNotFoundError:
            raise CommandNotFound(f"command not found: '{argv[0]}'") from None
        except PermissionError:
            raise CommandNotFound(f"command is not executable: '{argv[0]}'") from None
        try:
            stdout, problem = _converse(proc, payload, timeout_s=timeout_s, cap=cap)
        except BaseException:
            _kill_group(proc)
            _drain_after_kill(proc)
            raise
        if problem is None and proc.returncode != 0:
            how = (
                f"killed by signal {-proc.returncode}"
                if proc.returncode < 0
                else f"exited with status {proc.returncode}"
            )
            problem = f"system {how}"
        return stdout, _tail(errors), proc.returncode if proc.returncode is not None else -9, problem


def _feed(stdin: IO[bytes], payload: bytes) -> None:
    """Write the batch to the system's stdin and close it (a system that stops reading, or dies,
    just ends the writing)."""
    try:
        stdin.write(payload)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError, ValueError):
            stdin.close()


def _converse(proc: subprocess.Popen[bytes], payload: bytes, *, timeout_s: float, cap: int) -> tuple[bytes, str | None]:
    """The system's stdout for this batch and the problem that ended it, if any: a timeout (the
    group killed), or more than ``cap`` bytes of output (the group killed)."""
    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + timeout_s
    writer = threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True)
    writer.start()
    chunks: list[bytes] = []
    size = 0
    fd = proc.stdout.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                _kill_group(proc)
                return b"".join(chunks) + _drain_after_kill(proc, limit=cap - size), f"timed out after {timeout_s:g} s"
            if not selector.select(min(remaining, 1.0)):
                continue
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:
                break  # every writer of stdout closed it
            size += len(chunk)
            if size > cap:
                _kill_group(proc)
                _drain_after_kill(proc, limit=0)
                return b"".join(chunks), (
                    f"wrote more than {cap // (1 << 20)} MiB on stdout for one batch; the run was stopped "
                    "(one JSON line per case is expected)"
                )
            chunks.append(chunk)
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        _drain_after_kill(proc, limit=0)
        return b"".join(chunks), f"timed out after {timeout_s:g} s"
    writer.join(timeout=KILL_GRACE_S)
    return b"".join(chunks), None


def _drain_after_kill(proc: subprocess.Popen[bytes], *, limit: int = STDOUT_MIN_CAP) -> bytes:
    """What the killed group still had on stdout (at most ``limit`` bytes), without waiting on a
    grandchild that escaped the group and still holds stdout open (it could otherwise hang the
    gate past its timeout)."""
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + KILL_GRACE_S
    stdout = proc.stdout
    if stdout is not None and not stdout.closed:
        with selectors.DefaultSelector() as selector:
            selector.register(stdout.fileno(), selectors.EVENT_READ)
            while size < limit and (remaining := deadline - time.monotonic()) > 0:
                if not selector.select(remaining):
                    break
                chunk = os.read(stdout.fileno(), READ_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk[: limit - size])
                size += len(chunk)
        stdout.close()
    if proc.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            proc.stdin.close()
    try:
        proc.wait(timeout=max(deadline - time.monotonic(), 0.01))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    return b"".join(chunks)


def _tail(handle: IO[bytes]) -> bytes:
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - STDERR_TAIL_BYTES))
    return handle.read()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
