"""Which settings of a YAML config file a pull request changed, key by key, for the reviewer.

"release.yaml is changed" is said by every release pull request (the version moves); what a
reviewer must see is that ``policy.judges.unbound_labels`` became ``allow`` or a rule's ``min``
went from 0.9 to 0.8. Both versions are composed (never constructed: no tag is run, an alias is
not expanded), flattened to ``key.path: value`` leaves, and compared as the config reads them: by
the scalar's resolved type and value (``0.9`` and ``"0.9"``, ``true`` and ``"true"`` differ; ``0.9``
and ``0.90``, ``true`` and ``yes`` do not), the types shown when they differ. Items of a list are named
by their identity, whatever the order their keys are written in: ``id`` (rules), else ``criterion``,
``name`` (transforms), ``type`` (evaluators), else by position. A label is unique within its list (a
second ``id: a`` is ``[id=a#2]``) and no leaf is ever written over another: two rules sharing an id
or a criterion are two sets of leaves, so an edit of either one is listed (a red-team PR hid
``min: 0.9 -> 0.1`` behind a second rule of the same criterion). The walk is bounded: a file with
more than ``MAX_LEAVES`` leaves (an alias bomb) is not compared, and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import yaml

from oloproof.errors import ConfigError
from oloproof.holdout.log import printable
from oloproof.schema import compose

MAX_LEAVES = 5_000
ROUTINE = frozenset({"system.version"})  # moves in every release pull request
_NAMES = ("id", "criterion", "name", "type")
# Every change is listed (a red team hid a loosening behind twelve decoys when only the first twelve
# were): the order only says what a reviewer reads first. Keys that let a rule decide on weaker
# evidence, or not count at all (issue 18 §6-7): listed first.
LOOSENING = frozenset(
    {"approximate", "advisory", "accepted", "allow_approximate_methods", "unbound_labels", "confidence"}
)
# Keys that change which cases a rule reads or how it is decided (a where: narrowed to the cases that
# pass, fwer: none, another positive class, a huge bound, a quantile): listed next, for any rule. Then,
# for a rule or transform that was there before, a swapped criterion/score/field and changed
# thresholds (a new rule brings those anyway, and fourteen new rules must not push an edit of an
# existing one below them).
NARROWING = frozenset({"where", "per", "fwer", "positive", "bound", "quantile"})
RETARGETING = frozenset({"criterion", "score", "field"})
THRESHOLDS = frozenset({"min", "max", "max_drop", "baseline"})


def _item(key: str) -> str:
    """The list item a key lies in (``policy.rules[id=a]``), or "" for a top-level setting."""
    return key[: key.find("]") + 1]


def _ranker(before: dict[str, Leaf]) -> Callable[[str], int]:
    """0: loosening keys; 1: narrowing keys; of an item that existed before, 2: a swapped criterion,
    score or field, 3: thresholds; 4: the rest."""
    items = {_item(key) for key in before}

    def rank(key: str) -> int:
        parts = key.replace("[", ".").split(".")
        if any(part in LOOSENING for part in parts):
            return 0
        if any(part in NARROWING for part in parts):
            return 1
        if _item(key) not in items:
            return 4
        return 2 if any(part in RETARGETING for part in parts) else 3 if parts[-1] in THRESHOLDS else 4

    return rank


class _TooLarge(Exception):
    pass


_YAML = "tag:yaml.org,2002:"
_PLAIN = frozenset({"str", "int", "float", "bool", "null"})


@dataclass(frozen=True, slots=True)
class Leaf:
    """One value of a YAML file: its type, what two versions are compared by, and its text."""

    kind: str  # str, int, float, bool, null, timestamp, list, mapping; another tag as written (!!binary, !foo)
    same: str  # the value as the config reads it (0.90 is 0.9, yes is true); the text for other tags
    text: str  # as shown

    @classmethod
    def of(cls, node: yaml.ScalarNode) -> Leaf:
        tag = node.tag
        kind = tag[len(_YAML) :] if tag.startswith(_YAML) else tag
        if kind not in _PLAIN:  # a timestamp stays the text written (as the config reads it); no tag is run
            return cls(kind="!!" + kind if tag.startswith(_YAML) else kind, same=node.value, text=node.value)
        try:
            value = yaml.SafeLoader("").construct_object(node)
        except (yaml.YAMLError, ValueError):  # an int of more digits than Python converts
            return cls(kind=kind, same=node.value, text=node.value)
        if kind == "null":
            return cls(kind=kind, same="null", text="null")
        if kind == "str":
            return cls(kind=kind, same=node.value, text=node.value if node.value else '""')
        return cls(kind=kind, same=repr(value), text=node.value)

    def key(self) -> tuple[str, str]:
        return self.kind, self.same


def _identity(item: yaml.Node) -> tuple[str, str] | None:
    """The key that names a list item, by priority (``id``, then ``criterion``, ``name``, ``type``),
    never by the order its keys are written in; None for an item that has none."""
    if not isinstance(item, yaml.MappingNode):
        return None
    found: dict[str, str] = {}
    for key, value in item.value:
        if isinstance(key, yaml.ScalarNode) and isinstance(value, yaml.ScalarNode) and key.value in _NAMES:
            found.setdefault(key.value, value.value)
    for name in _NAMES:
        if name in found:
            return name, found[name]
    return None


def _unique(name: str, used: set[str], close: str = "") -> str:
    """``name + close``, or the first ``name#n + close`` (n = 2, 3, ...) that no sibling has taken."""
    n = 1
    candidate = name + close
    while candidate in used:
        n += 1
        candidate = f"{name}#{n}{close}"
    used.add(candidate)
    return candidate


