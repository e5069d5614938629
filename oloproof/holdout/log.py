"""READS.log: the append-only, tamper-evident log of every holdout read (SPEC §7).

The file is meant to be read by a person in a pull-request diff, so it is plain text, one
line per entry (format ``oloproof.reads/1``, docs/holdout.md)::

    # oloproof holdout reads log (format oloproof.reads/1): one line per read of the holdout set, append-only.
    # Each line's hash commits to the line before it; `oloproof holdout status` verifies the chain. Never edit it.
    genesis | 2026-11-02T09:00:00Z | format=oloproof.reads/1 | hash=<64 hex>
    read 1 | 2026-11-02T09:01:12Z | who=alice | commit=3f2a9c1d0b7e | version=prompt-v1 | set=sha256:<64 hex> | n=120
      | criterion=correct | score=0.708 (85/120) | interval=[0.619, 0.787] 95% exact | method=clopper-pearson
      | missing=0 | budget=20 | reason="week-0 baseline" | prev=<16 hex> | hash=<64 hex>      (one line in the file)

Each entry's ``hash`` is SHA-256 over the format name, the *full* hash of the entry before it and
the entry's text up to `` | hash=``; ``prev`` repeats the first 16 hex digits of that previous hash
so a reader can follow the chain by eye. Editing, deleting, inserting or moving an entry breaks
the chain at that line. Deleting the *last* entry leaves a valid prefix, which no chain can
detect by itself: the per-read outcome records (``witnesses``) and git history catch that.

Free text (reason, who, version…) is written as a JSON string whenever it is not a plain token,
with every control, format and line-separator character escaped, so a reason holding ``|``, a
quote, a newline or a bidi override can neither forge a field nor a line nor hide text in a diff.

A final line without its newline (a crash mid-append, ``oloproof.holdout.logfile``) is a *torn tail*:
not an entry; one that lacks only the newline but verifies still counts. A torn line that begins
with ``read N | `` is an *interrupted read*: its first half may already hold the score, so it counts
against the budget, and the next append keeps it (ending its line) instead of cutting it. A
complete line of that shape without a hash is the same interrupted read, kept.

A ``budget`` entry (``oloproof holdout budget N --reason``) records a change of the budget in force,
chained like a read; the budget in force is the one of the latest read or budget entry.

This module is pure (text in, rendered entries out; parsing and verifying are ``verify``); the
file, its lock and appends live in ``oloproof.holdout.logfile``. A broken log is never rewritten.
``repair`` appends a ``repair`` entry that commits to the exact bytes before it (its ``prev`` is
their SHA-256), records who acknowledged what and why, and how many reads the log had used;
breaks before a valid repair are history, breaks after it are not.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from oloproof.errors import UsageError
from oloproof.measures.registry import measure_of
from oloproof.stats.interval import Interval, interval_json
from oloproof.store import short_digest

FORMAT = "oloproof.reads/1"
HEADER = (
    f"# oloproof holdout reads log (format {FORMAT}): one line per read of the holdout set, append-only.",
    "# Each line's hash commits to the line before it; `oloproof holdout status` verifies the chain. Never edit it.",
)
ZERO = "0" * 64
PREV_CHARS = 16
MAX_REASON = 1000
MAX_FOUND = 800

BARE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@/+:~-]*")  # a token written without quotes
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
NO_INTERVAL = "none"


# --------------------------------------------------------------------------- records


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadFields:
    """What one read records. ``n`` counts every holdout case (missing included); ``answered``
    the cases with a usable output; ``passes`` the passing answered cases (binary) or the sum of
    their scores (``kind == "score"``). Rates and bounds are proportions in [0, 1]."""

    who: str
    commit: str
    version: str
    set_digest: str  # "sha256:<64 hex>" of the holdout set read
    n: int
    criterion: str
    kind: Literal["binary", "score"]
    passes: float
    answered: int
    missing: int
    estimate: float
    low: float | None  # None when no interval method exists (graded scores on grouped cases)
    high: float | None
    level: float
    approximate: bool
    method: str
    budget: int | None  # the budget declared at the time of the read
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadEntry:
    seq: int  # 1 for the first read of the log
    when: str  # UTC, "2026-11-29T22:15:03Z"
    fields: ReadFields
    prev: str  # first 16 hex digits of the previous entry's hash, as written
    hash: str  # 64 hex
    line: int  # 1-based line number in the file
    text: str  # the line as written


@dataclass(frozen=True, slots=True, kw_only=True)
class RepairEntry:
    when: str
    who: str
    commit: str
    reads_used: int  # reads the log had used when it was repaired (never lowered)
    orphans: tuple[str, ...]  # 12-hex prefixes of acknowledged reads that have a record but no entry
    found: str  # what the repair acknowledged, as the tool described it
    reason: str
    prev: str  # first 16 hex digits of the SHA-256 of every byte before this line
    hash: str
    line: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class BudgetEntry:
    """A logged change of the budget in force (``oloproof holdout budget``), chained like a read."""

    when: str
    who: str
    commit: str
    budget: int | None  # None: no budget (unlimited reads)
    reason: str
    prev: str
    hash: str
    line: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Witness:
    """Evidence, outside the log, that a read happened: its outcome record (see holdout.py)."""

    seq: int
    hash: str  # the entry hash the record names (64 hex)
    source: str  # where it was found, for messages


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    line: int | None  # None for problems not at one line (e.g. a read with a record and no entry)
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


@dataclass(frozen=True, slots=True, kw_only=True)
class LogState:
    """The verified content of a log at one moment."""

    shown: str
    exists: bool
    reads: tuple[ReadEntry, ...] = ()
    repairs: tuple[RepairEntry, ...] = ()
    budgets: tuple[BudgetEntry, ...] = ()
    interrupted: tuple[int, ...] = ()  # lines of interrupted reads (torn mid-append; they count)
    budget_logged: bool = False  # some read or budget entry recorded a budget
    logged_budget: int | None = None  # the budget of the latest read or budget entry (None: none)
    problems: tuple[Problem, ...] = ()  # unacknowledged: the log is tampered while there are any
    acknowledged: tuple[Problem, ...] = ()  # problems before a valid repair entry
    reads_used: int = 0  # what the budget counts: never less than the reads the log shows or implies
    head: str | None = None  # full hash of the last entry (None: no genesis yet)
    append_offset: int = 0  # byte offset where the next line goes
    need_newline: bool = False  # the last entry lacks its newline
    torn_bytes: int = 0  # bytes of a torn final line, ignored (cut by the next append)
    size: int = 0  # bytes in the file when it was read
    lines: int = 0  # complete lines before the append point (header and genesis included)
    notes: tuple[str, ...] = ()

    @property
    def intact(self) -> bool:
        return not self.problems

    @property
    def next_seq(self) -> int:
        return self.reads_used + 1


class LogError(UsageError):
    """An append the log does not allow (a broken chain, nothing to repair) or cannot take here
    (permissions, a full disk, a hand edit while the lock was held): exit 2."""


# --------------------------------------------------------------------------- text


def quote(text: str) -> str:
    """A JSON string literal in which nothing can break the line or hide in a diff.

    Besides JSON's own escapes, every character of Unicode categories Cc, Cf, Zl, Zp, Co, Cs and
    Cn is written as ``\\uXXXX`` (bidi overrides, zero-width characters, U+2028 …). Reading back
    is ``json.loads``, which does not depend on the Unicode database of the Python reading it.
    """
    out = ['"']
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"):
            out.append(json.dumps(char))  # \\uXXXX, surrogate pairs above U+FFFF
            out[-1] = out[-1][1:-1]
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def value(text: str) -> str:
    """A plain token as is (``alice``, ``prompt-v1``), anything else quoted."""
    return text if BARE.fullmatch(text) else quote(text)


def entry_hash(prev: str, body: str) -> str:
    """SHA-256 of the format name, the full previous hash and the entry's text before `` | hash=``."""
    return hashlib.sha256(f"{FORMAT}\n{prev}\n{body}".encode()).hexdigest()


