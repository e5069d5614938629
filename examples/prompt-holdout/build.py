"""Regenerate the `prompt-holdout` example: its data, its prompt versions, and six weeks of evidence.

    python examples/prompt-holdout/build.py            # rebuild in place (from anywhere; needs oloproof installed)
    python examples/prompt-holdout/build.py --check    # rebuild in a temp dir and compare with what is here
    python examples/prompt-holdout/build.py --report   # what `oloproof compare` / `oloproof gap` should show

What it writes, under examples/prompt-holdout/ (every other file here is written by hand):

    data/dev.jsonl               the dev set: 200 contracts {"id", "stratum", "text", "expected": {"clause"}}
    evals/holdout/cases.jsonl    the holdout set: 120 contracts, same format
    prompts/extract@*.md         31 prompt versions: extract-v1, thirty iterations, extract-v6
    release.yaml                 the gate, as it stands at week 6 (system.version extract-v6)
    .oloproof/runs/              31 dev runs, one per version, made by `oloproof run`
    evals/holdout/READS.log      3 holdout reads (weeks 0, 3, 6), made by `oloproof holdout run --reason`
    .oloproof/holdout/           their outcome records (no case ids, no contents)

How: it generates the two sets (builder/contracts.py; NumPy PCG64, seeded per set and case) and
the prompt versions (builder/prompts.py), checks the plan in-process (builder/plan.py: every
iteration's accept/reject decision is the greedy one on the real dev scores, and the chapter's
figures come out exactly), then replays the six weeks with the real `oloproof` command line in a
scratch directory (builder/record.py) and checks the recorded evidence against the plan before
installing it here. Everything is deterministic except what oloproof itself stamps: run ids, the
times of runs and reads (so the READS.log hashes), and the checker's identity (the digest of the
oloproof sources that recorded them). `--check` compares everything else.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from builder.evidence import dev_runs, holdout_reads  # noqa: E402
from builder.plan import CHAPTER, FILES, Plan, check_plan, evaluate, write_inputs  # noqa: E402
from builder.prompts import READ_AFTER, states  # noqa: E402
from builder.record import REASONS, Recorder, record_six_weeks, release_yaml  # noqa: E402

STATIC = ("extractor.py", "policy.yaml")  # hand-written files the recording needs
GENERATED = ("data", "evals", "prompts", ".oloproof", "release.yaml")
LEFTOVERS = ("evals/holdout/READS.log.lock", ".oloproof/.locks")  # oloproof's lock files: not evidence


def fail(message: str) -> None:
    raise SystemExit(f"build: {message}")


def build(target: Path, *, quiet: bool) -> Plan:
    """Everything GENERATED, under ``target`` (an empty directory)."""
    for name in STATIC:
        shutil.copy2(HERE / name, target / name)
    cases = write_inputs(target)
    plan = evaluate(target, cases)
    check_plan(plan, fail)
    (target / "release.yaml").write_text(release_yaml("extract-v1"), encoding="utf-8")
    home = Path(tempfile.mkdtemp(prefix="home-", dir=target.parent))
    try:
        record_six_weeks(Recorder(workdir=target, home=home, log=[], quiet=quiet))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    if (target / "release.yaml").read_text(encoding="utf-8") != release_yaml("extract-v6"):
        fail("release.yaml does not end at extract-v6")
    check_evidence(target, plan)
    for leftover in LEFTOVERS:
        path = target / leftover
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    for name in STATIC:
        (target / name).unlink()
    return plan


def check_evidence(root: Path, plan: Plan) -> None:
    """The recorded runs and reads say what the plan says."""
    runs = dev_runs(root)
    versions = [run.version for run in runs]
    if versions != list(states()):
        fail(f"the dev runs are of {versions}, expected one run of each version in order: {list(states())}")
    for run in runs:
        if run.status != "ok":
            fail(f"run {run.run_id} of {run.version} is {run.status}")
        want = dict(zip((c.id for c in plan.cases["dev"]), plan.answers[("dev", run.version)], strict=True))
        if run.outputs != want:
            fail(f"the recorded outputs of {run.version} differ from the extractor's")
    reads = holdout_reads(root)
    if [r.version for r in reads] != list(READ_AFTER.values()):
        fail(f"the reads are of {[r.version for r in reads]}, expected {list(READ_AFTER.values())}")
    for read in reads:
        passes = sum(1 for value in read.record["outcomes"] if value)
        if passes != CHAPTER[("holdout", read.version)]:
            fail(f"read {read.seq} of {read.version} scored {passes}/120; the plan says {CHAPTER[('holdout', read.version)]}")


def foreign_reads(root: Path) -> list[str]:
    """Reads in ``root``'s log that this build does not make (e.g. a re-measurement typed after
    `oloproof init`): a rebuild would discard them, and a read must never be un-made silently."""
    log = root / "evals" / "holdout" / "READS.log"
    if not log.is_file():
        return []
    ours = {(number, REASONS[after]) for number, after in enumerate(READ_AFTER, start=1)}
    return [f"read {r.seq} ({r.reason})" for r in holdout_reads(root) if (r.seq, r.reason) not in ours]


def install(built: Path) -> None:
    """Replace the GENERATED paths of the example with the built ones (each by a rename)."""
    for name in GENERATED:
        staged = HERE / f".{name.lstrip('.')}.new"
        old = HERE / f".{name.lstrip('.')}.old"
        for leftover in (staged, old):
            if leftover.is_dir():
                shutil.rmtree(leftover)
            elif leftover.exists():
                leftover.unlink()
        source = built / name
        if source.is_dir():
            shutil.copytree(source, staged)
        else:
            shutil.copy2(source, staged)
        current = HERE / name
        if current.exists():
            current.rename(old)
        staged.rename(current)
        if old.is_dir():
            shutil.rmtree(old)
        elif old.exists():
            old.unlink()


def compare_trees(built: Path, shipped: Path) -> list[str]:
    """What differs between a fresh build and the shipped example, ignoring run ids, times, hashes
    and the checker's identity."""
    problems: list[str] = []
    files = {"release.yaml", *FILES.values(), *(p.relative_to(built).as_posix() for p in (built / "prompts").glob("*.md"))}
    shipped_prompts = {p.relative_to(shipped).as_posix() for p in (shipped / "prompts").glob("*.md")} if (shipped / "prompts").is_dir() else set()
    for extra in sorted(shipped_prompts - files):
        problems.append(f"{extra}: shipped but not built")
    for name in sorted(files):
        if not (shipped / name).is_file():
            problems.append(f"{name}: missing from the example")
        elif not filecmp.cmp(built / name, shipped / name, shallow=False):
            problems.append(f"{name}: differs from a fresh build")

    def runs_key(root: Path) -> list[tuple[object, ...]]:
        return [(r.version, r.command, r.status, r.testset_digest, r.config_digest, json.dumps(r.outputs, sort_keys=True))
                for r in dev_runs(root)]

    def reads_key(root: Path) -> list[tuple[object, ...]]:
        keep = ("who", "commit", "version", "set", "n", "criterion", "score", "interval", "method", "missing", "budget", "reason")
        return [(r.seq, *(r.fields.get(k) for k in keep), json.dumps(r.record["outcomes"]), r.record["config_digest"],
                 json.dumps(r.record["run"], sort_keys=True)) for r in holdout_reads(root)]

    for label, key in (("dev runs", runs_key), ("holdout reads", reads_key)):
        try:
            fresh, old = key(built), key(shipped)
        except (OSError, KeyError, ValueError) as exc:
            problems.append(f"{label}: unreadable in the example ({exc})")
            continue
        if fresh != old:
            for index, (a, b) in enumerate(zip(fresh, old, strict=False)):
                if a != b:
                    problems.append(f"{label}: entry {index + 1} differs ({b[0]} shipped, {a[0]} built)")
                    break
            if len(fresh) != len(old):
                problems.append(f"{label}: {len(old)} shipped, {len(fresh)} built")
    return problems


