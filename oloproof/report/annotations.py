"""Annotations: one per non-PASS rule (and per check with a non-PASS verdict), at its line.

Two renderings of the same list:

- workflow commands for the log (``::error file=F,line=L,title=T::message``), escaped as the
  runner unescapes them, and capped as GitHub shows them: at most 10 errors, 10 warnings and
  10 notices per step. The most severe come first; whatever does not fit is counted in one
  notice that sends the reader to the job summary.
- Checks API annotation objects (``annotation_level`` failure/warning/notice), uncapped: the
  caller sends them in batches of 50.

A verdict in ``fail_on`` (it fails the job) is an error; any other non-PASS verdict is a
warning. Paths are repo-relative: ``path_of`` maps a config path (as the gate shows it) to
the path relative to the repository root, or None when it lies outside.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from oloproof.inert import inert as made_inert
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.result import GateResult

Level = Literal["error", "warning", "notice"]

PER_LEVEL_CAP = 10  # GitHub shows at most 10 annotations of each level per step
API_LEVEL = {"error": "failure", "warning": "warning", "notice": "notice"}
API_TITLE_LIMIT = 255
API_MESSAGE_LIMIT = 64 * 1024
FAILING: frozenset[Verdict] = frozenset(verdict for verdict in Verdict if verdict is not Verdict.PASS)
_LEVEL_ORDER = {"error": 0, "warning": 1, "notice": 2}


@dataclass(frozen=True, slots=True, kw_only=True)
class Annotation:
    level: Level
    title: str
    message: str
    file: str | None = None  # relative to the repository root
    line: int | None = None
    severity: int = 0  # higher first, within a level

    def command(self) -> str:
        """The workflow command for the log, escaped."""
        props = []
        if self.file is not None:
            props.append(f"file={escape_property(self.file)}")
            if self.line is not None:
                props.append(f"line={self.line}")
        if self.title:
            props.append(f"title={escape_property(self.title)}")
        head = f"::{self.level}" + (" " + ",".join(props) if props else "")
        return f"{head}::{escape_data(self.message)}"

    def api(self) -> dict[str, object]:
        """The Checks API annotation object (needs a path; a line defaults to 1)."""
        line = self.line or 1
        return {
            "path": self.file or ".",
            "start_line": line,
            "end_line": line,
            "annotation_level": API_LEVEL[self.level],
            "title": self.title[:API_TITLE_LIMIT],
            "message": self.message[:API_MESSAGE_LIMIT],
        }


def escape_data(text: str) -> str:
    """A command's message, as the runner unescapes it (``%`` first, so escapes stay literal)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A command's property value: the message escapes plus ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def level_of(verdict: Verdict, fail_on: frozenset[Verdict]) -> Level | None:
    if verdict is Verdict.PASS:
        return None
    return "error" if verdict in fail_on else "warning"


def collect(
    result: GateResult,
    *,
    fail_on: frozenset[Verdict] = FAILING,
    path_of: Callable[[str], str | None] = lambda path: path,
) -> list[Annotation]:
    """Every annotation of a gate result, most severe first (the result's order among equals)."""
    found: list[tuple[int, Annotation]] = []
    for rule in result.rules:
        level = level_of(rule.verdict, fail_on)
        if level is None:
            continue
        level = "notice" if rule.advisory else level  # shown, never fails the gate
        reasons = ", ".join(code for code in rule.reasons if code != "interval_clears_threshold")
        message = rule.full_sentence + (f"\nreasons: {reasons}" if reasons else "")
        file = path_of(rule.source)
        found.append(
            (
                len(found),
                Annotation(
                    level=level,
                    title=made_inert(
                        f"oloproof: {'advisory ' if rule.advisory else ''}rule {rule.rule_id} is {rule.verdict.value}"
                    ),
                    message=message,
                    file=file,
                    line=rule.line if file is not None else None,
                    severity=rule.verdict.severity,
                ),
            )
        )
    for report in result.checks:
        if report.verdict is None:
            continue
        level = level_of(report.verdict, fail_on)
        if level is None:
            continue
        source = report.source or result.release.path
        file = path_of(source)
        message = (report.sentence or report.status) + (
            f"\nreasons: {', '.join(report.reasons)}" if report.reasons else ""
        )
        found.append(
            (
                len(found),
                Annotation(
                    level=level,
                    title=f"oloproof: {report.title} is {report.verdict.value}",
                    message=message,
                    file=file,
                    line=report.line if file is not None else None,
                    severity=report.verdict.severity,
                ),
            )
        )
    found.sort(key=lambda item: (_LEVEL_ORDER[item[1].level], -item[1].severity, item[0]))
    return [annotation for _, annotation in found]


