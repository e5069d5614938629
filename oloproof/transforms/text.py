"""Text transforms: seeded typos, letter case, whitespace, declared word swaps.

A person can read the original and the transformed text side by side and say whether the
meaning survived, so these are *validated* transforms: their rules decide once human labels
show every changed case kept its meaning (SPEC §5).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from oloproof.schema import MapOf, Obj, Prop, Scalar
from oloproof.transforms.base import (
    SEED_MAX,
    ApplyEnv,
    Changed,
    Family,
    Outcome,
    SpecError,
    TransformKind,
    Unchanged,
    ValueProblem,
    case_rng,
)


def _text(value: Any, kind: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueProblem(f"{kind} needs a string, got {type(value).__name__}")
    return value


def _result(before: str, after: str, why: str) -> Outcome:
    return Unchanged(why) if after == before else Changed(after)


# --------------------------------------------------------------------------- typos


@dataclass(frozen=True, slots=True)
class Typos:
    """Edits ``rate`` of the letters (at least one per text): each edit swaps a letter with the
    next one or deletes it, at positions drawn from a per-case seeded generator. CheckList's
    typo is one adjacent swap; Giskard's rate is about 5% of characters."""

    rate: float
    seed: int
    kind: str = "typos"
    family: Family = "text"

    def describe(self) -> str:
        return f"typos in {self.rate:.0%} of letters (adjacent swaps and deletions, at least one), seed {self.seed}"

    def params(self) -> dict[str, Any]:
        return {"rate": self.rate, "seed": self.seed}

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        text = _text(value, self.kind)
        if text is None:
            return Unchanged("no text")
        return _result(text, typo(text, rate=self.rate, rng=case_rng(self.seed, case_id)), "no letter to edit")


def typo(text: str, *, rate: float, rng: Any) -> str:
    """Pure: ``text`` with round(rate × letters) (at least one) swaps or deletions of letters."""
    letters = [index for index, char in enumerate(text) if char.isalpha()]
    if not letters:
        return text
    count = min(len(letters), max(1, round(rate * len(letters))))
    chosen = sorted(int(i) for i in rng.choice(len(letters), size=count, replace=False))
    swaps = rng.random(count) < 0.5
    chars = list(text)
    # Right to left, so an edit never moves a position still to be edited.
    for position, swap in sorted(zip((letters[i] for i in chosen), swaps, strict=True), reverse=True):
        nxt = position + 1
        if swap and nxt < len(chars) and chars[nxt].isalpha() and chars[nxt] != chars[position]:
            chars[position], chars[nxt] = chars[nxt], chars[position]
        else:
            del chars[position]
    return "".join(chars)


# --------------------------------------------------------------------------- case

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class Case:
    to: str  # lower | upper | title
    kind: str = "case"
    family: Family = "text"

    def describe(self) -> str:
        return f"letter case to {self.to}"

    def params(self) -> dict[str, Any]:
        return {"to": self.to}

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        text = _text(value, self.kind)
        if text is None:
            return Unchanged("no text")
        if self.to == "lower":
            after = text.lower()
        elif self.to == "upper":
            after = text.upper()
        else:  # str.title() would write "They'Re"; capitalise whole words instead
            after = _WORD.sub(lambda m: m[0][:1].upper() + m[0][1:].lower(), text)
        return _result(text, after, f"the text is already {self.to} case")


# --------------------------------------------------------------------------- whitespace

_RUN = re.compile(r"\s+")
_INNER_SPACE = re.compile(r"(?<=\S)( +)(?=\S)")


@dataclass(frozen=True, slots=True)
class Whitespace:
    mode: str  # double | collapse | pad
    kind: str = "whitespace"
    family: Family = "text"

    def describe(self) -> str:
        return {
            "double": "spaces between words doubled",
            "collapse": "runs of whitespace collapsed to one space, ends trimmed",
            "pad": "a space added at the start and a space and newline at the end",
        }[self.mode]

    def params(self) -> dict[str, Any]:
        return {"mode": self.mode}

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        text = _text(value, self.kind)
        if text is None:
            return Unchanged("no text")
        if self.mode == "double":
            after = _INNER_SPACE.sub(lambda m: m[1] * 2, text)
        elif self.mode == "collapse":
            after = _RUN.sub(" ", text).strip()
        else:
            after = f" {text} \n"
        return _result(text, after, "the text has no whitespace this mode changes")


# --------------------------------------------------------------------------- word_swap


