"""Which cases a rule's ``where:`` selects, and the values ``per:`` slices by (issue 18 §1-2).

A key is ``expected.KEY`` (the case's expected object), ``output.KEY`` (the system's output for the
case), ``stratum``, ``group``, ``id`` or any other key of the case (an input). Values match by JSON
equality (``oloproof.evaluators.label_match.same_value``): ``"1"`` is not ``1``, ``true`` is not
``1``, ``1`` is ``1.0``. A list of values selects a case whose value is any of them; several keys
select the cases that match every one. A case without the key is not selected; under
``output.KEY`` a case the system did not answer is not selected (docs/release-yaml.md says why).

``stratum`` and ``group`` are read as text by the test-set loader, so a number written for them
(``where: {stratum: 1}``) is compared as its text.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from oloproof.errors import ConfigError
from oloproof.evaluators.label_match import same_value
from oloproof.inert import inert
from oloproof.schema import did_you_mean

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.policy import Rule
    from oloproof.testset import Case, TestSet

MAX_ROWS = 50  # a per: key with more values names cases, not slices (e.g. per: id by mistake)
MISSING: Any = object()
NAMED = ("id", "stratum", "group")


def case_value(case: Case, key: str, outputs: Mapping[str, Mapping[str, Any]]) -> Any:
    """The case's value under ``key``, or ``MISSING``."""
    if key == "id":
        return case.id
    if key in ("stratum", "group"):
        value = case.stratum if key == "stratum" else case.group
        return MISSING if value is None else value
    if key.startswith("expected."):
        return case.expected.get(key[len("expected.") :], MISSING)
    if key.startswith("output."):
        output = outputs.get(case.id)
        return MISSING if output is None else output.get(key[len("output.") :], MISSING)
    return case.inputs.get(key, MISSING)


