"""The reply's JSON envelope.

The reply is exactly one JSON object, alone or as the only content of one fenced code block
(```json ... ``` or ``` ... ```), with nothing else around it but whitespace::

    {"rules": [{"pattern": "sk-[A-Za-z0-9]{32,48}", "replacement": "[REDACTED]"}]}

The object has exactly the key ``rules``; each entry has exactly ``pattern`` (a non-empty
string) and ``replacement`` (a string; its value is checked in rules.py). Duplicate keys,
``NaN``/``Infinity`` and trailing text are malformed. ``{"rules": []}`` is a valid reply that
removes nothing (it scores 0.0 through the reward, not through a validity failure).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from redaction_pressure.errors import RedactionError

MAX_REPLY_CHARS = 65_536
MAX_DEPTH = 32  # the envelope needs 3 levels; deeper nesting is refused before parsing
MAX_INT_DIGITS = 64  # no integer belongs in the envelope; longer ones are refused while parsing
_FENCED = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(.*)\n[ \t]*```\Z", re.DOTALL)


@dataclass(frozen=True, slots=True)
class RawRule:
    index: int
    pattern: str
    replacement: str


class _Malformed(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Malformed(f"duplicate key {key!r}")
        out[key] = value
    return out


def _no_constants(name: str) -> Any:
    raise _Malformed(f"{name} is not JSON")


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Malformed(f"an integer of {len(text.lstrip('-'))} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def nesting_depth(text: str) -> int:
    """How deeply arrays and objects nest in ``text`` (brackets inside strings do not count).
    Computed without recursion, so no reply can exhaust the stack."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_reply(reply: object) -> tuple[tuple[RawRule, ...], tuple[RedactionError, ...]]:
    """The rules of a reply, or the validity failures that make it unusable. Never raises for
    anything a model can send: every reply ends in rules or in validity failures."""
    if not isinstance(reply, str):  # no text at all (a refusal, a tool call): the model's
        return (), (RedactionError("malformed_json", f"the reply has no text ({type(reply).__name__})"),)
    if len(reply) > MAX_REPLY_CHARS:
        return (), (RedactionError("reply_too_large", f"the reply has {len(reply)} characters; at most {MAX_REPLY_CHARS} are read"),)
    text = reply.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1).strip()
    depth = nesting_depth(text)
    if depth > MAX_DEPTH:
        return (), (RedactionError("malformed_json", f"the reply nests {depth} levels deep; at most {MAX_DEPTH} are read"),)
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants, parse_int=_int)
    except (_Malformed, ValueError, RecursionError, MemoryError) as exc:
        where = "" if text else " (the reply is empty)"
        return (), (RedactionError("malformed_json", f"the reply is not one JSON object{where}: {exc}"),)
    if not isinstance(data, dict):
        return (), (RedactionError("bad_envelope", f"the reply must be a JSON object, got {type(data).__name__}"),)
    if set(data) != {"rules"}:
        extra = sorted(set(data) - {"rules"})
        what = f"unknown keys {extra}" if extra else "no 'rules' key"
        return (), (RedactionError("bad_envelope", f"the object must have exactly the key 'rules' ({what})"),)
    entries = data["rules"]
    if not isinstance(entries, list):
        return (), (RedactionError("bad_envelope", f"'rules' must be a list, got {type(entries).__name__}"),)
    rules: list[RawRule] = []
    errors: list[RedactionError] = []
    for index, entry in enumerate(entries):
        problem = _entry_problem(entry)
        if problem:
            errors.append(RedactionError("bad_entry", f"rules[{index}]: {problem}", rule=index))
        else:
            rules.append(RawRule(index=index, pattern=entry["pattern"], replacement=entry["replacement"]))
    return tuple(rules), tuple(errors)


def _entry_problem(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return f"each rule must be an object, got {type(entry).__name__}"
    keys = set(entry)
    if keys != {"pattern", "replacement"}:
        missing = sorted({"pattern", "replacement"} - keys)
        extra = sorted(keys - {"pattern", "replacement"})
        parts = ([f"missing {missing}"] if missing else []) + ([f"unknown {extra}"] if extra else [])
        return "each rule has exactly 'pattern' and 'replacement' (" + ", ".join(parts) + ")"
    if not isinstance(entry["pattern"], str) or not entry["pattern"]:
        return "'pattern' must be a non-empty string"
    if not isinstance(entry["replacement"], str):
        return "'replacement' must be a string"
    return None
