"""Leakage (SPEC §4): which test cases appear, after normalisation, in the training data.

The small side is hashed into memory and the large side streamed past it — the shape of
lm-evaluation-harness' decontamination, not Deepchecks' load-both-and-merge (which holds
the whole training set in memory and prints matched training rows; we never do either).

Matching, in one paragraph (docs/leakage.md has the full rules and examples):

- A case compares its input *leaves*: every key path down to a non-object value
  (``features.income``), or only the leaves under the ``--field`` paths. Keys a training
  row has beyond those are ignored (labels, ids, other columns).
- A leaf ``a.b.c`` is looked up in a training row as the nested path ``a → b → c``, then the
  flat key ``"a.b.c"``, then the same for the shorter suffixes ``b.c`` and ``c``: the first
  one the row has wins. So ``features.income`` meets a CSV column ``income`` (or
  ``features.income``). A row that has none of them cannot match that case.
- Values are normalised: strings lowercased, whitespace runs collapsed to one space and
  trimmed; numbers compared by value (``3 == 3.0``), rounded to N decimals with ``--round``;
  booleans are not numbers. CSV cells carry no types, so there both sides are reduced to
  text and read the same way (``"3.0"`` is the number 3, ``"True"`` is true, empty is empty).

This module holds the pure part (normalisation, the in-memory plan, the matcher that
checks parsed rows) and the gate check; ``leakage_io`` reads training files and records.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field
from operator import length_hint
from typing import TYPE_CHECKING, Any, Literal

import orjson

from oloproof.checks import CheckReport, GateCheck, GateContext
from oloproof.errors import DataError
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.testset import TestSet

Domain = Literal["typed", "text"]  # typed: JSON/Parquet values; text: CSV cells
NEAR_DUPLICATES = "Near-duplicates are not checked: only cases equal to a training row after normalisation are found."
MAX_MALFORMED_LINES = 20  # line numbers kept for the report (the count is always exact)


class Token(enum.Enum):
    """Normalised values that must never equal a number or a string (``True == 1`` in Python)."""

    NULL = "null"
    TRUE = "true"
    FALSE = "false"


MISSING: Any = object()  # a compared key the row does not have (never pickled: each process has its own)

# --------------------------------------------------------------------------- normalisation

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?")  # after lowercasing; no nan, inf or 1_000
_INTEGER = re.compile(r"[+-]?\d+")


def normalise_string(text: str) -> str:
    """Lowercase, collapse every run of whitespace to one space, trim."""
    return " ".join(text.lower().split())


def _number(value: float, digits: int | None) -> Hashable:
    return value if digits is None else round(value, digits)


def normalise_value(value: Any, digits: int | None) -> Hashable:
    """A typed value (JSON, Parquet) in the form that is compared. Equal forms match.

    Python's ``==`` between int and float is exact, so ``3`` and ``3.0`` meet without any
    conversion (and a 19-digit integer is not silently rounded through a float).
    """
    kind = type(value)
    if kind is str:
        return " ".join(value.lower().split())
    if kind is bool:
        return Token.TRUE if value else Token.FALSE
    if kind is int or kind is float:
        return value if digits is None else round(value, digits)
    if value is None:
        return Token.NULL
    if kind is list or kind is tuple:
        return tuple(normalise_value(item, digits) for item in value)
    if kind is dict:
        return frozenset((key, normalise_value(item, digits)) for key, item in value.items())
    return _normalise_other(value, digits)


def _normalise_other(value: Any, digits: int | None) -> Hashable:
    """Types only Parquet produces (or subclasses): decimals, dates, bytes, numpy scalars."""
    import datetime
    import decimal

    if isinstance(value, bool):
        return Token.TRUE if value else Token.FALSE
    if isinstance(value, (int, float)):
        return _number(value, digits) if isinstance(value, float) else (int(value) if digits is None else round(int(value), digits))
    if isinstance(value, decimal.Decimal):
        return _number(float(value), digits) if value.is_finite() else str(value)
    if isinstance(value, (datetime.date, datetime.time)):
        return normalise_string(value.isoformat())
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, str):
        return normalise_string(value)
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return normalise_value(item(), digits)
    return normalise_string(str(value))


def normalise_text(text: str, digits: int | None) -> Hashable:
    """A CSV cell (untyped text) in the form that is compared.

    Read the way pandas would: a numeric literal is a number, ``true``/``false`` (any case)
    a boolean, anything else a normalised string. An empty cell is the empty string.
    """
    norm = " ".join(text.lower().split())
    if not norm:
        return norm
    head = norm[0]
    if (head.isdigit() or head in "+-.") and _NUMBER.fullmatch(norm):
        if _INTEGER.fullmatch(norm):
            return _number(int(norm), digits)  # type: ignore[arg-type]
        number = float(norm)
        return _number(number, digits) if math.isfinite(number) else norm
    if norm == "true":
        return Token.TRUE
    if norm == "false":
        return Token.FALSE
    return norm


def value_as_text(value: Any) -> str:
    """How a case value would be written in a CSV cell (null as an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value)
    return orjson.dumps(value).decode()


