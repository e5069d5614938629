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
- Values are normalised: strings NFKC-normalised, case-folded, format characters (Cf) dropped,
  whitespace runs collapsed to one space and trimmed (``normalise_string``, one function for
  every path; its version ``NORMALISATION`` is recorded); numbers compared by value (``3 == 3.0``), rounded to N decimals with ``--round``;
  booleans are not numbers. CSV cells carry no types, so there both sides are reduced to
  text and read the same way (``"3.0"`` is the number 3, ``"True"`` is true, empty is empty).

The modules: this one holds normalisation, key paths, the plan (the hashed test set) and the
gate check; ``leakage_match`` checks parsed rows against a plan; ``leakage_io`` reads the
training formats; ``leakage_scan`` streams a file through (in one process or several);
``leakage_record`` holds the result, the evidence record and what the gate reads from it.
"""

from __future__ import annotations

import enum
import functools
import math
import re
import sys
import unicodedata
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import orjson

from oloproof.checks import CheckReport, GateCheck, GateContext
from oloproof.errors import DataError

if TYPE_CHECKING:
    from oloproof.testset import TestSet

Domain = Literal["typed", "text"]  # typed: JSON/Parquet values; text: CSV cells
NEAR_DUPLICATES = "Near-duplicates are not checked: only cases equal to a training row after normalisation are found."


class Token(enum.Enum):
    """Normalised values that must never equal a number or a string (``True == 1`` in Python)."""

    NULL = "null"
    TRUE = "true"
    FALSE = "false"


MISSING: Any = object()  # a compared key the row does not have (never pickled: each process has its own)

# --------------------------------------------------------------------------- normalisation

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?", re.ASCII)  # after lowercasing; no nan, inf or 1_000
_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)


NORMALISATION = "nfkc-casefold-cf-ws/1"  # recorded; a record made under another version is stale


@functools.cache
def _format_characters() -> dict[int, None]:
    """Unicode format characters (category Cf: zero-width space, soft hyphen, BOM, …), to delete."""
    return {code: None for code in range(sys.maxunicode + 1) if unicodedata.category(chr(code)) == "Cf"}


def normalise_string(text: str) -> str:
    """THE string normaliser (every path uses it): NFKC, case-folded, Unicode format characters
    (Cf) dropped, every run of whitespace collapsed to one space, trimmed.

    ASCII text (nearly all of it) takes the fast path: for ASCII, NFKC and Cf removal change
    nothing and casefold is lower.
    """
    if text.isascii():
        return " ".join(text.lower().split())
    text = unicodedata.normalize("NFKC", text.translate(_format_characters()))
    folded = text.casefold()
    if folded != text:
        folded = unicodedata.normalize("NFKC", folded)  # casefold can leave a string that is not NFKC
    return " ".join(folded.split())


def _number(value: float, digits: int | None) -> Hashable:
    return value if digits is None else round(value, digits)


def normalise_value(value: Any, digits: int | None) -> Hashable:
    """A typed value (JSON, Parquet) in the form that is compared. Equal forms match.

    Python's ``==`` between int and float is exact, so ``3`` and ``3.0`` meet without any
    conversion (and a 19-digit integer is not silently rounded through a float).
    """
    kind = type(value)
    if kind is str:
        return normalise_string(value)
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
    norm = normalise_string(text)
    if not norm:
        return norm
    head = norm[0]
    if head in "0123456789+-." and _NUMBER.fullmatch(norm):
        if _INTEGER.fullmatch(norm):
            return _number(int(norm), digits)
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

# Below this magnitude, v * 10**d is exact to within 1/8, so floor(v * 10**d) lands in one of
# two buckets next to any value that rounds to r: a cheap superset test before the exact one.
BUCKET_LIMIT = float(2**50)


def rounding_buckets(values: frozenset[Hashable], digits: int) -> frozenset[int]:
    """``floor(v * 10**digits)`` for every ``v`` that rounds to one of ``values``.

    ``round(v, 3)`` costs about 0.6 µs (it goes through a decimal conversion), several times
    the rest of a row's first test; ``floor(v * 1000)`` costs 0.07 µs. So with ``--round`` a
    number is first tested by its bucket, and only a row that passes every key is rounded
    exactly: the answer is the exact one, only cheaper to reach.
    """
    scale = 10.0**digits
    buckets: set[int] = set()
    for value in values:
        if type(value) in (int, float) and -BUCKET_LIMIT < value * scale < BUCKET_LIMIT:  # type: ignore[operator]
            center = round(value * scale)  # type: ignore[operator]
            buckets.update((center - 1, center))
    return frozenset(buckets)


@dataclass(slots=True)
class KeyGroup:
    """Cases that compare the same keys, with their normalised values hashed.

    ``names`` is in check order (most selective and cheapest first, chosen on a sample of
    training rows); ``index`` maps the normalised values, in that order, to case indices.
    ``value_sets`` and ``buckets`` serve the cheap per-key test that most rows stop at.
    """

    names: tuple[str, ...]
    vectors: list[tuple[int, tuple[Hashable, ...]]]  # (case index, values in `names` order)
    value_sets: tuple[frozenset[Hashable], ...] = ()
    buckets: tuple[frozenset[int] | None, ...] = ()  # per key; None without --round
    index: dict[tuple[Hashable, ...], tuple[int, ...]] = field(default_factory=dict)

    def reorder(self, order: list[int]) -> None:
        self.names = tuple(self.names[i] for i in order)
        self.vectors = [(case, tuple(values[i] for i in order)) for case, values in self.vectors]
        self.value_sets = tuple(self.value_sets[i] for i in order)
        self.buckets = tuple(self.buckets[i] for i in order)
        self.index = {}

    def build_sets(self, *, digits: int | None) -> None:
        width = len(self.names)
        self.value_sets = tuple(frozenset(values[i] for _, values in self.vectors) for i in range(width))
        bucketed = digits is not None
        self.buckets = tuple(rounding_buckets(values, digits) if bucketed else None for values in self.value_sets)  # type: ignore[arg-type]

    def build_index(self) -> None:
        """The exact index, keyed in check order (built once the order is settled)."""
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

    def passes(self, group: KeyGroup, position: int, value: Any) -> bool:
        """The cheap test of one value of a row: could it equal some case's value here?"""
        buckets = group.buckets[position]
        if buckets is not None and self.domain == "typed":
            kind = type(value)
            scale = 10.0 ** self.digits  # type: ignore[operator]
            if (kind is float or kind is int) and -BUCKET_LIMIT < value * scale < BUCKET_LIMIT:
                return math.floor(value * scale) in buckets
        return self.normaliser()(value, self.digits) in group.value_sets[position]

    def order_by_sample(self, rows: list[Any], getters: list[list[Callable[[Any], Any]]]) -> dict[str, int]:
        """Put each group's most selective, cheapest key first, judged on sample rows.

        Classic filter ordering: ascending cost / (1 - pass rate). Normalising a string costs
        about six times testing a number (measured: ~0.6 µs vs ~0.1 µs). Returns, per
        compared key, how many sample rows had it.
        """
        present: dict[str, int] = {name: 0 for name in self.compared}
        for group, group_getters in zip(self.groups, getters, strict=True):
            ranks: list[float] = []
            for position, (name, getter) in enumerate(zip(group.names, group_getters, strict=True)):
                hits = strings = seen = 0
                for row in rows:
                    value = getter(row)
                    if value is MISSING:
                        continue
                    seen += 1
                    strings += isinstance(value, str)
                    try:
                        hits += self.passes(group, position, value)
                    except RecursionError:  # nested too deeply: the scan reports the row, with its line
                        continue
                present[name] = max(present[name], seen)
                pass_rate = (hits + 0.5) / (len(rows) + 1)
                if self.domain == "text":  # a cell costs a float() when every case value is a number
                    numeric = all(type(value) in (int, float) for value in group.value_sets[position])
                    cost = 0.15 if numeric else 0.6
                else:
                    cost = 0.6 if strings * 2 > seen else 0.1
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
        try:
            values = tuple(normalise_case_value(chosen[name], digits, domain) for name in names)
        except RecursionError:
            raise DataError(testset.path, case.line, f"case '{case.id}': a value is nested too deeply to compare") from None
        group.vectors.append((index, values))
    groups = sorted(by_names.values(), key=lambda group: -len(group.vectors))
    for group in groups:
        group.build_sets(digits=digits)
    return MatchPlan(case_ids=tuple(case.id for case in testset.cases), groups=groups, digits=digits, domain=domain, fields=fields)


