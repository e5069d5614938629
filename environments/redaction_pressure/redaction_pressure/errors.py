"""Validity failures: what the model's reply did wrong (recorded, reward multiplied by zero).

Infrastructure failures (a missing private secret, a bug, an unreachable model endpoint) are
not these: they raise, and the episode has no reward rather than a reward of 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Every code a validity failure can carry, documented in README.md ("Validity failures").
CODES = (
    "reply_too_large", "malformed_json", "bad_envelope", "bad_entry", "too_many_rules",
    "unsafe_replacement", "pattern_too_long", "unsupported_syntax", "pattern_too_complex",
    "invalid_regex", "zero_width_match", "excessive_matches", "regex_timeout", "budget_exhausted",
    "unscorable_reply",  # the reply broke something no other check caught: still a 0.0, never a crash
)


@dataclass(frozen=True, slots=True)
class RedactionError:
    code: str
    message: str
    rule: int | None = None  # index into the reply's rules
    record: int | None = None  # index into the scored records

    def __post_init__(self) -> None:
        if self.code not in CODES:
            raise ValueError(f"unknown redaction error code {self.code!r}")

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "rule": self.rule, "record": self.record}
