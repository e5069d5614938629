"""``oloproof gate``: decide every rule and exit with the gate's verdict."""

from __future__ import annotations

import argparse

from oloproof.cli import common


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "gate",
        help="decide every rule of the policy and exit with the verdict",
        description="Decide every rule from an interval and exit 0 PASS, 1 FAIL, 3 BLOCKED, "
        "4 INSUFFICIENT_EVIDENCE, 5 MANUAL_REVIEW. Reuses the latest run of the system version on this "
        "test set when there is one, and runs the system otherwise.",
    )
    common.add_config(parser)
    parser.add_argument(
        "--run", metavar="REF", help="gate this run (latest, latest~N, version:NAME, or a run id prefix)"
    )
    parser.add_argument(
        "--rerun", action="store_true", help="run the system again even if a run of this version exists"
    )
    common.add_json(parser)
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML, one test per rule")
    parser.add_argument("--markdown", metavar="FILE", help="also write the Markdown summary the action posts")
    common.add_quiet(parser, verbose=True)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.gate import run_gate  # lazy: start-up
    from oloproof.report import jsonreport, junit, markdown, terminal  # lazy: start-up

    if args.run and args.rerun:
        raise UsageError("--rerun runs the system again; it cannot be combined with --run REF")
    release = common.load(args)
    common.check_outputs(args.json, args.junit, args.markdown, release=release)
    with common.BatchProgress("running system", quiet=args.quiet) as progress:
        result = run_gate(release, run_ref=args.run, rerun=args.rerun, quiet=args.quiet, on_batch=progress)
    # Reports first: whatever happens to the terminal, scripts get their files.
    if args.json:
        common.write_file(args.json, jsonreport.render(result))
    if args.junit:
        common.write_file(args.junit, junit.render(result))
    if args.markdown:
        common.write_file(args.markdown, markdown.render(result))
    detail: terminal.Detail = "brief" if args.quiet else "full" if args.verbose else "normal"
    terminal.print_result(result, common.console(), detail=detail)
    return int(result.verdict.exit_code)
