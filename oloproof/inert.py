"""Text from files, systems and people, made inert for a terminal or a CI log.

A case id, an output, a path or a system's stderr may hold a newline followed by
``::error::`` (a workflow command in a plain CI step), an ANSI or OSC escape (recolour, move the
cursor, retitle the terminal, write a hyperlink), or a bidi override that shows text in another
order than it is. ``inert`` writes every such character as a visible escape (``\\x1b``,
``\\u202e``), so what is shown is what is there and nothing in it acts.

It is the one function every id, version, path and output goes through before it is printed. Beyond
controls it escapes what looks like something else: spaces other than the ASCII space, variation
selectors, tag characters (invisible ASCII look-alikes) and emoji and pictographs (an id
``✅ all passed`` must not pass for the tool's own word). For a CI log it also breaks the two
workflow-command forms GitHub's runner reads: ``##[`` anywhere in a line, and ``::`` at the start of
one (after blanks), which ``inert`` escapes at the start of any text and ``safe_line`` at the start
of any line.
"""

from __future__ import annotations

import re
from typing import Any

# C0 controls (newline and tab included), DEL and C1 controls; line and paragraph separators;
# zero-width and bidi formatting characters; the byte-order mark; spaces other than U+0020;
# variation selectors, interlinear annotations, tags; surrogates (undecodable bytes); emoji and
# pictographs (Miscellaneous Symbols, Dingbats, arrows and shapes of U+2B00, U+1F000-U+1FAFF).
_ACTIVE = re.compile(
    "[\x00-\x1f\x7f-\xa0\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f"
    "\u2600-\u27bf\u2b00-\u2bff\u3000\ud800-\udfff\ufe00-\ufe0f\ufeff\ufff9-\ufffb"
    "\U0001f000-\U0001faff\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_LEGACY_COMMAND = "##["  # the runner reads ``##[name]`` anywhere in a line
_COMMAND = "::"  # ... and ``::name::`` at the start of one, after blanks


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def inert(text: object) -> str:
    """``text`` (made a string) with every control, separator, formatting character and emoji
    escaped, ``##[`` broken, and a leading ``::`` escaped: safe anywhere in a line, its start too."""
    value = text if isinstance(text, str) else str(text)
    value = _ACTIVE.sub(_escape, value).replace(_LEGACY_COMMAND, "#\\x23[")
    return _guard_start(value)


def _guard_start(line: str) -> str:
    body = line.lstrip()
    if not body.startswith(_COMMAND):
        return line
    blanks = line[: len(line) - len(body)]
    return blanks + "\\x3a" + body[1:]


def safe_line(line: str) -> str:
    """A line the tool composed, for a terminal or a CI log: whatever text from files it quotes,
    it does not begin (after blanks) with ``::`` and holds no ``##[``. For output that did not go
    through ``inert`` (a table's cell, a wrapped line), as a last guard."""
    return _guard_start(line.replace(_LEGACY_COMMAND, "#\\x23["))


def inert_lines(text: str) -> list[str]:
    """Multi-line text (a system's stderr) as inert lines: each line escaped on its own."""
    return [inert(line) for line in text.splitlines()]


class SafeLines:
    """A text stream whose every line goes out through ``safe_line``: the plain CLI's stdout and
    stderr, so that no line it prints can be a workflow command in a CI log, whatever a renderer
    forgot. Text is held until its line's first non-blank character is known."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._head = ""  # the start of the current line, while it is only blanks (or one ':')

    def write(self, text: str) -> int:
        out: list[str] = []
        for piece in text.splitlines(keepends=True):
            line = self._head + piece
            self._head = ""
            ended = line.endswith(("\n", "\r"))
            body = line.rstrip("\r\n")
            if not ended and (not body.strip() or body.strip() == ":"):
                self._head = line  # cannot tell yet whether this line will start with "::"
                continue
            out.append(safe_line(body) + line[len(body) :])
        if out:
            self._stream.write("".join(out))
        return len(text)

    def flush(self) -> None:
        if self._head:
            self._stream.write(self._head)
            self._head = ""
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding, buffer: the stream's own
        return getattr(self._stream, name)
