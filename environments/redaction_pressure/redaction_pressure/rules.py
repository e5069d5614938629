"""Rule validation: limits, syntax the environment refuses, compilation.

The dialect is the ``regex`` package's VERSION0 (Python ``re`` syntax, plus variable-width
lookbehind and possessive quantifiers). Refused before compiling, because compiling them can
cost unbounded time or memory, or because they change what the limits below mean:

- more than ``MAX_RULES`` rules, patterns over ``MAX_PATTERN_CHARS`` characters;
- a ``{`` that is not a counted quantifier ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}`` (write a
  literal brace as ``\\{``; fuzzy constraints such as ``{e<=1}`` are not allowed);
- a count above ``MAX_REPEAT``, or nested counted repeats whose unrolled size (the sum over
  atoms of the product of the counts around them) exceeds ``MAX_UNROLLED``: the engine unrolls
  them at compile time, and ``(?:(?:a{256}){256}){256}`` takes seconds and gigabytes;
- the inline flags ``x`` (verbose), ``V0``/``V1`` (version), ``b``/``e``/``p`` (fuzzy/POSIX
  matching);
- recursion and subroutine calls (``(?R)``, ``(?1)``, ``(?-1)``, ``(?&name)``, ``(?P>name)``):
  left recursion such as ``(?R)`` ignores the timeout and allocates about 700 MB before the
  engine gives up with ``MemoryError``;
- a pattern that matches the empty string (it could never remove anything).

Replacements are ``"[REDACTED]"`` or ``""`` only: anything else (``"\\1"``, ``"\\g<0>"``, text)
could re-insert what a rule matched.
"""

from __future__ import annotations

import re as stdlib_re
from dataclasses import dataclass
from typing import Any

import regex

from redaction_pressure.budget import Budget
from redaction_pressure.envelope import RawRule
from redaction_pressure.errors import RedactionError

MAX_RULES = 24
MAX_PATTERN_CHARS = 512
MAX_REPEAT = 1000
MAX_UNROLLED = 10_000
ALLOWED_REPLACEMENTS = ("[REDACTED]", "")
REFUSED_FLAGS = frozenset("xVbep")
_QUANTIFIER = stdlib_re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_RECURSION = stdlib_re.compile(r"\(\?(?:R|[+-]?\d+|&\w+|P>\w+)\)")


@dataclass(frozen=True, slots=True)
class Rule:
    index: int
    pattern: str
    replacement: str
    compiled: Any  # regex.Pattern


