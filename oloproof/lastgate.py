"""What the last gate of a config saw, case by case, so the next gate can say what left the test set.

A gate that decides its rules writes ``.oloproof/gates/<release.yaml's file name>.json``
(schema ``oloproof.last-gate/1``): the test-set digest, the run that decided, and for every case
of the dev set its id, a digest of its content (input and expected value, never the values) and
whether it failed a threshold rule. The next gate of the same config compares the test set with it
and says, as a note: "1 case removed since the last gate; it was a failure", and the same for cases
whose content changed under the same id (a relabelled failure). "The last gate" is the most recent
gate of this config file that decided its rules, whatever the version: a case removed while the
version is bumped is still said. A blocked gate writes nothing. The file is a note, not evidence:
the gate's verdict never depends on it, and whoever can edit ``.oloproof/`` can edit it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from oloproof.errors import OloproofError
from oloproof.files import atomic_write_bytes, open_regular
from oloproof.jsonl import dumps_line
from oloproof.measures.registry import measure_of
from oloproof.store import gates_dir, shown

if TYPE_CHECKING:
    from oloproof.evaluators.base import CriterionOutcome
    from oloproof.policy import Rule
    from oloproof.testset import TestSet

LAST_GATE_SCHEMA = "oloproof.last-gate/2"
OLD_SCHEMA = "oloproof.last-gate/1"  # read, never written
MAX_BYTES = 64 << 20  # a record of 10^6 cases is ~40 MB; anything larger is not ours


@dataclass(frozen=True, slots=True, kw_only=True)
class LastGate:
    """A last-gate note. Stored as two lines (``oloproof.last-gate/2``): a header object (schema,
    digest, run, failing ids), then the object of case id -> content digest. A gate of an unchanged
    test set copies the second line as it stands, unparsed (10^5 entries are most of the note's
    cost on the gate's hot path); it is parsed only when the test set changed."""

    testset_digest: str
    generated_at: str
    version: str
    run_id: str
    cases_json: bytes  # the JSON object of case id -> content digest, as stored
    failed: tuple[str, ...]  # ids of cases that failed a threshold rule, in test-set order

    def cases(self) -> dict[str, str]:
        """Case id -> content digest (ValueError when the stored object is not one)."""
        cases = orjson.loads(self.cases_json)
        # A parsed JSON object's keys are strings; its values' types are checked in C (map), not
        # by a Python-level loop over 10^5 entries.
        if not isinstance(cases, dict) or not set(map(type, cases.values())) <= {str}:
            raise ValueError("cases: expected an object of strings")
        return cases

    def to_bytes(self) -> bytes:
        header = {
            "schema": LAST_GATE_SCHEMA,
            "testset_digest": self.testset_digest,
            "generated_at": self.generated_at,
            "version": self.version,
            "run_id": self.run_id,
            "failed": list(self.failed),  # in test-set order: as stable as sorting, without its cost
        }
        return orjson.dumps(header, option=orjson.OPT_SORT_KEYS) + b"\n" + self.cases_json + b"\n"

    @classmethod
    def from_bytes(cls, data: bytes) -> LastGate:
        first, _, rest = data.partition(b"\n")
        header = orjson.loads(first)
        if not isinstance(header, dict):
            raise ValueError("not a last-gate record")
        schema = header.get("schema")
        if schema == OLD_SCHEMA:  # one line, the cases inside (written before issue 20)
            cases_json = orjson.dumps(header["cases"], option=orjson.OPT_SORT_KEYS)
        elif schema == LAST_GATE_SCHEMA:
            cases_json = rest.rstrip(b"\n")
            if not cases_json.startswith(b"{") or not cases_json.endswith(b"}") or b"\n" in cases_json:
                raise ValueError("cases: expected one line holding an object")
        else:
            raise ValueError("not a last-gate record")
        failed = header["failed"]
        if not isinstance(failed, list) or not set(map(type, failed)) <= {str}:
            raise ValueError("failed: expected a list of case ids")
        return cls(
            testset_digest=str(header["testset_digest"]),
            generated_at=str(header["generated_at"]),
            version=str(header["version"]),
            run_id=str(header["run_id"]),
            cases_json=cases_json,
            failed=tuple(failed),
        )


def gate_path(base_dir: Path, config: str) -> Path:
    return gates_dir(base_dir) / f"{Path(config).name}.json"


def case_digest(inputs: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    return hashlib.sha256(dumps_line({"inputs": inputs, "expected": expected})).hexdigest()[:16]


def case_digests(testset: TestSet) -> dict[str, str]:
    return {case.id: case_digest(case.inputs, case.expected) for case in testset.cases}


def failed_cases(testset: TestSet, rules: Iterable[Rule], outcomes: Mapping[str, CriterionOutcome]) -> tuple[str, ...]:
    """Cases that count against a threshold rule, in test-set order: a binary criterion's 0 under
    ``min`` (its 1 under ``max``), a score below a ``min`` (above a ``max``), or no usable output.
    Regression rules compare with a baseline and name no failing case of their own."""
    import numpy as np  # lazy: start-up

    ids = [case.id for case in testset.cases]
    failed = np.zeros(len(ids), dtype=bool)
    position: dict[str, int] | None = None  # case id -> index, built only for a subset outcome
    for rule in rules:
        outcome = outcomes.get(rule.criterion)
        if rule.kind == "regression" or outcome is None or rule.kind not in ("min", "max"):
            continue
        values = np.asarray(outcome.values, dtype=float)
        bad = measure_of(outcome.kind).failing(values, rule.kind, rule.threshold)
        if outcome.case_ids:  # values of a subset of the cases (paired with them as zip pairs them)
            if position is None:
                position = {case_id: index for index, case_id in enumerate(ids)}
            for case_id, is_bad in zip(outcome.case_ids, bad.tolist(), strict=False):
                if is_bad and case_id in position:
                    failed[position[case_id]] = True
        else:
            count = min(len(ids), len(values))
            failed[:count] |= bad[:count]
    return tuple(ids[index] for index in np.flatnonzero(failed).tolist())  # only the failures are visited


def read_last(path: Path) -> LastGate | None:
    """The last gate's record, or None when there is none or it cannot be read (a note is lost, no
    more: the gate never depends on it)."""
    if path.is_symlink() or not path.exists():
        return None
    try:
        with open_regular(path, path.name) as handle:  # a regular file, read with a cap
            data = handle.read(MAX_BYTES + 1)
    except (OSError, OloproofError):
        return None
    return parse_last(data)


def parse_last(data: bytes | None) -> LastGate | None:
    """A last-gate note's bytes as a record, or None (none, too large, or not one)."""
    if data is None or len(data) > MAX_BYTES:
        return None
    try:
        return LastGate.from_bytes(data)
    except (ValueError, KeyError, TypeError, OloproofError):
        return None


def _count(n: int, what: str) -> str:
    return f"{n} case{'' if n == 1 else 's'} {what}"


def _failures(n: int, of: int) -> str:
    if of == 1:
        return "it was a failure" if n else "it was not a failure"
    if n == 0:
        return "none of them was a failure"
    return "all of them were failures" if n == of else f"{n} of them {'was a failure' if n == 1 else 'were failures'}"


def changes_since(last: LastGate, testset: TestSet) -> tuple[str, ...]:
    """Notes on cases that left the test set, or changed under their id, since ``last``."""
    if last.testset_digest == testset.digest:
        return ()
    try:
        before = last.cases()
    except ValueError:
        return ()  # a damaged note: the note is lost, no more
    current = case_digests(testset)
    removed = [case_id for case_id in before if case_id not in current]
    changed = [case_id for case_id, digest in before.items() if current.get(case_id, digest) != digest]
    when = f"the last gate ({last.generated_at}, run {last.run_id})"
    notes = []
    for ids, what in ((removed, "removed"), (changed, "changed (input or expected value)")):
        if ids:
            failures = len(set(ids) & set(last.failed))
            notes.append(f"{_count(len(ids), what)} since {when}; {_failures(failures, len(ids))}")
    return tuple(notes)


def record_gate(path: Path, gate: LastGate) -> None:
    """Replace the config's last-gate record, atomically."""
    atomic_write_bytes(path, gate.to_bytes())


def note_and_record(
    base_dir: Path,
    config: str,
    testset: TestSet,
    *,
    rules: Iterable[Rule],
    outcomes: Mapping[str, CriterionOutcome],
    version: str,
    run_id: str,
    generated_at: str,
    previous: Callable[[Path], bytes | None] | None = None,
) -> tuple[str, ...]:
    """The notes on what changed since this config's last gate; then this gate becomes the last.
    ``previous``: where the last gate's note is read instead of the working tree (in a pull
    request, the base commit's copy: deleting the note must not hide that failing cases left)."""
    path = gate_path(base_dir, config)
    last = parse_last(previous(path)) if previous is not None else read_last(path)
    notes = changes_since(last, testset) if last is not None else ()
    gate = LastGate(
        testset_digest=testset.digest,
        generated_at=generated_at,
        version=version,
        run_id=run_id,
        # The same test set as the last gate's: the same cases, digests and all (no need to hash
        # every case again on the hot path of an unchanged set).
        cases_json=last.cases_json
        if last is not None and last.testset_digest == testset.digest
        else orjson.dumps(case_digests(testset), option=orjson.OPT_SORT_KEYS),
        failed=failed_cases(testset, rules, outcomes),
    )
    try:
        record_gate(path, gate)
    except OSError as exc:
        notes = (
            *notes,
            f"the last-gate note {shown('gates')}/{path.name} was not written ({exc.strerror or exc})",
        )
    return notes
