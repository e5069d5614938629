"""``oloproof init --example NAME [DIR]``: copy a worked example to start from."""

from __future__ import annotations

import argparse
import shutil
from importlib import resources
from pathlib import Path

from oloproof.cli import common

EXAMPLES = ("model-validation",)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "init", help="copy a worked example", description="Copy a worked example into DIR (default: its name)."
    )
    parser.add_argument("--example", required=True, choices=EXAMPLES, help="which example")
    parser.add_argument("dir", nargs="?", help="where to copy it (must not exist or be empty)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.errors import UsageError  # lazy: start-up

    target = Path(args.dir or args.example)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(f"{target}: already exists and is not an empty directory; choose another DIR")
    source = resources.files("oloproof.examples") / args.example
    with resources.as_file(source) as path:
        shutil.copytree(path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__", ".oloproof"))
    console = common.console()
    console.print(f"copied the {args.example} example to {target}/")
    console.print(f"next: cd {target} && oloproof gate")
    return 0
