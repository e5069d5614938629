"""Key paths and the plan: which case keys are compared, where each is looked for in a training
row, and the test set hashed into memory (the small side) for the training rows to stream past."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.errors import DataError
from oloproof.leakage.images import (
    ImageProblem,
    OtherShape,
    Pixels,
    TrainingImages,
    image_keys,
    image_path,
    read_pixels,
)
from oloproof.leakage.normalise import MISSING, Domain, normalise_case_value, normalise_text, normalise_value

if TYPE_CHECKING:
    from oloproof.testset import TestSet


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


def select_fields(
    leaves: dict[str, Any], fields: tuple[str, ...] | None, *, case_id: str, path: str, line: int
) -> dict[str, Any]:
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
    image_keys: frozenset[str] = frozenset()  # compared by their pictures' pixels (leakage.images)
    image_root: Path = Path(".")  # what a training row's relative image path is relative to
    image_shapes: frozenset[tuple[str, int, int]] = frozenset()  # (mode, width, height) of the test pictures

    @property
    def compared(self) -> tuple[str, ...]:
        return tuple(sorted({name for group in self.groups for name in group.names}))

    def normaliser(self) -> Callable[[Any, int | None], Hashable]:
        base = normalise_text if self.domain == "text" else normalise_value
        if not self.image_keys:
            return base

        def normalise(value: Any, digits: int | None) -> Hashable:
            return value if type(value) in (Pixels, OtherShape) else base(value, digits)

        return normalise

    def training_images(self, name: str) -> TrainingImages:
        return TrainingImages(self.image_root, self.image_shapes, name)

    def passes(self, group: KeyGroup, position: int, value: Any) -> bool:
        """The cheap test of one value of a row: could it equal some case's value here?"""
        buckets = group.buckets[position]
        if buckets is not None and self.domain == "typed":
            kind = type(value)
            scale = 10.0**self.digits  # type: ignore[operator]
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
                    try:
                        value = getter(row)
                    except ImageProblem:  # the scan reports the row, with its line
                        continue
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
                if name in self.image_keys:  # reading a picture costs far more than any value: test it last
                    cost = 1000.0
                elif self.domain == "text":  # a cell costs a float() when every case value is a number
                    numeric = all(type(value) in (int, float) for value in group.value_sets[position])
                    cost = 0.15 if numeric else 0.6
                else:
                    cost = 0.6 if strings * 2 > seen else 0.1
                ranks.append(cost / max(1e-6, 1.0 - pass_rate))
            group.reorder(sorted(range(len(group.names)), key=lambda i: (ranks[i], group.names[i])))
        return present


def testset_image_keys(testset: TestSet, fields: tuple[str, ...] | None) -> frozenset[str]:
    """The image keys a check of ``testset`` with ``--field fields`` compares (no file is read)."""
    chosen = []
    for case in testset.cases:
        leaves = case_leaves(case.inputs, case_id=case.id, path=testset.path, line=case.line)
        chosen.append(select_fields(leaves, fields, case_id=case.id, path=testset.path, line=case.line))
    return image_keys(chosen)


def build_plan(
    testset: TestSet,
    *,
    fields: tuple[str, ...] | None,
    digits: int | None,
    domain: Domain,
    case_root: Path | None = None,
    image_root: Path | None = None,
) -> MatchPlan:
    """Normalise and hash every case's compared values (errors name the test-set line). Image keys
    (``leakage.images``) hold their pictures' digests; a case's relative image path resolves against
    ``case_root`` (the directory of release.yaml), a training row's against ``image_root``
    (default: ``case_root``)."""
    root = case_root if case_root is not None else Path(".")
    chosen_by_case: list[dict[str, Any]] = []
    for case in testset.cases:
        leaves = case_leaves(case.inputs, case_id=case.id, path=testset.path, line=case.line)
        chosen_by_case.append(select_fields(leaves, fields, case_id=case.id, path=testset.path, line=case.line))
    images = image_keys(chosen_by_case)
    shapes: set[tuple[str, int, int]] = set()
    by_names: dict[tuple[str, ...], KeyGroup] = {}
    for index, (case, chosen) in enumerate(zip(testset.cases, chosen_by_case, strict=True)):
        names = tuple(sorted(chosen))
        group = by_names.setdefault(names, KeyGroup(names=names, vectors=[]))
        values: list[Hashable] = []
        for name in names:
            value = chosen[name]
            if name in images and value is not None:
                try:
                    pixels = read_pixels(image_path(value, root))
                except ImageProblem as exc:
                    raise DataError(
                        testset.path,
                        case.line,
                        f"case '{case.id}': {name}: image {value} (relative to {root}): {exc.message}",
                    ) from None
                assert isinstance(pixels, Pixels)
                shapes.add(pixels.shape)
                values.append(pixels)
                continue
            try:
                values.append(normalise_case_value(value, digits, domain))
            except RecursionError:
                raise DataError(
                    testset.path, case.line, f"case '{case.id}': a value is nested too deeply to compare"
                ) from None
        group.vectors.append((index, tuple(values)))
    groups = sorted(by_names.values(), key=lambda group: -len(group.vectors))
    for group in groups:
        group.build_sets(digits=digits)
    return MatchPlan(
        case_ids=tuple(case.id for case in testset.cases),
        groups=groups,
        digits=digits,
        domain=domain,
        fields=fields,
        image_keys=images,
        image_root=image_root if image_root is not None else root,
        image_shapes=frozenset(shapes),
    )


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
    return [[image_getter(plan, name, json_getter(name)) for name in group.names] for group in plan.groups]


def image_getter(plan: MatchPlan, name: str, getter: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``getter``, and at an image key the picture its value names (``TrainingImages``)."""
    if name not in plan.image_keys:
        return getter
    pictures = plan.training_images(name)

    def get_picture(row: Any) -> Any:
        value = getter(row)
        return value if value is MISSING else pictures(value)

    return get_picture
