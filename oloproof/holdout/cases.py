"""The holdout set itself: where it is (``${VAR}`` expanded), loading it without ever showing a
case, and refusing it wherever a dev set is expected."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from oloproof.errors import ConfigError, DataError, OloproofError, UsageError
from oloproof.holdout.log import short
from oloproof.holdout.logfile import ReadsLog
from oloproof.holdout.records import load_outcome_records, witnesses
from oloproof.holdout.registry import load_register, register_shown, repository_root
from oloproof.holdout.spec import VARIABLE
from oloproof.jsonl import dumps_line
from oloproof.normalise import NEAR_COPY, near_copy_fields, near_copy_texts
from oloproof.testset import load_testset

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.holdout.spec import HoldoutSpec
    from oloproof.testset import TestSet

T = TypeVar("T")


class HoldoutUnavailable(ConfigError):
    """The holdout file cannot be reached here (an unset variable, a missing file): exit 2 for a
    read, a note for ``holdout status``, which reads the log without the set."""


def holdout_spec(release: Release) -> HoldoutSpec:
    if release.holdout is None:
        raise ConfigError(
            release.path,
            None,
            "holdout",
            "no holdout declared; add `holdout: {cases: evals/holdout/cases.jsonl, budget: 20, log: "
            "evals/holdout/READS.log}`",
        )
    return release.holdout


def cases_path(release: Release, environ: Mapping[str, str] | None = None) -> Path:
    """The holdout file, with every ``${VAR}`` of ``holdout.cases`` taken from the environment.

    An unset or empty variable is a configuration error naming it and the release.yaml line.
    """
    spec = holdout_spec(release)
    env = os.environ if environ is None else environ
    line = release.document.line("holdout.cases")

    def expand(match: re.Match[str]) -> str:
        name = match[1]
        found = env.get(name, "")
        if not found:
            raise HoldoutUnavailable(
                release.path,
                line,
                "holdout.cases",
                f"environment variable {name} is not set (holdout.cases is '{spec.cases}'); "
                f"set {name} to the path of the holdout file",
            )
        return found

    if "$" in VARIABLE.sub("", spec.cases):
        raise ConfigError(
            release.path, line, "holdout.cases", f"'{spec.cases}': write environment variables as ${{NAME}}"
        )
    return release.resolve(VARIABLE.sub(expand, spec.cases))


_ID_QUOTED = re.compile(r"(case(?: id)? )'(?:[^'\\]|\\.)*'")
_ID_REPR = re.compile(r"got id .*$")


def withhold_ids(message: str) -> str:
    """Drop holdout case ids from a data error: the file and line are enough to find the case."""
    return _ID_REPR.sub("got an id that is not a non-empty string", _ID_QUOTED.sub(r"\1<id withheld>", message))


def withheld(shown: str, call: Callable[[], T]) -> T:
    """``call()``, with holdout case ids dropped from any data error about the holdout file."""
    try:
        return call()
    except DataError as exc:
        if exc.path != shown:
            raise
        raise DataError(exc.path, exc.line, withhold_ids(exc.message)) from None


def load_holdout(release: Release, environ: Mapping[str, str] | None = None) -> TestSet:
    """Read and validate the holdout set (errors name file and line, never a case's content)."""

    spec = holdout_spec(release)
    path = cases_path(release, environ)
    if not path.is_file():
        what = "is a directory" if path.is_dir() else "not found"
        raise HoldoutUnavailable(
            release.path, release.document.line("holdout.cases"), "holdout.cases", f"holdout set {what}: {path}"
        )
    return withheld(spec.cases, lambda: load_testset(path, display=spec.cases, kind="holdout set"))


def open_log(release: Release) -> ReadsLog:
    spec = holdout_spec(release)
    return ReadsLog(
        release.resolve(spec.log), shown=spec.log, witnesses=lambda: witnesses(release.base_dir, log=spec.log)
    )


@dataclass(slots=True)
class HoldoutInputs:
    """The holdout's case inputs, as the guard compares them: exactly (canonical JSON) and field by
    field through the leakage normaliser (``oloproof.normalise.near_copy_fields``). A dev input is a
    near copy of a holdout input when every field of the holdout input is among the dev input's
    fields with an equal normalised value (fields the dev input has beyond those are ignored, as the
    leakage check ignores a training row's other columns)."""

    exact: set[bytes] = field(default_factory=set)
    by_fields: dict[frozenset[str], set[frozenset[tuple[str, Hashable]]]] = field(default_factory=dict)
    # Long string values that occur in exactly one holdout case: a dev case holding one of them,
    # under any key, is a near copy (a renamed, moved, dropped or added key does not hide it). A
    # value shared by holdout cases (a prompt template, a boilerplate clause) identifies no case.
    distinctive: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, inputs: Iterable[dict[str, Any]]) -> HoldoutInputs:
        found = cls()
        seen: dict[str, int] = {}
        for item in inputs:
            found.exact.add(dumps_line(item))
            fields = near_copy_fields(item)
            if fields:
                found.by_fields.setdefault(frozenset(fields), set()).add(frozenset(fields.items()))
            for text in near_copy_texts(item):
                seen[text] = seen.get(text, 0) + 1
        found.distinctive = {text for text, count in seen.items() if count == 1}
        return found

    def match(self, inputs: dict[str, Any]) -> str | None:
        """``"exact"``, ``"near"`` or None."""
        if dumps_line(inputs) in self.exact:
            return "exact"
        fields = near_copy_fields(inputs)
        names = fields.keys()
        for keys, values in self.by_fields.items():
            if keys <= names and frozenset((key, fields[key]) for key in keys) in values:
                return "near"
        if self.distinctive and not self.distinctive.isdisjoint(near_copy_texts(inputs)):
            return "near"
        return None


