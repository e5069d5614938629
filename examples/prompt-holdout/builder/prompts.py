"""The prompt versions: extract-v1 (week 0), thirty iterations, extract-v6 (week 6).

A prompt is a rule file read by ``extractor.py`` (see its docstring for the format). The team's
six weeks are a greedy search on the dev set: each iteration applies one change to the working
prompt (the last accepted version), runs the candidate on the dev set, and keeps it only if the
dev score goes up. ``LINEAGE`` lists the thirty iterations in order with the decision the team
made; ``build.py`` checks every decision against the real dev scores (accepted exactly when the
dev score rose), so the story and the evidence cannot disagree.

Versions are named ``extract-vM.K``; the keeper of each round of six is released under the next
major name (``extract-v2`` … ``extract-v6``) and becomes ``system.version`` in release.yaml.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

WEEK0 = datetime(2025, 9, 1, 9, 0, tzinfo=timezone.utc)  # a Monday


@dataclass(frozen=True)
class RuleSpec:
    pattern: str
    answer: str | None = None
    note: str = ""
    written_for: tuple[str, ...] = ()  # the kinds of dev case (builder/contracts.py) whose failures it was written for


@dataclass(frozen=True)
class PromptState:
    forms: tuple[tuple[str, tuple[str, ...]], ...]  # (name, written forms), in table order
    rules: tuple[RuleSpec, ...]
    case: str = "ignore"
    match: str = "first"
    default: str | None = None


R1 = RuleSpec(r"governed by (?:and construed in accordance with )?the laws? of {place}", note="the usual choice-of-law sentence")

V1 = PromptState(
    forms=(
        ("New York", ("the State of New York", "New York")),
        ("Delaware", ("the State of Delaware", "Delaware")),
        ("California", ("the State of California", "California")),
        ("Texas", ("the State of Texas", "Texas")),
        ("Massachusetts", ("the Commonwealth of Massachusetts", "Massachusetts")),
        ("England and Wales", ("England and Wales",)),
        ("Scotland", ("Scotland",)),
        ("Ireland", ("Ireland",)),
        ("Ontario", ("the Province of Ontario", "Ontario")),
        ("Singapore", ("the Republic of Singapore", "Singapore")),
    ),
    rules=(R1,),
)

Change = Callable[[PromptState], PromptState]


def add_rule(spec: RuleSpec, *, first: bool = False) -> Change:
    def apply(state: PromptState) -> PromptState:
        return replace(state, rules=(spec, *state.rules) if first else (*state.rules, spec))

    return apply


def add_rules(*specs: RuleSpec) -> Change:
    def apply(state: PromptState) -> PromptState:
        return replace(state, rules=(*state.rules, *specs))

    return apply


def replace_rule(old: RuleSpec, new: RuleSpec) -> Change:
    def apply(state: PromptState) -> PromptState:
        if old not in state.rules:
            raise AssertionError(f"rule {old.pattern!r} is not in the working prompt")
        return replace(state, rules=tuple(new if rule == old else rule for rule in state.rules))

    return apply


def add_forms(extra: dict[str, tuple[str, ...]]) -> Change:
    def apply(state: PromptState) -> PromptState:
        return replace(state, forms=tuple((name, (*written, *extra.get(name, ()))) for name, written in state.forms))

    return apply


def bare_names_only(state: PromptState) -> PromptState:
    return replace(state, forms=tuple((name, tuple(f for f in written if not f.startswith("the "))) for name, written in state.forms))


def setting(**values: str | None) -> Change:
    def apply(state: PromptState) -> PromptState:
        return replace(state, **values)  # type: ignore[arg-type]

    return apply


def both(*changes: Change) -> Change:
    def apply(state: PromptState) -> PromptState:
        for change in changes:
            state = change(state)
        return state

    return apply


def rare(pattern: str, template: str, answer: str | None = None) -> RuleSpec:
    """A rule written for one idiosyncratic dev phrasing (builder/contracts.py RARE[template])."""
    return RuleSpec(pattern, answer=answer, written_for=(f"rare:{template}",))


@dataclass(frozen=True)
class Iteration:
    number: int  # 1..30
    version: str  # "extract-v2.3"
    change: str  # what was tried, in the team's words
    apply: Change = field(repr=False)
    accepted: bool

    @property
    def major(self) -> bool:
        return "." not in self.version.removeprefix("extract-v")

    @property
    def week(self) -> int:
        return (self.number + 4) // 5

    @property
    def when(self) -> datetime:
        """When it was tried: five iterations a week, Monday to Friday, 10:00 UTC."""
        return WEEK0 + timedelta(weeks=self.week, days=(self.number - 1) % 5, hours=1)


_I = Iteration
LINEAGE: tuple[Iteration, ...] = (
    _I(1, "extract-v1.1", "add a rule for the reversed order, 'The laws of X govern this Agreement'",
       add_rule(RuleSpec(r"the laws of {place} (?:shall )?govern", note="the reversed order", written_for=("reversed",))), True),
    _I(2, "extract-v1.2", "broaden rule 1 to any 'the laws of X', with or without 'governed by'",
       replace_rule(R1, RuleSpec(r"the laws? of {place}", note="any mention of the laws of a place")), False),
    _I(3, "extract-v1.3", "add a rule for 'interpreted under the internal laws of X'",
       add_rule(rare(r"interpreted under the internal laws of {place}", "T01")), True),
    _I(4, "extract-v1.4", "simplify the table: bare names only (drop 'the State of …' forms)", bare_names_only, False),
    _I(5, "extract-v1.5", "add a rule for 'subject to the laws of the Republic of Singapore'",
       add_rule(rare(r"subject to the laws of the Republic of Singapore", "T02", answer="Singapore")), True),
    _I(6, "extract-v2", "add a rule for 'construed according to the laws of X'",
       add_rule(rare(r"construed according to the laws of {place}", "T03")), True),
    _I(7, "extract-v2.1", "read the forum clause first: the courts' jurisdiction",
       add_rule(RuleSpec(r"courts of {place}", note="where disputes go"), first=True), False),
    _I(8, "extract-v2.2", "accept the misspelling 'goverened by the laws of X'",
       add_rule(rare(r"goverened by the laws of {place}", "T04")), True),
    _I(9, "extract-v2.3", "add a rule for 'decided under the laws of X'",
       add_rule(rare(r"decided under the laws of {place}", "T05")), True),
    _I(10, "extract-v2.4", "add 'the Republic of Ireland' and 'Eire' to the table",
       add_forms({"Ireland": ("the Republic of Ireland", "Eire")}), False),
    _I(11, "extract-v2.5", "add a rule for 'falls under the laws of X'",
       add_rule(rare(r"falls under the laws of {place}", "T06")), True),
    _I(12, "extract-v3", "add rules for 'interpreted by, the laws of X' and 'the laws in force in X'",
       add_rules(rare(r"interpreted by, the laws of {place}", "T07"), rare(r"laws in force in {place}", "T08")),
       True),
    _I(13, "extract-v3.1", "add a rule for 'Choice of law: X'", add_rule(rare(r"choice of law:\s*{place}", "T09")), True),
    _I(14, "extract-v3.2", "match case exactly (fewer accidental hits)", setting(case="exact"), False),
    _I(15, "extract-v3.3", "add a rule for 'read in accordance with X law'",
       add_rule(rare(r"read in accordance with {place} law", "T10")), True),
    _I(16, "extract-v3.4", "learn abbreviations: N.Y., Del., Cal., Tex., Mass., Ont.",
       add_forms({"New York": ("the State of N.Y.",), "Delaware": ("the State of Del.",), "California": ("the State of Cal.",),
                  "Texas": ("the State of Tex.",), "Massachusetts": ("the Commonwealth of Mass.",), "Ontario": ("the Province of Ont.",)}),
       True),
    _I(17, "extract-v3.5", "when nothing matches, answer the first party's place of incorporation",
       add_rule(RuleSpec(r"(?:incorporated in|organized under the laws of) {place}", note="fallback: a party's home")), False),
    _I(18, "extract-v4", "add rules for 'choose the laws of X' and 'a matter for the laws of X'",
       add_rules(rare(r"choose the laws of {place}", "T11"), rare(r"a matter for the laws of {place}", "T12")),
       True),
    _I(19, "extract-v4.1", "add a rule for headings, 'Governing Law: X'",
       add_rule(RuleSpec(r"governing law\s*[:—–-]\s*{place}", note="a heading that names the place", written_for=("heading",))), True),
    _I(20, "extract-v4.2", "when nothing matches, answer New York (the most common answer)", setting(default="New York"), False),
    _I(21, "extract-v4.3", "add a rule for 'made under the laws of X'", add_rule(rare(r"made under the laws of {place}", "T13")),
       True),
    _I(22, "extract-v4.4", "simplify rule 1: drop the 'and construed in accordance with' variant",
       replace_rule(R1, RuleSpec(r"governed by the laws? of {place}", note="the usual choice-of-law sentence")), False),
    _I(23, "extract-v4.5", "add a rule for 'determined by X law'", add_rule(rare(r"determined by {place} law", "T14")), True),
    _I(24, "extract-v5", "learn 'governed by English law' (adjectives: English, Scots, Irish)",
       both(add_forms({"England and Wales": ("English",), "Scotland": ("Scots",), "Ireland": ("Irish",)}),
            add_rule(RuleSpec(r"governed by {place} law", note="'governed by New York law'", written_for=("adjective",)))), True),
    _I(25, "extract-v5.1", "require the sentence to end after the place in rule 1 (fewer false hits)",
       replace_rule(R1, RuleSpec(r"governed by (?:and construed in accordance with )?the laws? of {place}\.",
                                 note="the usual choice-of-law sentence")), False),
    _I(26, "extract-v5.2", "read amendments first: 'amended so that this Agreement is governed by the laws of X'",
       add_rule(RuleSpec(r"amended so that this Agreement is governed by the laws of {place}", note="an amendment wins",
                        written_for=("amendment",)), first=True),
       True),
    _I(27, "extract-v5.3", "add a rule for 'the governing jurisdiction for this Agreement is X'",
       add_rule(rare(r"governing jurisdiction for this Agreement is {place}", "T15")), True),
    _I(28, "extract-v5.4", "take each rule's last match instead of its first", setting(match="last"), False),
    _I(29, "extract-v5.5", "last resort: any 'laws of X' when nothing else matches",
       add_rule(RuleSpec(r"laws of {place}", note="last resort")), False),
    _I(30, "extract-v6", "one broad rule, tried first, for 'the law of X' (four dev failures)",
       add_rule(RuleSpec(r"\blaw of {place}", note="'the law of X', in any sentence",
                        written_for=("rare:B1", "rare:B2", "rare:B3", "rare:B4")), first=True), True),
)

READ_AFTER = {0: "extract-v1", 15: "extract-v3", 30: "extract-v6"}  # iteration after which the holdout was read -> version read


def prompt_file(version: str) -> str:
    """The prompt file of a version, relative to the example's directory."""
    return f"prompts/extract@{version.removeprefix('extract-')}.md"