def normalise_case_value(value: Any, digits: int | None, domain: Domain) -> Hashable:
    return normalise_text(value_as_text(value), digits) if domain == "text" else normalise_value(value, digits)


# --------------------------------------------------------------------------- key paths

KeyPath = tuple[str, ...]


def lookup_candidates(name: str) -> tuple[KeyPath, ...]:
    """Where the case key ``name`` (dotted) is looked for in a training row, in order.

    ``a.b.c`` → nested ``a/b/c``, flat ``"a.b.c"``, nested ``b/c``, flat ``"b.c"``, flat ``c``.
    """
    parts = tuple(name.split("."))
    out: list[KeyPath] = []
    for start in range(len(parts)):
        suffix = parts[start:]
        out.append(suffix)
        if len(suffix) > 1:
            out.append((".".join(suffix),))
    return tuple(dict.fromkeys(out))


def resolve(row: dict[str, Any], candidates: tuple[KeyPath, ...]) -> Any:
    """The value of the first candidate path the row has, or ``MISSING``."""
    for path in candidates:
        node: Any = row
        for part in path:
            if type(node) is not dict:
                node = MISSING
                break
            node = node.get(part, MISSING)
            if node is MISSING:
                break
        if node is not MISSING:
            return node
    return MISSING


def case_leaves(inputs: dict[str, Any], *, case_id: str, path: str, line: int) -> dict[str, Any]:
    """Every leaf of a case's input by dotted key (objects are walked, arrays are leaves)."""
    leaves: dict[str, Any] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for key, value in node.items():
            name = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict) and value:
                walk(value, name)
                continue
            if name in leaves:
                raise DataError(path, line, f"case '{case_id}': key '{name}' is given both nested and as a dotted name")
            leaves[name] = value

    walk(inputs, "")
    return leaves


def select_fields(leaves: dict[str, Any], fields: tuple[str, ...] | None, *, case_id: str, path: str, line: int) -> dict[str, Any]:
    if fields is None:
        if not leaves:
            raise DataError(path, line, f"case '{case_id}' has no input keys to compare with the training data")
        return leaves
    chosen: dict[str, Any] = {}
    for wanted in fields:
        hits = {name: value for name, value in leaves.items() if name == wanted or name.startswith(wanted + ".")}
        if not hits:
            raise DataError(path, line, f"case '{case_id}' has no '{wanted}' to compare (--field {wanted})")
        chosen.update(hits)
    return chosen


# --------------------------------------------------------------------------- the plan


@dataclass(slots=True)
class KeyGroup:
    """Cases that compare the same keys, with their normalised values hashed.

    ``names`` is in check order (most selective and cheapest first, chosen on a sample of
    training rows); ``index`` maps the normalised values, in that order, to case indices.
    """

    names: tuple[str, ...]
    vectors: list[tuple[int, tuple[Hashable, ...]]]  # (case index, values in `names` order)
    value_sets: tuple[frozenset[Hashable], ...] = ()
    index: dict[tuple[Hashable, ...], tuple[int, ...]] = field(default_factory=dict)

    def reorder(self, order: list[int]) -> None:
        self.names = tuple(self.names[i] for i in order)
        self.vectors = [(case, tuple(values[i] for i in order)) for case, values in self.vectors]
        self.build()

    def build(self) -> None:
        width = len(self.names)
        self.value_sets = tuple(frozenset(values[i] for _, values in self.vectors) for i in range(width))
        index: dict[tuple[Hashable, ...], list[int]] = {}
        for case, values in self.vectors:
            index.setdefault(values, []).append(case)
        self.index = {key: tuple(cases) for key, cases in index.items()}


