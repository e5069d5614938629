"""``oloproof metamorphic``: inspect declared transforms, label them, run them elsewhere.

- ``show``: each transform, how many cases it changes, and its label status;
- ``label NAME``: write the offline labelling page for one image or text transform;
- ``cases NAME``: write the transformed cases (what the system receives) as JSONL;
- ``import NAME``: record outputs on those cases produced elsewhere as the transform's run;
- ``stamp NAME --confirm``: bind hand-written labels to the pairs the transform makes now.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from oloproof.cli import common
from oloproof.inert import inert

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.metamorphic.apply import TransformedSet
    from oloproof.metamorphic.spec import TransformSpec


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "metamorphic",
        help="inspect, label and run the declared metamorphic transforms",
        description="Work with the transforms declared under metamorphic.transforms in release.yaml.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    actions.required = True

    show = actions.add_parser("show", help="each transform: cases changed, not applicable, label status")
    common.add_config(show)
    common.add_json(show)
    show.set_defaults(handler=handle_show)

    label = actions.add_parser(
        "label",
        help="write an offline page to label whether a transform kept each case's meaning",
        description="Write one self-contained HTML file showing each changed case's original and transformed input "
        "side by side, with preserved / changed-meaning buttons (keys y, n), that exports the labels file (JSONL).",
    )
    label.add_argument("transform", metavar="TRANSFORM", help="name of an image or text transform")
    common.add_config(label)
    label.add_argument(
        "-o", "--output", metavar="FILE", help="where to write the page (default: <TRANSFORM>-labels.html)"
    )
    label.set_defaults(handler=handle_label)

    cases = actions.add_parser("cases", help="write the transformed cases (id and inputs, never expected) as JSONL")
    cases.add_argument("transform", metavar="TRANSFORM")
    common.add_config(cases)
    cases.add_argument("-o", "--output", metavar="FILE", required=True, help="JSONL file to write")
    cases.set_defaults(handler=handle_cases)

    imported = actions.add_parser("import", help="record outputs on the transformed cases produced elsewhere")
    imported.add_argument("transform", metavar="TRANSFORM")
    common.add_config(imported)
    imported.add_argument(
        "--outputs", metavar="FILE", required=True, help="JSONL outputs, one {id, ...} per transformed case"
    )
    imported.add_argument(
        "--version", dest="run_version", metavar="NAME", required=True, help="system version that produced them"
    )
    imported.set_defaults(handler=handle_import)

    stamp = actions.add_parser(
        "stamp",
        help="bind hand-written labels to the transformed inputs as they are now (after a person judged them)",
        description="A label counts only when it carries the digest of the original/transformed pair the person "
        "saw; the labelling page writes it. For labels made another way, stamp writes the digest of each changed "
        "case's current pair into its label (in place), listing every label it binds. "
        "Run it only after a person judged these pairs: "
        "without --confirm it lists what it would bind and writes nothing.",
    )
    stamp.add_argument("transform", metavar="TRANSFORM", help="name of an image or text transform")
    common.add_config(stamp)
    stamp.add_argument(
        "--labels",
        metavar="FILE",
        help="labels file to stamp in place (default: the transform's declared labels: file)",
    )
    stamp.add_argument(
        "--confirm",
        action="store_true",
        help="state that a person judged every label to be stamped on the transformed input as it is now",
    )
    stamp.set_defaults(handler=handle_stamp)


def _variant(
    args: argparse.Namespace, *, writes: tuple[str | None, ...] = (), reads: tuple[str | None, ...] = ()
) -> tuple[Release, TransformedSet]:
    """The config and the transform's copies of the test set; ``writes`` (files the command will
    write) are checked against every input first, before any work."""
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.metamorphic.variants import transformed_cases  # lazy: start-up

    release = common.load(args)
    common.check_outputs(*writes, release=release, inputs=reads)
    return release, transformed_cases(release, load_dev_testset(release), args.transform)


def _validated(spec: TransformSpec, doing: str) -> None:
    from oloproof.errors import UsageError  # lazy: start-up

    if not spec.validated:
        raise UsageError(
            f"'{spec.name}' is a {spec.kind} transform: declared, not validated — a person cannot judge whether it "
            f"keeps "
            f"a row's meaning, so there is nothing to {doing} (image and text transforms can be labelled)"
        )


def handle_label(args: argparse.Namespace) -> int:
    from oloproof.metamorphic.labels import is_current  # lazy: start-up
    from oloproof.metamorphic.variants import read_labels  # lazy: start-up
    from oloproof.report.labels_page import render_page  # lazy: start-up

    output = args.output or f"{args.transform}-labels.html"
    release, variant = _variant(args, writes=(output,))
    spec = variant.spec
    _validated(spec, "label")
    labels = read_labels(release, spec)[1] if spec.labels is not None else None
    common.write_file(output, render_page(variant, labels, labels_path=spec.labels))
    done = again = 0
    for case_id in variant.applicable:
        label = (labels or {}).get(case_id)
        if label is not None:
            current = is_current(label, variant.pair_digests[case_id])
            done += current
            again += not current
    notes = []
    if labels is not None:
        notes.append(f"{done} already labelled in {spec.labels}")
        if again:
            notes.append(f"{again} labelled without a digest or on a different change, shown again as needing a look")
    elif spec.labels is not None:
        notes.append(f"{spec.labels} does not exist yet: save the exported file there")
    print(
        inert(
            f"wrote {output}: {len(variant.applicable)} changed case(s) to label"
            + (f" ({'; '.join(notes)})" if notes else "")
            + f", {len(variant.not_applicable)} not applicable. Open it in a browser, label with y/n, export with e."
        )
    )
    return 0


def handle_stamp(args: argparse.Namespace) -> int:
    """Bind labels made without the page to the pairs the transform makes now, listing each."""

    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.files import atomic_write_bytes  # lazy: start-up
    from oloproof.jsonl import dumps_line, iter_objects  # lazy: start-up
    from oloproof.metamorphic.labels import is_current, load_labels  # lazy: start-up
    from oloproof.metamorphic.variants import labels_file  # lazy: start-up

    release, variant = _variant(args)
    spec = variant.spec
    _validated(spec, "stamp")
    if args.labels is not None:
        file, shown = Path(args.labels), args.labels
    elif spec.labels is not None:
        file, shown = labels_file(release, spec), spec.labels
    else:
        raise UsageError(f"transform '{spec.name}' declares no labels: file; pass the file to stamp with --labels FILE")
    if not file.is_file():
        raise UsageError(f"{shown}: labels file not found (write it with `oloproof metamorphic label {spec.name}`)")
    labels = load_labels(file, shown=shown)
    todo = {
        case_id: ("had no digest" if label.digest is None else "was labelled on another change: stale")
        for case_id, label in labels.items()
        if case_id in variant.pair_digests and not is_current(label, variant.pair_digests[case_id])
    }
    unused = sum(1 for case_id in labels if case_id not in variant.pair_digests)
    if not todo:
        print(inert(f"nothing to stamp: every label of a changed case in {shown} is bound to its current pair"))
        return 0
    if not args.confirm:
        ids = ", ".join(list(todo)[:10]) + (", …" if len(todo) > 10 else "")
        raise UsageError(
            f"stamping binds {len(todo)} label(s) in {shown} to the pairs transform '{spec.name}' makes now ({ids}): "
            f"do it only "
            f"if a person judged each of these cases on its current transformed input (`oloproof metamorphic cases "
            f"{spec.name}` writes them), then run again with --confirm. Nothing was written"
        )
    lines: list[bytes] = []
    for _, obj in iter_objects(file, display=shown):
        if obj["id"] in todo:
            obj = {**obj, "digest": variant.pair_digests[obj["id"]]}
        lines.append(dumps_line(obj))
    atomic_write_bytes(file, b"".join(lines))
    for case_id, why in todo.items():
        print(f"stamped {inert(case_id)}: {'preserved' if labels[case_id].preserved else 'changed meaning'} ({why})")
    print(
        f"stamped {len(todo)} label(s) in {shown}: bound to the current pairs of transform '{spec.name}' "
        f"({spec.kind}: {spec.transform.describe()}), on the word of whoever ran this with --confirm"
    )
    if unused:
        print(f"{unused} label(s) for cases the transform does not change: left as they were")
    unlabelled = sum(1 for case_id in variant.applicable if case_id not in labels)
    if unlabelled:
        print(inert(f"{unlabelled} changed case(s) have no label in {shown}"))
    return 0


def handle_show(args: argparse.Namespace) -> int:
    from oloproof.devset import load_dev_testset  # lazy: start-up
    from oloproof.metamorphic.variants import labels_of, transformed_cases  # lazy: start-up

    release = common.load(args)
    common.check_outputs(args.json, release=release)
    if release.metamorphic is None:
        print(inert(f"{release.path} declares no metamorphic transforms"))
        return 0
    testset = load_dev_testset(release)
    rows = []
    console = common.console()
    for spec in release.metamorphic.transforms:
        variant = transformed_cases(release, testset, spec.name)
        status = labels_of(release, variant)
        rows.append(
            {
                "name": spec.name,
                "kind": spec.kind,
                "family": spec.family,
                "field": spec.field,
                "description": spec.transform.describe(),
                "applicable": len(variant.applicable),
                "not_applicable": len(variant.not_applicable),
                "status": status.state,
                "labels": status.to_json() if spec.validated else None,
                "transformed_digest": variant.testset.digest,
            }
        )
        extra = ""
        if spec.validated:
            extra = (
                f"; labels: {len(status.preserved)} preserved, {len(status.changed_meaning)} changed meaning, "
                f"{len(status.unlabelled)} unlabelled"
                + "".join(
                    f" ({len(ids)} {what})"
                    for ids, what in ((status.stale, "stale"), (status.unbound, "without a digest"))
                    if ids
                )
            )
        from rich.text import Text  # lazy: start-up

        console.print(
            Text.assemble(
                (inert(spec.name), "bold"),
                inert(
                    f" ({spec.kind} on {spec.field}: {spec.transform.describe()}): "
                    f"{len(variant.applicable)} changed, {len(variant.not_applicable)} not applicable; "
                    f"{status.state}{extra}"
                ),
            ),
            highlight=False,
        )
        if status.file is not None and not status.file_exists:
            from oloproof.evaluators.metamorphic import missing_file_sentence  # lazy: start-up

            console.print(Text(inert(f"  {missing_file_sentence(status.file, spec.name)}.")), highlight=False)
    if args.json:
        common.write_json(args.json, {"schema": "oloproof.metamorphic-show/1", "transforms": rows})
    return 0


def handle_cases(args: argparse.Namespace) -> int:
    from oloproof.jsonl import dumps_line  # lazy: start-up

    _, variant = _variant(args, writes=(args.output,))
    data = b"".join(dumps_line({"id": case.id, **case.inputs}) for case in variant.testset.cases)
    common.write_bytes(args.output, data)
    print(inert(f"wrote {args.output}: {len(variant.applicable)} transformed case(s) ({variant.testset.digest[:19]}…)"))
    return 0


def handle_import(args: argparse.Namespace) -> int:
    from oloproof.metamorphic.variants import run_kind  # lazy: start-up
    from oloproof.run import describe_problems, import_outputs  # lazy: start-up
    from oloproof.runstore import RunStore  # lazy: start-up

    release, variant = _variant(args, reads=(args.outputs,))
    record, _ = import_outputs(
        release,
        variant.testset,
        RunStore(release.base_dir),
        Path(args.outputs),
        version=args.run_version,
        shown=args.outputs,
        kind=run_kind(variant.spec.name),
    )
    print(
        inert(
            f"run {record.run_id} ({run_kind(variant.spec.name)}, version {record.version}): {record.status}, "
            f"{record.n_outputs}/{record.n_cases} outputs"
        )
    )
    for line in describe_problems(record):
        print(f"  {inert(line)}")
    return 0