def json_getter(name: str) -> Callable[[Any], Any]:
    """From a parsed JSON/Parquet row to the value of case key ``name``, or MISSING.

    The first place (the nested path) is tried inline, the others only when it misses.
    """
    candidates = lookup_candidates(name)
    primary, others = candidates[0], candidates[1:]
    if len(primary) == 1:
        key = primary[0]

        def get_flat(row: Any) -> Any:
            value = row.get(key, MISSING)
            return value if value is not MISSING else resolve(row, others)

        return get_flat
    if len(primary) == 2:
        outer, inner = primary

        def get_nested(row: Any) -> Any:
            node = row.get(outer, MISSING)
            if type(node) is dict:
                value = node.get(inner, MISSING)
                if value is not MISSING:
                    return value
            return resolve(row, others)

        return get_nested
    return lambda row: resolve(row, candidates)


def json_getters(plan: MatchPlan) -> list[list[Callable[[Any], Any]]]:
    """Per group and key (in check order), the getter for parsed JSON/Parquet rows."""
    return [[json_getter(name) for name in group.names] for group in plan.groups]


# --------------------------------------------------------------------------- the gate check


class LeakageCheck(GateCheck):
    """``leakage: required`` as a precondition; a leaky record invalidates every rule."""

    name = "leakage"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        from oloproof.leakage_record import gate_report

        return gate_report(ctx.release, ctx.testset, ctx.store.root)

