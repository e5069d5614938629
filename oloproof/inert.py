"""Text from files, systems and people, made inert for a terminal or a CI log.

A case id, an output, a path or a system's stderr may hold a newline followed by
``::error::`` (a workflow command in a plain CI step), an ANSI or OSC escape (recolour, move the
cursor, retitle the terminal, write a hyperlink), or a bidi override that shows text in another
order than it is. ``inert`` writes every such character as a visible escape (``\\x1b``,
``\\u202e``), so what is shown is what is there and nothing in it acts.
"""

from __future__ import annotations

import re

# C0 controls (newline and tab included), DEL and C1 controls; line and paragraph separators;
# zero-width and bidi formatting characters; the byte-order mark.
_ACTIVE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: object) -> str:
    """``text`` (made a string) with every control, separator and formatting character escaped."""
    value = text if isinstance(text, str) else str(text)
    return _ACTIVE.sub(_escape, value)


def inert_lines(text: str) -> list[str]:
    """Multi-line text (a system's stderr) as inert lines: each line escaped on its own."""
    return [inert(line) for line in text.splitlines()]