@dataclass(slots=True)
class MatchPlan:
    """Everything the scan needs from the test set; picklable for worker processes."""

    case_ids: tuple[str, ...]
    groups: list[KeyGroup]
    digits: int | None
    domain: Domain
    fields: tuple[str, ...] | None

    @property
    def compared(self) -> tuple[str, ...]:
        return tuple(sorted({name for group in self.groups for name in group.names}))

    def normaliser(self) -> Callable[[Any, int | None], Hashable]:
        return normalise_text if self.domain == "text" else normalise_value

    def order_by_sample(self, rows: list[Any], getters: list[list[Callable[[Any], Any]]]) -> dict[str, int]:
        """Put each group's most selective, cheapest key first, judged on sample rows.

        Classic filter ordering: ascending cost / (1 - pass rate). A string costs about six
        times a number to normalise (measured: ~0.6 µs vs ~0.1 µs). Returns, per compared key,
        how many sample rows had it.
        """
        normalise = self.normaliser()
        present: dict[str, int] = {name: 0 for name in self.compared}
        for group, group_getters in zip(self.groups, getters):
            ranks: list[float] = []
            for i, (name, getter) in enumerate(zip(group.names, group_getters)):
                hits = strings = seen = 0
                for row in rows:
                    value = getter(row)
                    if value is MISSING:
                        continue
                    seen += 1
                    strings += isinstance(value, str)
                    hits += normalise(value, self.digits) in group.value_sets[i]
                present[name] = max(present[name], seen)
                pass_rate = (hits + 0.5) / (len(rows) + 1)
                cost = 0.6 if self.domain == "text" or strings * 2 > seen else 0.1
                ranks.append(cost / max(1e-6, 1.0 - pass_rate))
            group.reorder(sorted(range(len(group.names)), key=lambda i: (ranks[i], group.names[i])))
        return present


def build_plan(testset: TestSet, *, fields: tuple[str, ...] | None, digits: int | None, domain: Domain) -> MatchPlan:
    """Normalise and hash every case's compared values (errors name the test-set line)."""
    by_names: dict[tuple[str, ...], KeyGroup] = {}
    for index, case in enumerate(testset.cases):
        leaves = case_leaves(case.inputs, case_id=case.id, path=testset.path, line=case.line)
        chosen = select_fields(leaves, fields, case_id=case.id, path=testset.path, line=case.line)
        names = tuple(sorted(chosen))
        group = by_names.setdefault(names, KeyGroup(names=names, vectors=[]))
        group.vectors.append((index, tuple(normalise_case_value(chosen[name], digits, domain) for name in names)))
    groups = sorted(by_names.values(), key=lambda group: -len(group.vectors))
    for group in groups:
        group.build()
    return MatchPlan(case_ids=tuple(case.id for case in testset.cases), groups=groups, digits=digits, domain=domain, fields=fields)


def json_getters(plan: MatchPlan) -> list[list[Callable[[Any], Any]]]:
    """Per group and key, a function from a parsed JSON/Parquet row to the value or MISSING."""

    def getter(candidates: tuple[KeyPath, ...]) -> Callable[[Any], Any]:
        return lambda row: resolve(row, candidates)

    return [[getter(lookup_candidates(name)) for name in group.names] for group in plan.groups]


# --------------------------------------------------------------------------- the matcher


@dataclass(slots=True)
class ScanCounts:
    """What one scan (or one worker's byte range) found. Never holds a training value."""

    rows: int = 0
    matched_rows: int = 0
    malformed: int = 0
    malformed_lines: list[int] = field(default_factory=list)
    lines: int = 0  # physical lines consumed (JSONL), to turn a worker's line numbers into the file's
    leaked: set[int] = field(default_factory=set)  # case indices

    def merge(self, other: ScanCounts, *, line_offset: int = 0) -> None:
        self.rows += other.rows
        self.matched_rows += other.matched_rows
        self.malformed += other.malformed
        room = MAX_MALFORMED_LINES - len(self.malformed_lines)
        self.malformed_lines.extend(line + line_offset for line in other.malformed_lines[:room])
        self.lines += other.lines
        self.leaked |= other.leaked


