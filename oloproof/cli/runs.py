"""``oloproof runs``: list recorded runs, newest last, with the refs that name them."""

from __future__ import annotations

import argparse

from oloproof.cli import common
from oloproof.inert import inert


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "runs", help="list recorded runs", description="List recorded runs (oldest first) with their latest~N refs."
    )
    common.add_config(parser)
    parser.add_argument("ref", nargs="?", help="show only the run this ref names")
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rich.table import Table  # lazy: start-up

    from oloproof.report.terminal import short_digest  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    store = RunStore(release.base_dir)
    from oloproof.runstore import resolve_ref  # lazy: start-up

    every = [record for record in store.records() if record.kind == "system"]
    records = [resolve_ref(args.ref, every)] if args.ref else every
    back_of = {record.run_id: len(every) - 1 - position for position, record in enumerate(every)}
    table = Table(header_style="bold")
    for column in ("ref", "run id", "version", "status", "outputs", "test set", "started"):
        table.add_column(column)
    for record in records:
        back = back_of[record.run_id]
        ref = "latest" if back == 0 else f"latest~{back}"
        table.add_row(
            ref,
            inert(record.run_id),
            inert(record.version),
            inert(record.status),
            f"{record.n_outputs}/{record.n_cases}",
            short_digest(record.testset_digest),
            record.started_at[:19].replace("T", " "),
        )
    console = common.console()
    if records:
        console.print(table)
    else:
        console.print("no runs yet: make one with `oloproof run` (or `oloproof gate`)")
    if args.json:
        common.write_json(args.json, {"schema": "oloproof.runs/1", "runs": [record.to_json() for record in records]})
    return 0
