"""``oloproof seeds``: the recipe across seeds — is the training recipe good, or one seed lucky?"""

from __future__ import annotations

import argparse
from pathlib import Path

from oloproof.cli import common
from oloproof.inert import inert


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
    common.add_json(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from rich.table import Table  # lazy: start-up
    from rich.text import Text  # lazy: start-up

    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import display_path, read_text  # lazy: start-up
    from oloproof.gate import load_dev_testset  # lazy: start-up
    from oloproof.policy import POLICY, build_policy  # lazy: start-up
    from oloproof.report import seeds_page  # lazy: start-up
    from oloproof.report.terminal import STYLE, short_digest  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up
    from oloproof.schema import validate_text  # lazy: start-up
    from oloproof.seeds.check import decide_recipe  # lazy: start-up
    from oloproof.seeds.spec import load_seeds_file  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, args.html, release=release, inputs=[args.seeds_file, args.policy])
    if args.seeds_file:
        spec = load_seeds_file(Path(args.seeds_file), args.seeds_file)
    elif release.seeds is not None:
        spec = release.seeds
    else:
        raise UsageError(f"no seeds file given and {release.path} declares no seeds:")
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
    result = decide_recipe(spec, release, policy, testset, RunStore(release.base_dir))
    console = common.console()
    where = f" on dev set {inert(testset.path)} ({len(testset)} cases, {short_digest(testset.digest)})"
    console.print(Text.assemble("recipe ", (inert(spec.recipe), "bold"), where))
    table = Table(header_style="bold")
    for column in ("checkpoint", "ref", "run", "version", "status", "pass rate", "missing"):
        table.add_column(column)
    usable = [cp for cp in result.checkpoints if cp.problem is None]
    for cp in result.checkpoints:
        rate = missing = "-"
        if result.recipe is not None and cp in usable:
            position = usable.index(cp)
            value = result.recipe.seed_pass_rates[position]
            rate = "-" if value is None else f"{value:.1%}"
            missing = str(result.recipe.seed_missing[position])
        table.add_row(
            inert(cp.name),
            inert(cp.ref),
            inert(cp.run.run_id) if cp.run else "-",
            inert(cp.run.version) if cp.run else "-",
            inert(cp.run.status if cp.run else (cp.problem or "-")),
            rate,
            missing,
        )
    console.print(table)
    rule = result.rule
    line = Text()
    line.append(f"{inert(rule.rule_id)}: ", style="bold")
    line.append(rule.verdict.value, style=STYLE[rule.verdict])
    line.append(f"  {inert(rule.sentence)}")
    console.print(line)
    if result.recipe is not None:
        ids = [case.id for case in testset.cases]
        unstable = [inert(ids[i]) for i in result.recipe.unstable_cases]
        shown_ids = ", ".join(unstable[:10]) + (f", … (+{len(unstable) - 10})" if len(unstable) > 10 else "")
        console.print(f"{len(unstable)} case(s) change verdict with the seed{': ' + shown_ids if unstable else ''}")
    if args.html:
        common.write_file(args.html, seeds_page.render(result))
    if args.json:
        common.write_json(args.json, result.to_json())
    return int(rule.verdict.exit_code)
