"""``oloproof gap --baseline REF``: how much of the dev-set gain is real and how much is fit."""

from __future__ import annotations

import argparse
from pathlib import Path

from oloproof.cli import common


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "gap",
        help="the dev-to-holdout gap: real improvement and fit since the week-0 version",
        description="Compare the week-0 version (--baseline, a ref to its dev run; its holdout reads are found by "
        "version) with the current one on both sets: the paired movement on the dev set and on the holdout, the "
        "fit (dev movement − holdout movement) with its interval, the real improvement, the composition and drift "
        "checks and the trajectory of reads. Reads no holdout case and makes no holdout read. Exit 0 when every "
        "figure could be computed, 4 when a holdout reading is missing, 3 when the log does not verify.",
    )
    common.add_config(parser)
    parser.add_argument(
        "--baseline", required=True, metavar="REF", help="the week-0 version's dev run, e.g. version:v1"
    )
    parser.add_argument("--current", metavar="REF", help="the version to release (default: version:<system.version>)")
    parser.add_argument(
        "--weights",
        metavar="FILE",
        help="YAML mapping stratum: share (e.g. production's mix) to reweight both sets with (default: the holdout's)",
    )
    parser.add_argument("--explain", action="store_true", help="say how to read every figure")
    parser.add_argument("--markdown", metavar="FILE", help="also write the report as Markdown")
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def _weights(path: str) -> dict[str, float]:
    from oloproof.files import read_text  # lazy: start-up
    from oloproof.schema import MapOf, Scalar, validate_text  # lazy: start-up

    text = read_text(Path(path), path)
    doc = validate_text(
        text,
        MapOf(Scalar("number", minimum=0), min_items=1),
        path=path,
        empty_message="the file is empty; it needs one `stratum: share` line per stratum",
    )
    return {str(key): float(value) for key, value in doc.data.items()}


def handle(args: argparse.Namespace) -> int:
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.holdout.gap import gap  # lazy: start-up
    from oloproof.report.gap import build  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, args.markdown, release=release, inputs=(args.weights,))
    weights = _weights(args.weights) if args.weights else None
    result = gap(
        release,
        load_dev_testset(release),
        RunStore(release.base_dir),
        args.baseline,
        args.current,
        weights=weights,
        weights_source=args.weights,
    )
    if args.json:
        common.write_json(args.json, result.to_json())
    if args.markdown:
        from oloproof.report.gap_markdown import render  # lazy: start-up

        common.write_file(args.markdown, render(result))
    console = common.console()
    for part in build(result, explain=args.explain):
        console.print(part)
    return result.exit_code