def status_problems(shipped: Path, scratch: Path) -> list[str]:
    """`oloproof holdout status` on a copy of the shipped example: the log must verify."""
    import subprocess

    copy = scratch / "shipped-copy"
    shutil.copytree(shipped, copy, ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "oloproof", "holdout", "status"], cwd=copy, capture_output=True, text=True,
                          timeout=120, check=False)
    if proc.returncode != 0 or "intact, hash chain verified" not in proc.stdout:
        return [f"`oloproof holdout status` on the example exited {proc.returncode}: {(proc.stdout + proc.stderr).strip()[:500]}"]
    return []


def checker_note(built: Path, shipped: Path) -> str | None:
    def digests(root: Path) -> set[str]:
        return {r.checker.get("source_digest", "") for r in dev_runs(root)} | {
            r.record["checker"]["source_digest"] for r in holdout_reads(root)}

    old, new = digests(shipped), digests(built)
    if old != new:
        return ("note: the shipped evidence was recorded by another oloproof (checker "
                f"{', '.join(sorted(d[:19] for d in old))}…; this one is {', '.join(sorted(d[:19] for d in new))}…). "
                "Scores and outcomes agree; rebuild to re-stamp the evidence with this checker.")
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--check", action="store_true", help="rebuild in a temp dir and compare with the example (exit 1 on a difference)")
    group.add_argument("--report", nargs="?", const=str(HERE), metavar="DIR",
                       help="print what compare/gap should show on the evidence in DIR (default: this example)")
    parser.add_argument("--json", metavar="FILE", help="with --report: also write the figures as JSON")
    parser.add_argument("-q", "--quiet", action="store_true", help="do not list the oloproof commands as they run")
    parser.add_argument("--force", action="store_true", help="rebuild in place even if the log holds reads this build does not make")
    args = parser.parse_args(argv)
    try:
        import oloproof  # noqa: F401  (the recording runs `python -m oloproof`; the report uses its statistics)
    except ImportError:
        fail("needs oloproof installed in this Python (pip install -e . from the repository root)")
    if args.report:
        from builder.report import compute, render

        data = compute(Path(args.report))
        print(render(data))
        if args.json:
            Path(args.json).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        return 0
    extra = [] if args.check or args.force else foreign_reads(HERE)
    if extra:
        fail(f"evals/holdout/READS.log holds reads this build does not make ({'; '.join(extra)}); rebuilding would "
             "discard them. Copy the example elsewhere first, or pass --force")
    scratch = Path(tempfile.mkdtemp(prefix="prompt-holdout-build-"))
    try:
        target = scratch / "prompt-holdout"
        target.mkdir()
        build(target, quiet=args.quiet)
        if args.check:
            problems = compare_trees(target, HERE) + status_problems(HERE, scratch)
            note = checker_note(target, HERE) if not problems else None
            for problem in problems:
                print(f"check: {problem}", file=sys.stderr)
            if note:
                print(note)
            print("check: the example matches a fresh build" if not problems else f"check: {len(problems)} difference(s)")
            return 1 if problems else 0
        install(target)
        print(f"built the prompt-holdout example in {HERE}")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