def _fmt(number: float) -> str:
    return f"{number:.3f}"


def _level(level: float) -> str:
    return f"{round(level * 100, 6):g}%"


def score_text(fields: ReadFields) -> str:
    """``0.708 (85/120)`` for pass/fail criteria, ``0.712 (mean of 120)`` for graded ones."""
    if fields.kind == "binary":
        return f"{_fmt(fields.estimate)} ({round(fields.passes)}/{fields.answered})"
    return f"{_fmt(fields.estimate)} (mean of {fields.answered})"


def interval_text(fields: ReadFields) -> str:
    if fields.low is None or fields.high is None:
        return NO_INTERVAL
    kind = "approximate" if fields.approximate else "exact"
    return f"[{_fmt(fields.low)}, {_fmt(fields.high)}] {_level(fields.level)} {kind}"


def check_fields(fields: ReadFields) -> None:
    reason = fields.reason.strip()
    if not reason:
        raise ValueError("a read needs a non-empty reason")
    if len(fields.reason) > MAX_REASON:
        raise ValueError(f"the reason is {len(fields.reason)} characters long; keep it under {MAX_REASON}")
    if not DIGEST.fullmatch(fields.set_digest):
        raise ValueError(f"set digest must be sha256:<64 hex>, got {fields.set_digest!r}")
    for name in ("who", "commit", "version", "criterion", "method"):
        if not getattr(fields, name):
            raise ValueError(f"{name} must not be empty")


