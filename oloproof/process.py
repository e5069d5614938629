"""Running a command that answers JSONL cases: the system under test, or a judge.

The command reads one JSON object per line on stdin and writes one JSON object per line
(with the same ``id``) on stdout. It is called once per batch, in its own process group so
a timeout or Ctrl-C kills everything it started. Nothing passes through a shell.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from oloproof.jsonl import dumps_line

STDERR_TAIL_BYTES = 4096
UTF8_BOM = b"\xef\xbb\xbf"  # some editors start a UTF-8 file with it; it is not part of the first object
KILL_GRACE_S = 2.0  # after a kill, how long to collect what the system already wrote


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

    @property
    def status(self) -> str:
        if self.failure is not None:
            return "failed"
        if self.case_errors or self.run_errors:
            return "partial"
        return "ok"


# What a system (or judge) must never see from the gate's own environment: the action's inputs
# (the GitHub token among them) and the runner's file commands, through which it could set the
# step's outputs, write the job summary, or change later steps' environment.
_PRIVATE_PREFIXES = ("INPUT_", "ACTIONS_")
_PRIVATE_NAMES = frozenset(
    {
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GITHUB_OUTPUT",
        "GITHUB_STEP_SUMMARY",
        "GITHUB_ENV",
        "GITHUB_PATH",
        "GITHUB_STATE",
    }
)


def system_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment a system command runs with: the gate's, minus what is private to it."""
    source = os.environ if environ is None else environ
    return {
        name: value
        for name, value in source.items()
        if name not in _PRIVATE_NAMES and not name.upper().startswith(_PRIVATE_PREFIXES)
    }


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
            obj = orjson.loads(stripped)
        except orjson.JSONDecodeError:
            into.run_errors.append(f"{source}:{number}: not valid JSON")
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
    result = Collected()
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
        stdout, stderr, status, problem = _invoke(argv, payload, cwd=cwd, timeout_s=timeout_s)
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


def _invoke(argv: list[str], payload: bytes, *, cwd: Path, timeout_s: float) -> tuple[bytes, bytes, int, str | None]:
    # stderr goes to a file, not a pipe: a verbose system cannot fill memory, and only the
    # tail is kept.
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
        problem: str | None = None
        try:
            stdout, _ = proc.communicate(payload, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            stdout = _drain_after_kill(proc)
            problem = f"timed out after {timeout_s:g} s"
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


def _drain_after_kill(proc: subprocess.Popen[bytes]) -> bytes:
    """What the killed group wrote, without waiting on a grandchild that escaped the group
    and still holds stdout open (it could otherwise hang the gate past its timeout)."""
    try:
        stdout, _ = proc.communicate(timeout=KILL_GRACE_S)
        return stdout or b""
    except subprocess.TimeoutExpired:
        if proc.stdout is not None:
            proc.stdout.close()
        proc.kill()
        proc.wait()
        return b""


def _tail(handle: IO[bytes]) -> bytes:
    size = handle.seek(0, os.SEEK_END)
    handle.seek(max(0, size - STDERR_TAIL_BYTES))
    return handle.read()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
