"""Configuration schemas declared as data.

One declaration serves three purposes: validating YAML (with file, line and key path in
every message), producing plain values for the typed config objects, and generating the
JSON Schema shipped for editors (``oloproof schema``). A test keeps the shipped schema
files equal to what this module generates.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

from oloproof.errors import ConfigError
from oloproof.inert import inert

ScalarKind = Literal["str", "number", "int", "bool", "value"]  # value: any JSON scalar but null


@dataclass(frozen=True, slots=True)
class Scalar:
    kind: ScalarKind
    doc: str = ""
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: float | None = None
    exclusive_maximum: float | None = None
    enum: tuple[Any, ...] | None = None
    nonempty: bool = False
    why: str = ""  # said after a range or pattern error: why the bound is where it is
    pattern: str | None = None  # a string must match it whole (re.fullmatch); JSON Schema gets it anchored
    names: str = ""  # what a string matching ``pattern`` is ("rule id"), for its error


@dataclass(frozen=True, slots=True)
class Seq:
    items: Node
    doc: str = ""
    min_items: int = 0
    min_message: str = ""


@dataclass(frozen=True, slots=True)
class MapOf:
    """A mapping with free keys (e.g. per-field scales) and values of one shape."""

    values: Node
    doc: str = ""
    min_items: int = 0


@dataclass(frozen=True, slots=True)
class Prop:
    node: Node
    required: bool = False
    default: Any = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Obj:
    props: Mapping[str, Prop]
    doc: str = ""
    title: str = ""


@dataclass(frozen=True, slots=True)
class Tagged:
    """A mapping whose ``type`` key picks one of several object shapes."""

    key: str
    variants: Mapping[str, Obj]
    doc: str = ""


@dataclass(frozen=True, slots=True)
class AnyOf:
    """One of several shapes, tried by YAML node kind (scalar, sequence, mapping)."""

    options: tuple[Node, ...]
    doc: str = ""


@dataclass(frozen=True, slots=True)
class Unsupported:
    """A key the contract names but this version does not implement: an error, never ignored."""

    message: str
    doc: str = ""


Node = Scalar | Seq | MapOf | Obj | Tagged | AnyOf | Unsupported


@dataclass(slots=True)
class Document:
    """A validated configuration: plain values plus the line of every key path."""

    path: str
    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def line(self, key_path: str) -> int | None:
        """The line of ``key_path``, or of its nearest ancestor that has one."""
        probe = key_path
        while probe:
            if probe in self.lines:
                return self.lines[probe]
            cut = max(probe.rfind("."), probe.rfind("["))
            probe = probe[:cut] if cut > 0 else ""
        return self.lines.get("")

    def error(self, key_path: str, message: str) -> ConfigError:
        return ConfigError(self.path, self.line(key_path), key_path, message)


# --------------------------------------------------------------------------- YAML


class _Loader(yaml.SafeLoader):
    pass


MAX_DEPTH = 64  # no oloproof file nests deeper than a handful of levels; PyYAML's composer recurses
_OPENING = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_CLOSING = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)


def _check_depth(text: str, path: str) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH before composing it: PyYAML's composer recurses
    once per level, and 20,000 nested ``[`` would otherwise end in a RecursionError (a crash,
    not a config error). The scanner below is iterative."""
    depth = 0
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, _OPENING):
                depth += 1
                if depth > MAX_DEPTH:
                    raise ConfigError(
                        path,
                        token.start_mark.line + 1,
                        "",
                        f"nested more than {MAX_DEPTH} levels deep; no key of an oloproof file needs more than a few",
                    )
            elif isinstance(token, _CLOSING):
                depth -= 1
    except yaml.MarkedYAMLError:
        return  # compose() reports the syntax error with its line


INT_LIMIT = 2**63  # integers are 64-bit signed: a larger one is a typo, never a setting


def compose(text: str, path: str) -> yaml.Node | None:
    """Compose YAML into nodes (keeping marks); syntax errors become ConfigError."""
    _check_depth(text, path)
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or "invalid YAML"
        raise ConfigError(path, line, "", f"invalid YAML: {problem}") from None
    except yaml.YAMLError as exc:  # pragma: no cover - other PyYAML errors carry no mark
        raise ConfigError(path, None, "", f"invalid YAML: {exc}") from None


_YAML = "tag:yaml.org,2002:"
_PLAIN_TAGS = frozenset(_YAML + name for name in ("str", "int", "float", "bool", "null"))


