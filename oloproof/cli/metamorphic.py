"""``oloproof metamorphic``: inspect declared transforms, label them, run them elsewhere.

- ``show``: each transform, how many cases it changes, and its label status;
- ``label NAME``: write the offline labelling page for one image or text transform;
- ``cases NAME``: write the transformed cases (what the system receives) as JSONL;
- ``import NAME``: record outputs on those cases produced elsewhere as the transform's run.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from oloproof.cli import common

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.metamorphic.apply import TransformedSet


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "metamorphic", help="inspect, label and run the declared metamorphic transforms",
        description="Work with the transforms declared under metamorphic.transforms in release.yaml.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    show = actions.add_parser("show", help="each transform: cases changed, not applicable, label status")
    common.add_config(show)
    common.add_json(show)
    show.set_defaults(handler=handle_show)

    label = actions.add_parser(
        "label", help="write an offline page to label whether a transform kept each case's meaning",
        description="Write one self-contained HTML file showing each changed case's original and transformed input "
        "side by side, with preserved / changed-meaning buttons (keys y, n), that exports the labels file (JSONL).",
    )
    label.add_argument("transform", metavar="TRANSFORM", help="name of an image or text transform")
    common.add_config(label)
    label.add_argument("-o", "--output", metavar="FILE", help="where to write the page (default: <TRANSFORM>-labels.html)")
    label.set_defaults(handler=handle_label)

    cases = actions.add_parser("cases", help="write the transformed cases (id and inputs, never expected) as JSONL")
    cases.add_argument("transform", metavar="TRANSFORM")
    common.add_config(cases)
    cases.add_argument("-o", "--output", metavar="FILE", required=True, help="JSONL file to write")
    cases.set_defaults(handler=handle_cases)

    imported = actions.add_parser("import", help="record outputs on the transformed cases produced elsewhere")
    imported.add_argument("transform", metavar="TRANSFORM")
    common.add_config(imported)
    imported.add_argument("--outputs", metavar="FILE", required=True, help="JSONL outputs, one {id, ...} per transformed case")
    imported.add_argument("--version", dest="run_version", metavar="NAME", required=True, help="system version that produced them")
    imported.set_defaults(handler=handle_import)


def _variant(args: argparse.Namespace) -> tuple[Release, TransformedSet]:
    from oloproof.gate import load_dev_testset
    from oloproof.metamorphic.variants import transformed_cases

    release = common.load(args)
    return release, transformed_cases(release, load_dev_testset(release), args.transform)


def handle_label(args: argparse.Namespace) -> int:
    from oloproof.errors import UsageError
    from oloproof.metamorphic.labels import load_labels
    from oloproof.metamorphic.page import render_page

    release, variant = _variant(args)
    spec = variant.spec
    if not spec.validated:
        raise UsageError(
            f"'{spec.name}' is a {spec.kind} transform: declared, not validated — a person cannot judge whether it keeps "
            "a row's meaning, so there is nothing to label (image and text transforms can be labelled)"
        )
    labels = None
    if spec.labels is not None and release.resolve(spec.labels).is_file():
        labels = load_labels(release.resolve(spec.labels), shown=spec.labels)
    output = args.output or f"{spec.name}-labels.html"
    common.write_file(output, render_page(variant, labels, labels_path=spec.labels))
    done = sum(1 for case_id in variant.applicable if labels and case_id in labels)
    print(
        f"wrote {output}: {len(variant.applicable)} changed case(s) to label"
        + (f" ({done} already labelled in {spec.labels})" if labels else "")
        + f", {len(variant.not_applicable)} not applicable. Open it in a browser, label with y/n, export with e."
    )
    return 0


def handle_show(args: argparse.Namespace) -> int:
    from oloproof.gate import load_dev_testset
    from oloproof.metamorphic.variants import labels_of, transformed_cases

    release = common.load(args)
    if release.metamorphic is None:
        print(f"{release.path} declares no metamorphic transforms")
        return 0
    testset = load_dev_testset(release)
    rows = []
    console = common.console()
    for spec in release.metamorphic.transforms:
        variant = transformed_cases(release, testset, spec.name)
        status = labels_of(release, variant)
        rows.append({
            "name": spec.name, "kind": spec.kind, "family": spec.family, "field": spec.field,
            "description": spec.transform.describe(), "applicable": len(variant.applicable),
            "not_applicable": len(variant.not_applicable), "status": status.state,
            "labels": status.to_json() if spec.validated else None, "transformed_digest": variant.testset.digest,
        })
        extra = ""
        if spec.validated:
            extra = (
                f"; labels: {len(status.preserved)} preserved, {len(status.changed_meaning)} changed meaning, "
                f"{len(status.unlabelled)} unlabelled" + (f" ({len(status.stale)} stale)" if status.stale else "")
            )
        from rich.text import Text

        console.print(Text.assemble(
            (spec.name, "bold"),
            f" ({spec.kind} on {spec.field}: {spec.transform.describe()}): "
            f"{len(variant.applicable)} changed, {len(variant.not_applicable)} not applicable; {status.state}{extra}",
        ), highlight=False)
    if args.json:
        common.write_json(args.json, {"schema": "oloproof.metamorphic-show/1", "transforms": rows})
    return 0


def handle_cases(args: argparse.Namespace) -> int:
    from pathlib import Path

    from oloproof.atomic import atomic_write_bytes
    from oloproof.jsonl import dumps_line

    _, variant = _variant(args)
    data = b"".join(dumps_line({"id": case.id, **case.inputs}) for case in variant.testset.cases)
    atomic_write_bytes(Path(args.output), data)
    print(f"wrote {args.output}: {len(variant.applicable)} transformed case(s) ({variant.testset.digest[:19]}…)")
    return 0


def handle_import(args: argparse.Namespace) -> int:
    from pathlib import Path

    from oloproof.metamorphic.variants import run_kind
    from oloproof.run import describe_problems, import_outputs
    from oloproof.runstore import RunStore

    release, variant = _variant(args)
    record, _ = import_outputs(
        release, variant.testset, RunStore(release.base_dir), Path(args.outputs), version=args.run_version, shown=args.outputs,
        kind=run_kind(variant.spec.name),
    )
    print(f"run {record.run_id} ({run_kind(variant.spec.name)}, version {record.version}): {record.status}, "
          f"{record.n_outputs}/{record.n_cases} outputs")
    for line in describe_problems(record):
        print(f"  {line}")
    return 0
