"""One episode without Verifiers: a task's prompt, and a reply's score.

``build(ref)`` gives the prompt (the sample records only); ``score_reply(ref, reply)`` derives
the scored records again from the task seed (for ``private_eval``, from the secret, checked
against the task's commitment) and scores the reply. What it returns is what a completed trace
records under ``trace.info``; the derived task seed appears there and nowhere earlier.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from redaction_pressure import corpus
from redaction_pressure.budget import EPISODE_BUDGET_S, Budget
from redaction_pressure.envelope import RawRule, parse_reply
from redaction_pressure.errors import RedactionError
from redaction_pressure.identity import identity
from redaction_pressure.prompt import SYSTEM_PROMPT, user_prompt
from redaction_pressure.reward import Counts, Scores, count, score
from redaction_pressure.rules import compile_rules
from redaction_pressure.scanner import scan
from redaction_pressure.splits import TaskRef, task_seed


@dataclass(frozen=True, slots=True, kw_only=True)
class Prompt:
    ref: TaskRef
    system: str
    user: str
    environment: dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class EpisodeResult:
    ref: TaskRef
    scores: Scores
    counts: Counts | None  # None when the episode ended before the rules ran to completion
    errors: tuple[RedactionError, ...]
    environment: dict[str, Any]
    task_seed: str  # hex; revealed only here, in the completed episode
    num_rules: int
    elapsed_s: float

    @property
    def reward(self) -> float:
        return self.scores.reward

    @property
    def clean(self) -> bool:
        return self.scores.clean == 1.0

    def info(self) -> dict[str, Any]:
        """What the trace records under ``trace.info``."""
        return {
            "environment": self.environment,
            "redaction_errors": [error.to_json() for error in self.errors],
            "redaction": {
                "scores": self.scores.to_json(),
                "counts": None if self.counts is None else self.counts.to_json(),
                "num_rules": self.num_rules,
                "elapsed_s": round(self.elapsed_s, 4),
            },
            "task_seed": self.task_seed,
        }


def build(ref: TaskRef, environ: Mapping[str, str] | None = None) -> Prompt:
    seed = task_seed(ref, environ)
    return Prompt(ref=ref, system=SYSTEM_PROMPT, user=user_prompt(corpus.samples(seed)), environment=identity(ref))


def score_reply(ref: TaskRef, reply: object, environ: Mapping[str, str] | None = None, *, budget_s: float = EPISODE_BUDGET_S) -> EpisodeResult:
    """Score one reply. Raises PrivateSeedError (an infrastructure error) for a private task
    without its secret; every fault of the reply itself is a recorded validity failure."""
    seed = task_seed(ref, environ)
    records = corpus.scored(seed)
    environment = identity(ref)
    budget = Budget(budget_s)
    raw: tuple[RawRule, ...] = ()
    errors: tuple[RedactionError, ...] = ()
    counts: Counts | None = None
    try:
        raw, errors = parse_reply(reply)
        if not errors:
            rules, errors = compile_rules(raw, budget)
            if not errors:
                result = scan(rules, records, budget)
                if result.error is not None:
                    errors = (result.error,)
                else:
                    counts = count(records, result.matches)
    except Exception as exc:  # noqa: BLE001 - whatever the reply does ends in a score, never a crashed episode
        counts = None
        errors = (RedactionError("unscorable_reply", f"scoring the reply failed: {type(exc).__name__}: {str(exc)[:200]}"),)
    if counts is None:
        # Nothing to measure: the reply broke the rules. Every score is 0 through validity.
        scores = Scores(recall=0.0, precision=0.0, clean=0.0, validity=0.0)
    else:
        scores = score(counts, valid=not errors)
    return EpisodeResult(
        ref=ref, scores=scores, counts=counts, errors=tuple(errors), environment=environment,
        task_seed=seed.hex(), num_rules=len(raw), elapsed_s=budget.elapsed(),
    )