class _Refused(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def unrolled_size(pattern: str) -> int:
    """Check the syntax this environment refuses and return the pattern's unrolled size.

    A light scanner, not a parser: it tracks escapes, character sets, groups, alternation and
    counted quantifiers, which is all the size bound needs; the engine parses the rest.
    """
    frames: list[list[int]] = [[0, 0]]  # per group: [total of finished items, size of the last item]
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            i = _skip_escape(pattern, i)
            _atom(frames, 1)
            continue
        if c == "[":
            i = _skip_set(pattern, i)
            _atom(frames, 1)
            continue
        if c == "(":
            i = _open_group(pattern, i)
            if i < 0:  # a comment group: nothing to count
                i = -i
                continue
            frames.append([0, 0])
            continue
        if c == ")":
            if len(frames) == 1:
                raise _Refused("invalid_regex", f"unbalanced ')' at position {i}")
            total, last = frames.pop()
            _atom(frames, total + last)
            i += 1
            continue
        if c == "|":
            frame = frames[-1]
            frame[0] += frame[1]
            frame[1] = 0
            i += 1
            continue
        if c == "{":
            match = _QUANTIFIER.match(pattern, i)
            if not match or (match.group(1) == "" and match.group(3) in ("", None)):
                raise _Refused("unsupported_syntax", f"'{{' at position {i} is not a counted quantifier; write a literal brace as \\{{")
            low = int(match.group(1) or 0)
            high = int(match.group(3)) if match.group(3) else low
            # An open count ({n,}) has count n ({1000,} is within the limit) and unrolls to n
            # copies and a star (n + 1 atoms).
            if max(low, high) > MAX_REPEAT:
                raise _Refused("pattern_too_complex", f"repeat count {max(low, high)} at position {i} exceeds {MAX_REPEAT}")
            open_count = match.group(2) is not None and not match.group(3)
            frames[-1][1] *= max(low + 1 if open_count else high, 1)
            i = match.end()
            continue
        _atom(frames, 1 if c not in "*+?" else 0)
        i += 1
    if len(frames) != 1:
        raise _Refused("invalid_regex", "missing ')'")
    total = frames[0][0] + frames[0][1]
    if total > MAX_UNROLLED:
        raise _Refused("pattern_too_complex", f"nested counted repeats unroll to {total} atoms; at most {MAX_UNROLLED} are allowed")
    return total


def _atom(frames: list[list[int]], size: int) -> None:
    frame = frames[-1]
    if size == 0:  # *, +, ?: no unrolling, the last item keeps its size
        return
    frame[0] += frame[1]
    frame[1] = size
    if frame[0] > MAX_UNROLLED:
        raise _Refused("pattern_too_complex", f"the pattern unrolls to more than {MAX_UNROLLED} atoms")


def _skip_escape(pattern: str, i: int) -> int:
    if i + 1 >= len(pattern):
        raise _Refused("invalid_regex", "a pattern cannot end in a backslash")
    nxt = pattern[i + 1]
    if nxt in "pPNx" and i + 2 < len(pattern) and pattern[i + 2] == "{":
        close = pattern.find("}", i + 3)
        if close < 0:
            raise _Refused("invalid_regex", f"unterminated \\{nxt}{{...}} at position {i}")
        return close + 1
    return i + 2


def _skip_set(pattern: str, i: int) -> int:
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j = _skip_escape(pattern, j)
            continue
        if c == "[" and pattern.startswith("[:", j):
            close = pattern.find(":]", j + 2)
            j = close + 2 if close >= 0 else j + 1
            continue
        if c == "]":
            return j + 1
        j += 1
    raise _Refused("invalid_regex", f"unterminated character set at position {i}")


def _open_group(pattern: str, i: int) -> int:
    """Position after a group's header; negative for a comment group (position after it)."""
    if not pattern.startswith("(?", i):
        return i + 1
    if _RECURSION.match(pattern, i):
        raise _Refused("unsupported_syntax", f"recursion or a subroutine call at position {i} is not allowed")
    if pattern.startswith("(?#", i):
        close = pattern.find(")", i)
        if close < 0:
            raise _Refused("invalid_regex", f"unterminated comment at position {i}")
        return -(close + 1)
    j = i + 2
    flags = ""
    while j < len(pattern) and (pattern[j].isalpha() or pattern[j] in "-0123456789"):
        flags += pattern[j]
        j += 1
    if flags and j < len(pattern) and pattern[j] in ":)":
        refused = sorted(set(flags) & REFUSED_FLAGS)
        if refused:
            raise _Refused("unsupported_syntax", f"inline flag {''.join(refused)!r} at position {i} is not allowed")
        if pattern[j] == ")":
            # A global flag group "(?i)" is not a group: count nothing, and do not push a frame
            # that its ")" would pop. Return past the ")" as a comment would.
            return -(j + 1)
        return j + 1
    for header in ("(?:", "(?=", "(?!", "(?>", "(?|", "(?<=", "(?<!"):
        if pattern.startswith(header, i):
            return i + len(header)
    if pattern.startswith(("(?P<", "(?<"), i):
        close = pattern.find(">", i)
        return close + 1 if close >= 0 else i + 2
    return i + 2


def compile_rules(raw: tuple[RawRule, ...], budget: Budget) -> tuple[tuple[Rule, ...], tuple[RedactionError, ...]]:
    """Validate and compile the reply's rules; every problem found is reported."""
    if len(raw) > MAX_RULES:
        return (), (RedactionError("too_many_rules", f"the reply has {len(raw)} rules; at most {MAX_RULES} are allowed"),)
    rules: list[Rule] = []
    errors: list[RedactionError] = []
    for entry in raw:
        error = _check(entry)
        if error is not None:
            errors.append(error)
            continue
        if budget.remaining() <= 0:
            return (), (*errors, RedactionError("budget_exhausted", "the episode's time budget ran out while compiling rules", rule=entry.index))
        try:
            compiled = regex.compile(entry.pattern, regex.VERSION0)
        except (regex.error, OverflowError, ValueError) as exc:
            errors.append(RedactionError("invalid_regex", f"rules[{entry.index}]: {exc}", rule=entry.index))
            continue
        except (MemoryError, RecursionError):
            errors.append(RedactionError("pattern_too_complex", f"rules[{entry.index}]: the regex engine ran out of memory", rule=entry.index))
            continue
        try:
            empty = compiled.search("", timeout=max(budget.remaining(), 0.001))
        except TimeoutError:
            return (), (*errors, RedactionError("budget_exhausted", "the episode's time budget ran out while checking rules", rule=entry.index))
        except (MemoryError, RecursionError):
            errors.append(RedactionError("pattern_too_complex", f"rules[{entry.index}]: the regex engine ran out of memory", rule=entry.index))
            continue
        if empty is not None:
            errors.append(RedactionError("zero_width_match", f"rules[{entry.index}]: the pattern matches the empty string", rule=entry.index))
            continue
        rules.append(Rule(index=entry.index, pattern=entry.pattern, replacement=entry.replacement, compiled=compiled))
    return tuple(rules), tuple(errors)


def _check(entry: RawRule) -> RedactionError | None:
    if entry.replacement not in ALLOWED_REPLACEMENTS:
        return RedactionError(
            "unsafe_replacement", f"rules[{entry.index}]: replacement must be \"[REDACTED]\" or \"\", got {entry.replacement[:40]!r}",
            rule=entry.index,
        )
    if len(entry.pattern) > MAX_PATTERN_CHARS:
        return RedactionError(
            "pattern_too_long", f"rules[{entry.index}]: the pattern has {len(entry.pattern)} characters; at most {MAX_PATTERN_CHARS}",
            rule=entry.index,
        )
    try:
        unrolled_size(entry.pattern)
    except _Refused as exc:
        return RedactionError(exc.code, f"rules[{entry.index}]: {exc}", rule=entry.index)
    return None