class Matcher:
    """Checks parsed training rows against a plan; counts, and remembers only case indices."""

    def __init__(self, plan: MatchPlan, getters: list[list[Callable[[Any], Any]]], *, display: str, skip_malformed: bool) -> None:
        self.plan = plan
        self.display = display
        self.skip_malformed = skip_malformed
        self.counts = ScanCounts()
        self.normalise = plan.normaliser()
        self.digits = plan.digits
        self.steps = [list(zip(group_getters, group.value_sets)) for group, group_getters in zip(plan.groups, getters)]

    def malformed(self, line: int, problem: str) -> None:
        """A row that cannot be read: an error naming file and line, or counted when skipping."""
        if not self.skip_malformed:
            raise DataError(self.display, line, f"{problem} (training row; pass --skip-malformed to skip and count such rows)")
        counts = self.counts
        counts.malformed += 1
        if len(counts.malformed_lines) < MAX_MALFORMED_LINES:
            counts.malformed_lines.append(line)

    def check_row(self, row: Any) -> None:
        """Check one parsed row against every group (the general path)."""
        normalise, digits = self.normalise, self.digits
        for group, steps in zip(self.plan.groups, self.steps):
            key: list[Hashable] = []
            for getter, values in steps:
                value = getter(row)
                if value is MISSING:
                    break
                norm = normalise(value, digits)
                if norm not in values:
                    break
                key.append(norm)
            else:
                self._hit(group, tuple(key))

    def _hit(self, group: KeyGroup, key: tuple[Hashable, ...]) -> None:
        cases = group.index.get(key)
        if cases:
            self.counts.matched_rows += 1
            self.counts.leaked.update(cases)

    def check_rows(self, rows: Iterable[Any]) -> None:
        check = self.check_row
        count = 0
        for row in rows:
            check(row)
            count += 1
        self.counts.rows += count

    def scan_json_lines(self, lines: list[bytes], first_line: int) -> None:
        """Parse and check a block of JSONL lines; ``first_line`` is the number of ``lines[0]``.

        This loop is the hot path: most rows fail the first (most selective) key, so that key
        is resolved and normalised inline and the rest only for the few rows that pass.
        """
        loads, decode_error = orjson.loads, orjson.JSONDecodeError
        counts = self.counts
        fast = self._fast_path()
        check = self.check_row
        it = iter(lines)
        bad = 0
        for raw in it:
            try:
                row = loads(raw)
            except decode_error as exc:
                bad += 1
                if raw.strip():
                    self.malformed(first_line + len(lines) - length_hint(it) - 1, _json_problem(exc, raw))
                continue
            if type(row) is not dict:
                bad += 1
                self.malformed(first_line + len(lines) - length_hint(it) - 1, f"expected a JSON object, got {_kind(row)}")
                continue
            if fast is None:
                check(row)
                continue
            first, second, values, digits, rest = fast
            value = row.get(first, MISSING)
            if second is not None:
                value = value.get(second, MISSING) if type(value) is dict else MISSING
            if value is MISSING:
                check(row)  # the general path tries the other places the key may be
                continue
            kind = type(value)
            if kind is float or kind is int:
                norm = value if digits is None else round(value, digits)
            elif kind is str:
                norm = " ".join(value.lower().split())
            else:
                norm = normalise_value(value, digits)
            if norm in values:
                rest(row, norm)
        counts.rows += len(lines) - bad
        counts.lines += len(lines)

    def _fast_path(self) -> tuple[str, str | None, frozenset[Hashable], int | None, Callable[[Any, Hashable], None]] | None:
        if len(self.plan.groups) != 1 or self.plan.domain != "typed":
            return None
        group, steps = self.plan.groups[0], self.steps[0]
        primary = lookup_candidates(group.names[0])[0]
        if len(primary) > 2:
            return None
        normalise, digits = self.normalise, self.digits
        tail = steps[1:]

        def rest(row: Any, first_norm: Hashable) -> None:
            key = [first_norm]
            for getter, values in tail:
                value = getter(row)
                if value is MISSING:
                    return
                norm = normalise(value, digits)
                if norm not in values:
                    return
                key.append(norm)
            self._hit(group, tuple(key))

        return primary[0], (primary[1] if len(primary) == 2 else None), steps[0][1], digits, rest


def _kind(value: Any) -> str:
    return "an array" if isinstance(value, list) else f"a {type(value).__name__}"


def _json_problem(exc: orjson.JSONDecodeError, raw: bytes) -> str:
    """Why a line is not JSON, without quoting any of it (training content is never shown)."""
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"not valid UTF-8 (byte {err.start + 1} of the line)"
    return f"not valid JSON ({exc.msg} at column {exc.colno})"


# --------------------------------------------------------------------------- the gate check


class LeakageCheck(GateCheck):
    """``leakage: required`` as a precondition; a leaky record invalidates every rule."""

    name = "leakage"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        from oloproof.leakage_record import gate_report

        return gate_report(ctx.release, ctx.testset, ctx.store.root)

