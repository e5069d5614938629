"""The pull request's evidence (the action's ``pull-request`` check) in Markdown, one renderer for
every place a reviewer reads it: the job summary, the check run's text and the sticky comment.

It reads the check as the JSON report holds it (``name``, ``status``, ``sentence``, ``lines``,
``data.config``: per changed config file its headline and every changed setting, and ``data.store``:
every file under .oloproof/ that differs from the base branch), so the comment,
made from the JSON report, says what the summary says. Every setting is listed, none counted away
(a red team hid a loosening behind twelve decoys when only twelve were): the first ``OPEN`` of a
file, ranked loosening keys first, in the open; the rest folded in one ``<details>``. A renderer
with a hard limit (the check run's text, the comment) passes ``budget``: lines past it are counted
in a sentence naming where every one is, never silently dropped.

The report may come from an untrusted job (``mode: publish``): every field is type-checked, and
every string is made inert and escaped (``esc``: no markup, links or mentions).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from oloproof.inert import inert
from oloproof.report.md_text import Block, esc, prose

NAME = "pull-request"
OPEN = 12  # settings of one file listed in the open; the rest are folded (and all listed)


def find(report: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pull-request check of a JSON report, or None (not a pull request)."""
    checks = report.get("checks")
    for check in checks if isinstance(checks, list) else []:
        if isinstance(check, dict) and check.get("name") == NAME:
            return check
    return None


def _text(value: object) -> str:
    return esc(inert(value))


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _lists(check: Mapping[str, Any]) -> dict[int, tuple[str, list[str], bool]]:
    """Line index -> (headline, items, settings?) of each list the check's data holds: per changed
    config file its settings (``data.config``), and the files under .oloproof/ (``data.store``)."""
    data = check.get("data")
    if not isinstance(data, dict):
        return {}
    config = data.get("config")
    entries = [(entry, "settings") for entry in (config if isinstance(config, list) else [])]
    entries.append((data.get("store"), "files"))
    out: dict[int, tuple[str, list[str], bool]] = {}
    for entry, key in entries:
        if isinstance(entry, dict) and isinstance(entry.get("line"), int) and not isinstance(entry["line"], bool):
            out[entry["line"]] = (str(entry.get("headline", "")), _strings(entry.get(key)), key == "settings")
    return out


def parts(check: Mapping[str, Any], *, sentence: str | None = None) -> tuple[str, list[str], str]:
    """``head``, ``rows`` and ``tail`` (closing the fold) of the evidence; ``sentence`` overrides
    the check's own (the summary says a blocking sentence once, under Why)."""
    said = str(check.get("sentence") or "") if sentence is None else sentence
    head = f"**{_text(check.get('title') or 'Pull request evidence')}.** {prose(said)}".rstrip() + "\n\n"
    lists = _lists(check)
    rows: list[str] = []
    folded: list[str] = []
    for index, line in enumerate(_strings(check.get("lines"))):
        if index not in lists:
            rows.append(f"- {_text(line)}\n")
            continue
        headline, items, settings = lists[index]
        if not items:
            rows.append(f"- {_text(headline)}\n")
            continue
        more = f" (the first {OPEN} here, every other one below)" if len(items) > OPEN else ""
        counted = f"; {len(items)} setting(s) changed" if settings else ""
        rows.append(f"- {_text(headline)}{counted}{more}:\n")
        rows += [f"  - {_text(item)}\n" for item in items[:OPEN]]
        file = headline.split(" is ", 1)[0]
        folded += [f"- {_text(file)}: {_text(item)}\n" if settings else f"- {_text(item)}\n" for item in items[OPEN:]]
    if not folded:
        return head, rows, ""
    summary = f"<details><summary>Every other changed setting and file ({len(folded)})</summary>\n\n"
    rows += ["\n", summary, *folded]
    return head, rows, "</details>\n\n"


def block(check: Mapping[str, Any], *, sentence: str | None = None) -> Block:
    """The evidence as a block of the job summary (trimmed row by row only past GitHub's 1 MiB)."""
    head, rows, tail = parts(check, sentence=sentence)
    if not rows and not check.get("sentence"):
        return Block()
    return Block(head=head, rows=rows, tail=tail, name=str(check.get("title") or "pull request evidence"))


def render(check: Mapping[str, Any], *, budget: int, where: str, head: str | None = None) -> str:
    """The evidence in at most ``budget`` characters: rows past it are counted in a sentence that
    says ``where`` every one of them is. ``head`` replaces the bold title and sentence."""
    title, rows, tail = parts(check)
    head = title if head is None else head
    text = head + "".join(rows) + ("\n" + tail if tail else "")
    if len(text) <= budget:
        return text
    note_room = 300
    kept: list[str] = [head]
    used = len(head) + len(tail) + note_room
    for row in rows:
        if used + len(row) > budget:
            break
        kept.append(row)
        used += len(row)
    left = sum(1 for row in rows[len(kept) - 1 :] if row.startswith(("-", "  -")))
    opened = any(row.startswith("<details>") for row in kept)
    note = f"\n*… {left} more line(s) of this evidence did not fit here: {esc(where)}.*\n\n"
    return "".join(kept) + ("\n" + tail if opened else "") + note


def section(report: Mapping[str, Any], *, budget: int, where: str) -> str:
    """``### Pull request evidence``, the check's status and sentence, and the evidence of a JSON
    report (the check run's text, the comment's section), or "" when it has none."""
    check = find(report)
    if check is None:
        return ""
    said = [str(check.get(key) or "") for key in ("status", "sentence")]
    head = "### Pull request evidence\n\n" + "".join(f"{prose(text)}\n\n" for text in said if text)
    return render(check, budget=budget, where=where, head=head)


def as_json(name: str, title: str, status: str, sentence: str, lines: Sequence[str], data: object) -> dict[str, Any]:
    """A check report's fields as the JSON report holds them (for the summary, made from the result)."""
    return {"name": name, "title": title, "status": status, "sentence": sentence, "lines": list(lines), "data": data}