def read_opening(seq: int, when: str, fields: ReadFields) -> str:
    """The part of a read's line known before the system runs: ``read N | when | who= | commit= |
    version= | set= | n=N | `` (``render_read`` continues it; the verifier counts a line torn after
    ``read N | `` as an interrupted read)."""
    opening = " | ".join(
        (
            f"read {seq}",
            when,
            f"who={value(fields.who)}",
            f"commit={value(fields.commit)}",
            f"version={value(fields.version)}",
            f"set={fields.set_digest}",
            f"n={fields.n}",
        )
    )
    return opening + " | "


def render_read(seq: int, when: str, fields: ReadFields, prev: str) -> str:
    """The full line (without newline) of a read entry that follows the entry whose hash is ``prev``."""
    check_fields(fields)
    body = " | ".join(
        (
            f"read {seq}",
            when,
            f"who={value(fields.who)}",
            f"commit={value(fields.commit)}",
            f"version={value(fields.version)}",
            f"set={fields.set_digest}",
            f"n={fields.n}",
            f"criterion={value(fields.criterion)}",
            f"score={score_text(fields)}",
            f"interval={interval_text(fields)}",
            f"method={value(fields.method)}",
            f"missing={fields.missing}",
            f"budget={fields.budget if fields.budget is not None else 'none'}",
            f"reason={quote(fields.reason)}",
            f"prev={prev[:PREV_CHARS]}",
        )
    )
    return f"{body} | hash={entry_hash(prev, body)}"


def render_repair(
    when: str, *, who: str, commit: str, reads_used: int, orphans: Sequence[str], found: str, reason: str, covers: str
) -> str:
    """A repair line; ``covers`` is the SHA-256 (hex) of every byte of the file before it."""
    if not reason.strip():
        raise ValueError("a repair needs a non-empty reason")
    if len(found) > MAX_FOUND:
        found = found[: MAX_FOUND - 1] + "…"
    body = " | ".join(
        (
            "repair",
            when,
            f"who={value(who)}",
            f"commit={value(commit)}",
            f"reads_used={reads_used}",
            f"orphans={','.join(orphans) if orphans else 'none'}",
            f"found={quote(found)}",
            f"reason={quote(reason)}",
            f"prev={covers[:PREV_CHARS]}",
        )
    )
    return f"{body} | hash={entry_hash(covers, body)}"


def render_budget(when: str, *, who: str, commit: str, budget: int | None, reason: str, prev: str) -> str:
    """A budget line that follows the entry whose hash is ``prev``."""
    if not reason.strip():
        raise ValueError("a budget change needs a non-empty reason")
    if budget is not None and budget < 1:
        raise ValueError("a budget is a positive whole number")
    body = " | ".join(
        (
            "budget",
            when,
            f"who={value(who)}",
            f"commit={value(commit)}",
            f"budget={budget if budget is not None else 'none'}",
            f"reason={quote(reason)}",
            f"prev={prev[:PREV_CHARS]}",
        )
    )
    return f"{body} | hash={entry_hash(prev, body)}"


def render_genesis(when: str) -> str:
    body = f"genesis | {when} | format={FORMAT}"
    return f"{body} | hash={entry_hash(ZERO, body)}"


def new_log_prefix(when: str) -> str:
    return "".join(line + "\n" for line in HEADER) + render_genesis(when) + "\n"


def short(digest: str) -> str:
    """A digest in a holdout message: ``sha256:`` and 12 hex digits, then ``…``."""
    return short_digest(digest, ellipsis=True)


def printable(text: str) -> str:
    """Free text from the log, safe for a terminal (control and bidi characters escaped)."""
    return quote(text)[1:-1].replace('\\"', '"')


def entry_json(entry: ReadEntry) -> dict[str, Any]:
    f = entry.fields
    return {
        "read": entry.seq,
        "when": entry.when,
        "who": f.who,
        "commit": f.commit,
        "version": f.version,
        "set": {"kind": "holdout", "digest": f.set_digest, "n": f.n},
        "criterion": f.criterion,
        "kind": f.kind,
        "estimate": f.estimate,
        "passes": f.passes,
        "answered": f.answered,
        "missing": f.missing,
        "interval": None
        if f.low is None or f.high is None
        else interval_json(
            Interval(
                estimate=f.estimate, low=f.low, high=f.high, level=f.level, method=f.method, approximate=f.approximate
            )
        ),
        "budget": f.budget,
        "reason": f.reason,
        "line": entry.line,
        "prev": entry.prev,
        "hash": entry.hash,
    }


def entry_score(entry: ReadEntry) -> str:
    f = entry.fields
    count = f"{round(f.passes)}/{f.answered}" if measure_of(f.kind).pass_fail else f"mean of {f.answered}"
    return f"{f.estimate:.3f} ({count}{f', {f.missing} missing' if f.missing else ''})"


def interval_words(entry: ReadEntry) -> str:
    f = entry.fields
    if f.low is None or f.high is None:
        return ", no interval"
    kind = "approximate" if f.approximate else "exact"
    return f", {f.level:.0%} interval [{f.low:.3f}, {f.high:.3f}] ({f.method}, {kind})"