class _TagError(Exception):
    def __init__(self, node: yaml.Node) -> None:
        super().__init__(node.tag)
        self.node = node


def _scalar_value(node: yaml.ScalarNode) -> Any:
    """The value of a plain scalar. Dates stay the text written (a version may look like one);
    any other tag (``!foo``, ``!!python/object``, ``!!binary``) is refused, never constructed."""
    if node.tag == _YAML + "timestamp":
        return node.value
    if node.tag not in _PLAIN_TAGS:
        raise _TagError(node)
    return _Loader("").construct_object(node)


def _describe_node(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    value = _scalar_value(node)  # type: ignore[arg-type]
    if value is None:
        return "nothing (null)"
    return repr(value) if isinstance(value, str) else f"{value!r}"


def _join(parent: str, key: str) -> str:
    return f"{parent}.{key}" if parent else key


def _kind_name(kind: ScalarKind) -> str:
    names = {"str": "a string", "number": "a number", "int": "an integer", "bool": "true or false"}
    return names.get(kind, "a string, number or boolean")  # "value": any JSON scalar but null


class _Validator:
    def __init__(self, path: str) -> None:
        self.path = path
        self.lines: dict[str, int] = {}

    def fail(self, node: yaml.Node, key_path: str, message: str) -> ConfigError:
        return ConfigError(self.path, node.start_mark.line + 1, key_path, message)

    def run(self, node: yaml.Node, schema: Node, key_path: str) -> Any:
        self.lines.setdefault(key_path, node.start_mark.line + 1)
        if isinstance(schema, Scalar):
            return self.scalar(node, schema, key_path)
        if isinstance(schema, Seq):
            if not isinstance(node, yaml.SequenceNode):
                raise self.fail(node, key_path, f"expected a list, got {_describe_node(node)}")
            if len(node.value) < schema.min_items:
                message = schema.min_message or f"expected at least {schema.min_items} item(s), got {len(node.value)}"
                raise self.fail(node, key_path, message)
            return [self.run(item, schema.items, f"{key_path}[{i}]") for i, item in enumerate(node.value)]
        if isinstance(schema, MapOf):
            pairs = self.pairs(node, key_path)
            if len(pairs) < schema.min_items:
                raise self.fail(node, key_path, f"expected at least {schema.min_items} entr(ies), got {len(pairs)}")
            return {key: self.run(value, schema.values, _join(key_path, key)) for key, (_, value) in pairs.items()}
        if isinstance(schema, Obj):
            return self.obj(node, schema, key_path)
        if isinstance(schema, Tagged):
            return self.tagged(node, schema, key_path)
        if isinstance(schema, Unsupported):
            raise self.fail(node, key_path, schema.message)
        return self.any_of(node, schema, key_path)

    def pairs(self, node: yaml.Node, key_path: str) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, key_path, f"expected a mapping, got {_describe_node(node)}")
        result: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _YAML + "merge":
                raise self.fail(key_node, key_path, "YAML merge keys (<<) are not supported; write the keys out")
            if not isinstance(key_node, yaml.ScalarNode):
                raise self.fail(key_node, key_path, "keys must be plain strings")
            key = _scalar_value(key_node)
            if not isinstance(key, str):
                raise self.fail(key_node, key_path, f"keys must be strings, got {key!r}")
            if key in result:
                first = result[key][0].start_mark.line + 1
                raise self.fail(key_node, _join(key_path, key), f"duplicate key (first given on line {first})")
            result[key] = (key_node, value_node)
        return result

    def obj(self, node: yaml.Node, schema: Obj, key_path: str, skip: frozenset[str] = frozenset()) -> dict[str, Any]:
        pairs = self.pairs(node, key_path)
        out: dict[str, Any] = {}
        for key, (key_node, value_node) in pairs.items():
            if key in skip:
                continue
            prop = schema.props.get(key)
            if prop is None:
                raise self.fail(key_node, _join(key_path, key), unknown_key_message(key, schema.props))
            self.lines[_join(key_path, key)] = key_node.start_mark.line + 1
            out[key] = self.run(value_node, prop.node, _join(key_path, key))
        for key, prop in schema.props.items():
            if key in out or key in skip:
                continue
            if prop.required:
                raise self.fail(node, key_path, f"missing required key '{key}'")
            out[key] = prop.default
        return out

    def tagged(self, node: yaml.Node, schema: Tagged, key_path: str) -> dict[str, Any]:
        pairs = self.pairs(node, key_path)
        if schema.key not in pairs:
            raise self.fail(
                node, key_path, f"missing required key '{schema.key}' (one of: {', '.join(schema.variants)})"
            )
        tag_node = pairs[schema.key][1]
        tag = _scalar_value(tag_node) if isinstance(tag_node, yaml.ScalarNode) else None
        if not isinstance(tag, str) or tag not in schema.variants:
            hint = did_you_mean(str(tag), schema.variants)
            raise self.fail(
                tag_node,
                _join(key_path, schema.key),
                f"unknown {schema.key} {_describe_node(tag_node)}; expected one of: {', '.join(schema.variants)}{hint}",
            )
        out = self.obj(node, schema.variants[tag], key_path, skip=frozenset({schema.key}))
        out[schema.key] = tag
        return out

    def any_of(self, node: yaml.Node, schema: AnyOf, key_path: str) -> Any:
        for option in schema.options:
            if _accepts_kind(option, node):
                return self.run(node, option, key_path)
        expected = " or ".join(_kind_label(option) for option in schema.options)
        raise self.fail(node, key_path, f"expected {expected}, got {_describe_node(node)}")

    def scalar(self, node: yaml.Node, schema: Scalar, key_path: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, key_path, f"expected {_kind_name(schema.kind)}, got {_describe_node(node)}")
        value = _scalar_value(node)
        want = schema.kind
        ok = (
            (want == "str" and isinstance(value, str))
            or (want == "bool" and isinstance(value, bool))
            or (want == "int" and isinstance(value, int) and not isinstance(value, bool))
            or (want == "number" and isinstance(value, (int, float)) and not isinstance(value, bool))
            or (want == "value" and isinstance(value, (str, int, float)))  # kept as typed: "1" is not 1
        )
        if not ok:
            raise self.fail(node, key_path, f"expected {_kind_name(want)}, got {_describe_node(node)}")
        if want == "value" and isinstance(value, float) and not math.isfinite(value):
            raise self.fail(node, key_path, f"expected a finite number, got {value!r}")
        if want == "int" and not -INT_LIMIT < value < INT_LIMIT:
            raise self.fail(node, key_path, f"expected an integer of at most 63 bits, got {_cut(node.value)}")
        if want == "number":
            try:
                value = float(value)
            except OverflowError:
                raise self.fail(
                    node, key_path, f"expected a finite number, got {_cut(node.value)} (too large)"
                ) from None
            if math.isnan(value) or math.isinf(value):
                raise self.fail(node, key_path, f"expected a finite number, got {value!r}")
        if want in ("number", "int"):
            self.check_range(node, schema, key_path, value)
        if schema.enum is not None and value not in schema.enum:
            choices = ", ".join(str(choice) for choice in schema.enum)
            raise self.fail(
                node, key_path, f"expected one of: {choices}; got {value!r}{did_you_mean(str(value), schema.enum)}"
            )
        if schema.nonempty and isinstance(value, str) and not value.strip():
            raise self.fail(node, key_path, "must not be empty")
        if schema.pattern is not None and isinstance(value, str) and not re.fullmatch(schema.pattern, value):
            raise self.fail(node, key_path, f"'{_cut(inert(value), 60)}' is not a valid {schema.names}: {schema.why}")
        return value

    def check_range(self, node: yaml.Node, schema: Scalar, key_path: str, value: float) -> None:
        low = schema.minimum if schema.minimum is not None else schema.exclusive_minimum
        high = schema.maximum if schema.maximum is not None else schema.exclusive_maximum
        below = (schema.minimum is not None and value < schema.minimum) or (
            schema.exclusive_minimum is not None and value <= schema.exclusive_minimum
        )
        above = (schema.maximum is not None and value > schema.maximum) or (
            schema.exclusive_maximum is not None and value >= schema.exclusive_maximum
        )
        if not (below or above):
            return
        why = f": {schema.why}" if schema.why else ""
        if low is not None and high is not None:
            left = "[" if schema.minimum is not None else "("
            right = "]" if schema.maximum is not None else ")"
            raise self.fail(
                node, key_path, f"expected a number in {left}{_fmt(low)}, {_fmt(high)}{right}, got {_fmt(value)}{why}"
            )
        if low is not None:
            sign = ">=" if schema.minimum is not None else ">"
            raise self.fail(node, key_path, f"expected a number {sign} {_fmt(low)}, got {_fmt(value)}{why}")
        assert high is not None
        sign = "<=" if schema.maximum is not None else "<"
        raise self.fail(node, key_path, f"expected a number {sign} {_fmt(high)}, got {_fmt(value)}{why}")


