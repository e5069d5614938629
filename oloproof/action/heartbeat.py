"""A line in the job's log while the system under test runs: a log with no line for ten minutes
looks like a hang, and GitHub shows no progress bar. Every ``OLOPROOF_HEARTBEAT_S`` seconds
(default 30) the action says how many cases are answered so far and for how long it has run; the
line is the action's own words and numbers, never text from a file or the system."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from oloproof.action.session import Session

DEFAULT_S = 30.0


def interval_s(environ: Mapping[str, str]) -> float:
    """``OLOPROOF_HEARTBEAT_S`` when it is a number in [0.05, 3600], else ``DEFAULT_S``."""
    raw = environ.get("OLOPROOF_HEARTBEAT_S", "")
    try:
        value = float(raw) if raw else DEFAULT_S
    except ValueError:
        return DEFAULT_S
    return value if 0.05 <= value <= 3600 else DEFAULT_S


@contextmanager
def heartbeat(session: Session, label: str = "running the gate") -> Iterator[Callable[[int, int], None]]:
    """Yields the gate's ``on_batch`` callback; a thread says the progress until the block ends."""
    counts = [0, 0]
    stop = threading.Event()
    started = time.monotonic()
    every = interval_s(session.environ)

    def on_batch(done: int, total: int) -> None:
        counts[0], counts[1] = done, total

    def beat() -> None:
        while not stop.wait(every):
            minutes, seconds = divmod(int(time.monotonic() - started), 60)
            done, total = counts
            so_far = f"{done:,}/{total:,} cases answered, " if total else ""
            session.print(f"oloproof: {label}: still working, {so_far}{minutes}m {seconds:02d}s")

    thread = threading.Thread(target=beat, name="oloproof-heartbeat", daemon=True)
    thread.start()
    try:
        yield on_batch
    finally:
        stop.set()
        thread.join(timeout=5)
