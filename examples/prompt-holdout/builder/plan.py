"""Writing the data and prompt files, and checking the six weeks' plan before anything is recorded.

The plan check runs the example's own ``extractor.py`` in-process on both sets for every prompt
version. It is the generator checking its construction (it knows the answers by design), not a
read of a real project's holdout: no real team could run it, and nothing it computes is stored.
It insists on what the example claims:

- every iteration's decision is the greedy one: accepted exactly when its dev score beats the
  working prompt's;
- the gap chapter's figures: dev 144/200 → 178/200, holdout 85/120 → 89/120, and on the
  holdout the two prompts disagree on 14 cases, 9 of them for extract-v6 (b = 9, c = 5);
- the week-3 read of extract-v3 scores 88/120.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from builder.contracts import Case, make_set
from builder.prompts import LINEAGE, prompt_file, render, states

CHAPTER = {
    ("dev", "extract-v1"): 144, ("dev", "extract-v6"): 178,
    ("holdout", "extract-v1"): 85, ("holdout", "extract-v3"): 88, ("holdout", "extract-v6"): 89,
}
CHAPTER_DISCORDANT = {"dev": (36, 2), "holdout": (9, 5)}  # (b, c) of extract-v1 -> extract-v6
FILES = {"dev": "data/dev.jsonl", "holdout": "evals/holdout/cases.jsonl"}


@dataclass(frozen=True)
class Plan:
    cases: dict[str, list[Case]]
    correct: dict[tuple[str, str], list[bool]]  # (set, version) -> per case, file order
    answers: dict[tuple[str, str], list[str | None]]


def jsonl(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def write_inputs(root: Path) -> dict[str, list[Case]]:
    """The two sets and every prompt version's rule file, under ``root``."""
    cases = {name: make_set(name) for name in FILES}
    for name, relative in FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(jsonl([case.to_json() for case in cases[name]]), encoding="utf-8")
    dev_ids: dict[str, list[str]] = {}
    for case in cases["dev"]:
        dev_ids.setdefault(case.kind, []).append(case.id)
    by_version = {iteration.version: iteration for iteration in LINEAGE}
    for version, (state, base) in states().items():
        path = root / prompt_file(version)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(version, state, base, by_version.get(version), dev_ids), encoding="utf-8")
    return cases


def load_extractor(root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("prompt_holdout_extractor", root / "extractor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def evaluate(root: Path, cases: dict[str, list[Case]]) -> Plan:
    extractor = load_extractor(root)
    correct: dict[tuple[str, str], list[bool]] = {}
    answers: dict[tuple[str, str], list[str | None]] = {}
    for version in states():
        prompt = extractor.load_prompt(root / prompt_file(version))
        for name, rows in cases.items():
            got = [extractor.extract(prompt, case.text) for case in rows]
            answers[(name, version)] = got
            correct[(name, version)] = [answer == case.expected for answer, case in zip(got, rows, strict=True)]
    return Plan(cases=cases, correct=correct, answers=answers)


def discordant(old: list[bool], new: list[bool]) -> tuple[int, int]:
    """(b, c): cases only the new version gets right, cases only the old one does."""
    b = sum(1 for o, w in zip(old, new, strict=True) if w and not o)
    c = sum(1 for o, w in zip(old, new, strict=True) if o and not w)
    return b, c


def check_plan(plan: Plan, fail: Callable[[str], None]) -> None:
    score = {key: sum(values) for key, values in plan.correct.items()}
    working = "extract-v1"
    for iteration in LINEAGE:
        before, after = score[("dev", working)], score[("dev", iteration.version)]
        if iteration.accepted != (after > before):
            fail(f"{iteration.version}: dev {after}/200 against the working prompt's {before}/200, "
                 f"but the lineage says {'accepted' if iteration.accepted else 'rejected'}")
        if iteration.accepted:
            working = iteration.version
    if working != "extract-v6":
        fail(f"the last accepted version is {working}, not extract-v6")
    for (name, version), expected in CHAPTER.items():
        if score[(name, version)] != expected:
            fail(f"{version} scores {score[(name, version)]} on the {name} set; the chapter needs {expected}")
    for name, expected_bc in CHAPTER_DISCORDANT.items():
        got = discordant(plan.correct[(name, "extract-v1")], plan.correct[(name, "extract-v6")])
        if got != expected_bc:
            fail(f"{name} set: extract-v1 -> extract-v6 has (b, c) = {got}; the example needs {expected_bc}")
