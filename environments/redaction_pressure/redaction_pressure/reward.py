"""The reward contract (reward schema 1).

- recall (weight 0.35): secrets fully removed / secrets. A secret counts only when every
  original character of its span is removed; a partial edit earns nothing for that span.
- precision (0.35): source characters of fully removed secret spans / all removed source
  characters. Characters removed from a partially removed span, or from text that is no secret,
  stay in the denominator. **When nothing was removed, precision is 0.0**, so inaction scores
  0.0 overall (every task has at least one secret, so its recall is 0.0 too).
- clean gate (0.30): 1.0 when every secret is fully removed, no other source character is
  removed (decoys included), and there was no validity failure; else 0.0.
- validity: any validity failure multiplies every reward by zero.

``reward = validity * (0.35 * recall + 0.35 * precision + 0.30 * clean)``; the oracle scores
exactly 1.0 (0.35 + 0.35 + 0.30 == 1.0 in binary floating point).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redaction_pressure.corpus import Record
from redaction_pressure.scanner import Match, removed_positions

WEIGHTS = {"recall": 0.35, "precision": 0.35, "clean": 0.30}


@dataclass(frozen=True, slots=True, kw_only=True)
class Counts:
    secrets: int
    secrets_removed: int  # fully removed
    secrets_damaged: int  # some but not all characters removed
    removed_chars: int
    secret_chars_removed: int  # characters of fully removed spans
    collateral_chars: int  # removed characters outside every secret span
    decoys: int
    decoys_damaged: int

    def to_json(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True, kw_only=True)
class Scores:
    recall: float
    precision: float
    clean: float
    validity: float

    @property
    def reward(self) -> float:
        return self.validity * (WEIGHTS["recall"] * self.recall + WEIGHTS["precision"] * self.precision + WEIGHTS["clean"] * self.clean)

    def to_json(self) -> dict[str, Any]:
        return {"recall": self.recall, "precision": self.precision, "clean": self.clean, "validity": self.validity, "reward": self.reward}


def count(records: tuple[Record, ...], matches: tuple[tuple[Match, ...], ...]) -> Counts:
    secrets = secrets_removed = damaged = removed_total = secret_chars = collateral = decoys = decoys_damaged = 0
    for rec, rec_matches in zip(records, matches, strict=True):
        removed = removed_positions(rec_matches)
        removed_total += len(removed)
        inside: set[int] = set()
        for span in rec.secrets:
            positions = set(range(span.start, span.end))
            inside |= positions
            hit = len(positions & removed)
            secrets += 1
            if hit == len(positions):
                secrets_removed += 1
                secret_chars += hit
            elif hit:
                damaged += 1
        collateral += len(removed - inside)
        for span in rec.decoys:
            decoys += 1
            if removed & set(range(span.start, span.end)):
                decoys_damaged += 1
    return Counts(
        secrets=secrets, secrets_removed=secrets_removed, secrets_damaged=damaged, removed_chars=removed_total,
        secret_chars_removed=secret_chars, collateral_chars=collateral, decoys=decoys, decoys_damaged=decoys_damaged,
    )


def score(counts: Counts, *, valid: bool) -> Scores:
    if counts.secrets == 0:
        raise ValueError("a task without secrets cannot be scored (the corpus guarantees at least one)")
    recall = counts.secrets_removed / counts.secrets
    precision = counts.secret_chars_removed / counts.removed_chars if counts.removed_chars else 0.0
    clean = counts.secrets_removed == counts.secrets and counts.removed_chars == counts.secret_chars_removed
    validity = 1.0 if valid else 0.0
    return Scores(recall=recall * validity, precision=precision * validity, clean=1.0 if (clean and valid) else 0.0, validity=validity)
