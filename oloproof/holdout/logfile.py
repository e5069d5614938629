"""The READS.log file: verified reads, and appends under its lock (format: ``oloproof.holdout.log``).

Appends are one ``write`` of the whole entry (and its newline) on an ``O_APPEND`` descriptor,
then ``fsync``, under an exclusive ``flock`` on ``<log>.lock``. Concurrent writers serialise on the
lock; whatever the caller does inside a transaction (check the budget, score the system) is atomic
with respect to every other writer of the log. A crash or kill mid-write can leave at most a final
line without its newline — a torn tail, which the next append cuts off, unless it begins a read
(``read N | ``): that one counts as a read and is kept, its line ended by the next append.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from oloproof.errors import StoreError
from oloproof.files import atomic_write_bytes, locked, read_evidence
from oloproof.holdout.log import (
    PREV_CHARS,
    BudgetEntry,
    LogError,
    LogState,
    ReadEntry,
    ReadFields,
    RepairEntry,
    Witness,
    check_fields,
    new_log_prefix,
    read_opening,
    render_budget,
    render_genesis,
    render_read,
    render_repair,
)
from oloproof.holdout.verify import verify
from oloproof.store import MAX_LOG_BYTES


def _busy(lock_path: Path) -> bool:
    """True when another process holds the lock right now (only to tell the person we wait)."""
    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing releases a lock we got
    return False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class ReadsLog:
    """One READS.log file: verified reads, and appends under its lock.

    ``witnesses`` returns the outcome records of past reads (checked against the log on every
    verification, and again under the lock before an append).
    """

    def __init__(self, path: Path, *, shown: str, witnesses: Callable[[], Sequence[Witness]] = tuple) -> None:
        self.path = path
        self.shown = shown
        self.witnesses = witnesses
        self.lock_path = path.with_name(path.name + ".lock")

    def read_bytes(self) -> bytes | None:
        """The log's bytes (None: no log yet). A symlink, a FIFO, a device or a log over
        ``MAX_LOG_BYTES`` is refused (exit 2): the log is evidence, read as the regular file it is."""
        try:
            return read_evidence(self.path, self.shown, expected="a holdout reads log", max_bytes=MAX_LOG_BYTES)
        except StoreError as exc:
            raise LogError(str(exc)) from None

    def state(self) -> LogState:
        return verify(self.read_bytes(), shown=self.shown, witnesses=self.witnesses())

    @contextlib.contextmanager
    def transaction(self, *, on_wait: Callable[[], None] | None = None) -> Iterator[Transaction]:
        """Hold the log's lock; the transaction's ``state`` is read and verified under it.

        Whatever the caller decides and computes inside the block (the budget check, the
        scoring) is atomic with respect to every other writer of this log.
        """
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            os.close(os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644))
        except OSError as exc:
            raise LogError(f"{self.shown}: cannot create the reads log or its lock ({exc.strerror or exc})") from None
        if on_wait is not None and _busy(self.lock_path):
            on_wait()
        with locked(self.lock_path):
            data = self.read_bytes()
            witnesses = tuple(self.witnesses())
            yield Transaction(self, verify(data, shown=self.shown, witnesses=witnesses), data or b"", witnesses)


class Transaction:
    """At most one append, made while the lock is held."""

    def __init__(self, log: ReadsLog, state: LogState, data: bytes, witnesses: tuple[Witness, ...]) -> None:
        self.log = log
        self.state = state
        self._data = data
        self._witnesses = witnesses
        self._done = False
        self._size = state.size  # what the file holds now; checked before every write under the lock
        self._created = False

    def append_read(self, fields: ReadFields, *, when: str) -> ReadEntry:
        """Append read number ``state.next_seq`` whole; refused (LogError) on a log that does not verify."""
        started = self.begin_read(fields, when=when)
        return started.finish(fields)

    def begin_read(self, fields: ReadFields, *, when: str) -> StartedRead:
        """Write the first part of read number ``state.next_seq`` (up to ``n=``: who, when, commit,
        version, set), durably, before the system sees a case. Until ``finish`` ends the line, the
        log holds an *interrupted read*, which counts against the budget: a read killed while the
        system runs is never free. Refused (LogError) on a log that does not verify."""
        state = self.state
        if not state.intact:
            raise LogError(f"{state.shown} fails its hash-chain check; no read may be appended")
        check_fields(fields)  # a field the log cannot hold is refused before anything is written
        prefix, head, lines_before = self._genesis(when)
        seq = state.next_seq
        opening = read_opening(seq, when, fields)
        self._append(prefix + opening)
        line = state.lines + lines_before + 1
        return StartedRead(self, seq=seq, when=when, head=head, opening=opening, line=line)

    def append_budget(self, *, when: str, who: str, commit: str, budget: int | None, reason: str) -> BudgetEntry:
        """Record a change of the budget in force; refused (LogError) on a log that does not verify."""
        state = self.state
        if not state.intact:
            raise LogError(f"{state.shown} fails its hash-chain check; repair it before changing the budget")
        prefix, head, lines_before = self._genesis(when)
        text = render_budget(when, who=who, commit=commit, budget=budget, reason=reason, prev=head)
        self._append(prefix + text + "\n")
        return BudgetEntry(
            when=when,
            who=who,
            commit=commit,
            budget=budget,
            reason=reason,
            prev=head[:PREV_CHARS],
            hash=text[-64:],
            line=state.lines + lines_before + 1,
            text=text,
        )

    def append_repair(
        self, *, when: str, who: str, commit: str, reason: str, reads_used: int | None = None
    ) -> RepairEntry:
        """Acknowledge every problem of a broken log, keeping its lines as they are."""
        state = self.state
        if state.intact:
            raise LogError(f"{state.shown} verifies: there is nothing to repair")
        used = max(state.reads_used, reads_used or 0)
        in_log = {entry.hash for entry in state.reads}
        orphans = tuple(sorted({witness.hash[:12] for witness in self._witnesses if witness.hash not in in_log}))
        found = "; ".join(str(problem) for problem in state.problems)
        kept = self._data[: state.append_offset] + (b"\n" if state.need_newline else b"")
        prefix = "" if kept else new_log_prefix(when)
        covers = hashlib.sha256(kept + prefix.encode()).hexdigest()
        text = render_repair(
            when, who=who, commit=commit, reads_used=used, orphans=orphans, found=found, reason=reason, covers=covers
        )
        self._append(prefix + text + "\n")
        return RepairEntry(
            when=when,
            who=who,
            commit=commit,
            reads_used=used,
            orphans=orphans,
            found=found,
            reason=reason,
            prev=covers[:PREV_CHARS],
            hash=text[-64:],
            line=state.lines + prefix.count("\n") + 1,
            text=text,
        )

    def _genesis(self, when: str) -> tuple[str, str, int]:
        """Before the first entry of a new log: create it with its header and genesis in one step.
        Returns what is still to append before the entry (the header and genesis when the file
        already held something), the hash the entry follows, and the lines that come before it."""
        if self.state.head is not None:
            return "", self.state.head, 0
        prefix, head = new_log_prefix(when), render_genesis(when)[-64:]
        lines_before = prefix.count("\n")
        if self._create(prefix):  # a new log appears whole (header and genesis) or not at all
            prefix = ""
        return prefix, head, lines_before

    def _create(self, prefix: str) -> bool:
        """Create a log that does not exist yet (or is empty) with its header and genesis in one
        step (a temporary file renamed into place), so a crash can never leave half a genesis.
        Returns False when the file already holds something (then the prefix is appended)."""
        if self.state.size:
            return False
        data = prefix.encode("utf-8")
        atomic_write_bytes(self.log.path, data)
        self._size = len(data)
        self._created = True
        return True

    def _append(self, text: str, *, resume: bool = False) -> None:
        """Write ``text``; ``resume`` continues the line a ``begin_read`` left open."""
        if self._done and not resume:
            raise LogError("one append per transaction")
        self._done = True
        state = self.state
        data = text.encode("utf-8")
        if state.need_newline and not resume and not self._created:
            data = b"\n" + data
        created = not self.log.path.exists()
        try:
            self._write(data)
        except OSError as exc:
            raise LogError(
                f"{state.shown}: the append failed ({exc.strerror or exc}); the log still verifies"
            ) from None
        if created:
            with contextlib.suppress(OSError):
                dir_fd = os.open(self.log.path.parent, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)

    def _write(self, data: bytes) -> None:
        state = self.state
        try:
            fd = os.open(self.log.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            why = exc.strerror or exc
            raise LogError(f"{state.shown}: cannot append ({why}); a symlink is never written") from None
        try:
            if os.fstat(fd).st_size != self._size:
                raise LogError(f"{state.shown} changed while its lock was held (edited by hand?); nothing was appended")
            if state.torn_bytes and self._size == state.size and not self._created:
                # Cut a torn final line (an interrupted append that was not a read) before writing after it.
                os.ftruncate(fd, state.append_offset)
            _write_all(fd, data)
            os.fsync(fd)
            self._size = os.fstat(fd).st_size
        finally:
            os.close(fd)


class StartedRead:
    """A read whose first part is in the log (see ``Transaction.begin_read``)."""

    def __init__(self, tx: Transaction, *, seq: int, when: str, head: str, opening: str, line: int) -> None:
        self._tx = tx
        self.seq = seq
        self.when = when
        self._head = head
        self._opening = opening
        self.line = line
        self.finished = False

    def finish(self, fields: ReadFields) -> ReadEntry:
        """End the line with the score, interval, budget, reason and hash."""
        text = render_read(self.seq, self.when, fields, self._head)
        if not text.startswith(self._opening):
            raise LogError("a read's fields changed between its start and its end; the interrupted read still counts")
        self._tx._append(text[len(self._opening) :] + "\n", resume=True)
        self.finished = True
        return ReadEntry(
            seq=self.seq,
            when=self.when,
            fields=fields,
            prev=self._head[:PREV_CHARS],
            hash=text[-64:],
            line=self.line,
            text=text,
        )
