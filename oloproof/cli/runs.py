"""``oloproof runs``: list recorded runs, newest last, with the refs that name them."""

from __future__ import annotations

import argparse

from oloproof.cli import common
from oloproof.inert import inert


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "runs",
        help="list recorded runs",
        description="List recorded runs (oldest first) with their latest~N refs (counted on the current test set).",
    )
    common.add_config(parser)
    parser.add_argument("ref", nargs="?", help="show only the run this ref names")
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rich.table import Table  # lazy: start-up

    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.errors import OloproofError  # lazy: start-up
    from oloproof.report.terminal import short_digest  # lazy: start-up
    from oloproof.runscores import score_text  # lazy: start-up
    from oloproof.runstore import RefScope, RunStore, resolve_ref  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    store = RunStore(release.base_dir)
    try:  # refs count the runs on the current test set; without one readable, every run
        scope: RefScope | None = RefScope.of(load_dev_testset(release))
    except OloproofError:
        scope = None
    every = [record for record in store.records() if record.kind == "system"]
    records = [resolve_ref(args.ref, every, refused=store.refused, scope=scope)] if args.ref else every
    on_set = [record for record in every if scope is None or record.testset_digest == scope.testset_digest]
    back_of = {record.run_id: len(on_set) - 1 - position for position, record in enumerate(on_set)}
    table = Table(header_style="bold")
    for column in ("ref", "run id", "version", "status", "outputs", "test set", "started"):
        table.add_column(column)
    scores: list[str] = []  # under the table, one line per run: never squeezed or cut by the table's width
    for record in records:
        back = back_of.get(record.run_id)
        ref = "(other set)" if back is None else "latest" if back == 0 else f"latest~{back}"
        table.add_row(
            ref,
            inert(record.run_id),
            inert(record.version),
            inert(record.status),
            f"{record.n_outputs}/{record.n_cases}",
            short_digest(record.testset_digest),
            record.started_at[:19].replace("T", " "),
        )
        shown = "; ".join(score_text(score, short=True) for score in record.scores) or "-"  # none for older runs
        scores.append(f"{ref} ({record.run_id}): {shown}")
    console = common.console()
    if records:
        console.print(table)
        console.print("scores when each run was recorded (* approximate; shown, never decided on):")
        for line in scores:
            console.print(f"  {inert(line)}")
    else:
        console.print("no runs yet: make one with `oloproof run` (or `oloproof gate`)")
    if args.json:
        common.write_json(args.json, {"schema": "oloproof.runs/1", "runs": [record.to_json() for record in records]})
    return 0
