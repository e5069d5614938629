"""Text pieces of the Markdown summary (``oloproof.report.markdown``) and of what reuses them (the
PR comment, the action's pages, the gap report): escaping, code spans, sentences whose commands are
shown as code, the verdict badge and the threshold.

Every string that came from a config, a case or a system is escaped (HTML entities, and Markdown's
active characters as entities), so a case id cannot inject markup or links.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from oloproof.inert import inert
from oloproof.result import RuleResult
from oloproof.verdicts import Verdict

ICON = {
    Verdict.PASS: "✅",
    Verdict.FAIL: "❌",
    Verdict.BLOCKED: "⛔",
    Verdict.INSUFFICIENT_EVIDENCE: "⚠️",
    Verdict.MANUAL_REVIEW: "👀",
}
NBSP = "\u00a0"  # GitHub sets code spans white-space: break-spaces; a no-break space keeps one on one line
_MD_ACTIVE = re.compile(r"[\\`*_\[\]|~#!<>&]")
_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
# GitHub's Markdown links a bare URL or www. name in text (its autolink extension), even inside
# <code>: an entity for the ":" or the "." leaves the text as read and makes no link. (An e-mail
# address still becomes a mailto: link.) GitHub also links @name and @org/team in rendered text, and
# an entity does not stop it (it reads the decoded text): a zero-width space after the @ does, and
# the text still reads the same.
_AUTOLINK = re.compile(r"://|(?i:\bwww\.)")
ZWSP = "\u200b"


def esc(text: object) -> str:
    """Text from a file or a system, safe in a Markdown paragraph or table cell."""
    value = str(text)
    value = _MD_ACTIVE.sub(lambda match: _ENTITY.get(match.group(), f"&#{ord(match.group())};"), value)
    value = _AUTOLINK.sub(lambda match: "&#58;//" if match.group() == "://" else match.group()[:3] + "&#46;", value)
    value = value.replace("@", "@" + ZWSP)
    return value.replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def code(text: object) -> str:
    """An id, a version, a path or a digest (never a sentence): made inert (bidi, controls and emoji
    escaped, as everywhere an id is printed), then like ``esc`` in a monospace span (HTML ``<code>``:
    backticks cannot be escaped in GFM)."""
    return f"<code>{esc(inert(text))}</code>"


def prose(text: object) -> str:
    """A sentence oloproof wrote (it may quote config or case text): like ``esc``, except that what
    it puts between backticks (a command, a key: ``oloproof leakage check --record``) is shown as
    code, as the terminal shows it. Unpaired backticks are shown as written."""
    parts = str(text).split("`")
    if len(parts) < 3 or len(parts) % 2 == 0:
        return esc(text)
    return "".join(code(part) if index % 2 else esc(part) for index, part in enumerate(parts))


def verdict_badge(verdict: Verdict) -> str:
    return f"{ICON[verdict]}{NBSP}{verdict.value}"  # the icon never alone on a line


def threshold_text(rule: RuleResult) -> str:
    if rule.threshold is None:
        return "—"
    if rule.kind == "min":
        return f"≥{NBSP}{rule.threshold:g}"
    if rule.kind == "max":
        return f"≤{NBSP}{rule.threshold:g}"
    if rule.kind == "regression":
        return f"drop{NBSP}≤{NBSP}{rule.threshold:g}"
    return f"{rule.threshold:g}"


@dataclass(slots=True)
class Block:
    """A piece of the summary: plain text, or a table or list whose rows can be dropped from the end
    (``tail`` closes it: a ``</details>``)."""

    text: str = ""
    head: str = ""
    rows: list[str] = field(default_factory=list)
    name: str = ""  # shown in the trim note when the block is left out
    tail: str = ""

    def full(self) -> str:
        return self.text if not self.head else self.head + "".join(self.rows) + "\n" + self.tail


def folded(summary: str, body: str) -> str:
    """``body`` (Markdown) under a ``<details>`` whose one-line ``summary`` (already escaped) opens it."""
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n\n"