def _labels(items: list[yaml.Node]) -> list[str]:
    """Each item's label (``[id=a]``, ``[criterion=correct]``, ``[3]``), unique within the list: a
    repeated identity gets ``#2``, ``#3`` in file order (``[id=a#2]``)."""
    used: set[str] = set()
    out: list[str] = []
    for index, item in enumerate(items):
        identity = _identity(item)
        name = f"[{index}" if identity is None else f"[{identity[0]}={identity[1]}"
        out.append(_unique(name, used, "]"))
    return out


def _put(out: dict[str, Leaf], path: str, value: Leaf) -> None:
    """Record a leaf, never over another: a path already taken (``a.b`` written both as a dotted key
    and nested) gets ``#2``, ``#3`` in file order, so both values are compared."""
    taken, n = path, 1
    while taken in out:
        n += 1
        taken = f"{path}#{n}"
    out[taken] = value


def _flatten(node: yaml.Node | None, path: str, out: dict[str, Leaf], budget: list[int]) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        raise _TooLarge
    if node is None:
        return
    if isinstance(node, yaml.MappingNode):
        if not node.value:
            _put(out, path, Leaf(kind="mapping", same="{}", text="{}"))
        used: set[str] = set()
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else "?"
            segment = _unique(str(name), used)
            _flatten(value, f"{path}.{segment}" if path else segment, out, budget)
    elif isinstance(node, yaml.SequenceNode):
        if not node.value:
            _put(out, path, Leaf(kind="list", same="[]", text="[]"))
        for item, label in zip(node.value, _labels(node.value), strict=True):
            _flatten(item, f"{path}{label}", out, budget)
    elif isinstance(node, yaml.ScalarNode):
        _put(out, path, Leaf.of(node))


def leaves(text: str | None, shown: str) -> dict[str, Leaf] | None:
    """``key.path -> value`` for every scalar (and empty list or mapping) of a YAML text; None when it
    cannot be read or is too large to compare (an empty dict for no text: a file the pull request adds)."""
    if text is None:
        return {}
    try:
        node = compose(text, shown)
        out: dict[str, Leaf] = {}
        _flatten(node, "", out, [MAX_LEAVES])
    except (ConfigError, _TooLarge, yaml.YAMLError, RecursionError):
        return None
    return out


def changed_settings(old: bytes | None, new: bytes | None, shown: str) -> list[str]:
    """Every setting that differs between two versions of a YAML file, as ``key: old -> new``, the
    ones that loosen or narrow a rule first (none is left out: what to show is the renderer's call)."""

    def text(data: bytes | None) -> str | None:
        return None if data is None else data.decode("utf-8", errors="replace")

    before, after = leaves(text(old), shown), leaves(text(new), shown)
    if before is None or after is None:
        return ["(its settings could not be compared key by key: review the whole file)"]
    keys = [key for key in dict.fromkeys([*before, *after]) if _key(before.get(key)) != _key(after.get(key))]
    keys = [key for key in keys if key not in ROUTINE]
    keys.sort(key=_ranker(before))  # stable: the file's order within each group
    return [f"{printable(key)}: {_change(before.get(key), after.get(key))}" for key in keys]


def _key(leaf: Leaf | None) -> tuple[str, str] | None:
    return None if leaf is None else leaf.key()


SHOWN_CHARS = 60  # of one value


def _change(old: Leaf | None, new: Leaf | None) -> str:
    """``old -> new``, each cut at ``SHOWN_CHARS``; a value that changed only in type names both
    types (``0.9 (float) -> 0.9 (str)``), and two long values that differ past the cut are shown
    from where they differ (they would read the same)."""
    if old is None or new is None:
        return f"{_shown(old)} -> {_shown(new)}"
    first, second = printable(old.text), printable(new.text)
    if len(first) > SHOWN_CHARS or len(second) > SHOWN_CHARS:
        at = next(
            (i for i, (a, b) in enumerate(zip(first, second, strict=False)) if a != b), min(len(first), len(second))
        )
        if at > SHOWN_CHARS - 10:
            first, second = "..." + first[at - 10 :], "..." + second[at - 10 :]
    first, second = _cut(first), _cut(second)
    if old.kind != new.kind:
        return f"{first} ({old.kind}) -> {second} ({new.kind})"
    return f"{first} -> {second}"


def _shown(leaf: Leaf | None) -> str:
    return "(unset)" if leaf is None else _cut(printable(leaf.text))


def _cut(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."
