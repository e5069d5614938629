"""Run the rules on the scored records: a union of matches on the source text.

Every rule runs on the original record (never on another rule's output), so the result does
not depend on rule order and no rule can match text another rule produced (such as a
``[REDACTED]`` marker, or two fragments joined by a deletion). A source character is
*removed* when any rule's match covers it. The redacted text replaces each maximal run of
removed characters with ``[REDACTED]`` if any match over it asked for ``[REDACTED]``, else with
nothing.

The first validity failure ends the episode: a zero-width match, more than
``MAX_MATCHES_PER_RECORD`` matches of one rule on one record, a rule over its own time
(``regex_timeout``), or the episode's shared budget spent (``budget_exhausted``).
"""

from __future__ import annotations

from dataclasses import dataclass

from redaction_pressure.budget import CALL_TIMEOUT_S, RULE_BUDGET_S, Budget
from redaction_pressure.corpus import Record
from redaction_pressure.errors import RedactionError
from redaction_pressure.rules import Rule

MAX_MATCHES_PER_RECORD = 64
MARKER = "[REDACTED]"


@dataclass(frozen=True, slots=True)
class Match:
    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    matches: tuple[tuple[Match, ...], ...]  # per scored record
    error: RedactionError | None


def scan(rules: tuple[Rule, ...], records: tuple[Record, ...], budget: Budget) -> ScanResult:
    found: list[list[Match]] = [[] for _ in records]
    for rule in rules:
        rule_left = RULE_BUDGET_S
        for number, rec in enumerate(records):
            episode_left = budget.remaining()
            if episode_left <= 0:
                return ScanResult(matches=(), error=_spent(rule, number, budget))
            timeout = min(CALL_TIMEOUT_S, rule_left, episode_left)
            started = budget.elapsed()
            count = 0
            try:
                for match in rule.compiled.finditer(rec.text, timeout=timeout):
                    start, end = match.span()
                    if start == end:
                        return ScanResult(matches=(), error=RedactionError(
                            "zero_width_match", f"rules[{rule.index}] matched the empty string at offset {start}", rule=rule.index, record=number,
                        ))
                    count += 1
                    if count > MAX_MATCHES_PER_RECORD:
                        return ScanResult(matches=(), error=RedactionError(
                            "excessive_matches", f"rules[{rule.index}] matched more than {MAX_MATCHES_PER_RECORD} times in one record",
                            rule=rule.index, record=number,
                        ))
                    found[number].append(Match(start, end, rule.replacement))
            except (MemoryError, RecursionError):
                # Defence in depth: the syntax check refuses the recursion that causes this.
                return ScanResult(matches=(), error=RedactionError(
                    "pattern_too_complex", f"rules[{rule.index}]: the regex engine ran out of memory on record {number}",
                    rule=rule.index, record=number,
                ))
            except TimeoutError:
                if timeout == episode_left and episode_left < min(CALL_TIMEOUT_S, rule_left):
                    return ScanResult(matches=(), error=_spent(rule, number, budget))
                limit = f"{CALL_TIMEOUT_S:g} s per record" if timeout == CALL_TIMEOUT_S else f"{RULE_BUDGET_S:g} s in all"
                return ScanResult(matches=(), error=RedactionError(
                    "regex_timeout", f"rules[{rule.index}] ran past its time limit ({limit}) on record {number}", rule=rule.index, record=number,
                ))
            rule_left -= budget.elapsed() - started
            if rule_left <= 0:
                return ScanResult(matches=(), error=RedactionError(
                    "regex_timeout", f"rules[{rule.index}] ran past its time limit ({RULE_BUDGET_S:g} s in all) on record {number}",
                    rule=rule.index, record=number,
                ))
    return ScanResult(matches=tuple(tuple(m) for m in found), error=None)


def _spent(rule: Rule, number: int, budget: Budget) -> RedactionError:
    return RedactionError(
        "budget_exhausted", f"the episode's {budget.total_s:g} s budget ran out at rules[{rule.index}]", rule=rule.index, record=number,
    )


def removed_positions(matches: tuple[Match, ...]) -> set[int]:
    removed: set[int] = set()
    for match in matches:
        removed.update(range(match.start, match.end))
    return removed


def redact(text: str, matches: tuple[Match, ...]) -> str:
    """The record as the rules leave it."""
    marker_at: dict[int, bool] = {}
    for match in matches:
        for position in range(match.start, match.end):
            marker_at[position] = marker_at.get(position, False) or match.replacement == MARKER
    out: list[str] = []
    i = 0
    while i < len(text):
        if i not in marker_at:
            out.append(text[i])
            i += 1
            continue
        j, marker = i, False
        while j < len(text) and j in marker_at:
            marker = marker or marker_at[j]
            j += 1
        out.append(MARKER if marker else "")
        i = j
    return "".join(out)
