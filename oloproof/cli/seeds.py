"""``oloproof seeds``: the recipe across seeds — is the training recipe good, or one seed lucky?"""

from __future__ import annotations

import argparse
from pathlib import Path

from oloproof.cli import common


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "seeds",
        help="judge the training recipe across k seeds",
        description="Read the expected pass rate of the recipe across seeds, with an interval over cases and seeds "
        "(approximate: needs allow_approximate_methods: true). Exit codes as for `gate`.",
    )
    parser.add_argument(
        "seeds_file", nargs="?", metavar="SEEDS_FILE", help="seeds file (default: the seeds of release.yaml)"
    )
    common.add_config(parser)
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="policy to read confidence, allow_approximate_methods and judges from "
        "(default: the policy of release.yaml); it must still hold at least one rule",
    )
    parser.add_argument(
        "--html", metavar="FILE", help="write an offline page listing every case under every checkpoint"
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="run every checkpoint declared by its command again, even if a stored run could stand in for it",
    )
    common.add_json(parser)
    common.add_quiet(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.config import check_seeds, checkpoint_files  # lazy: start-up
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import display_path, read_text  # lazy: start-up
    from oloproof.gate import invalidated  # lazy: start-up
    from oloproof.inert import inert  # lazy: start-up
    from oloproof.leakage.check import gate_report  # lazy: start-up
    from oloproof.policy import POLICY, build_policy  # lazy: start-up
    from oloproof.report import seeds_page, seeds_terminal  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up
    from oloproof.schema import validate_text  # lazy: start-up
    from oloproof.seeds.check import decide_recipe, gather_checkpoints  # lazy: start-up
    from oloproof.seeds.spec import load_seeds_file  # lazy: start-up

    release = common.load(args)
    if args.seeds_file:
        spec = load_seeds_file(Path(args.seeds_file), args.seeds_file)
        check_seeds(
            spec,
            by_criterion=release.criteria(),
            system=release.system,
            base_dir=release.base_dir,
            rules=release.policy.rules,
        )
    elif release.seeds is not None:
        spec = release.seeds
    else:
        raise UsageError(f"no seeds file given and {release.path} declares no seeds:")
    files = checkpoint_files(spec, release.system, release.base_dir)
    common.check_outputs(args.json, args.html, release=release, inputs=[args.seeds_file, args.policy, *files])
    policy = release.policy
    if args.policy:
        shown = display_path(Path(args.policy))
        policy = build_policy(
            validate_text(
                read_text(Path(args.policy), shown),
                POLICY,
                path=shown,
                empty_message="the policy file is empty; it needs at least one rule",
            )
        )
    testset = load_dev_testset(release)
    store = RunStore(release.base_dir)
    with common.BatchProgress("running checkpoints", quiet=args.quiet) as progress:
        checkpoints = gather_checkpoints(spec, release, testset, store, rerun=args.rerun, on_batch=progress)
    result = decide_recipe(spec, release, policy, testset, store, checkpoints)
    leakage = gate_report(release, testset, release.base_dir)
    if leakage.invalidates:  # a known leak invalidates the recipe's evidence as it does the gate's rules
        from dataclasses import replace  # lazy: start-up

        result = replace(result, rule=invalidated(result.rule, leakage.invalidates))
    seeds_terminal.print_result(result, common.console())
    if leakage.invalidates:
        common.console().print(f"leakage: {inert(leakage.status)}")
    if args.html:
        common.write_file(args.html, seeds_page.render(result))
    if args.json:
        common.write_json(args.json, result.to_json())
    return int(result.rule.verdict.exit_code)
