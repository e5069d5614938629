"""The near pass over a JSONL training file split across forked workers (``--jobs``).

The test set is indexed once, in this process, before any worker is forked: every worker inherits
the index (and Python's hash seed, which the n-gram table is keyed by) and scans one byte range of
the file, cut right after a newline. A worker sends back only ``NearCounts`` (case indices,
similarity figures, row counts), never a row; the parts are disjoint, so their counts add up to
the one-process pass's exactly. Compressed files, CSV and Parquet are read by one process.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from oloproof.errors import DataError
from oloproof.leakage.near import (
    NearCounts,
    NearPlan,
    NearResult,
    NearScanner,
    finish,
    iter_rows,
    json_rows,
    picture_error,
    prepare,
)
from oloproof.leakage.scan import split_ranges

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from oloproof.leakage.plan import MatchPlan
    from oloproof.leakage.readers import TrainingSource
    from oloproof.leakage.spec import NearOptions
    from oloproof.testset import TestSet

WORKER_EXIT_S = 5.0
POLL_S = 0.2


def find_near(
    testset: TestSet,
    plan: MatchPlan,
    source: TrainingSource,
    options: NearOptions,
    *,
    case_root: Path,
    exact: set[int],
    skip_malformed: bool,
    jobs: int = 1,
) -> NearResult:
    """Stream the training file once more and collect the cases that are near copies of rows
    (JSONL split over ``jobs`` forked workers)."""
    near = prepare(testset, plan, options, case_root=case_root)
    if jobs > 1 and source.format == "jsonl" and source.compression is None:
        counts = scan_parallel(near, source, skip_malformed=skip_malformed, jobs=jobs)
    else:
        scanner = NearScanner(near)
        failed = scanner.scan_all(iter_rows(source), skip_malformed=skip_malformed)
        if failed:
            raise picture_error(source.display, failed[0])
        counts = scanner.counts()
    return finish(near, counts, exact)


def _worker(connection: Connection, scanner: NearScanner, path: str, start: int, end: int, skip: bool) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        with open(path, "rb") as handle:
            handle.seek(start)
            failed = scanner.scan_all(json_rows(handle, start=start, end=end), skip_malformed=skip)
        result: tuple[str, Any] = ("ok", (scanner.counts(), failed))
    except KeyboardInterrupt:
        return
    except OSError as exc:
        result = ("oserror", type(exc).__name__)
    except BaseException as exc:
        result = ("crash", type(exc).__name__)  # the type only: a message may quote a row
    connection.send(result)
    connection.close()


def scan_parallel(near: NearPlan, source: TrainingSource, *, skip_malformed: bool, jobs: int) -> NearCounts:
    """Scan ``source`` (uncompressed JSONL) in ``jobs`` byte ranges; the counts of the whole file."""
    import multiprocessing  # lazy: start-up
    from multiprocessing.connection import wait  # lazy: start-up

    scanner = NearScanner(near)  # indexed once, inherited by every worker
    ranges = split_ranges(source.path, source.size, jobs)
    context = multiprocessing.get_context("fork")
    processes: list[Any] = []
    pending: dict[Connection, int] = {}
    results: list[tuple[NearCounts, tuple[int, ...]] | None] = [None] * len(ranges)
    finished = False
    try:
        for slot, (start, end) in enumerate(ranges):
            receiver, sender = context.Pipe(duplex=False)
            process = context.Process(
                target=_worker,
                args=(sender, scanner, str(source.path), start, end, skip_malformed),
                daemon=True,
                name=f"oloproof-near-{slot}",
            )
            process.start()
            sender.close()
            processes.append(process)
            pending[receiver] = slot
        while pending:
            for ready in wait(list(pending), timeout=POLL_S):
                receiver = cast("Connection", ready)
                slot = pending.pop(receiver)
                try:
                    status, payload = receiver.recv()
                except EOFError:
                    raise RuntimeError(
                        f"near-duplicate worker {slot} died (exit code {processes[slot].exitcode})"
                    ) from None
                if status == "oserror":
                    raise DataError(source.display, None, f"cannot read the file ({payload})")
                if status == "crash":
                    raise RuntimeError(f"near-duplicate worker {slot} failed ({payload})")
                results[slot] = payload
        finished = True
    finally:
        for process in processes:
            if finished:
                process.join(WORKER_EXIT_S)
            if process.is_alive():
                process.terminate()
            process.join()
    total = NearCounts()
    for part in results:
        assert part is not None
        counts, failed = part
        if failed:  # the first unreadable picture in file order, numbered as one process numbers it
            raise picture_error(source.display, total.rows + failed[0])
        total.merge(counts)
    return total
