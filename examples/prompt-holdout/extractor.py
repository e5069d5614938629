"""The system under test: a contract-clause extractor whose "prompt" is a rule file.

    python extractor.py --prompt prompts/extract@v6.md < cases.jsonl > outputs.jsonl

It answers one question about each contract: which jurisdiction's law governs it. Each input
line is a JSON object with an ``id`` and a ``text`` (the contract); each output line is
``{"id": ..., "clause": NAME}``, where NAME is one of the jurisdiction names of the prompt's
table, or ``null`` when no rule finds one. Outputs come in input order.

The prompt file stands in for an LLM prompt: it is the thing the team edits, version after
version, and the only thing that changes between versions. Instead of a model it is read by
this deterministic interpreter (Python's standard library only; no network, no model API), so
every version gives the same answer every time. Its sections (Markdown):

``## Jurisdictions``
    a table ``| name | written as |``: the names the extractor may answer, and the ways each is
    written in contracts (separated by ``;``). ``{place}`` in a rule matches any of them.
``## Rules``
    a numbered list of regular expressions in backticks, tried in order; the first rule that
    matches anywhere in the text answers (its first match). A rule whose pattern holds
    ``{place}`` answers the name of the jurisdiction it matched; a rule written
    ``` `pattern` -> NAME ``` answers NAME.
``## Settings``
    ``- case: ignore`` or ``exact`` (default ignore); ``- match: first`` or ``last`` (which
    occurrence of a rule's pattern answers; default first); ``- default: NAME`` or ``none``
    (the answer when no rule matches; default none).

Everything else in the file is prose for the people who maintain it. A prompt the interpreter
cannot read is an error naming the file and line (exit 2); an input line it cannot read gets
``{"id": ..., "clause": null, "error": "..."}`` (or, without an id, a message on stderr).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

PLACE = "{place}"
_RULE_LINE = re.compile(r"^\d+\.\s+`(?P<pattern>[^`]+)`(?:\s*->\s*(?P<answer>[^—]+?))?\s*(?:—.*)?$")
_SETTING_LINE = re.compile(r"^-\s+(?P<key>[a-z]+):\s*(?P<value>.+?)\s*$")
_SETTINGS = {"case": ("ignore", "exact"), "match": ("first", "last")}


class PromptError(Exception):
    """The prompt file cannot be interpreted; the message names the file and line."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern[str]
    answer: str | None  # a fixed answer, or None: the jurisdiction {place} matched
    line: int


@dataclass(frozen=True)
class Prompt:
    names: dict[str, str]  # each written form, lowercased -> the jurisdiction's name
    rules: tuple[Rule, ...]
    last: bool  # match: last
    default: str | None


