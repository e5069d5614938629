"""``oloproof schema``: print the JSON Schema of release.yaml or of a policy file."""

from __future__ import annotations

import argparse
import json

from oloproof.cli import common


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "schema",
        help="print the JSON Schema of release.yaml or policy.yaml",
        description="Print the JSON Schema generated from the schema the parser uses (for editors).",
    )
    parser.add_argument("which", choices=("release", "policy"), help="which file's schema")
    parser.add_argument("-o", "--output", metavar="FILE", help="write it to FILE instead of stdout")
    parser.set_defaults(handler=handle)


def json_schema(which: str) -> str:
    from oloproof.config import RELEASE  # lazy: start-up
    from oloproof.policy import POLICY  # lazy: start-up
    from oloproof.schema import to_json_schema  # lazy: start-up

    schema = to_json_schema(RELEASE if which == "release" else POLICY)
    document = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"oloproof-{which}.schema.json",
        **schema,
    }
    return json.dumps(document, indent=2, sort_keys=False) + "\n"


def handle(args: argparse.Namespace) -> int:
    text = json_schema(args.which)
    if args.output:
        common.check_outputs(args.output)
        common.write_file(args.output, text)
    else:
        print(text, end="")
    return 0
