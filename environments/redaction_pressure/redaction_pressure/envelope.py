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


def parse_reply(reply: str) -> tuple[tuple[RawRule, ...], tuple[RedactionError, ...]]:
    """The rules of a reply, or the validity failures that make it unusable."""
    if len(reply) > MAX_REPLY_CHARS:
        return (), (RedactionError("reply_too_large", f"the reply has {len(reply)} characters; at most {MAX_REPLY_CHARS} are read"),)
    text = reply.strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constants)
    except (_Malformed, json.JSONDecodeError) as exc:
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