def load_prompt(path: Path) -> Prompt:
    """Parse a prompt file (see the module docstring)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise PromptError(f"{path}: cannot read the prompt ({exc.strerror or exc})") from None
    section = ""
    forms: dict[str, str] = {}  # each written form, lowercased -> name
    spelled: list[str] = []  # the written forms as spelled in the table
    raw_rules: list[tuple[int, str, str | None]] = []
    settings = {"case": "ignore", "match": "first", "default": "none"}
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("## "):
            section = stripped[3:].strip().lower()
            continue
        if not stripped:
            continue
        where = f"{path}:{number}"
        if section == "jurisdictions" and stripped.startswith("|"):
            cells = [cell.strip() for cell in stripped.strip("|").split("|")]
            if len(cells) != 2:
                raise PromptError(f"{where}: a jurisdiction row needs two cells (| name | written as |)")
            name, written = cells
            if name.lower() == "name" or set(name) <= set("-: "):
                continue  # the header and its separator
            for form in (part.strip() for part in written.split(";")):
                if not form:
                    raise PromptError(f"{where}: an empty written form for {name}")
                previous = forms.setdefault(form.lower(), name)
                if previous != name:
                    raise PromptError(f"{where}: '{form}' is already written for {previous}")
                spelled.append(form)
        elif section == "rules" and stripped[0].isdigit():
            match = _RULE_LINE.match(stripped)
            if match is None:
                raise PromptError(f"{where}: a rule is written '1. `pattern`' or '1. `pattern` -> NAME'")
            answer = match["answer"].strip() if match["answer"] else None
            raw_rules.append((number, match["pattern"], answer))
        elif section == "settings" and stripped.startswith("-"):
            match = _SETTING_LINE.match(stripped)
            if match is None or match["key"] not in (*_SETTINGS, "default"):
                raise PromptError(f"{where}: a setting is '- case: ...', '- match: ...' or '- default: ...'")
            key, value = match["key"], match["value"]
            if key in _SETTINGS and value not in _SETTINGS[key]:
                raise PromptError(f"{where}: {key} is one of {', '.join(_SETTINGS[key])}, got '{value}'")
            settings[key] = value
    if not forms:
        raise PromptError(f"{path}: no jurisdictions (a '## Jurisdictions' table)")
    if not raw_rules:
        raise PromptError(f"{path}: no rules (a '## Rules' list)")
    known = set(forms.values())
    default = None if settings["default"] == "none" else settings["default"]
    if default is not None and default not in known:
        raise PromptError(f"{path}: default '{default}' is not a jurisdiction of the table")
    # Longest forms first, so "the State of New York" wins over "New York" at the same position.
    place = "(?P<place>" + "|".join(re.escape(form) for form in sorted(spelled, key=lambda f: (-len(f), f))) + ")"
    flags = re.IGNORECASE if settings["case"] == "ignore" else 0
    rules: list[Rule] = []
    for number, pattern, answer in raw_rules:
        if answer is None and PLACE not in pattern:
            raise PromptError(f"{path}:{number}: a rule without {PLACE} needs a fixed answer ('-> NAME')")
        if answer is not None and answer not in known:
            raise PromptError(f"{path}:{number}: answer '{answer}' is not a jurisdiction of the table")
        try:
            compiled = re.compile(pattern.replace(PLACE, place), flags)
        except re.error as exc:
            raise PromptError(f"{path}:{number}: the pattern does not compile ({exc})") from None
        rules.append(Rule(pattern=compiled, answer=answer, line=number))
    # Forms are keyed lowercased; a match is looked up lowercased too (with `case: exact` the
    # pattern alone decides what matches).
    return Prompt(names=forms, rules=tuple(rules), last=settings["match"] == "last", default=default)


def extract(prompt: Prompt, text: str) -> str | None:
    """The jurisdiction the first matching rule finds in ``text``, or the prompt's default."""
    for rule in prompt.rules:
        if prompt.last:
            matches = list(rule.pattern.finditer(text))
            found = matches[-1] if matches else None
        else:
            found = rule.pattern.search(text)
        if found is None:
            continue
        if rule.answer is not None:
            return rule.answer
        return prompt.names[found["place"].lower()]
    return prompt.default


def answer_line(prompt: Prompt, raw: str, number: int) -> dict[str, object] | None:
    """The output object for one input line (None, with a message on stderr, when it has no id)."""
    try:
        case = json.loads(raw)
    except json.JSONDecodeError as exc:
        print(f"stdin:{number}: not valid JSON ({exc.msg}); skipped", file=sys.stderr)
        return None
    if not isinstance(case, dict) or not isinstance(case.get("id"), str):
        print(f"stdin:{number}: expected an object with a string 'id'; skipped", file=sys.stderr)
        return None
    text = case.get("text")
    if not isinstance(text, str):
        return {"id": case["id"], "clause": None, "error": "no 'text' string in the input"}
    return {"id": case["id"], "clause": extract(prompt, text)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Extract the governing-law jurisdiction of each contract (JSONL in, JSONL out).")
    parser.add_argument("--prompt", required=True, type=Path, help="the prompt (rule) file, e.g. prompts/extract@v6.md")
    args = parser.parse_args(argv)
    try:
        prompt = load_prompt(args.prompt)
    except PromptError as exc:
        print(f"extractor: {exc}", file=sys.stderr)
        return 2
    out = sys.stdout
    for number, raw in enumerate(sys.stdin, start=1):
        if not raw.strip():
            continue
        answer = answer_line(prompt, raw, number)
        if answer is not None:
            out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