@dataclass(frozen=True, slots=True)
class WordSwap:
    """Replaces whole words (or phrases) by a declared mapping, all at once (so a<->b swaps)."""

    mapping: tuple[tuple[str, str], ...]
    ignore_case: bool
    kind: str = "word_swap"
    family: Family = "text"

    def describe(self) -> str:
        return "word swaps (" + ", ".join(f"{old}→{new}" for old, new in self.mapping) + ")"

    def params(self) -> dict[str, Any]:
        return {"mapping": dict(self.mapping), "ignore_case": self.ignore_case}

    def words(self) -> tuple[str, ...]:
        """The declared words, longest first (so a phrase wins over a word inside it)."""
        return tuple(sorted((old for old, _ in self.mapping), key=lambda word: (-len(word), word)))

    def pattern(self) -> re.Pattern[str]:
        # One capturing group per declared word, in the order of words(): the group that matched
        # names the declared word, so the replacement never depends on folding the text found.
        # (With IGNORECASE, "İT" matches "it" but folds to "i̇t", which no table key equals.)
        alternation = "|".join(f"({re.escape(word)})" for word in self.words())
        return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)", re.IGNORECASE if self.ignore_case else 0)

    def apply(self, value: Any, *, case_id: str, env: ApplyEnv) -> Outcome:
        text = _text(value, self.kind)
        if text is None:
            return Unchanged("no text")
        table = dict(self.mapping)
        words = self.words()

        def replace(match: re.Match[str]) -> str:
            found = match[0]
            assert match.lastindex is not None  # every alternative is a group
            new = table[words[match.lastindex - 1]]
            if self.ignore_case and found.isupper() and len(found) > 1:
                return new.upper()
            if self.ignore_case and found[:1].isupper():
                return new[:1].upper() + new[1:]
            return new

        return _result(text, self.pattern().sub(replace, text), "none of the declared words occurs in the text")


# --------------------------------------------------------------------------- kinds


def _build_typos(values: dict[str, Any]) -> Typos:
    return Typos(rate=float(values["rate"]), seed=int(values["seed"]))


def _build_case(values: dict[str, Any]) -> Case:
    return Case(to=values["to"])


def _build_whitespace(values: dict[str, Any]) -> Whitespace:
    return Whitespace(mode=values["mode"])


def _build_word_swap(values: dict[str, Any]) -> WordSwap:
    mapping = values["mapping"]
    for old, new in mapping.items():
        if not old.strip() or old != old.strip():
            raise SpecError(f"mapping.{old}", "a word to replace must be non-empty, without leading or trailing spaces")
        if old == new:
            raise SpecError(f"mapping.{old}", "maps the word to itself")
    if values["ignore_case"]:
        folded: dict[str, str] = {}
        for old in mapping:
            if old.casefold() in folded:
                raise SpecError(
                    f"mapping.{old}", f"with ignore_case, '{old}' and '{folded[old.casefold()]}' are the same word"
                )
            folded[old.casefold()] = old
    return WordSwap(mapping=tuple(mapping.items()), ignore_case=bool(values["ignore_case"]))


TYPOS = TransformKind(
    name="typos",
    family="text",
    schema=Obj(
        {
            "rate": Prop(
                Scalar("number", exclusive_minimum=0.0, maximum=1.0),
                required=True,
                doc="Share of letters edited (at least one per text); Giskard uses about 0.05.",
            ),
            "seed": Prop(
                Scalar("int", minimum=0, maximum=SEED_MAX),
                default=0,
                doc="Seed; each case's typos come from it and the case id.",
            ),
        },
        doc="Seeded typos: adjacent-letter swaps and deletions.",
    ),
    build=_build_typos,
)
CASE = TransformKind(
    name="case",
    family="text",
    schema=Obj(
        {
            "to": Prop(
                Scalar("str", enum=("lower", "upper", "title")),
                required=True,
                doc="lower, upper, or title (each word capitalised).",
            )
        },
        doc="Change the letter case of the text.",
    ),
    build=_build_case,
)
WHITESPACE = TransformKind(
    name="whitespace",
    family="text",
    schema=Obj(
        {
            "mode": Prop(
                Scalar("str", enum=("double", "collapse", "pad")),
                default="double",
                doc="double: spaces between words doubled; collapse: whitespace runs to one space, ends trimmed; "
                "pad: a space before, a space and a newline after.",
            )
        },
        doc="Change whitespace only.",
    ),
    build=_build_whitespace,
)
WORD_SWAP = TransformKind(
    name="word_swap",
    family="text",
    schema=Obj(
        {
            "mapping": Prop(
                MapOf(Scalar("str"), min_items=1),
                required=True,
                doc="Declared replacements {word: word}; whole words or phrases, replaced all at once.",
            ),
            "ignore_case": Prop(
                Scalar("bool"),
                default=False,
                doc="Match words in any case; the replacement copies a capital first letter or all capitals.",
            ),
        },
        doc="Replace whole words by a declared mapping (e.g. synonyms, names).",
    ),
    build=_build_word_swap,
)