def capped(
    annotations: Iterable[Annotation],
    *,
    cap: int = PER_LEVEL_CAP,
    more_hint: str = "see the job summary",
    used: Mapping[Level, int] | None = None,
) -> list[Annotation]:
    """At most ``cap`` per level, most severe first; one notice counts the rest.

    ``used`` counts what the step already showed of each level (e.g. an event-payload warning
    before the rules' annotations): only the room left is filled. The counting notice takes one
    of the notices' places, so the step never exceeds ``cap`` of any level.
    """
    levels: tuple[Level, ...] = ("error", "warning", "notice")
    room = {level: max(0, cap - (used or {}).get(level, 0)) for level in levels}
    ordered = sorted(enumerate(annotations), key=lambda item: (_LEVEL_ORDER[item[1].level], -item[1].severity, item[0]))
    by_level: dict[Level, list[Annotation]] = {"error": [], "warning": [], "notice": []}
    for _, annotation in ordered:
        by_level[annotation.level].append(annotation)
    dropped = sum(max(0, len(items) - room[level]) for level, items in by_level.items() if level != "notice")
    notices = room["notice"]
    notice_room = notices if dropped == 0 and len(by_level["notice"]) <= notices else max(0, notices - 1)
    dropped += max(0, len(by_level["notice"]) - notice_room)
    kept = (
        by_level["error"][: room["error"]] + by_level["warning"][: room["warning"]] + by_level["notice"][:notice_room]
    )
    if dropped and notices:
        kept.append(
            Annotation(
                level="notice",
                title="oloproof: more findings",
                message=(
                    f"{dropped} more finding(s) are not shown as annotations (GitHub shows at most {cap} per level per "
                    f"step): {more_hint}."
                ),
            )
        )
    return kept


def render(
    result: GateResult,
    *,
    fail_on: frozenset[Verdict] = FAILING,
    path_of: Callable[[str], str | None] = lambda path: path,
    extra: Sequence[Annotation] = (),
) -> str:
    """The workflow-command lines for the log, capped, one per line."""
    lines = [
        annotation.command() for annotation in capped([*collect(result, fail_on=fail_on, path_of=path_of), *extra])
    ]
    return "".join(line + "\n" for line in lines)


_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def inert(text: str) -> bool:
    """Whether the runner would read no workflow command in ``text`` printed as one line.

    The runner trims a line and takes ``::name ...::`` at its start, and the older ``##[name]``
    anywhere in it. A line break (or any control character) could start a new line, so such text
    is never inert.
    """
    if any(ch in _LINE_BREAKS or (ord(ch) < 32 and ch != "\t") or ord(ch) == 127 for ch in text):
        return False
    return not text.strip().startswith("::") and "##[" not in text


def safe_line(text: str) -> str:
    """``text`` for the log: as it is when inert, else inside ``::stop-commands::``.

    Every line the action prints that carries config, case, system or event text goes through
    this (a system version ``v1\n::add-mask::x`` must stay text).
    """
    return text + "\n" if inert(text) else stop_commands(text)


def stop_commands(text: str, *, token: str | None = None) -> str:
    """Wrap ``text`` so the runner executes no workflow command inside it.

    Model outputs, case ids and error messages that quote them go to the log through this:
    a line such as ``::add-mask::`` or ``::error::`` written by a model must stay text.
    """
    token = token or secrets.token_hex(16)
    while f"::{token}::" in text:  # never let the text end the protection early
        token = secrets.token_hex(16)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"::stop-commands::{token}\n{body}::{token}::\n"
