"""Which checkpoints count as seeds: a checkpoint is counted once when its files are byte-identical
to another's (the copy attack); distinct checkpoints that answer every case alike stay separate seeds.

What is compared is the fingerprint each run records (``oloproof.fingerprint``: the SHA-256 of every
file the run's command line names, of ``system.artifacts`` and of the checkpoint's ``artifacts``).
Files recorded with the same name and content in every checkpoint's run (the predict script, a
shared tokenizer) are left out: they cannot tell checkpoints apart. What is left — a checkpoint's
own files — is compared by content, whatever the files are called:

* two checkpoints whose own files have the same contents (``seed_5.npz`` a copy of ``seed_1.npz``),
  or that ran the same command on the same files (one checkpoint run twice), are **copies**: one
  seed, whatever they answered;
* when every run records the same files (``system.artifacts`` covering every seed's weights), the
  files each run's command line names are compared instead (``--weights seeds/seed_1.npz``);
* a checkpoint with no own file to compare — an imported run (no fingerprint), a run whose files
  are all shared and whose command names the same files as the others' (a command naming no
  weights file), or an own file that could not be hashed — cannot be told from a copy: when it
  answered every case as another checkpoint did, it counts as one seed with it (the rule before
  bytes were compared, kept where bytes say nothing), and the report says why;
* otherwise checkpoints are separate seeds, even when they answer every case alike (``alike``):
  identical outcomes from different checkpoints are evidence of stability, not of copying.

Not detected: a copy whose bytes differ (junk appended to a weights file, a re-saved archive, a
retrained-then-copied model): bytes are compared, not what they mean. Such a pair is still named
(``alike``) when it answers every case identically.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

    from oloproof.runstore import RunRecord


@dataclass(frozen=True, slots=True, kw_only=True)
class Counted:
    """How the checkpoints (columns, in the order given) count as seeds."""

    kept: tuple[int, ...]  # the columns counted, one per seed
    copies: tuple[tuple[str, ...], ...] = ()  # byte-identical files: one seed (the first named is kept)
    twins: tuple[tuple[str, ...], ...] = ()  # alike, and nothing recorded tells them apart: one seed
    alike: tuple[tuple[str, ...], ...] = ()  # alike on every case, different files: separate seeds
    unidentified: tuple[str, ...] = ()  # checkpoints with no own file to compare
    deterministic: bool = False  # at least two seeds counted, all told apart by their files, all alike
    why_unidentified: dict[str, str] = field(default_factory=dict)


def named_files(record: RunRecord) -> list[str]:
    """The contents of the recorded files the run's command line names (an argument, or the value of
    ``--option=value``; a directory by every file under it), as ``SystemSpec.files`` found them."""
    if record.fingerprint is None or record.command is None:
        return []
    try:
        tokens = shlex.split(record.command)
    except ValueError:
        return []
    names = {os.path.normpath(part) for token in tokens for part in (token, token.partition("=")[2]) if part}
    return [
        digest
        for name, digest in record.fingerprint.files.items()
        if name in names or any(name.startswith(prefix + "/") for prefix in names)
    ]


def own_files(records: list[RunRecord]) -> list[tuple[str, ...] | None]:
    """Each run's own file contents (sorted digests), or None when none can be compared: no
    fingerprint; or no file that is not shared by every run, when every run's command line names
    the same files too (``system.artifacts`` covering every seed's weights is compared by the files
    each command names); or an own file that could not be hashed."""
    prints = [record.fingerprint for record in records]
    recorded = [fp for fp in prints if fp is not None]
    shared = set.intersection(*(set(fp.files.items()) for fp in recorded)) if len(recorded) >= 2 else set()
    named = [named_files(record) for record in records]
    named_differ = len({tuple(sorted(files)) for files in named if files}) > 1
    out: list[tuple[str, ...] | None] = []
    for fp, by_command in zip(prints, named, strict=True):
        own = [] if fp is None else [digest for name, digest in fp.files.items() if (name, digest) not in shared]
        if not own and named_differ:
            own = by_command
        out.append(tuple(sorted(own)) if own and all(d.startswith("sha256:") for d in own) else None)
    return out


def _why(record: RunRecord) -> str:
    if record.fingerprint is None:
        return "imported outputs" if record.imported else "its run records no fingerprint"
    return "every file its run records is shared by the other checkpoints' runs, or was not hashed"


def count_seeds(names: list[str], records: list[RunRecord], matrix: np.ndarray) -> Counted:
    """Group the checkpoints ``names`` (runs ``records``, outcomes the columns of ``matrix``, NaN =
    missing) into seeds, as the module docstring says. Order-independent in what is counted: the
    first named checkpoint of a group is the one kept."""
    import numpy as np  # lazy: start-up

    own = own_files(records)
    columns = [np.nan_to_num(matrix[:, index], nan=-1.0).tobytes() for index in range(len(names))]
    # Copies by bytes: the same own contents, or the same command on the very same files.
    group_of: list[int] = list(range(len(names)))
    for index in range(len(names)):
        for earlier in range(index):
            if group_of[earlier] != earlier:
                continue
            same_own = own[index] is not None and own[index] == own[earlier]
            a, b = records[index], records[earlier]
            same_run = (
                a.fingerprint is not None
                and b.fingerprint is not None
                and a.command is not None
                and a.command == b.command
                and a.fingerprint.digest == b.fingerprint.digest
            )
            if same_own or same_run:
                group_of[index] = earlier
                break
    heads = [index for index in range(len(names)) if group_of[index] == index]
    copies = tuple(
        tuple(names[i] for i in range(len(names)) if group_of[i] == head)
        for head in heads
        if sum(1 for i in range(len(names)) if group_of[i] == head) > 1
    )
    # Identical outcomes where bytes say nothing: an unidentified checkpoint alike with another
    # counted one is no seed of its own (an identified one is never dropped for an unidentified one).
    identified = [i for i in heads if own[i] is not None]
    unidentified = [i for i in heads if own[i] is None]
    kept = list(identified)
    twins_of: dict[int, list[int]] = {}
    # A group of copies answers as any of its members did (the same files run twice may differ).
    answers = {head: {columns[i] for i in range(len(names)) if group_of[i] == head} for head in heads}
    for index in unidentified:
        match = next((i for i in identified if answers[i] & answers[index]), None)
        if match is None:
            match = next((i for i in kept if own[i] is None and answers[i] & answers[index]), None)
        if match is None:
            kept.append(index)
        else:
            twins_of.setdefault(match, []).append(index)
    kept.sort()
    twins = tuple(tuple(names[i] for i in [head, *rest]) for head, rest in sorted(twins_of.items()))
    by_column: dict[bytes, list[int]] = {}
    for index in identified:
        by_column.setdefault(columns[index], []).append(index)
    alike = tuple(tuple(names[i] for i in group) for group in by_column.values() if len(group) > 1)
    deterministic = len(kept) >= 2 and all(own[i] is not None for i in kept) and len(by_column) == 1
    return Counted(
        kept=tuple(kept),
        copies=copies,
        twins=twins,
        alike=alike,
        unidentified=tuple(names[i] for i in heads if own[i] is None),
        deterministic=deterministic,
        why_unidentified={names[i]: _why(records[i]) for i in heads if own[i] is None},
    )


def _names(groups: tuple[tuple[str, ...], ...]) -> str:
    return "; ".join(
        " and ".join(group) if len(group) < 3 else ", ".join(group[:-1]) + f" and {group[-1]}" for group in groups
    )


def seed_notes(counted: Counted) -> str:
    """What the recipe sentence adds about how the checkpoints were counted ("" when nothing is to say)."""
    notes: list[str] = []
    if counted.copies:
        notes.append(
            f"Note: {_names(counted.copies)} ran byte-identical files (one checkpoint under several names); "
            "they count as one seed."
        )
    if counted.twins:
        why = "; ".join(
            f"{name}: {reason}"
            for name, reason in counted.why_unidentified.items()
            if any(name in group for group in counted.twins)
        )
        notes.append(
            f"Note: {_names(counted.twins)} answered every case identically, and no file recorded for their runs tells "
            f"them apart ({why}), so they count as one seed; declare each checkpoint by the command that runs it, "
            "with its own weights file on the command line or in artifacts:, to count them as separate seeds."
        )
    if counted.deterministic:
        notes.append(
            f"Every checkpoint answered every case identically and their files differ: the training is deterministic "
            f"under these {len(counted.kept)} seeds, so the recipe is its model: decide it with the plain rule on one "
            "checkpoint (`oloproof gate` on its run: an exact interval on the cases)."
        )
    elif counted.alike:
        notes.append(
            f"Note: {_names(counted.alike)} answered every case identically; their files differ, so they count as "
            "separate seeds (only byte-identical files are a copy: a copy with one byte changed is not detected)."
        )
    return "".join(f" {note}" for note in notes)


def counted_details(counted: Counted) -> dict[str, object]:
    """The rule's ``details`` about the count (only the keys that apply)."""
    details: dict[str, object] = {}
    if counted.copies:
        details["identical_files"] = [list(group) for group in counted.copies]
    if counted.twins:
        details["identical_outputs"] = [list(group) for group in counted.twins]
    if counted.alike:
        details["alike_outputs"] = [list(group) for group in counted.alike]
    if counted.deterministic:
        details["deterministic"] = True
    return details
