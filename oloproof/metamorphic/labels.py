"""Human labels for image and text transforms: did the change keep each case's meaning?

A labels file is JSONL, one ``{"id": ..., "preserved": true|false, "digest": ...}`` per changed
case, with an optional free-text ``note``. The ``digest`` (written by the labelling page, or by
``oloproof metamorphic stamp --confirm``) binds the label to the original/transformed pair the
person saw. A label without one is **unbound** and a label whose digest no longer matches the
pair (the transform or the input changed since) is **stale**: both count as no label, so a
label can never vouch for a change nobody looked at.

The states (SPEC §5): a declared (tabular) transform never decides (``transform_declared``);
every changed case labelled preserved -> ``validated``, the rule decides; any case labelled
``preserved: false`` -> ``transform_changes_meaning``; any changed case without a (current)
label -> ``transform_unlabelled``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from oloproof.errors import DataError
from oloproof.evaluators.base import LabelState, LabelStatus
from oloproof.jsonl import iter_objects
from oloproof.metamorphic.apply import TransformedSet

LABEL_KEYS = frozenset({"id", "preserved", "digest", "note"})


@dataclass(frozen=True, slots=True)
class Label:
    preserved: bool
    digest: str | None
    line: int


def load_labels(file: Path, *, shown: str) -> dict[str, Label]:
    """Read a labels file; every problem names the file and line (exit 2)."""
    labels: dict[str, Label] = {}
    for line, obj in iter_objects(file, display=shown):
        case_id = obj.get("id")
        if not isinstance(case_id, str) or not case_id:
            raise DataError(shown, line, "each label needs a non-empty string 'id'")
        if case_id in labels:
            raise DataError(shown, line, f"duplicate label for case '{case_id}' (first on line {labels[case_id].line})")
        preserved = obj.get("preserved")
        if not isinstance(preserved, bool):
            raise DataError(shown, line, f"case '{case_id}': 'preserved' must be true or false, got {preserved!r}")
        digest = obj.get("digest")
        if digest is not None and not isinstance(digest, str):
            raise DataError(shown, line, f"case '{case_id}': 'digest' must be a string")
        unknown = sorted(set(obj) - LABEL_KEYS)
        if unknown:
            raise DataError(
                shown,
                line,
                f"case '{case_id}': unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(LABEL_KEYS))}",
            )
        labels[case_id] = Label(preserved=preserved, digest=digest, line=line)
    return labels


def is_current(label: Label | None, digest: str) -> bool:
    """A label vouches for a pair only when it was made (or stamped) on exactly that pair."""
    return label is not None and label.digest == digest


def label_status(
    variant: TransformedSet,
    labels: dict[str, Label] | None,
    *,
    file: str | None,
    file_exists: bool = True,
) -> LabelStatus:
    """Compare the labels with the changed cases of ``variant``."""
    if not variant.spec.validated:
        accepted = variant.spec.accepted
        if accepted is not None:  # a person took responsibility for the change keeping meaning
            return LabelStatus(state="accepted", file=None, accepted_by=accepted[0], accepted_reason=accepted[1])
        return LabelStatus(state="declared", file=None)
    labels = labels or {}
    preserved: list[str] = []
    changed: list[str] = []
    unlabelled: list[str] = []
    stale: list[str] = []
    unbound: list[str] = []
    for case_id in variant.applicable:
        label = labels.get(case_id)
        if label is None:
            unlabelled.append(case_id)
            continue
        if not is_current(label, variant.pair_digests[case_id]):
            (unbound if label.digest is None else stale).append(case_id)
            unlabelled.append(case_id)
        elif label.preserved:
            preserved.append(case_id)
        else:
            changed.append(case_id)
    applicable = set(variant.applicable)
    state: LabelState = "changes_meaning" if changed else ("unlabelled" if unlabelled else "validated")
    return LabelStatus(
        state=state,
        file=file,
        preserved=tuple(preserved),
        changed_meaning=tuple(changed),
        unlabelled=tuple(unlabelled),
        stale=tuple(stale),
        unbound=tuple(unbound),
        unused=sum(1 for case_id in labels if case_id not in applicable),
        file_exists=file_exists,
    )
