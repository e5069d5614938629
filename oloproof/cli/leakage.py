"""``oloproof leakage check``: are test cases in the training data? (SPEC §4, docs/leakage.md)"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path
from typing import Any

from oloproof.cli import common
from oloproof.inert import inert

PROGRESS_MIN_BYTES = 8 << 20  # a bar for scans long enough to watch


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "leakage",
        help="check the test set against the training data",
        description="Find test cases that appear in the training data after normalisation.",
    )
    common.add_config(parser)  # `oloproof leakage -c FILE check …` and `oloproof leakage check -c FILE …` both work
    actions = parser.add_subparsers(dest="leakage_command", metavar="ACTION")
    actions.required = True
    check = actions.add_parser(
        "check",
        help="compare every test case with every training row (exact match after normalisation)",
        description="Compare each case's input with every row of the training file, by exact match after strings are "
        "NFKC-normalised, case-folded, stripped of format characters and whitespace-collapsed "
        "(numbers rounded with --round). The training file is streamed and never stored, copied or printed. "
        "Exit 0 when no case is found, 4 when some are (their evidence is invalid), "
        "2 for a bad file or option. Near-duplicates are checked with --near only.",
    )
    # SUPPRESS: the action's parser must not overwrite a -c given before the action with its default.
    check.add_argument(
        "-c", "--config", default=argparse.SUPPRESS, metavar="FILE", help="release.yaml to read (default: release.yaml)"
    )
    check.add_argument(
        "--training",
        required=True,
        metavar="FILE",
        help="training data: JSONL, CSV (.tsv: tab) or Parquet; gzip, bzip2 or xz compressed too",
    )
    check.add_argument(
        "--format", choices=("jsonl", "csv", "parquet"), help="the training file's format, when its name does not tell"
    )
    check.add_argument(
        "--field",
        dest="fields",
        action="extend",
        nargs="+",
        metavar="KEY",
        help=(
            "compare only these case keys (dotted paths reach into nested objects; repeatable); default: every input "
            "key"
        ),
    )
    check.add_argument(
        "--round", dest="digits", type=int, metavar="N", help="round numbers to N decimals before comparing (0-15)"
    )
    check.add_argument(
        "--image-root",
        metavar="DIR",
        help="what relative image paths in the training file are relative to (default: the directory of "
        "release.yaml, as for the test set's)",
    )
    check.add_argument(
        "--skip-malformed",
        action="store_true",
        help="skip training rows that cannot be read, and count them (default: stop with file:line, exit 2)",
    )
    check.add_argument(
        "--record",
        action="store_true",
        help="write the evidence record under .oloproof/evidence/leakage/ (what `leakage: required` looks for)",
    )
    check.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="worker processes for large uncompressed JSONL (default: the CPUs, up to 4)",
    )
    check.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local (default): this machine; spark: Spark executors scan the training data (a file, directory, glob "
        "or any URI Spark reads; JSONL or CSV); needs pip install 'oloproof[spark]'",
    )
    check.add_argument(
        "--spark-master",
        metavar="URL",
        help="with --engine spark: the master (e.g. local[2]); default: what spark-submit or spark-defaults set, "
        "else local[*]",
    )
    near = check.add_argument_group(
        "near-duplicates", "with --near (or `near:` under leakage in release.yaml); needs pip install 'oloproof[near]'"
    )
    near.add_argument(
        "--near",
        action="store_true",
        help="also find near copies: text by n-gram overlap and MinHash + LSH, images by perceptual hashes, numbers "
        "within --tolerance (a separate finding; it decides only under `near: invalidate`)",
    )
    near.add_argument("--ngram", type=int, metavar="N", help="n of the n-gram overlap (default 13; 1-64)")
    near.add_argument(
        "--ngram-threshold", type=float, metavar="F", help="fraction of a case's n-grams found (default 0.5; (0, 1])"
    )
    near.add_argument(
        "--jaccard-threshold", type=float, metavar="F", help="word-set Jaccard similarity (default 0.8; (0, 1])"
    )
    near.add_argument("--hamming", type=int, metavar="BITS", help="pHash and dHash distance (default 10; 0-32)")
    near.add_argument(
        "--tolerance",
        action="append",
        metavar="KEY=X",
        help="numbers at case key KEY within X of each other meet (repeatable)",
    )
    common.add_json(check)
    common.add_quiet(check)
    check.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from oloproof.errors import ExitCode, UsageError  # lazy: start-up
    from oloproof.leakage.record import replaced_leaky, run_check, write_record  # lazy: start-up
    from oloproof.report.leakage import describe  # lazy: start-up
    from oloproof.testset import load_testset  # lazy: start-up

    if args.jobs is not None and args.jobs < 1:
        raise UsageError(f"--jobs: expected a positive number of processes, got {args.jobs}")
    if args.digits is not None and not 0 <= args.digits <= 15:
        raise UsageError(f"--round: expected a number of decimals from 0 to 15, got {args.digits}")
    fields = tuple(dict.fromkeys(key.strip() for key in args.fields)) if args.fields else None
    if fields is not None and any(not key or key.startswith(".") or key.endswith(".") or ".." in key for key in fields):
        raise UsageError("--field: expected key paths such as 'text' or 'features.income'")
    near_given = any(
        getattr(args, name) is not None
        for name in ("ngram", "ngram_threshold", "jaccard_threshold", "hamming", "tolerance")
    )
    if near_given and not args.near:
        raise UsageError("--ngram, --ngram-threshold, --jaccard-threshold, --hamming and --tolerance need --near")
    if args.engine == "spark" and (args.jobs is not None or args.image_root is not None):
        raise UsageError(
            "--engine spark: --jobs and --image-root are for the local engine (Spark's parallelism is its master's)"
        )
    if args.spark_master is not None and args.engine != "spark":
        raise UsageError("--spark-master needs --engine spark")
    release = common.load(args)
    near = near_options(args, release) if args.near or release.leakage_policy.near is not None else None
    common.check_outputs(args.json, release=release, inputs=[args.training])
    image_root = None
    if args.image_root is not None:
        image_root = Path(args.image_root).resolve()
        if not image_root.is_dir():
            raise UsageError(f"--image-root: {args.image_root}: not a directory")
    testset = load_testset(release.resolve(release.testset_path), display=release.testset_path)  # as the gate loads it
    size = Path(args.training).stat().st_size if Path(args.training).is_file() else 0
    with ScanProgress(
        enabled=common.interactive() and not args.quiet and size >= PROGRESS_MIN_BYTES, total=size
    ) as progress:
        result = run_check(
            release,
            testset,
            args.training,
            fields=fields,
            digits=args.digits,
            skip_malformed=args.skip_malformed,
            format=args.format,
            jobs=args.jobs,
            progress=progress,
            image_root=image_root,
            near=near,
            engine=args.engine,
            spark_master=args.spark_master,
        )
    console = common.console()
    lines = describe(result)
    for line in lines:
        style = "bold red" if line.startswith("cases checked") and result.leaked_ids else None
        console.print(inert(line), style=style, markup=False, highlight=False)
    if args.record:
        path, replaced = write_record(release.base_dir, result, args.training)
        console.print(f"recorded: {path.relative_to(release.base_dir)} (commit it: the gate reads it)", markup=False)
        for old in replaced:
            if not old.record.clean:
                console.print(inert(replaced_leaky(old, result)), style="bold red", markup=False, highlight=False)
    else:
        console.print(
            "not recorded (pass --record to write the evidence record the gate reads)", style="dim", markup=False
        )
    if args.json:
        common.write_json(args.json, result.to_json())
    invalidating = release.leakage_policy.near == "invalidate" and result.near is not None and result.near.cases
    return int(ExitCode.PASS if result.clean and not invalidating else ExitCode.INSUFFICIENT_EVIDENCE)


def near_options(args: argparse.Namespace, release: Any) -> Any:
    """The near-duplicate thresholds: flags over release.yaml over the defaults; checked here (exit 2)."""
    from oloproof.errors import UsageError  # lazy: start-up
    from oloproof.leakage.near import require_extra  # lazy: start-up
    from oloproof.leakage.spec import NearOptions  # lazy: start-up

    require_extra()
    declared = release.leakage_policy.options
    if args.ngram is not None and not 1 <= args.ngram <= 64:
        raise UsageError(f"--ngram: expected a number of words from 1 to 64, got {args.ngram}")
    for flag, value in (("--ngram-threshold", args.ngram_threshold), ("--jaccard-threshold", args.jaccard_threshold)):
        if value is not None and not 0 < value <= 1:
            raise UsageError(f"{flag}: expected a fraction in (0, 1], got {value:g}")
    if args.hamming is not None and not 0 <= args.hamming <= 32:
        raise UsageError(f"--hamming: expected a number of bits from 0 to 32 (of 64), got {args.hamming}")
    tolerance = dict(declared.tolerance)
    for item in args.tolerance or ():
        key, sep, number = item.partition("=")
        try:
            value = float(number)
        except ValueError:
            value = math.nan
        if not sep or not key.strip() or not math.isfinite(value) or value < 0:
            raise UsageError(
                f"--tolerance: expected KEY=X with X a number >= 0 (e.g. features.income=0.01), got {item!r}"
            )
        tolerance[key.strip()] = value
    return NearOptions(
        ngram=declared.ngram if args.ngram is None else args.ngram,
        ngram_threshold=declared.ngram_threshold if args.ngram_threshold is None else args.ngram_threshold,
        jaccard_threshold=declared.jaccard_threshold if args.jaccard_threshold is None else args.jaccard_threshold,
        hamming=declared.hamming if args.hamming is None else args.hamming,
        tolerance=tolerance,
    )


class ScanProgress:
    """A rich bar over the training file: bytes read, bytes/s, rows and rows/s."""

    def __init__(self, *, enabled: bool, total: int) -> None:
        self.enabled = enabled
        self.total = total
        self._progress: Any = None
        self._task: Any = None
        self._first: tuple[float, int] | None = None
        self._shown = 0.0

    def __enter__(self) -> ScanProgress | None:
        if not self.enabled:
            return None
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )  # lazy: start-up

        self._progress = Progress(
            TextColumn("scanning"),
            BarColumn(bar_width=16),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("{task.fields[rows]:,} rows, {task.fields[rate]:,.0f}/s"),
            TimeRemainingColumn(),
            console=common.console(stderr=True),
            transient=True,
            auto_refresh=False,  # no thread: the scan may fork workers
        )
        self._progress.__enter__()
        self._task = self._progress.add_task("scan", total=self.total, rows=0, rate=0.0)
        return self

    def __call__(self, done: int, rows: int) -> None:
        now = time.perf_counter()
        if self._first is None:  # rates from the first report on: loading the test set is not scanning
            self._first = (now, rows)
        elapsed = now - self._first[0]
        rate = (rows - self._first[1]) / elapsed if elapsed > 0 else 0.0
        self._progress.update(self._task, completed=done, rows=rows, rate=rate)
        if now - self._shown >= 0.1:
            self._progress.refresh()
            self._shown = now

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.__exit__(*exc)