def _wanted(key: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    if key in ("stratum", "group"):  # read as text by the loader
        return tuple(str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v for v in values)
    return values


def matches(case: Case, where: tuple[tuple[str, tuple[Any, ...]], ...], outputs: Mapping[str, Any]) -> bool:
    for key, values in where:
        got = case_value(case, key, outputs)
        if got is MISSING or not any(same_value(got, value) for value in _wanted(key, values)):
            return False
    return True


def shown(value: Any) -> str:
    """A value as JSON text (so "1" and 1 read differently), cut for reports."""
    if value is MISSING:
        return "(none)"
    plain = isinstance(value, str) and not _looks_typed(value) and value != "(none)"  # JSON null reads null
    text = value if plain else json.dumps(value, sort_keys=True)
    return inert(text if len(text) <= 40 else text[:39] + "…")


def json_safe(value: Any) -> Any:
    """``value`` for the JSON report: an integer beyond 64 bits (which the JSON writer refuses) as
    its decimal text; everything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**63) <= value < 2**64:
        return str(value)
    if isinstance(value, list):
        return [json_safe(item) for item in value]
    if isinstance(value, dict):
        return {key: json_safe(item) for key, item in value.items()}
    return value


def _looks_typed(text: str) -> bool:
    """A string that would read as another JSON type ("1", "true", "null"): shown quoted."""
    try:
        return not isinstance(json.loads(text), str)
    except ValueError:
        return text == "" or text.strip() != text


def describe(where: tuple[tuple[str, tuple[Any, ...]], ...]) -> str:
    """``expected.species = Chinstrap and stratum in (a, b)``."""
    parts = []
    for key, values in where:
        if len(values) == 1:
            parts.append(f"{inert(key)} = {shown(values[0])}")
        else:
            parts.append(f"{inert(key)} in ({', '.join(shown(value) for value in values)})")
    return " and ".join(parts)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else "null"


def why_none(cases: Sequence[Case], where: tuple[tuple[str, tuple[Any, ...]], ...], outputs: Mapping[str, Any]) -> str:
    """Why no case matches: the first key that matches nothing, the values it does hold, and a
    JSON type difference ("1" against 1) when that is what stands in the way."""
    for key, values in where:
        wanted = _wanted(key, values)
        held = [value for case in cases if (value := case_value(case, key, outputs)) is not MISSING]
        if any(any(same_value(value, want) for want in wanted) for value in held):
            continue
        if not held:
            where_from = "no output holds it" if key.startswith("output.") else "no case holds it"
            return f"{inert(key)}: {where_from}"
        common = Counter(json.dumps(value, sort_keys=True) for value in held).most_common(5)
        seen = ", ".join(f"{inert(text)} ({count})" for text, count in common)
        for want in wanted:
            alike = [v for v in held if json.dumps(v) == json.dumps(str(want)) or str(v) == str(want)]
            if alike:
                return (
                    f"{inert(key)} holds {shown(alike[0])} ({_json_type(alike[0])}) on {len(alike)} case(s), but the "
                    f"rule asks for {json.dumps(want)} ({_json_type(want)}): values match by JSON type, so "
                    f"write {json.dumps(alike[0])} in where:"
                )
        return f"no case has {inert(key)} = {' or '.join(json.dumps(v) for v in wanted)}; it holds {seen}"
    return "the keys select no case together"


def check_rule_keys(release: Release, testset: TestSet) -> None:
    """Before the system runs: every ``where``/``per`` key that names a case key exists on some
    case (a typo must never select zero cases silently), ``per`` has at most ``MAX_ROWS`` values,
    and no such rule reads a judge criterion."""
    criteria = release.criteria()
    for rule in release.policy.rules:
        keys = [(f"where.{key}", key) for key, _ in rule.where] + ([("per", rule.per)] if rule.per else [])
        if not keys:
            continue
        evaluator = criteria.get(rule.criterion)
        if evaluator is not None and evaluator.type == "judge":
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.{keys[0][0]}",
                "where:/per: on a judge criterion is not supported: its interval combines the judge with people's "
                "labels over the whole set",
            )
        for at, key in keys:
            if key.startswith("output."):
                continue
            if not any(case_value(case, key, {}) is not MISSING for case in testset.cases):
                raise ConfigError(rule.source, rule.line, f"{rule.key_path}.{at}", f"{unknown_key(key, testset)}")
        for key, values in rule.where:
            if len(values) > 1 and not key.startswith("output."):
                _every_value_held(rule, key, values, testset.cases, {}, str(testset.path))
        if rule.per is not None:
            distinct = {_grouping(case_value(case, rule.per, {})) for case in testset.cases}
            if len(distinct) > MAX_ROWS:
                raise ConfigError(
                    rule.source,
                    rule.line,
                    f"{rule.key_path}.per",
                    f"per: {inert(rule.per)} has {len(distinct)} distinct values in {testset.path} (at most {MAX_ROWS} "
                    "rows): per: names slices (stratum, a class), not cases; with one row per case no row could "
                    "ever be decided",
                )


def unheld_value(
    key: str, values: tuple[Any, ...], cases: Sequence[Case], outputs: Mapping[str, Mapping[str, Any]]
) -> Any:
    """The first value of a ``where:`` list that selects no case (``MISSING`` when each does). For
    an ``output.KEY``, a value some case expects under ``expected.KEY`` counts as held: a class the
    system never predicted, not a typo."""
    held = [value for case in cases if (value := case_value(case, key, outputs)) is not MISSING]
    for value in values:
        (want,) = _wanted(key, (value,))
        if any(same_value(got, want) for got in held):
            continue
        if key.startswith("output.") and _a_class(key, want, cases):
            continue
        return value
    return MISSING


def _every_value_held(
    rule: Rule,
    key: str,
    values: tuple[Any, ...],
    cases: Sequence[Case],
    outputs: Mapping[str, Mapping[str, Any]],
    holder: str,
) -> None:
    """Each value of a ``where:`` list selects some case: a typo in a list (``[Chinstrap, Chinstarp]``)
    would otherwise leave that class out of the rule without a word, and the rule could pass on the
    classes that remain."""
    value = unheld_value(key, values, cases, outputs)
    if value is not MISSING:
        raise ConfigError(
            rule.source,
            rule.line,
            f"{rule.key_path}.where.{key}",
            f"{why_none(cases, ((key, (value,)),), outputs)} (in {holder}): each value of a where: list must select "
            "some case, or it would be left out of the rule unseen",
        )


def _a_class(key: str, value: Any, cases: Sequence[Case]) -> bool:
    """``value`` is the expected value of some case under the same name (``output.label`` and
    ``expected.label``): a class the system did not predict, not a typo."""
    name = "expected." + key[len("output.") :]
    return any((got := case_value(case, name, {})) is not MISSING and same_value(got, value) for case in cases)


def unknown_key(key: str, testset: TestSet) -> str:
    known: set[str] = {"id"}
    for case in testset.cases:
        known.update(f"expected.{name}" for name in case.expected)
        known.update(case.inputs)
        if case.stratum is not None:
            known.add("stratum")
        if case.group is not None:
            known.add("group")
    listed = ", ".join(sorted(known)[:12]) + (", …" if len(known) > 12 else "")
    return (
        f"no case of {testset.path} has '{inert(key)}'{did_you_mean(key, known)}: such a key would select no case; "
        f"keys the cases have: {listed}, or output.KEY"
    )


def check_output_keys(rule: Rule, outputs: Mapping[str, Mapping[str, Any]], cases: Sequence[Case] = ()) -> None:
    """After the run: an ``output.KEY`` no output holds is a typo or a mismatch with the system,
    not an empty slice (outputs: none at all, as from a crashed run, is not this); so is a value of
    an ``output.KEY`` list that no output holds and no case expects."""
    if not outputs:
        return
    for key, _ in rule.where:
        if not key.startswith("output."):
            continue
        name = key[len("output.") :]
        if not any(name in output for output in outputs.values()):
            seen = Counter(k for output in outputs.values() for k in output if k != "id")
            have = ", ".join(inert(k) for k, _ in seen.most_common(8)) or "only an id"
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.where.{key}",
                f"no output of the run has '{inert(name)}'{did_you_mean(name, seen)} (they have: {have}): the rule "
                "would select no case",
            )
    for key, values in rule.where:
        if len(values) > 1 and key.startswith("output.") and cases:
            _every_value_held(rule, key, values, cases, outputs, "the run's outputs")


def _grouping(value: Any) -> str:
    """One text per JSON-equal value (1 and 1.0 together; "1" and 1 apart)."""
    if value is MISSING:
        return "\0missing"
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return json.dumps(value, sort_keys=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class Slice:
    """The cases of one ``per`` value (``value`` is MISSING for cases without the key)."""

    value: Any
    case_ids: tuple[str, ...]

    @property
    def label(self) -> str:
        return shown(self.value)


def slices_of(cases: Sequence[Case], key: str) -> list[Slice]:
    """The slices of ``cases`` by ``key``, sorted by value text; cases without the key last."""
    found: dict[str, tuple[Any, list[str]]] = {}
    for case in cases:
        value = case_value(case, key, {})
        found.setdefault(_grouping(value), (value, []))[1].append(case.id)
    order = sorted(found, key=lambda text: (text == "\0missing", text))
    return [Slice(value=found[text][0], case_ids=tuple(found[text][1])) for text in order]
