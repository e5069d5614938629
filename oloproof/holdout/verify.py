"""Verifying READS.log (format ``oloproof.reads/1``: rendered by ``log``, lines parsed by ``parse``).

Pure: bytes in, a verified ``LogState`` out. A broken log is never rewritten; every problem is
reported with its line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from oloproof.holdout.log import (
    HEADER,
    PREV_CHARS,
    ZERO,
    BudgetEntry,
    LogState,
    Problem,
    ReadEntry,
    RepairEntry,
    Witness,
    entry_hash,
)
from oloproof.holdout.parse import HASH_SUFFIX, HASH_SUFFIX_BYTES, INTERRUPTED, Malformed, body_and_hash, parse_entry


@dataclass(slots=True)
class _Walk:
    reads: list[ReadEntry] = field(default_factory=list)
    repairs: list[RepairEntry] = field(default_factory=list)
    budgets: list[BudgetEntry] = field(default_factory=list)
    interrupted: list[int] = field(default_factory=list)
    budget_logged: bool = False
    logged_budget: int | None = None
    problems: list[Problem] = field(default_factory=list)
    acknowledged: list[Problem] = field(default_factory=list)
    acknowledged_orphans: set[str] = field(default_factory=set)
    counted: int = 0
    head: str | None = None
    genesis_seen: bool = False
    header_reported: bool = False
    hashes: dict[str, int] = field(default_factory=dict)  # 16-hex prefix of every stored hash -> its line


def _describe_link(prev16: str, expected: str | None, line_no: int, walk: _Walk) -> str:
    target = walk.hashes.get(prev16)
    if expected is None:
        return "comes before the genesis line (the start of the log was removed or changed)"
    if target is None:
        return "commits to an entry that is not in the log: an entry before it was removed or edited"
    if target > line_no:
        return f"commits to line {target}, which comes after it: entries were reordered"
    return f"commits to line {target}, not to the entry just before it: entries were inserted, removed or reordered"


def _check_read(entry: ReadEntry, body: str, walk: _Walk) -> list[str]:
    messages: list[str] = []
    expected = walk.head
    if expected is None or entry.prev != expected[:PREV_CHARS]:
        messages.append(_describe_link(entry.prev, expected, entry.line, walk))
    elif entry_hash(expected, body) != entry.hash:
        messages.append(f"read {entry.seq} was edited after it was written (its hash does not match its text)")
    if entry.seq != walk.counted + 1:
        if entry.seq <= walk.counted:
            messages.append(f"read number {entry.seq} repeats or goes back (the log had counted {walk.counted} reads)")
        else:
            missing = (
                f"read {walk.counted + 1}"
                if entry.seq == walk.counted + 2
                else f"reads {walk.counted + 1}-{entry.seq - 1}"
            )
            messages.append(f"read numbers jump from {walk.counted} to {entry.seq}: {missing} is missing")
    return messages


def verify(data: bytes | None, *, shown: str, witnesses: Sequence[Witness] = ()) -> LogState:
    """Verify a log's content (``None``: the file does not exist) against the read records.

    Pure: no files, no clock. Every problem names its line and says what kind of change it shows.
    """
    walk = _Walk()
    notes: list[str] = []
    if not data:
        _check_witnesses(walk, witnesses, log_hashes=set())
        problems = tuple(walk.problems)
        if problems:
            what = "does not exist" if data is None else "is empty"
            problems = (
                Problem(line=None, message=f"the log {what}, but reads were made: it was deleted or reset"),
                *problems,
            )
        return LogState(
            shown=shown, exists=data is not None, problems=problems, reads_used=_reads_used(walk, witnesses)
        )
    complete = data.rfind(b"\n") + 1
    tail = data[complete:]
    raw_lines = data[:complete].split(b"\n")[:-1]
    for number, raw in enumerate([*raw_lines, tail], start=1):
        found = HASH_SUFFIX.search(raw.decode("utf-8", "replace"))
        if found is not None:
            walk.hashes.setdefault(found["hash"][:PREV_CHARS], number)
    view = memoryview(data)  # the bytes before a line, without copying them, for repair entries
    offset = 0
    for number, raw in enumerate(raw_lines, start=1):
        _visit(raw, number, view[:offset], walk)
        offset += len(raw) + 1
    if raw_lines and not walk.genesis_seen and not walk.problems:
        walk.problems.append(Problem(line=None, message="the log has no genesis line"))
    append_offset, need_newline, torn = complete, False, 0
    if tail:
        tail_line = len(raw_lines) + 1
        probe = replace(
            walk,
            reads=list(walk.reads),
            repairs=list(walk.repairs),
            budgets=list(walk.budgets),
            interrupted=list(walk.interrupted),
            problems=list(walk.problems),
            acknowledged=list(walk.acknowledged),
            acknowledged_orphans=set(walk.acknowledged_orphans),
        )
        _visit(tail, tail_line, view[:complete], probe)
        added = len(probe.reads) + len(probe.repairs) + len(probe.budgets) > len(walk.reads) + len(walk.repairs) + len(
            walk.budgets
        )
        if added and not any(problem.line == tail_line for problem in (*probe.problems, *probe.acknowledged)):
            walk = probe
            append_offset, need_newline = len(data), True
            notes.append(f"line {tail_line}: the last entry lacks its newline; the next append adds it")
        elif len(probe.interrupted) > len(walk.interrupted):
            # Half a read: its score may already have been seen, so it counts and is kept.
            walk = probe
            append_offset, need_newline = len(data), True
        else:
            torn = len(tail)
            notes.append(
                f"line {len(raw_lines) + 1}: an incomplete final line ({torn} bytes, an interrupted append) is not an "
                f"entry; "
                "it is ignored, and the next append removes it"
            )
    _check_witnesses(walk, witnesses, log_hashes={entry.hash for entry in walk.reads})
    notes.extend(
        f"line {line}: an interrupted read (stopped after the read began, before its outcome was written: the system "
        "may have seen the holdout): it counts against the budget, and is kept in the log"
        for line in walk.interrupted
    )
    return LogState(
        shown=shown,
        exists=True,
        reads=tuple(walk.reads),
        repairs=tuple(walk.repairs),
        budgets=tuple(walk.budgets),
        interrupted=tuple(walk.interrupted),
        budget_logged=walk.budget_logged,
        logged_budget=walk.logged_budget,
        problems=tuple(walk.problems),
        acknowledged=tuple(walk.acknowledged),
        reads_used=_reads_used(walk, witnesses),
        head=walk.head,
        append_offset=append_offset,
        need_newline=need_newline,
        torn_bytes=torn,
        size=len(data),
        lines=len(raw_lines) + (1 if need_newline else 0),
        notes=tuple(notes),
    )


def _reads_used(walk: _Walk, witnesses: Sequence[Witness]) -> int:
    distinct = {entry.hash for entry in walk.reads} | {witness.hash for witness in witnesses}
    return max(walk.counted, len(distinct))


def _check_witnesses(walk: _Walk, witnesses: Sequence[Witness], *, log_hashes: set[str]) -> None:
    for witness in sorted(witnesses, key=lambda item: (item.seq, item.hash)):
        if witness.hash in log_hashes or witness.hash[:12] in walk.acknowledged_orphans:
            continue
        walk.problems.append(
            Problem(
                line=None,
                message=f"read {witness.seq} (hash {witness.hash[:12]}) has an outcome record ({witness.source}) "
                "but no entry in the log: the entry was deleted, or the log was reset",
            )
        )


def _visit(raw: bytes, line_no: int, before: memoryview, walk: _Walk) -> None:
    def broken(message: str) -> None:
        walk.problems.append(Problem(line=line_no, message=message))

    interrupted = INTERRUPTED.match(bytes(raw))
    if interrupted is not None and HASH_SUFFIX_BYTES.search(bytes(raw)) is None:
        # A read whose append was cut short: not an entry, but a read (it may have shown its score).
        walk.interrupted.append(line_no)
        walk.counted = max(walk.counted + 1, int(interrupted[1]))
        return

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        broken("not valid UTF-8")
        return
    if text.endswith("\r"):
        broken(
            "ends with a carriage return: the file was converted to CRLF line endings (set `READS.log -text` in "
            ".gitattributes)"
        )
        return
    if text.startswith("#"):
        if line_no <= len(HEADER) and text == HEADER[line_no - 1]:
            return
        broken(
            "the header was changed"
            if line_no <= len(HEADER)
            else "a comment line was added (the log holds only its header and entries)"
        )
        return
    if line_no <= len(HEADER) and not walk.header_reported:
        walk.header_reported = True
        broken("the header is missing")
    _entry(text, line_no, before, walk, broken)


def _entry(text: str, line_no: int, before: memoryview, walk: _Walk, broken: Callable[[str], None]) -> None:
    split = body_and_hash(text)
    try:
        parsed = parse_entry(text, line_no)
    except Malformed as why:
        broken(f"not a valid entry ({why})")
        if split is not None:  # keep following the chain from the hash it claims
            walk.head = split[1]
            if not text.startswith(("repair |", "genesis |", "budget |")):
                walk.counted += 1  # a garbled read still counts against the budget
        return
    assert split is not None
    body, stored = split
    if parsed == "genesis":
        if walk.genesis_seen or walk.head is not None:
            broken("a second genesis line: another log was pasted in")
        elif entry_hash(ZERO, body) != stored:
            broken("the genesis line was edited")
        walk.genesis_seen = True
        walk.head = stored
        return
    if isinstance(parsed, ReadEntry):
        for message in _check_read(parsed, body, walk):
            broken(message)
        walk.counted = max(walk.counted + 1, parsed.seq)
        walk.reads.append(parsed)
        walk.budget_logged, walk.logged_budget = True, parsed.fields.budget
        walk.head = stored
        return
    if isinstance(parsed, BudgetEntry):
        expected = walk.head
        if expected is None or parsed.prev != expected[:PREV_CHARS]:
            broken(_describe_link(parsed.prev, expected, line_no, walk))
        elif entry_hash(expected, body) != stored:
            broken("a budget entry was edited after it was written (its hash does not match its text)")
        walk.budgets.append(parsed)
        walk.budget_logged, walk.logged_budget = True, parsed.budget
        walk.head = stored
        return
    covers = hashlib.sha256(before).hexdigest()
    if parsed.prev != covers[:PREV_CHARS] or entry_hash(covers, body) != stored:
        broken("this repair no longer matches the log before it: lines before it were changed after the repair")
    else:
        walk.acknowledged.extend(walk.problems)
        walk.problems.clear()
        walk.acknowledged_orphans.update(parsed.orphans)
        walk.genesis_seen = True  # a repair may restart a log whose start was lost
    walk.counted = max(walk.counted, parsed.reads_used)
    walk.repairs.append(parsed)
    walk.head = stored
