"""``oloproof init --example NAME [DIR]``: copy a worked example to start from; ``oloproof init --kind
KIND DIR``: write a commented release.yaml, a policy and an empty test set for that kind of system."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof.cli import common
from oloproof.inert import inert

if TYPE_CHECKING:
    from rich.console import Console

# Every example `init` can copy, with what it shows (`oloproof init --list`).
EXAMPLES = {
    "classifier": "a scikit-learn tumour classifier: recall and precision on one class, slices, AUC, p95 latency",
    "model-validation": "a loan model trained by NumPy: leakage, declared noise, five seeds; and an image project",
    "prompt-holdout": "six weeks of prompt work on a contract-clause extractor: dev runs, READS.log, compare and gap",
    "redaction-pressure": "a Verifiers environment (its own uv sub-project) gated on its dev split, private holdout",
}
# Examples that are their own sub-project elsewhere in the repository: redaction-pressure lives at
# environments/redaction_pressure (the seed's path), with its uv.lock. A wheel ships it as
# oloproof/environments/ (pyproject's package-data); a source checkout has it beside oloproof/.
SUB_PROJECTS = {"redaction-pressure": ("environments", "redaction_pressure")}
# What to run first in each copy: the example's main job (its README's first command).
FIRST = {
    "classifier": "oloproof leakage check --training data/training.jsonl --record && oloproof gate",
    "model-validation": "oloproof leakage check --training data/training.jsonl --record && oloproof gate",
    "redaction-pressure": "uv sync --frozen && oloproof gate",
}
# Never copied: caches, and lock files (a lock is not evidence). A sub-project keeps its uv.lock
# (its locked dependencies), never its virtualenv, outputs or holdout set.
IGNORED: tuple[str, ...] = ("__pycache__", "*.pyc", "*.lock")  # and the store's lock folder (oloproof.store)
SUB_PROJECT_IGNORED: tuple[str, ...] = (
    *("__pycache__", "*.pyc", "READS.log.lock"),
    *(".venv", ".uv-tool", ".hypothesis", "outputs", "evals"),  # and the evidence directory (oloproof.store)
)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "init",
        help="start a project: a commented skeleton (--kind) or a worked example (--example)",
        description="With --kind, write a commented release.yaml, policy.yaml and an empty data/test.jsonl for "
        "that kind of system into DIR (never replacing a file), and say what to fill in. With --example, copy "
        "a worked example into DIR (default: its name).",
    )
    parser.add_argument("--example", choices=list(EXAMPLES), help="which example")
    parser.add_argument(
        "--kind", choices=("classifier", "prompt", "regression"), help="write a skeleton for this kind of system"
    )
    parser.add_argument("--list", action="store_true", help="list the examples and what each shows")
    parser.add_argument("dir", nargs="?", help="where to copy it (must not exist or be empty)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import shutil  # lazy: start-up
    from importlib import resources  # lazy: start-up

    from oloproof import store  # lazy: start-up
    from oloproof.errors import UsageError  # lazy: start-up

    console = common.console()
    if args.list:
        for name, what in EXAMPLES.items():
            console.print(f"{name}: {what}")
        return 0
    if args.kind is not None:
        if args.example is not None:
            raise UsageError("give --kind or --example, not both")
        return _skeleton(args.kind, args.dir, console)
    if args.example is None:
        raise UsageError(
            f"init needs --kind classifier|prompt|regression DIR, or --example NAME (one of {', '.join(EXAMPLES)}), "
            "or --list"
        )
    target = Path(args.dir or args.example)
    shown = inert(target)
    try:
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            what = "is not an empty directory" if target.is_dir() else "is a file"
            raise UsageError(f"{shown}: already exists and {what}; choose another DIR")
        if args.example in SUB_PROJECTS:
            source, ignored = _sub_project(args.example), (*SUB_PROJECT_IGNORED, store.store_name())
        else:
            source, ignored = resources.files("oloproof.examples") / args.example, IGNORED
        with resources.as_file(source) as path:
            shutil.copytree(
                path, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*ignored, store.LAYOUT.locks)
            )
    except OSError as exc:  # a name too long, a read-only place, a parent that cannot be made
        raise UsageError(f"{shown}: cannot copy the example there ({exc.strerror or exc})") from None
    console.print(f"copied the {args.example} example to {inert(target)}/")
    console.print(f"next: cd {inert(target)} && {FIRST.get(args.example, 'oloproof gate')}")
    return 0


def _skeleton(kind: str, where: str | None, console: Console) -> int:
    """Write the skeleton of ``kind`` into ``where``; never replace or write through anything there."""
    from oloproof.cli.init_kinds import files, next_steps  # lazy: start-up
    from oloproof.errors import UsageError  # lazy: start-up

    if where is None:
        raise UsageError(f"init --kind {kind} needs DIR, the directory to write the project into")
    target = Path(where)
    shown = inert(target)
    planned = files(kind)
    if target.exists() or target.is_symlink():
        if not target.is_dir() or target.is_symlink():
            raise UsageError(f"{shown}: already exists and is not a directory; choose another DIR")
        present = [name for name in planned if (target / name).exists() or (target / name).is_symlink()]
        if present:
            raise UsageError(
                f"{shown}: already has {', '.join(present)}; init never replaces a file: choose another DIR or "
                "remove them"
            )
        linked = [name for name in planned if (target / name).parent.is_symlink()]  # never write through a link
        if linked:
            raise UsageError(
                f"{shown}: {', '.join(linked)} would be written through a symbolic link; choose another DIR"
            )
    written: list[str] = []
    try:
        for name, text in planned.items():
            path = target / name
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("x", encoding="utf-8") as handle:  # exclusive: a file made meanwhile is not replaced
                handle.write(text)
            written.append(name)
    except FileExistsError as exc:
        raise UsageError(f"{inert(exc.filename)}: already exists; init never replaces a file") from None
    except OSError as exc:  # a read-only place, a name too long, a parent that is a file
        raise UsageError(f"{shown}: cannot write the project there ({exc.strerror or exc})") from None
    console.print(f"wrote a {kind} project to {shown}/: {', '.join(written)}")
    for line in next_steps(kind, shown):
        console.print(line)
    return 0


def _sub_project(name: str) -> Path:
    """Where a sub-project example is: inside the installed package (a wheel), else beside it
    (a source checkout or an editable install)."""
    from importlib import resources  # lazy: start-up

    from oloproof.errors import UsageError  # lazy: start-up

    top, directory = SUB_PROJECTS[name]
    package = Path(str(resources.files("oloproof")))
    for place in (package / top / directory, package.parent / top / directory):
        if (place / "pyproject.toml").is_file():
            return place
    raise UsageError(f"the {name} example is not installed here (expected {top}/{directory}/ beside oloproof/)")
