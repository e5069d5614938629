"""``oloproof run``: run the system once on the test set (or import outputs) and record it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from oloproof.cli import common
from oloproof.inert import inert


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "run",
        help="run the system on the test set and record the run",
        description="Run the system command declared in release.yaml once per batch and record the run under "
        ".oloproof/runs/. With --outputs, import outputs produced elsewhere instead.",
    )
    common.add_config(parser)
    parser.add_argument(
        "--outputs", metavar="FILE", help="import these JSONL outputs (one {id, ...} per case) instead of running"
    )
    parser.add_argument(
        "--version",
        dest="run_version",
        metavar="NAME",
        help="system version of imported outputs (required with --outputs) or of --command",
    )
    parser.add_argument(
        "--command",
        metavar="CMD",
        help="run this command instead of system.command, as version NAME (e.g. one seed checkpoint); needs --version",
    )
    common.add_json(parser)
    common.add_quiet(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.report.terminal import short_digest  # lazy: start-up
    from oloproof.run import describe_problems, execute, import_outputs  # lazy: start-up
    from oloproof.runscores import score_outputs, score_text  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release, inputs=[args.outputs])
    testset = load_dev_testset(release)
    store = RunStore(release.base_dir)
    console = common.console()

    def scorer(outputs: dict[str, dict[str, Any]], wall_ms: dict[str, float], batch: int) -> tuple[dict[str, Any], ...]:
        return score_outputs(release, testset, outputs, wall_ms=wall_ms, batch_size=batch)

    if args.outputs:
        if args.command:
            raise UsageError("give --outputs or --command, not both")
        if not args.run_version:
            raise UsageError("--outputs needs --version NAME (the system version that produced them)")
        record, _ = import_outputs(
            release, testset, store, Path(args.outputs), version=args.run_version, shown=args.outputs, scorer=scorer
        )
    else:
        if args.command and not args.run_version:
            raise UsageError("--command needs --version NAME (the system version it runs)")
        if args.run_version and not args.command:
            raise UsageError(
                "--version names imported outputs (--outputs) or a --command; a run of system.command uses "
                "system.version"
            )
        with common.BatchProgress("running system", quiet=args.quiet) as progress:
            record, _ = execute(
                release,
                testset,
                store,
                on_batch=progress,
                command=args.command,
                version=args.run_version,
                scorer=scorer,
            )
    from rich.text import Text  # lazy: start-up

    style = {"ok": "green", "partial": "yellow", "failed": "red"}[record.status]
    console.print(
        Text.assemble(
            "run ",
            (inert(record.run_id), "bold"),
            f" version {inert(record.version)} on dev set {inert(testset.path)} ({short_digest(testset.digest)}): ",
            (record.status, style),
            f", {record.n_outputs}/{record.n_cases} outputs",
        )
    )
    for problem in describe_problems(record):
        console.print(f"  {inert(problem)}")
    if record.scores:  # shown, not decided: `oloproof gate` decides on the rules' intervals
        level = f"{release.policy.confidence * 100:g}%"
        console.print(f"scores on these outputs ({level} intervals; the gate decides, not this list):")
        for score in record.scores:
            console.print(f"  {inert(score_text(score))}")
    if args.json:
        common.write_json(args.json, record.to_json())
    return 0
