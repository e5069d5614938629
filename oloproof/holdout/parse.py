"""Parsing one READS.log line (format ``oloproof.reads/1``, rendered by ``log``): its fields, checked
and typed, or ``Malformed`` with a short reason. Pure; ``verify`` walks a whole log with it."""

from __future__ import annotations

import json
import re
from typing import Literal

from oloproof.holdout.log import (
    BARE,
    DIGEST,
    FORMAT,
    NO_INTERVAL,
    BudgetEntry,
    ReadEntry,
    ReadFields,
    RepairEntry,
)

_WHEN = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_SCORE_BINARY = re.compile(r"(?P<est>\d+\.\d+) \((?P<passes>\d+)/(?P<answered>\d+)\)")
_SCORE_MEAN = re.compile(r"(?P<est>\d+\.\d+) \(mean of (?P<answered>\d+)\)")
_INTERVAL = re.compile(
    r"\[(?P<low>\d+\.\d+), (?P<high>\d+\.\d+)\] (?P<level>\d+(?:\.\d+)?)% (?P<kind>exact|approximate)"
)
HASH_SUFFIX = re.compile(r" \| hash=(?P<hash>[0-9a-f]{64})$")

READ_KEYS = (
    "who",
    "commit",
    "version",
    "set",
    "n",
    "criterion",
    "score",
    "interval",
    "method",
    "missing",
    "budget",
    "reason",
    "prev",
    "hash",
)
REPAIR_KEYS = ("who", "commit", "reads_used", "orphans", "found", "reason", "prev", "hash")
BUDGET_KEYS = ("who", "commit", "budget", "reason", "prev", "hash")
GENESIS_KEYS = ("format", "hash")
INTERRUPTED = re.compile(rb"read ([1-9][0-9]{0,8}) \| ")
HASH_SUFFIX_BYTES = re.compile(rb" \| hash=[0-9a-f]{64}$")


class Malformed(Exception):
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
    raise Malformed("a quoted value is not closed")


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
            raise Malformed(f"{key}: not a valid quoted string") from None
        if not isinstance(decoded, str):
            raise Malformed(f"{key}: not a string")
        return decoded
    if not BARE.fullmatch(raw):
        raise Malformed(f"{key}: {raw!r} must be quoted")
    return raw


def _pairs(fields: list[str], keys: tuple[str, ...]) -> dict[str, str]:
    if len(fields) != len(keys):
        raise Malformed(f"expected {len(keys)} key=value fields, found {len(fields)}")
    out: dict[str, str] = {}
    for raw, key in zip(fields, keys, strict=True):
        name, sep, rest = raw.partition("=")
        if not sep or name != key:
            raise Malformed(f"expected field '{key}=', found {raw[:30]!r}")
        out[key] = rest
    return out


def _int(raw: str, key: str) -> int:
    if not raw.isdigit():
        raise Malformed(f"{key}: not a whole number")
    return int(raw)


def _parse_read(parts: list[str], line_no: int, text: str) -> ReadEntry:
    head, when = parts[0], parts[1]
    seq_text = head[len("read ") :]
    if not seq_text.isdigit() or int(seq_text) < 1:
        raise Malformed("the read number is not a positive whole number")
    kv = _pairs(parts[2:], READ_KEYS)
    if not DIGEST.fullmatch(kv["set"]):
        raise Malformed("set: not a sha256 digest")
    score = kv["score"]
    binary = _SCORE_BINARY.fullmatch(score)
    mean = _SCORE_MEAN.fullmatch(score)
    if binary is None and mean is None:
        raise Malformed("score: not '0.708 (85/120)' or '0.712 (mean of 120)'")
    match = binary or mean
    assert match is not None
    interval = _INTERVAL.fullmatch(kv["interval"])
    if interval is None and kv["interval"] != NO_INTERVAL:
        raise Malformed("interval: not '[low, high] 95% exact'")
    budget = None if kv["budget"] == "none" else _int(kv["budget"], "budget")
    missing, n, answered = _int(kv["missing"], "missing"), _int(kv["n"], "n"), int(match["answered"])
    if answered + missing != n or (binary is not None and int(binary["passes"]) > answered):
        raise Malformed("the counts do not add up (answered + missing must be n, passes at most answered)")
    fields = ReadFields(
        who=_text(kv["who"], "who"),
        commit=_text(kv["commit"], "commit"),
        version=_text(kv["version"], "version"),
        set_digest=kv["set"],
        n=n,
        criterion=_text(kv["criterion"], "criterion"),
        kind="binary" if binary is not None else "score",
        passes=float(binary["passes"]) if binary is not None else float(match["est"]) * int(match["answered"]),
        answered=answered,
        missing=missing,
        estimate=float(match["est"]),
        low=float(interval["low"]) if interval else None,
        high=float(interval["high"]) if interval else None,
        level=float(interval["level"]) / 100 if interval else 0.0,
        approximate=bool(interval and interval["kind"] == "approximate"),
        method=_text(kv["method"], "method"),
        budget=budget,
        reason=_text(kv["reason"], "reason"),
    )
    return ReadEntry(
        seq=int(seq_text), when=when, fields=fields, prev=kv["prev"], hash=kv["hash"], line=line_no, text=text
    )


