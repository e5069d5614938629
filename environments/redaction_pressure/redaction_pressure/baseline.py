"""A deterministic baseline rule-writer: induction from the prompt's labelled samples.

It reads only what a model reads (the user prompt's ``<samples>`` block) and writes rules the way
a careful engineer might without seeing the scored records:

1. Each labelled secret becomes a *shape*. A short lowercase head before ``-``/``_`` (``sk-``,
   ``ghp_``) or four leading capitals of a long capital run (``AKIA``) stay literal; every other
   run of letters and digits becomes a character class (``[a-z]``, ``[A-Za-z0-9]``, ...) with
   its length; punctuation stays literal. A secret without such a literal head that follows a
   key (a password, a hex session id, ``user=<email>``, a bearer JWT) is anchored on its key
   instead: a lookbehind on the ``key=``/``"key": "``/``Bearer `` text before it (the key
   preceded by no other word character), then letters and digits, or, when the values held
   punctuation, anything but whitespace and the delimiters that ended them in the samples.
2. Shapes that agree except in run lengths merge; lengths widen to the range seen, plus a
   slack of 2 (8 for runs of 12 or more).
3. Each rule is tried on the samples. A rule that removes a labelled decoy it matches whole
   gets a negative lookahead for that decoy's exact text; a rule that still removes anything
   outside the labelled secrets is dropped. At most 24 rules are kept.

It knows nothing of the corpus grammar beyond the samples: a secret type absent from them, a
length outside the widened range, or a character it never saw is missed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import regex

from redaction_pressure.prompt import parse_samples
from redaction_pressure.rules import MAX_RULES

_KEY_CONTEXT = re.compile(r"(?:[A-Za-z_]+[\"']?\s*[:=]\s*[\"']?|Bearer )\Z")
_RUN = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")


@dataclass(frozen=True, slots=True)
class _Token:
    literal: str | None  # literal text, or None for a class run
    classes: frozenset[str] = frozenset()  # "upper", "lower", "digit" or punctuation characters
    length: int = 0


def _classes(text: str) -> frozenset[str]:
    found = set()
    for c in text:
        if c.isupper():
            found.add("upper")
        elif c.islower():
            found.add("lower")
        elif c.isdigit():
            found.add("digit")
        else:
            found.add(c)
    return frozenset(found)


def _class_regex(classes: Iterable[str]) -> str:
    parts = {"upper": "A-Z", "lower": "a-z", "digit": "0-9"}
    named = "".join(parts[k] for k in ("upper", "lower", "digit") if k in classes)
    punct = "".join(sorted(c for c in classes if c not in parts))
    return "[" + named + "".join(regex.escape(c, special_only=False) if c in "]\\^-[" else c for c in punct) + "]"


def _shape(text: str) -> tuple[_Token, ...]:
    runs = _RUN.findall(text)
    tokens: list[_Token] = []
    for position, run in enumerate(runs):
        if not run[0].isalnum():
            tokens.append(_Token(literal=run))
        elif position == 0 and len(runs) > 1 and len(run) <= 4 and run.islower() and runs[1] in "-_":
            tokens.append(_Token(literal=run))
        elif position == 0 and len(run) >= 16 and run[:4].isalpha() and run[:4].isupper():
            tokens.append(_Token(literal=run[:4]))
            tokens.append(_Token(literal=None, classes=_classes(run[4:]), length=len(run) - 4))
        else:
            tokens.append(_Token(literal=None, classes=_classes(run), length=len(run)))
    return tuple(tokens)


def _slack(length: int) -> int:
    return 8 if length >= 12 else 2


def _structured(shapes: list[tuple[_Token, ...]]) -> str:
    parts = []
    for column in zip(*shapes, strict=True):
        first = column[0]
        if first.literal is not None:
            parts.append(regex.escape(first.literal))
            continue
        low = min(t.length for t in column)
        high = max(t.length for t in column)
        classes = frozenset().union(*(t.classes for t in column))
        parts.append(f"{_class_regex(classes)}{{{max(1, low - _slack(low))},{high + _slack(high)}}}")
    return "(?<![A-Za-z0-9])" + "".join(parts) + "(?![A-Za-z0-9])"


def _contextual(context: str, values: list[tuple[str, str]]) -> str:
    """values: (secret text, the character after it, "" at the end of a record)."""
    classes: set[str] = set()
    for value, _ in values:
        classes |= _classes(value)
    if classes - {"upper", "lower", "digit"}:
        # Punctuation inside the value: it runs up to the delimiter that ended it in the samples.
        stops = "".join(sorted({after for _, after in values if after} | {" "}))
        body = "[^\\s" + "".join(regex.escape(c, special_only=False) if c in "]\\^-[" else c for c in stops if c != " ") + "]"
    else:
        body = _class_regex(classes | {"upper", "lower", "digit"})
    low, high = min(len(v) for v, _ in values), max(len(v) for v, _ in values)
    boundary = "(?<![A-Za-z0-9_])" if context[0].isalnum() or context[0] == "_" else ""
    return f"(?<={boundary}{regex.escape(context)}){body}{{{max(1, low - _slack(low))},{high + _slack(high)}}}(?!{body})"


def _candidate_rules(samples: list[dict[str, Any]]) -> list[str]:
    structured: dict[tuple[Any, ...], list[tuple[_Token, ...]]] = {}
    contextual: dict[tuple[str, str], list[tuple[str, str]]] = {}
    order: list[tuple[str, Any]] = []
    for sample in samples:
        text = sample["text"]
        for secret in sample["secrets"]:
            value = secret["text"]
            shape = _shape(value)
            vendor_prefix = any(t.literal is not None and t.literal.isalnum() for t in shape)
            context = _KEY_CONTEXT.search(text[: secret["start"]])
            if context and not vendor_prefix:
                key = (secret["type"], context.group(0))
                if key not in contextual:
                    contextual[key] = []
                    order.append(("context", key))
                contextual[key].append((value, text[secret["end"]:secret["end"] + 1]))
                continue
            signature = (secret["type"], tuple((t.literal, t.classes if t.literal is None else None) for t in shape))
            if signature not in structured:
                structured[signature] = []
                order.append(("shape", signature))
            structured[signature].append(shape)
    rules = []
    for kind, key in order:
        rules.append(_contextual(key[1], contextual[key]) if kind == "context" else _structured(structured[key]))
    return list(dict.fromkeys(rules))


def _damage(pattern: str, samples: list[dict[str, Any]]) -> tuple[set[str], bool]:
    """(decoy texts the rule matches whole, whether it removes anything not a secret)."""
    compiled = regex.compile(pattern)
    whole: set[str] = set()
    damaged = False
    for sample in samples:
        secret_positions = {p for s in sample["secrets"] for p in range(s["start"], s["end"])}
        for match in compiled.finditer(sample["text"], timeout=0.5):
            outside = set(range(*match.span())) - secret_positions
            if not outside:
                continue
            damaged = True
            for decoy in sample["decoys"]:
                if match.span() == (decoy["start"], decoy["end"]):
                    whole.add(decoy["text"])
    return whole, damaged


def write_rules(user_prompt: str) -> list[str]:
    samples = parse_samples(user_prompt)
    kept: list[str] = []
    for pattern in _candidate_rules(samples):
        whole, damaged = _damage(pattern, samples)
        if damaged and whole:
            exclusions = "|".join(regex.escape(text) for text in sorted(whole))
            pattern = f"(?!(?:{exclusions})(?![A-Za-z0-9]))" + pattern
            _, damaged = _damage(pattern, samples)
        if not damaged:
            kept.append(pattern)
    return kept[:MAX_RULES]


def baseline_reply(user_prompt: str) -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in write_rules(user_prompt)]})