def _cut(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _fmt(value: float) -> str:
    """Numbers as a person wrote them: 9223372036854775807, not 9.22337e+18."""
    if float(value).is_integer() and abs(value) < 1e20:
        return str(int(value))
    return f"{value:g}"


def _accepts_kind(schema: Node, node: yaml.Node) -> bool:
    if isinstance(schema, Scalar):
        return isinstance(node, yaml.ScalarNode)
    if isinstance(schema, Seq):
        return isinstance(node, yaml.SequenceNode)
    if isinstance(schema, AnyOf):
        return any(_accepts_kind(option, node) for option in schema.options)
    return isinstance(node, yaml.MappingNode)


def _kind_label(schema: Node) -> str:
    if isinstance(schema, Scalar):
        return _kind_name(schema.kind)
    if isinstance(schema, Seq):
        return "a list"
    return "a mapping"


def did_you_mean(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, [str(choice) for choice in choices], n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def unknown_key_message(key: str, allowed: Mapping[str, Any]) -> str:
    known = ", ".join(sorted(allowed))
    return f"unknown key{did_you_mean(key, allowed)}; allowed keys: {known}"


def validate_text(text: str, schema: Node, *, path: str, empty_message: str) -> Document:
    """Validate YAML ``text`` against ``schema``; ``path`` is how the file is named in errors."""
    node = compose(text, path)
    if node is None:
        raise ConfigError(path, None, "", empty_message)
    validator = _Validator(path)
    try:
        data = validator.run(node, schema, "")
    except _TagError as err:
        raise ConfigError(path, err.node.start_mark.line + 1, "", f"unsupported YAML tag {err.node.tag}") from None
    return Document(path=path, data=data, lines=validator.lines)


# --------------------------------------------------------------------------- JSON Schema


def to_json_schema(schema: Node) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) equivalent of ``schema``, for editors."""
    if isinstance(schema, Scalar):
        out: dict[str, Any] = {
            "type": {"str": "string", "number": "number", "int": "integer", "bool": "boolean"}.get(
                schema.kind,
                ["string", "number", "boolean"],  # "value"
            )
        }
        for key, value in (
            ("minimum", schema.minimum),
            ("maximum", schema.maximum),
            ("exclusiveMinimum", schema.exclusive_minimum),
            ("exclusiveMaximum", schema.exclusive_maximum),
        ):
            if value is not None:
                out[key] = value
        if schema.enum is not None:
            out["enum"] = list(schema.enum)
        if schema.nonempty:
            out["minLength"] = 1
        if schema.pattern is not None:
            out["pattern"] = f"^{schema.pattern}$"  # ECMA-262's $ is the end of the string
    elif isinstance(schema, Seq):
        out = {"type": "array", "items": to_json_schema(schema.items)}
        if schema.min_items:
            out["minItems"] = schema.min_items
    elif isinstance(schema, MapOf):
        out = {"type": "object", "additionalProperties": to_json_schema(schema.values)}
        if schema.min_items:
            out["minProperties"] = schema.min_items
    elif isinstance(schema, Obj):
        out = _object_schema(schema.props)
        if schema.title:
            out["title"] = schema.title
    elif isinstance(schema, Unsupported):
        return {"not": {}, "description": schema.message}
    elif isinstance(schema, Tagged):
        variants = []
        for tag, variant in schema.variants.items():
            branch = _object_schema({schema.key: Prop(Scalar("str", enum=(tag,)), required=True), **variant.props})
            if variant.doc:
                branch["description"] = variant.doc
            variants.append(branch)
        out = {"oneOf": variants}
    else:
        out = {"anyOf": [to_json_schema(option) for option in schema.options]}
    if schema.doc and "description" not in out:
        out["description"] = schema.doc
    return out


def _object_schema(props: Mapping[str, Prop]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for key, prop in props.items():
        entry = to_json_schema(prop.node)
        if prop.doc:
            entry["description"] = prop.doc
        if prop.default is not None:
            entry["default"] = prop.default
        properties[key] = entry
    out: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    required = [key for key, prop in props.items() if prop.required]
    if required:
        out["required"] = required
    return out