def _declared_holdout(
    release: Release, environ: Mapping[str, str] | None = None
) -> tuple[Path | None, set[str], HoldoutInputs]:
    """The declared holdout's resolved path (None when a ``${VAR}`` of it is unset), every digest it
    is known by (the file's, the ``set=`` of every read in the log, the outcome records'), and its
    cases' inputs when the file can be read here."""
    spec = holdout_spec(release)
    digests: set[str] = set()
    inputs = HoldoutInputs()
    try:
        path: Path | None = cases_path(release, environ).resolve()
    except HoldoutUnavailable:
        path = None
    if path is not None and path.is_file():
        try:
            holdout = load_holdout(release, environ)
            digests.add(holdout.digest)
            inputs = HoldoutInputs.of(case.inputs for case in holdout.cases)
        except (OloproofError, OSError):
            pass  # malformed: the log's digests still apply
    try:
        state = open_log(release).state()
        digests.update(entry.fields.set_digest for entry in state.reads)
    except (OloproofError, OSError):
        pass
    records, _ = load_outcome_records(release.base_dir, log=spec.log)
    digests.update(record.set_digest for record in records)
    return path, digests, inputs


def _copies(exact: int, near: int) -> str:
    """How many dev cases copy a holdout case, by kind: counts only, never an id or a value."""
    parts = [f"{exact} exact cop{'y' if exact == 1 else 'ies'}"] if exact else []
    if near:
        parts.append(f"{near} near cop{'y' if near == 1 else 'ies'} (equal after {NEAR_COPY})")
    return " and ".join(parts)


def refuse_holdout_as_dev_set(release: Release, testset: TestSet, path: Path | None = None) -> None:
    """Refuse (UsageError, exit 2) a dev test set that holds any case of a holdout: the declared one
    (by path, by digest or by case), or any holdout set the repository's register holds, whatever
    config names the dev set. Scoring it through ``gate``, ``run`` or ``seeds`` would read the
    holdout without a reason or a budget, print its score as a dev score and store its outputs in
    the committed ``.oloproof/runs/``. Against the declared holdout, cases are compared by their
    input (ids and expected values may differ) field by field through the leakage normaliser, so a
    copy with a space, a case change or a ``!`` added is caught (``HoldoutInputs``); against the
    register, the same way through its salted commitments (exactly for sets registered before near
    copies were, until their next read). The refusal gives counts and dev-set lines, never a case's
    id or value."""
    exact = near = 0
    lines: list[int] = []
    where = ""
    if release.holdout is not None:
        holdout_path, digests, inputs = _declared_holdout(release)
        same_path = path is not None and holdout_path is not None and path.resolve() == holdout_path
        if same_path or testset.digest in digests:
            why = (
                "is the holdout file (holdout.cases)"
                if same_path
                else f"has the digest of the holdout set ({short(testset.digest)})"
            )
            raise UsageError(
                f"the dev test set {testset.path} {why}: scoring it as a dev set would read the holdout without a "
                "reason or a budget and store its outputs in .oloproof/runs/. Point testset.cases at the dev set; "
                'read the holdout only with `oloproof holdout run --reason "..."`'
            )
        for case in testset.cases:
            kind = inputs.match(case.inputs)
            exact += kind == "exact"
            near += kind == "near"
            if kind is not None:
                lines.append(case.line)
        where = "the declared holdout (holdout.cases)"
    if not exact + near:
        register = load_register(repository_root(release.base_dir))
        if register.salt is not None and register.sets:
            commitments = register.commitments(testset)
            hits = register.overlapping(commitments.values())
            near_hits, near_ids = register.near_overlapping(testset)
            if hits or near_hits:
                members = frozenset().union(*(register.sets[digest] for digest in hits))
                shared = {case_id for case_id, commitment in commitments.items() if commitment in members}
                lines = [case.line for case in testset.cases if case.id in shared | near_ids]
                exact, near = len(shared), len(near_ids - shared)
                sets = set(hits) | set(near_hits)
                reads = register.reads_of(sets)
                logs = sorted({read.log for read in reads})
                where = (
                    f"{'a holdout set' if len(sets) == 1 else f'{len(sets)} holdout sets'} of this repository "
                    f"({len(reads)} read(s) under {', '.join(logs) or 'no log'}; {register_shown()})"
                )
    if exact + near:
        lines.sort()
        shown = ", ".join(map(str, lines[:5])) + (f", … (+{len(lines) - 5})" if len(lines) > 5 else "")
        raise UsageError(
            f"the dev test set {testset.path} shares {exact + near} case(s) with {where}: {_copies(exact, near)} of "
            f"holdout inputs, at line(s) {shown} of the dev set (no id or value is shown: they may be the holdout's). "
            "A case in both sets would be scored as a dev score, without a reason or a budget, and its outputs stored "
            "in .oloproof/runs/. Remove those cases from the dev set, or keep the holdout apart from it"
        )
