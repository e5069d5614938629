"""Parsing and verifying READS.log (format ``oloproof.reads/1``; the format itself is ``log``).

Pure: bytes in, a verified ``LogState`` out. A broken log is never rewritten; every problem is
reported with its line.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from oloproof.holdout.log import (
    BARE,
    DIGEST,
    FORMAT,
    HEADER,
    NO_INTERVAL,
    PREV_CHARS,
    ZERO,
    BudgetEntry,
    LogState,
    Problem,
    ReadEntry,
    ReadFields,
    RepairEntry,
    Witness,
    entry_hash,
)

_WHEN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SCORE_BINARY = re.compile(r"(?P<est>\d+\.\d+) \((?P<passes>\d+)/(?P<answered>\d+)\)")
_SCORE_MEAN = re.compile(r"(?P<est>\d+\.\d+) \(mean of (?P<answered>\d+)\)")
_INTERVAL = re.compile(r"\[(?P<low>\d+\.\d+), (?P<high>\d+\.\d+)\] (?P<level>\d+(?:\.\d+)?)% (?P<kind>exact|approximate)")
_HASH_SUFFIX = re.compile(r" \| hash=(?P<hash>[0-9a-f]{64})$")

READ_KEYS = (
    "who", "commit", "version", "set", "n", "criterion", "score", "interval", "method", "missing", "budget", "reason", "prev", "hash",
)
REPAIR_KEYS = ("who", "commit", "reads_used", "orphans", "found", "reason", "prev", "hash")
BUDGET_KEYS = ("who", "commit", "budget", "reason", "prev", "hash")
GENESIS_KEYS = ("format", "hash")
_INTERRUPTED = re.compile(rb"read ([1-9][0-9]{0,8}) \| ")
_HASH_SUFFIX_BYTES = re.compile(rb" \| hash=[0-9a-f]{64}$")


# --------------------------------------------------------------------------- parsing


class _Malformed(Exception):
    pass


def _end_of_string(line: str, start: int) -> int:
    index = start + 1
    while index < len(line):
        char = line[index]
        if char == "\\":
            index += 2
        elif char == '"':
            return index + 1
        else:
            index += 1
    raise _Malformed("a quoted value is not closed")


def split_fields(line: str) -> list[str]:
    """Split on `` | `` outside quoted values."""
    fields: list[str] = []
    start = index = 0
    while index < len(line):
        if line[index] == '"':
            index = _end_of_string(line, index)
        elif line.startswith(" | ", index):
            fields.append(line[start:index])
            index += 3
            start = index
        else:
            index += 1
    fields.append(line[start:])
    return fields


def _text(raw: str, key: str) -> str:
    if raw.startswith('"'):
        try:
            decoded = json.loads(raw)
        except json.JSONDecodeError:
            raise _Malformed(f"{key}: not a valid quoted string") from None
        if not isinstance(decoded, str):
            raise _Malformed(f"{key}: not a string")
        return decoded
    if not BARE.fullmatch(raw):
        raise _Malformed(f"{key}: {raw!r} must be quoted")
    return raw


def _pairs(fields: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    if len(fields) != len(keys):
        raise _Malformed(f"expected {len(keys)} key=value fields, found {len(fields)}")
    out: dict[str, str] = {}
    for raw, key in zip(fields, keys, strict=True):
        name, sep, rest = raw.partition("=")
        if not sep or name != key:
            raise _Malformed(f"expected field '{key}=', found {raw[:30]!r}")
        out[key] = rest
    return out


def _int(raw: str, key: str) -> int:
    if not raw.isdigit():
        raise _Malformed(f"{key}: not a whole number")
    return int(raw)


def _parse_read(parts: list[str], line_no: int, text: str) -> ReadEntry:
    head, when = parts[0], parts[1]
    seq_text = head[len("read ") :]
    if not seq_text.isdigit() or int(seq_text) < 1:
        raise _Malformed("the read number is not a positive whole number")
    kv = _pairs(parts[2:], READ_KEYS)
    if not DIGEST.fullmatch(kv["set"]):
        raise _Malformed("set: not a sha256 digest")
    score = kv["score"]
    binary = _SCORE_BINARY.fullmatch(score)
    mean = _SCORE_MEAN.fullmatch(score)
    if binary is None and mean is None:
        raise _Malformed("score: not '0.708 (85/120)' or '0.712 (mean of 120)'")
    match = binary or mean
    assert match is not None
    interval = _INTERVAL.fullmatch(kv["interval"])
    if interval is None and kv["interval"] != NO_INTERVAL:
        raise _Malformed("interval: not '[low, high] 95% exact'")
    budget = None if kv["budget"] == "none" else _int(kv["budget"], "budget")
    missing, n, answered = _int(kv["missing"], "missing"), _int(kv["n"], "n"), int(match["answered"])
    if answered + missing != n or (binary is not None and int(binary["passes"]) > answered):
        raise _Malformed("the counts do not add up (answered + missing must be n, passes at most answered)")
    fields = ReadFields(
        who=_text(kv["who"], "who"), commit=_text(kv["commit"], "commit"), version=_text(kv["version"], "version"),
        set_digest=kv["set"], n=n, criterion=_text(kv["criterion"], "criterion"),
        kind="binary" if binary is not None else "score",
        passes=float(binary["passes"]) if binary is not None else float(match["est"]) * int(match["answered"]),
        answered=answered, missing=missing, estimate=float(match["est"]),
        low=float(interval["low"]) if interval else None, high=float(interval["high"]) if interval else None,
        level=float(interval["level"]) / 100 if interval else 0.0,
        approximate=bool(interval and interval["kind"] == "approximate"),
        method=_text(kv["method"], "method"), budget=budget, reason=_text(kv["reason"], "reason"),
    )
    return ReadEntry(seq=int(seq_text), when=when, fields=fields, prev=kv["prev"], hash=kv["hash"], line=line_no, text=text)


def _parse_repair(parts: list[str], line_no: int, text: str) -> RepairEntry:
    kv = _pairs(parts[2:], REPAIR_KEYS)
    orphans: tuple[str, ...] = () if kv["orphans"] == "none" else tuple(kv["orphans"].split(","))
    if any(not re.fullmatch(r"[0-9a-f]{12}", orphan) for orphan in orphans):
        raise _Malformed("orphans: not a comma-separated list of 12-hex prefixes")
    return RepairEntry(
        when=parts[1], who=_text(kv["who"], "who"), commit=_text(kv["commit"], "commit"),
        reads_used=_int(kv["reads_used"], "reads_used"), orphans=orphans, found=_text(kv["found"], "found"),
        reason=_text(kv["reason"], "reason"), prev=kv["prev"], hash=kv["hash"], line=line_no, text=text,
    )


def _parse_budget(parts: list[str], line_no: int, text: str) -> BudgetEntry:
    kv = _pairs(parts[2:], BUDGET_KEYS)
    budget = None if kv["budget"] == "none" else _int(kv["budget"], "budget")
    if budget == 0:
        raise _Malformed("budget: must be at least 1")
    return BudgetEntry(
        when=parts[1], who=_text(kv["who"], "who"), commit=_text(kv["commit"], "commit"), budget=budget,
        reason=_text(kv["reason"], "reason"), prev=kv["prev"], hash=kv["hash"], line=line_no, text=text,
    )


Parsed = ReadEntry | RepairEntry | BudgetEntry | Literal["genesis"]


def parse_entry(text: str, line_no: int) -> Parsed:
    """Parse one entry line (raises _Malformed with a short reason)."""
    parts = split_fields(text)
    if len(parts) < 3:
        raise _Malformed("not an entry (expected 'kind | time | key=value | …')")
    if not _WHEN.fullmatch(parts[1]):
        raise _Malformed("the time is not YYYY-MM-DDTHH:MM:SSZ")
    kind = parts[0]
    if not _HEX64.fullmatch(parts[-1].partition("=")[2]) or not parts[-1].startswith("hash="):
        raise _Malformed("the last field must be hash=<64 hex>")
    if kind.startswith("read "):
        return _parse_read(parts, line_no, text)
    if kind == "repair":
        return _parse_repair(parts, line_no, text)
    if kind == "budget":
        return _parse_budget(parts, line_no, text)
    if kind == "genesis":
        kv = _pairs(parts[2:], GENESIS_KEYS)
        if kv["format"] != FORMAT:
            raise _Malformed(f"format {kv['format']!r} is not {FORMAT} (written by another oloproof version?)")
        return "genesis"
    raise _Malformed(f"unknown entry kind {kind[:20]!r}")


def _body_and_hash(text: str) -> tuple[str, str] | None:
    match = _HASH_SUFFIX.search(text)
    if match is None:
        return None
    return text[: match.start()], match["hash"]


# --------------------------------------------------------------------------- verification


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
            missing = f"read {walk.counted + 1}" if entry.seq == walk.counted + 2 else f"reads {walk.counted + 1}-{entry.seq - 1}"
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
            problems = (Problem(line=None, message=f"the log {what}, but reads were made: it was deleted or reset"), *problems)
        return LogState(shown=shown, exists=data is not None, problems=problems, reads_used=_reads_used(walk, witnesses))
    complete = data.rfind(b"\n") + 1
    tail = data[complete:]
    raw_lines = data[:complete].split(b"\n")[:-1]
    for number, raw in enumerate([*raw_lines, tail], start=1):
        found = _HASH_SUFFIX.search(raw.decode("utf-8", "replace"))
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
            walk, reads=list(walk.reads), repairs=list(walk.repairs), budgets=list(walk.budgets), interrupted=list(walk.interrupted),
            problems=list(walk.problems), acknowledged=list(walk.acknowledged), acknowledged_orphans=set(walk.acknowledged_orphans),
        )
        _visit(tail, tail_line, view[:complete], probe)
        added = len(probe.reads) + len(probe.repairs) + len(probe.budgets) > len(walk.reads) + len(walk.repairs) + len(walk.budgets)
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
                f"line {len(raw_lines) + 1}: an incomplete final line ({torn} bytes, an interrupted append) is not an entry; "
                "it is ignored, and the next append removes it"
            )
    _check_witnesses(walk, witnesses, log_hashes={entry.hash for entry in walk.reads})
    notes.extend(
        f"line {line}: an interrupted read (the writer stopped mid-append, after the read began): it counts against "
        "the budget, and is kept in the log" for line in walk.interrupted
    )
    return LogState(
        shown=shown, exists=True, reads=tuple(walk.reads), repairs=tuple(walk.repairs), budgets=tuple(walk.budgets),
        interrupted=tuple(walk.interrupted), budget_logged=walk.budget_logged, logged_budget=walk.logged_budget,
        problems=tuple(walk.problems),
        acknowledged=tuple(walk.acknowledged), reads_used=_reads_used(walk, witnesses), head=walk.head,
        append_offset=append_offset, need_newline=need_newline, torn_bytes=torn, size=len(data),
        lines=len(raw_lines) + (1 if need_newline else 0), notes=tuple(notes),
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

    interrupted = _INTERRUPTED.match(bytes(raw))
    if interrupted is not None and _HASH_SUFFIX_BYTES.search(bytes(raw)) is None:
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
        broken("ends with a carriage return: the file was converted to CRLF line endings (set `READS.log -text` in .gitattributes)")
        return
    if text.startswith("#"):
        if line_no <= len(HEADER) and text == HEADER[line_no - 1]:
            return
        broken("the header was changed" if line_no <= len(HEADER) else "a comment line was added (the log holds only its header and entries)")
        return
    if line_no <= len(HEADER) and not walk.header_reported:
        walk.header_reported = True
        broken("the header is missing")
    _entry(text, line_no, before, walk, broken)


def _entry(text: str, line_no: int, before: memoryview, walk: _Walk, broken: Callable[[str], None]) -> None:
    split = _body_and_hash(text)
    try:
        parsed = parse_entry(text, line_no)
    except _Malformed as why:
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
