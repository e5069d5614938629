"""One top-level handler for every way in — the CLI and the GitHub Action: what ends a command
becomes its exit code, decided here once.

- an ``OloproofError`` (a usage, configuration or data error; a refused store) → its own code (2);
- SIGTERM (a cancelled CI job, ``timeout``, ``docker stop``) → 143, Ctrl-C → 130: both raise in the
  main thread, so the same clean-up runs (systems killed, nothing half-written kept);
- a closed stdout (``BrokenPipeError``) → 0: the reader went away, which is not the tool breaking;
- a file name the operating system refuses as too long (``ENAMETOOLONG``) → 2: every name oloproof
  opens comes from an argument or a config value, and ``Path.exists()`` raises it rather than
  answering False, so it is caught here once instead of at every test of a path;
- anything else → 70, a bug in oloproof.

"The gate said no" (1, 3, 4, 5) is the body's own return value and never passes through here.
Each entry point says what happened its own way through a ``Presenter`` (stderr lines for the
CLI; annotations, a summary and outputs for the action).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import threading
from collections.abc import Callable
from typing import Any, Protocol

from oloproof.errors import ExitCode, OloproofError, Terminated, UsageError


class Presenter(Protocol):
    def error(self, exc: OloproofError) -> None: ...

    def stopped(self, code: ExitCode) -> None: ...  # INTERRUPTED or TERMINATED

    def internal(self, exc: BaseException) -> None: ...

    def broken_pipe(self) -> None: ...


def run_guarded(body: Callable[[], int], presenter: Presenter) -> int:
    """Run ``body`` and return its exit code, or the code of whatever ended it (see above)."""
    previous = _raise_on_sigterm()
    try:
        return int(body())
    except OloproofError as exc:
        presenter.error(exc)
        return int(exc.exit_code)
    except Terminated:
        presenter.stopped(ExitCode.TERMINATED)
        return int(ExitCode.TERMINATED)
    except KeyboardInterrupt:
        presenter.stopped(ExitCode.INTERRUPTED)
        return int(ExitCode.INTERRUPTED)
    except BrokenPipeError:
        presenter.broken_pipe()
        return int(ExitCode.PASS)
    except OSError as exc:
        if exc.errno != errno.ENAMETOOLONG:
            presenter.internal(exc)
            return int(ExitCode.INTERNAL)
        name = os.fsdecode(exc.filename) if exc.filename is not None else "a path"
        shown = name if len(name) <= 80 else f"{name[:60]}…{name[-16:]}"
        error = UsageError(f"{shown}: file name too long ({len(os.path.basename(name))} characters in its last part)")
        presenter.error(error)
        return int(error.exit_code)
    except Exception as exc:  # the one place that turns bugs into exit 70
        presenter.internal(exc)
        return int(ExitCode.INTERNAL)
    finally:
        _restore(previous)


def where_raised(exc: BaseException) -> str:
    """``file.py:LINE`` of the innermost frame, for a one-line internal-error report."""
    import traceback  # lazy: start-up (only an internal error needs it; 3-5 ms of every command)

    frames = traceback.extract_tb(exc.__traceback__)
    return f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else "?"


def _raise_on_sigterm() -> Any:
    """Turn SIGTERM into ``Terminated`` for the duration of a command (main thread only).
    Returns the previous handler, to restore (None off the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def raise_terminated(signum: int, frame: object) -> None:
        raise Terminated

    return signal.signal(signal.SIGTERM, raise_terminated)


def _restore(previous: Any) -> None:
    if previous is not None:
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(signal.SIGTERM, previous)
