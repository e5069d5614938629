"""Groups in the gap's paired comparisons (issue 17): holdout reads paired with the holdout's
groups (group numbers from the outcome records, or the holdout file when it is here), and what the
gap says when only some of its figures can honour them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.pairs import Pairing, pair

if TYPE_CHECKING:
    from oloproof.holdout.history import Reading


def read_pairing(old: Reading, new: Reading, *, confidence: float, judged: bool = False) -> Pairing:
    """Two reads of one holdout set paired case by case, clustered when the set has groups
    (``judged``: a judge graded both reads, so every interval is judge-graded)."""
    old_outcomes, new_outcomes = list(old.outcomes or ()), list(new.outcomes or ())
    return pair(old_outcomes, new_outcomes, confidence=confidence, groups=old.groups, judged=judged)


def grouping_notes(*, dev_grouped: bool, holdout: Reading | None) -> list[str]:
    notes: list[str] = []
    if dev_grouped and holdout is not None and holdout.groups is None:
        notes.append(
            "the dev set declares groups but the holdout reads record none: the holdout movement treats its cases as "
            "independent"
        )
    if dev_grouped or (holdout is not None and holdout.groups is not None):
        notes.append(
            "the sets declare groups: the movements and the fit above are clustered, but the reweighted figures of "
            "the composition check treat the cases as independent, so their intervals are too narrow"
        )
    return notes
