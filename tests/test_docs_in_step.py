"""The shipped schema files, reason codes and command docs stay in step with the code."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import jsonschema
import pytest
import yaml

from oloproof.cli.main import build_parser
from oloproof.cli.schema import json_schema
from oloproof.verdicts import REASONS

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


@pytest.mark.parametrize("which", ["release", "policy"])
def test_shipped_json_schema_matches_the_parser(which: str) -> None:
    shipped = (DOCS / "schema" / f"{which}.schema.json").read_text()
    assert shipped == json_schema(which), f"regenerate with: oloproof schema {which} -o docs/schema/{which}.schema.json"


def test_examples_validate_against_the_json_schema() -> None:
    release_schema = json.loads((DOCS / "schema" / "release.schema.json").read_text())
    policy_schema = json.loads((DOCS / "schema" / "policy.schema.json").read_text())
    releases = sorted(ROOT.glob("examples/**/release.yaml"))
    policies = sorted(ROOT.glob("examples/**/policy.yaml"))
    assert releases and policies, "no example release.yaml or policy.yaml found: is the glob right?"
    for release in releases:
        jsonschema.validate(yaml.safe_load(release.read_text()), release_schema)
    for policy in policies:
        jsonschema.validate(yaml.safe_load(policy.read_text()), policy_schema)


def test_json_schema_rejects_an_unknown_key() -> None:
    schema = json.loads((DOCS / "schema" / "release.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"leakag": "required"}, schema)


def test_every_reason_code_is_documented_and_nothing_else() -> None:
    text = (DOCS / "verdicts.md").read_text()
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", text, flags=re.MULTILINE))
    assert documented == set(REASONS)


def _schema_keys(node: dict, prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for key, sub in node.get("properties", {}).items():
        keys.add(key)
        keys |= _schema_keys(sub, key)
        for branch in sub.get("oneOf", []) + sub.get("anyOf", []):
            keys |= _schema_keys(branch, key)
        if "items" in sub:
            keys |= _schema_keys(sub["items"], key)
            for branch in sub["items"].get("oneOf", []):
                keys |= _schema_keys(branch, key)
    return keys


def test_every_config_key_is_documented() -> None:
    text = (DOCS / "release-yaml.md").read_text()
    schema = json.loads(json_schema("release"))
    missing = sorted(key for key in _schema_keys(schema) if f"`{key}`" not in text and f"`judges.{key}`" not in text)
    assert missing == []


def test_every_subcommand_and_option_is_documented() -> None:
    text = (DOCS / "cli.md").read_text()
    parser = build_parser()
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    shared = text.split("## Manners shared by every command", 1)[1].split("\n## ", 1)[0]
    assert "`--color auto|always|never`" in shared  # the one option every command takes, documented once
    for name, sub in subparsers.choices.items():
        assert f"## `oloproof {name}" in text, f"docs/cli.md has no section for `oloproof {name}`"
        section = text.split(f"## `oloproof {name}", 1)[1].split("\n## ", 1)[0]
        for action in sub._actions:
            for option in action.option_strings:
                if option in ("-h", "--help", "--color"):
                    continue
                assert f"`{option}" in section, f"docs/cli.md: `oloproof {name}` does not document {option}"
