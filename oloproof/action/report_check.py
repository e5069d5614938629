"""A JSON report (``oloproof.gate/1``) read as untrusted input: the publish-only mode's reader.

The report comes from a job a pull request controls (a fork's code ran it, and the pull request can
edit the workflow that ran it), so it is read like any hostile file: a regular file (no symlink), at
most ``MAX_REPORT_BYTES``, UTF-8 JSON, valid against ``REPORT_SCHEMA`` (the part of the report's
schema that is published: verdict, exit code, rules, checks, system), and consistent: it lists a
rule that decides, its verdict is the one its rules and checks make (``consistency``), and its exit
code is its verdict's; and its numbers do not contradict each other (``numbers``: an interval's low
above its high, an estimate outside it, more passes than cases, a PASS or FAIL its deciding bound
does not make). NaN and Infinity, which Python's ``json`` reads, are not JSON and are refused. A
report that fails any of this is not published as a verdict at all.

``REPORT_SCHEMA`` is JSON Schema (draft 2020-12, the subset ``validate`` implements: type, const,
enum, required, properties, items, maxItems, maxLength, minimum, pattern); fields are only added
within a schema version, so unknown keys are allowed. A rule id must be one the policy accepts
(``oloproof.policy.RULE_ID_PATTERN``): the ids reach step outputs, workflow commands, the check
run and the comment, so a forged report cannot smuggle a newline, ``%0A``, a backtick, ``<`` or an
``@mention`` through one.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from oloproof.decide import side_of
from oloproof.measures.registry import measure_of
from oloproof.policy import RULE_ID_PATTERN
from oloproof.result import GATE_SCHEMA
from oloproof.stats.interval import Interval
from oloproof.verdicts import Verdict, worst

MAX_REPORT_BYTES = 20 * 1024 * 1024
_VERDICTS = [verdict.value for verdict in Verdict]
_NUMBER_OR_NULL = {"type": ["number", "null"]}
_COUNT = {"type": "integer", "minimum": 0}
_TEXT = {"type": "string", "maxLength": 10_000}

REPORT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "oloproof gate report (the part the publish-only mode reads)",
    "type": "object",
    "required": ["schema", "verdict", "exit_code", "rules", "checks", "system", "checker"],
    "properties": {
        "schema": {"const": GATE_SCHEMA},
        "verdict": {"enum": _VERDICTS},
        "exit_code": {"type": "integer", "minimum": 0},
        "generated_at": _TEXT,
        "checker": {"type": "object", "required": ["version"], "properties": {"version": _TEXT}},
        "system": {"type": "object", "required": ["version"], "properties": {"version": _TEXT}},
        "rules": {
            "type": "array",
            "maxItems": 5_000,
            "items": {
                "type": "object",
                "required": ["id", "verdict", "kind", "threshold", "estimate", "interval"],
                "properties": {
                    "id": {"type": "string", "pattern": f"^{RULE_ID_PATTERN}$"},
                    "verdict": {"enum": _VERDICTS},
                    "kind": {"type": "string", "maxLength": 100},
                    "criterion": {"type": "string", "maxLength": 200},
                    "threshold": _NUMBER_OR_NULL,
                    "estimate": _NUMBER_OR_NULL,
                    "interval": {
                        "type": ["object", "null"],
                        "required": ["low", "high"],
                        "properties": {"low": _NUMBER_OR_NULL, "high": _NUMBER_OR_NULL},
                    },
                    "n": _COUNT,
                    "passes": _NUMBER_OR_NULL,
                    "missing": _COUNT,
                    "sentence": _TEXT,
                    # oloproof.rulemarks: shown, never counted; decided by its own approximate: allow;
                    # the accepted declared transform ({transform, by, reason}: people's text)
                    "advisory": {"type": "boolean"},
                    "approximate_permission": {"type": "boolean"},
                    "accepted": {
                        "type": ["object", "null"],
                        "properties": {"transform": _TEXT, "by": _TEXT, "reason": _TEXT},
                    },
                },
            },
        },
        "checks": {
            "type": "array",
            "maxItems": 1_000,
            "items": {
                "type": "object",
                "required": ["name", "title", "verdict"],
                "properties": {
                    "name": {"type": "string", "maxLength": 200},
                    "title": {"type": "string", "maxLength": 500},
                    "verdict": {"enum": [*_VERDICTS, None]},
                    "blocks": {"type": "boolean"},
                },
            },
        },
    },
}

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":  # JSON has no NaN or Infinity (``read_json`` refuses them; this is for dicts)
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, _TYPES[kind])


def validate(value: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema`` (the subset above), each with its JSON path."""
    problems: list[str] = []
    if "const" in schema and value != schema["const"]:
        return [f"{path}: must be {json.dumps(schema['const'])}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join("null" if item is None else str(item) for item in schema["enum"])
        return [f"{path}: must be one of {allowed}"]
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if not any(_is(value, kind) for kind in kinds):
            return [f"{path}: must be {' or '.join(kinds)}"]
    if isinstance(value, str) and len(value) > schema.get("maxLength", len(value)):
        problems.append(f"{path}: longer than {schema['maxLength']} characters")
    if isinstance(value, str) and "pattern" in schema and not re.search(_python_pattern(schema["pattern"]), value):
        problems.append(f"{path}: does not match {schema['pattern']}")  # the value is hostile: never quoted
    if _is(value, "number") and "minimum" in schema and value < schema["minimum"]:
        problems.append(f"{path}: below {schema['minimum']}")
    if isinstance(value, dict):
        for key in schema.get("required", ()):
            if key not in value:
                problems.append(f"{path}: '{key}' is missing")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problems.extend(validate(value[key], sub, f"{path}.{key}"))
    if isinstance(value, list):
        if len(value) > schema.get("maxItems", len(value)):
            return [f"{path}: more than {schema['maxItems']} items"]
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                problems.extend(validate(item, items, f"{path}[{index}]"))
                if len(problems) > 20:
                    return problems
    return problems


def _python_pattern(pattern: str) -> str:
    """A JSON Schema (ECMA-262) pattern for ``re.search``: its final ``$`` is the end of the string,
    which in Python is ``\\Z`` (Python's ``$`` also matches before a final newline)."""
    return pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith("\\$") else pattern


def consistency(report: Mapping[str, Any]) -> list[str]:
    """What a valid report claims beyond what it lists: no rule that decides, a verdict other than
    the one its rules and checks make, or a mismatched exit code.

    The verdict is recomputed as ``oloproof.result.gate_verdict`` computes it: the worst of the
    rules that are not advisory (an advisory rule is shown, never counted), of the checks' own
    verdicts, and BLOCKED for a check that blocks the gate. A gate always has a rule that decides
    (a policy holds at least one rule, and not only advisory ones), so a report without one is not
    the gate's."""
    verdict = Verdict(report["verdict"])
    problems: list[str] = []
    if report["exit_code"] != int(verdict.exit_code):
        problems.append(f"$.exit_code: {report['exit_code']} is not the exit code of {verdict.value}")
    deciding = [rule for rule in report["rules"] if rule.get("advisory") is not True]
    if not deciding:
        what = "lists no rule" if not report["rules"] else "lists only advisory rules"
        problems.append(
            f"$.rules: the report {what}; the gate always decides at least one rule (a policy needs a rule that is "
            "not advisory), so there is no verdict to publish"
        )
        return problems
    listed = [Verdict(rule["verdict"]) for rule in deciding]
    listed += [Verdict(check["verdict"]) for check in report["checks"] if check.get("verdict") is not None]
    listed += [Verdict.BLOCKED for check in report["checks"] if check.get("blocks") is True]
    made = worst(listed)
    if made is not verdict:
        problems.append(
            f"$.verdict: the report says {verdict.value}, but its rules and checks make it {made.value} (the worst "
            "verdict of its rules that are not advisory and of its checks, BLOCKED where a check blocks the gate)"
        )
    return problems


# What a min (max) rule's verdict says of its interval (``oloproof.decide.side_of``): which bound
# decides, and the side a PASS (a FAIL) puts it on.
_DECIDES = {
    ("min", "PASS"): ("lower", "clears", "clear", "passes only when the interval's low is at least the threshold"),
    ("min", "FAIL"): ("upper", "misses", "miss", "fails only when the interval's high is below the threshold"),
    ("max", "PASS"): ("upper", "clears", "clear", "passes only when the interval's high is at most the threshold"),
    ("max", "FAIL"): ("lower", "misses", "miss", "fails only when the interval's low is above the threshold"),
}


def numbers(report: Mapping[str, Any]) -> list[str]:
    """Where a valid report's own numbers contradict each other, one sentence per rule naming it: an
    interval whose low is above its high, an estimate outside its interval, more passes than cases
    (a pass rate's passes are counted among its n cases), or a PASS (FAIL) of a min or max rule whose
    deciding bound does not clear (miss) its threshold, as ``oloproof.decide.side_of`` decides it.
    A null bound is an unbounded one (the JSON report writes infinity as null): it clears nothing."""
    problems: list[str] = []
    criteria = report.get("criteria")
    for index, rule in enumerate(report["rules"]):
        said = f"$.rules[{index}] ({rule['id']})"
        interval = rule["interval"] or {}
        low, high, estimate = interval.get("low"), interval.get("high"), rule["estimate"]
        if low is not None and high is not None and low > high:
            problems.append(f"{said}: its interval's low {low!r} is above its high {high!r}")
        elif estimate is not None and ((low is not None and estimate < low) or (high is not None and estimate > high)):
            problems.append(
                f"{said}: its estimate {estimate!r} lies outside its interval [{_bound(low)}, {_bound(high)}]"
            )
        passes, n = rule.get("passes"), rule.get("n")
        if passes is not None and isinstance(n, int) and passes > n and _counts_passes(criteria, rule.get("criterion")):
            problems.append(
                f"{said}: {passes!r} passes among {n} cases (a pass rate's passes are counted among its cases)"
            )
        decides = _DECIDES.get((rule["kind"], rule["verdict"]))
        if decides is None or rule["threshold"] is None:
            continue
        bound, side, verb, rule_text = decides
        threshold = rule["threshold"]
        if not rule["interval"]:
            problems.append(f"{said}: {rule['verdict']} with no interval (a {rule['kind']} rule {rule_text})")
            continue
        found = Interval(
            estimate=math.nan,
            low=-math.inf if low is None else low,
            high=math.inf if high is None else high,
            level=0.0,
            method="",
            approximate=False,
        )
        if side_of(rule["kind"], threshold, found) != side:
            value = low if bound == "lower" else high
            problems.append(
                f"{said}: {rule['verdict']}, but its {bound} bound {_bound(value)} does not {verb} "
                f"{rule['kind']} {threshold!r} (a {rule['kind']} rule {rule_text})"
            )
    return problems


def _bound(value: float | None) -> str:
    return "null (unbounded)" if value is None else repr(value)


def _counts_passes(criteria: object, name: object) -> bool:
    """Whether the report's criterion ``name`` is a pass rate (values in [0, 1], so passes <= n)."""
    entry = criteria.get(name) if isinstance(criteria, dict) and isinstance(name, str) else None
    kind = entry.get("kind") if isinstance(entry, dict) else None
    try:
        return isinstance(kind, str) and measure_of(kind).proportion
    except KeyError:
        return False


class _NotANumber(ValueError):
    """NaN, Infinity or a number too large for a float: Python's json reads them, JSON has none."""


def _no_constant(token: str) -> float:
    raise _NotANumber(f"holds {token}, which is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotANumber("holds a number too large for a float")
    return value


def read_json(raw: bytes) -> Any:
    """UTF-8 JSON as JSON means it: NaN, Infinity and overflowing numbers are refused (``_NotANumber``)."""
    return json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)


def read_untrusted_report(path: Path, shown: str, *, within: Path) -> tuple[dict[str, Any] | None, list[str]]:
    """The report at ``path`` (under ``within``, the workspace) and the problems that keep it from being
    published (empty when none). No symlink anywhere on the path below ``within`` is followed."""
    parent = path.parent
    while parent != within and within in parent.parents:
        if os.path.islink(parent):
            return None, [f"{shown}: a directory on its path is a symlink (never followed)"]
        parent = parent.parent
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None, [f"{shown}: no such file (did the gate job upload it, and this job download it?)"]
    except OSError as exc:
        return None, [f"{shown}: cannot be read ({exc.strerror})"]
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
        return None, [f"{shown}: not a regular file (a symlink or a special file is never read)"]
    if info.st_size > MAX_REPORT_BYTES:
        return None, [f"{shown}: larger than {MAX_REPORT_BYTES // (1024 * 1024)} MiB"]
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
        report = read_json(raw)
    except OSError as exc:
        return None, [f"{shown}: cannot be read ({exc.strerror})"]
    except _NotANumber as exc:
        return None, [f"{shown}: {exc} (NaN and Infinity are refused)"]
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None, [f"{shown}: not UTF-8 JSON"]
    problems = validate(report, REPORT_SCHEMA)
    if problems:
        return None, [f"{shown}: {problem}" for problem in problems[:20]]
    problems = consistency(report) + numbers(report)
    if problems:
        return None, [f"{shown}: {problem}" for problem in problems[:20]]
    return report, []