def _parse_repair(parts: list[str], line_no: int, text: str) -> RepairEntry:
    kv = _pairs(parts[2:], REPAIR_KEYS)
    orphans: tuple[str, ...] = () if kv["orphans"] == "none" else tuple(kv["orphans"].split(","))
    if any(not re.fullmatch(r"[0-9a-f]{12}", orphan) for orphan in orphans):
        raise Malformed("orphans: not a comma-separated list of 12-hex prefixes")
    return RepairEntry(
        when=parts[1],
        who=_text(kv["who"], "who"),
        commit=_text(kv["commit"], "commit"),
        reads_used=_int(kv["reads_used"], "reads_used"),
        orphans=orphans,
        found=_text(kv["found"], "found"),
        reason=_text(kv["reason"], "reason"),
        prev=kv["prev"],
        hash=kv["hash"],
        line=line_no,
        text=text,
    )


def _parse_budget(parts: list[str], line_no: int, text: str) -> BudgetEntry:
    kv = _pairs(parts[2:], BUDGET_KEYS)
    budget = None if kv["budget"] == "none" else _int(kv["budget"], "budget")
    if budget == 0:
        raise Malformed("budget: must be at least 1")
    return BudgetEntry(
        when=parts[1],
        who=_text(kv["who"], "who"),
        commit=_text(kv["commit"], "commit"),
        budget=budget,
        reason=_text(kv["reason"], "reason"),
        prev=kv["prev"],
        hash=kv["hash"],
        line=line_no,
        text=text,
    )


Parsed = ReadEntry | RepairEntry | BudgetEntry | Literal["genesis"]


def parse_entry(text: str, line_no: int) -> Parsed:
    """Parse one entry line (raises Malformed with a short reason)."""
    parts = split_fields(text)
    if len(parts) < 3:
        raise Malformed("not an entry (expected 'kind | time | key=value | …')")
    if not _WHEN.fullmatch(parts[1]):
        raise Malformed("the time is not YYYY-MM-DDTHH:MM:SSZ")
    kind = parts[0]
    if not _HEX64.fullmatch(parts[-1].partition("=")[2]) or not parts[-1].startswith("hash="):
        raise Malformed("the last field must be hash=<64 hex>")
    if kind.startswith("read "):
        return _parse_read(parts, line_no, text)
    if kind == "repair":
        return _parse_repair(parts, line_no, text)
    if kind == "budget":
        return _parse_budget(parts, line_no, text)
    if kind == "genesis":
        kv = _pairs(parts[2:], GENESIS_KEYS)
        if kv["format"] != FORMAT:
            raise Malformed(f"format {kv['format']!r} is not {FORMAT} (written by another oloproof version?)")
        return "genesis"
    raise Malformed(f"unknown entry kind {kind[:20]!r}")


def body_and_hash(text: str) -> tuple[str, str] | None:
    match = HASH_SUFFIX.search(text)
    if match is None:
        return None
    return text[: match.start()], match["hash"]
