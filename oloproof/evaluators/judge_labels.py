"""A judge's human labels, bound to the outputs people graded.

A label line is ``{"id", "grade"}`` plus what it graded: ``output_sha256`` (``"sha256:<hex>"``
of the output object's canonical JSON, ``id`` included, exactly as the run stores it: the
SHA-256 of the case's line in the run's ``outputs.jsonl`` without its newline) and/or ``output``
(the output object itself, as in ``outputs.jsonl``). A label describes one output: when this
run's output for its case differs, the label is **stale** for this run, its grade is not used
(the case stays in the labelled sample with people's grade unknown: a failure for the lower
bound and a pass for the upper, so the labels left are still a random sample of the cases).
A case may hold one label per output (labels of several versions side by side). A label that
says nothing about its output is **unbound**: refused (exit 2) unless the policy says
``judges.unbound_labels: allow``, when it is assumed to grade this run's output and every report
says so. A digest equal to this run's output cannot be told from testimony: the labels file is
the team's word, like the test set.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from oloproof.errors import DataError
from oloproof.jsonl import canonical, iter_objects
from oloproof.schema import did_you_mean

DIGEST = re.compile(r"sha256:[0-9a-fA-F]{64}")
KNOWN_KEYS = ("id", "grade", "output", "output_sha256")


def output_digest(output: Mapping[str, Any]) -> str:
    """``"sha256:<hex>"`` of an output object's canonical JSON (its ``id`` included)."""
    return "sha256:" + hashlib.sha256(canonical(output)).hexdigest()


@dataclass(frozen=True, slots=True)
class Label:
    grade: float
    digest: str | None  # the output it graded; None: unbound
    line: int


@dataclass(frozen=True, slots=True)
class Bound:
    """The labels as they apply to one run's outputs."""

    current: dict[str, tuple[float, int]]  # case id -> (grade, line), graded this run's output
    stale: list[str] = field(default_factory=list)  # answered cases whose labels graded other outputs
    no_output: list[str] = field(default_factory=list)  # labelled cases this run did not answer
    unbound: list[str] = field(default_factory=list)  # unbound labels used (policy: allow)
    n_lines: int = 0

    def details(self, limit: int = 50) -> dict[str, object]:
        return {
            "label_lines": self.n_lines,
            "stale_labels": len(self.stale),
            "stale_label_ids": self.stale[:limit],
            "labels_without_output": len(self.no_output),
            "labels_without_output_ids": self.no_output[:limit],
            "unbound_labels_assumed": len(self.unbound),
        }

    def problems(self, file: str) -> list[str]:
        """What the reports must say about the labels' binding."""
        said: list[str] = []
        if self.stale:
            said.append(
                f"{stale_text(len(self.stale), file)}; their grades are not used: label this version's outputs "
                f"of those cases ({_listed(self.stale)})"
            )
        if self.no_output:
            said.append(
                f"{len(self.no_output)} labelled case(s) in {file} have no output in this run, so their labels are not "
                f"used ({_listed(self.no_output)})"
            )
        if self.unbound:
            said.append(unbound_text(len(self.unbound), file))
        return said


def stale_text(count: int, file: str) -> str:
    return f"{count} label(s) in {file} graded another output than this run's for their case (stale)"


def unbound_text(count: int, file: str) -> str:
    return (
        f"{count} label(s) in {file} do not say which output they graded and were ASSUMED to grade this run's outputs "
        "(policy.judges.unbound_labels: allow); bind them with output_sha256"
    )


def _listed(ids: list[str], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def read_labels(
    path: Path, *, shown: str, known: Collection[str], testset: str, parse_grade: Any
) -> dict[str, list[Label]]:
    """Every label in the file, by case; every problem names the file and line (exit 2)."""
    labels: dict[str, list[Label]] = {}
    for line, obj in iter_objects(path, display=shown):
        case_id = obj.get("id")
        if not isinstance(case_id, str):
            raise DataError(shown, line, "each label needs a string 'id'")
        if case_id not in known:
            raise DataError(shown, line, f"label for unknown case id '{case_id}' (not in {testset})")
        for key in obj:
            if key not in KNOWN_KEYS and did_you_mean(key, KNOWN_KEYS):
                raise DataError(shown, line, f"case '{case_id}': unknown key '{key}'{did_you_mean(key, KNOWN_KEYS)}")
        grade = parse_grade(obj.get("grade"))
        if grade is None:
            raise DataError(shown, line, "'grade' must be true/false or a number in [0, 1]")
        digest = _digest_of(obj, case_id, shown, line)
        for other in labels.get(case_id, []):
            if other.digest is None or digest is None or other.digest == digest:
                same = ", for the same output" if digest is not None and other.digest == digest else ""
                raise DataError(shown, line, f"duplicate label for case '{case_id}' (first on line {other.line}{same})")
        labels.setdefault(case_id, []).append(Label(grade=grade, digest=digest, line=line))
    return labels


def _digest_of(obj: dict[str, Any], case_id: str, shown: str, line: int) -> str | None:
    """The digest of the output a label graded (None when it names none)."""
    given = obj.get("output_sha256")
    if given is not None and (not isinstance(given, str) or DIGEST.fullmatch(given) is None):
        raise DataError(
            shown, line, f"case '{case_id}': 'output_sha256' must be spelled \"sha256:<64 hex digits>\", got {given!r}"
        )
    digest = given.lower() if isinstance(given, str) else None
    if "output" in obj:
        output = obj["output"]
        if not isinstance(output, dict) or output.get("id") != case_id:
            raise DataError(
                shown,
                line,
                f"case '{case_id}': 'output' must be the output object as in the run's outputs.jsonl, with its "
                f'"id": "{case_id}"',
            )
        of_output = output_digest(output)
        if digest is not None and digest != of_output:
            raise DataError(
                shown, line, f"case '{case_id}': 'output_sha256' is not the digest of 'output' ({of_output})"
            )
        digest = of_output
    return digest


def bind(
    labels: dict[str, list[Label]],
    outputs: Mapping[str, Mapping[str, Any]],
    *,
    shown: str,
    allow_unbound: bool,
    outputs_of: str = "",
) -> Bound:
    """The labels that graded these outputs, and which did not; an unbound label is an error
    (naming its line and this run's digest for the case) unless ``allow_unbound``."""
    bound = Bound(current={}, n_lines=sum(len(found) for found in labels.values()))
    for case_id, found in sorted(labels.items(), key=lambda item: item[1][0].line):
        output = outputs.get(case_id)
        if output is None:  # nothing of this run for the label to describe (a gate's preflight has no outputs)
            bound.no_output.append(case_id)
            continue
        unbound = [label for label in found if label.digest is None]
        if unbound and not allow_unbound:
            raise DataError(
                shown,
                unbound[0].line,
                f"the label for case '{case_id}' does not say which output it graded, so it may describe another "
                'version\'s output: add "output_sha256" (or "output") for the output the person graded '
                f'(this run\'s output{outputs_of} for \'{case_id}\' is "output_sha256": "{output_digest(output)}"); '
                "or set policy.judges.unbound_labels: allow to take unbound labels as grades of this run's outputs "
                "(every report then says so)",
            )
        digest = output_digest(output)
        match = [label for label in found if label.digest == digest] or unbound
        if not match:
            bound.stale.append(case_id)
            continue
        if match[0].digest is None:
            bound.unbound.append(case_id)
        bound.current[case_id] = (match[0].grade, match[0].line)
    return bound