def command(version: str) -> str:
    return f"python extractor.py --prompt {prompt_file(version)}"


def states() -> dict[str, tuple[PromptState, str]]:
    """Every version's prompt state and the version its change was tried on, in order (extract-v1 first)."""
    result: dict[str, tuple[PromptState, str]] = {"extract-v1": (V1, "")}
    working, working_name = V1, "extract-v1"
    for iteration in LINEAGE:
        candidate = iteration.apply(working)
        result[iteration.version] = (candidate, working_name)
        if iteration.accepted:
            working, working_name = candidate, iteration.version
    return result


def render(version: str, state: PromptState, base: str, iteration: Iteration | None, dev_ids: dict[str, list[str]]) -> str:
    """The Markdown rule file of ``version`` (what extractor.py reads). ``dev_ids`` maps a kind of
    dev case to its ids, for the note naming the dev failures a rule was written for."""
    if iteration is None:
        history = "The week-0 prompt: the first version, before any tuning."
    else:
        decision = "kept" if iteration.accepted else "rejected"
        history = (f"Iteration {iteration.number} (week {iteration.week}): tried on {base}, the working prompt at the time: "
                   f"{iteration.change}. Dev-set decision: {decision}.")
    lines = [
        f"# Governing-law extractor — {version}",
        "",
        history,
        "",
        "Read the contract and answer the jurisdiction whose law governs it, as one of the names in the",
        "table below. Answer nothing when the contract does not choose a law.",
        "",
        "## Jurisdictions",
        "",
        "| name | written as |",
        "|---|---|",
        *(f"| {name} | {'; '.join(written)} |" for name, written in state.forms),
        "",
        "## Rules",
        "",
        "Tried in order; the first rule that matches answers. `{place}` is any way of writing a jurisdiction above.",
        "",
    ]
    for number, rule in enumerate(state.rules, start=1):
        answer = f" -> {rule.answer}" if rule.answer else ""
        written = [case_id for kind in rule.written_for for case_id in dev_ids.get(kind, [])]
        notes = [rule.note] if rule.note else []
        if written:
            notes.append(f"written for {', '.join(sorted(written))}")
        note = f" — {'; '.join(notes)}" if notes else ""
        lines.append(f"{number}. `{rule.pattern}`{answer}{note}")
    lines += [
        "",
        "## Settings",
        "",
        f"- case: {state.case}",
        f"- match: {state.match}",
        f"- default: {state.default or 'none'}",
        "",
    ]
    return "\n".join(lines)
