"""Benchmark of ``oloproof leakage check`` (SPEC §4): rows/s, ratio to parse-only, peak memory.

    python benchmarks/leakage.py                 # 2M and 20M rows; near and Spark at 2M; pandas if installed
    python benchmarks/leakage.py --sizes 2 --repeats 5 --no-pandas --no-spark

Generates (once, cached in --workdir) a training JSONL of 2 million rows with ten numeric and
string fields, and a 10,000-case test set with 100 known leaks (case and whitespace variants,
and 20 whose numbers differ below the rounding). Larger sizes repeat the 2M file, which keeps
the same leaks. Measures, in the same run and each in a fresh child process:

  (r) the read floor: read the file in 1 MiB blocks, in one process;
  (a) the JSONL parse floor: read the file and parse every line with orjson (the parser the
      check uses), in one process: ``for row in map(orjson.loads, file)``;
  (b) ``oloproof leakage check --round 3`` through the real CLI with ``--jobs 2``, and (b1)
      the same with ``--jobs 1``;
  (a-csv) the CSV parse floor: the same rows as CSV (dotted column names), every record read
      with ``csv.reader`` in one process; (b-csv) the check on the CSV file, ``--jobs 2`` and
      ``--jobs 1`` (ratios against (a-csv));
  (n) the same check with ``--near`` (the exact pass, then the near-duplicate pass over the
      ``note`` texts), ``--jobs 2`` and ``--jobs 1``, up to --near-max rows;
  (s) ``--engine spark --spark-master local[1]`` and ``local[2]`` (JVM start included), up to
      --spark-max rows, when pyspark and Java are installed;
  (c) the naive pandas approach (load, json_normalize, normalise columns, merge), when
      pandas is installed (``pip install pandas``; it is not a dependency of oloproof).

Prints medians of wall time and CPU time, rows/s, the ratios to (a) and peak memory: the
largest single process (ru_maxrss from wait4) and the whole process tree (sampled from
/proc every 20 ms). The machine may be shared: the load average is printed with the results.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

BASE_ROWS = 2_000_000
CASES = 10_000
LEAKS = 100
DIGITS = 3
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima")
EMPLOYMENT = ("salaried", "self-employed", "unemployed", "retired")
PURPOSE = ("home", "car", "education", "business")


# --------------------------------------------------------------------------- data


def _rows(n: int, seed: int, start: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    income = np.round(rng.uniform(5, 200, n), 3)
    debt = np.round(rng.uniform(0, 1, n), 4)
    loan = np.round(rng.uniform(1, 500, n), 2)
    history = rng.integers(0, 50, n)
    employment = rng.integers(0, 4, n)
    purpose = rng.integers(0, 4, n)
    words = rng.integers(0, len(WORDS), (n, 5))
    label = rng.integers(0, 2, n)
    for i in range(n):
        yield {
            "row": start + i,
            "features": {
                "age": int(age[i]),
                "income": float(income[i]),
                "debt_ratio": float(debt[i]),
                "loan_amount": float(loan[i]),
                "credit_history_years": int(history[i]),
                "employment": EMPLOYMENT[employment[i]],
                "purpose": PURPOSE[purpose[i]],
            },
            "note": " ".join(WORDS[j] for j in words[i]).capitalize() + f" #{start + i}",
            "label": int(label[i]),
        }


def generate(workdir: Path) -> tuple[Path, Path, list[str]]:
    """The 2M-row training file, the project (release.yaml + test set) and the leaked ids."""
    import numpy as np
    import orjson

    training = workdir / "training-2m.jsonl"
    project = workdir / "project"
    leaks_file = workdir / "leaks.json"
    if training.is_file() and leaks_file.is_file() and (project / "data" / "test.jsonl").is_file():
        return training, project, json.loads(leaks_file.read_text())
    print(f"generating {BASE_ROWS:,} training rows and {CASES:,} cases in {workdir} (once) …", flush=True)
    rng = np.random.default_rng(7)
    leak_rows = set(int(i) for i in rng.choice(BASE_ROWS, LEAKS, replace=False))
    leaked: dict[int, dict] = {}
    tmp = training.with_suffix(".tmp")
    with open(tmp, "wb") as handle:
        batch: list[bytes] = []
        for row in _rows(BASE_ROWS, seed=1):
            if row["row"] in leak_rows:
                leaked[row["row"]] = row
            batch.append(orjson.dumps(row))
            if len(batch) == 100_000:
                handle.write(b"\n".join(batch) + b"\n")
                batch.clear()
        if batch:
            handle.write(b"\n".join(batch) + b"\n")
    os.replace(tmp, training)

    cases = []
    for row in _rows(CASES - LEAKS, seed=2, start=10_000_000):  # other seed, other row numbers: no accidental match
        cases.append(
            {
                "id": f"fresh-{row['row']}",
                "features": row["features"],
                "note": row["note"],
                "expected": {"label": row["label"]},
            }
        )
    leak_ids = []
    for k, (number, row) in enumerate(sorted(leaked.items())):
        features = dict(row["features"])
        note = row["note"]
        if k % 5 == 0:
            note = "  " + note.upper().replace(" ", "   ") + " "  # case and whitespace
        elif k % 5 == 1:
            features["employment"] = features["employment"].upper()
        elif k % 5 == 2:
            features["income"] = round(features["income"] + 0.0002, 4)  # equal only after --round 3
        elif k % 5 == 3:
            features["age"] = float(features["age"])  # 41 == 41.0
        case_id = f"leak-{number}"
        leak_ids.append(case_id)
        cases.append({"id": case_id, "features": features, "note": note, "expected": {"label": row["label"]}})
    order = rng.permutation(len(cases))
    (project / "data").mkdir(parents=True, exist_ok=True)
    (project / "data" / "test.jsonl").write_bytes(b"".join(orjson.dumps(cases[i]) + b"\n" for i in order))
    (project / "release.yaml").write_text(
        "system: {version: bench}\ntestset: {cases: data/test.jsonl}\nleakage: required\n"
        "evaluators:\n  - {type: label_match, field: label}\npolicy:\n  rules:\n    - {id: accurate, criterion: "
        "correct, min: 0.5}\n"
    )
    leaks_file.write_text(json.dumps(sorted(leak_ids)))
    return training, project, sorted(leak_ids)


def sized(training: Path, rows: int) -> Path:
    """A training file of ``rows`` rows: a prefix of the 2M file, or copies of it."""
    if rows == BASE_ROWS:
        return training
    target = training.with_name(f"training-{rows}.jsonl")
    if target.is_file():
        return target
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        if rows < BASE_ROWS:
            with open(training, "rb") as source:
                for _, line in zip(range(rows), source, strict=False):
                    out.write(line)
        else:
            for _ in range(rows // BASE_ROWS):
                with open(training, "rb") as source:
                    shutil.copyfileobj(source, out, 16 << 20)
    os.replace(tmp, target)
    return target


CSV_COLUMNS = (
    "row",
    *(
        f"features.{key}"
        for key in ("age", "income", "debt_ratio", "loan_amount", "credit_history_years", "employment", "purpose")
    ),
    "note",
    "label",
)


def as_csv(training: Path) -> Path:
    """The same rows as CSV, dotted column names (the check reads ``features.age`` as the case key)."""
    import csv

    import orjson

    target = training.with_suffix(".csv")
    if target.is_file():
        return target
    tmp = target.with_suffix(".csv.tmp")
    with open(training, "rb") as source, open(tmp, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for line in source:
            row = orjson.loads(line)
            writer.writerow([row["row"], *row["features"].values(), row["note"], row["label"]])
    os.replace(tmp, target)
    return target


def sized_csv(csv_2m: Path, rows: int) -> Path:
    """``rows`` rows of CSV: copies of the 2M file's rows under one header."""
    if rows == BASE_ROWS:
        return csv_2m
    target = csv_2m.with_name(f"training-{rows}.csv")
    if target.is_file():
        return target
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as out:
        if rows < BASE_ROWS:
            with open(csv_2m, "rb") as source:
                for _, line in zip(range(rows + 1), source, strict=False):  # the header and ``rows`` rows
                    out.write(line)
        for copy in range(rows // BASE_ROWS):
            with open(csv_2m, "rb") as source:
                header = source.readline()
                if copy == 0:
                    out.write(header)
                shutil.copyfileobj(source, out, 16 << 20)
    os.replace(tmp, target)
    return target


# --------------------------------------------------------------------------- measuring


def _tree(pid: int) -> dict[int, tuple[int, int]]:
    """(PSS, or VmRSS where PSS is not available; VmHWM) in bytes of a process and all its descendants."""
    found: dict[int, tuple[int, int]] = {}
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            fields = {}
            with open(f"/proc/{current}/status") as status:
                for line in status:
                    if line.startswith(("VmRSS:", "VmHWM:")):
                        fields[line[:5]] = int(line.split()[1]) * 1024
            try:  # proportional set size: pages shared with forked workers count once over the tree
                with open(f"/proc/{current}/smaps_rollup") as rollup:
                    for line in rollup:
                        if line.startswith("Pss:"):
                            fields["VmRSS"] = int(line.split()[1]) * 1024
                            break
            except OSError:
                pass
            found[current] = (fields.get("VmRSS", 0), fields.get("VmHWM", 0))
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    stack.extend(int(child) for child in children.read().split())
        except (FileNotFoundError, ProcessLookupError, PermissionError, ValueError):
            continue
    return found


def measure(argv: list[str], *, cwd: Path | None = None) -> dict:
    """Run a child; wall, CPU (the child and its reaped children, from wait4), peak memory.

    Peak memory is sampled from /proc every 20 ms: ``maxrss`` is the largest VmHWM of any one
    process of the run (VmHWM is reset at exec, unlike wait4's ru_maxrss, which inherits the
    parent's size at fork), ``tree`` the largest sum over all its processes at once of their
    proportional set size (so pages a forked worker shares with its parent count once).
    """
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    peaks = {"maxrss": 0, "tree": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            tree = _tree(child.pid)
            if tree:
                peaks["tree"] = max(peaks["tree"], sum(rss for rss, _ in tree.values()))
                peaks["maxrss"] = max(peaks["maxrss"], *(hwm for _, hwm in tree.values()))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out = child.stdout.read()  # type: ignore[union-attr]
    err = child.stderr.read()  # type: ignore[union-attr]
    done.set()
    sampler.join()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    return {
        "wall": wall,
        "cpu": usage.ru_utime + usage.ru_stime,
        "maxrss": peaks["maxrss"],
        "tree": peaks["tree"],
        "exit": child.returncode,
        "stdout": out.decode(errors="replace"),
        "stderr": err.decode(errors="replace"),
    }


PARSE_ONLY = """
import sys, orjson
n = 0
with open(sys.argv[1], "rb") as handle:
    for row in map(orjson.loads, handle):
        n += 1
print(n)
"""

READ_ONLY = """
import sys
n = 0
with open(sys.argv[1], "rb", buffering=0) as handle:
    while block := handle.read(1 << 20):
        n += len(block)
print(n)
"""

CSV_PARSE_ONLY = """
import csv, sys
n = 0
with open(sys.argv[1], newline="", encoding="utf-8") as handle:
    for record in csv.reader(handle):
        n += 1
print(n)
"""

PANDAS = r"""
import sys, json, pandas as pd
training, cases_file, digits = sys.argv[1], sys.argv[2], int(sys.argv[3])
def prepare(frame):
    flat = pd.json_normalize(frame.to_dict("records"))
    cols = [c for c in flat.columns if c.startswith("features.")] + ["note"]
    flat = flat[[c for c in cols if c in flat.columns] + [c for c in ("id",) if c in flat.columns]]
    for c in cols:
        if pd.api.types.is_numeric_dtype(flat[c]):
            flat[c] = flat[c].astype(float).round(digits)
        else:
            flat[c] = flat[c].astype(str).str.lower().str.split().str.join(" ")
    return flat, cols
train, cols = prepare(pd.read_json(training, lines=True))
test, _ = prepare(pd.read_json(cases_file, lines=True))
merged = test.merge(train.drop_duplicates(subset=cols), on=cols, how="inner")
print(json.dumps(sorted(merged["id"].unique().tolist())))
"""


def run_parse(path: Path) -> dict:
    return measure([sys.executable, "-c", PARSE_ONLY, str(path)])


def run_read(path: Path) -> dict:
    return measure([sys.executable, "-c", READ_ONLY, str(path)])


def run_csv_parse(path: Path) -> dict:
    return measure([sys.executable, "-c", CSV_PARSE_ONLY, str(path)])


def run_check(project: Path, path: Path, jobs: int | None, out: Path, *more: str) -> dict:
    argv = [
        sys.executable,
        "-m",
        "oloproof",
        "leakage",
        "check",
        "--training",
        str(path),
        "--round",
        str(DIGITS),
        "--json",
        str(out),
        "-q",
    ]
    if jobs is not None:
        argv += ["--jobs", str(jobs)]
    result = measure([*argv, *more], cwd=project)
    if result["exit"] not in (0, 4):
        raise SystemExit(f"oloproof failed (exit {result['exit']}):\n{result['stderr']}")
    record = json.loads(out.read_text())
    result["found"] = record["leaked_ids"]
    result["near_ids"] = [case["id"] for case in (record.get("near") or {}).get("cases", [])]
    result["jobs"] = record.get("jobs")
    return result


def spark_ready() -> bool:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return False
    return shutil.which("java") is not None


def run_pandas(project: Path, path: Path) -> dict | None:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return None
    result = measure([sys.executable, "-c", PANDAS, str(path), str(project / "data" / "test.jsonl"), str(DIGITS)])
    if result["exit"] != 0:
        print(f"pandas run failed (exit {result['exit']}): {result['stderr'][-400:]}")
        return None
    result["found"] = json.loads(result["stdout"].strip().splitlines()[-1])
    return result


def expected_leaks(leaks: list[str], rows: int) -> list[str]:
    """The leaks a file of ``rows`` rows holds (a prefix of the 2M file holds only its own)."""
    return sorted(leak for leak in leaks if rows >= BASE_ROWS or int(leak.split("-")[1]) < rows)


# --------------------------------------------------------------------------- report


def _mb(value: float) -> str:
    return f"{value / 1e6:,.0f} MB"


def summarise(label: str, runs: list[dict], rows: int, floor: dict | None) -> dict:
    wall = statistics.median(run["wall"] for run in runs)
    cpu = statistics.median(run["cpu"] for run in runs)
    row = {
        "method": label,
        "rows": rows,
        "wall_s": wall,
        "cpu_s": cpu,
        "rows_per_s": rows / wall,
        "maxrss": max(run["maxrss"] for run in runs),
        "tree_rss": max(run["tree"] for run in runs),
        "runs": len(runs),
    }
    if floor is not None:
        row["ratio_wall"] = wall / floor["wall_s"]
        row["ratio_cpu"] = cpu / floor["cpu_s"]
    return row


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'method':<40} {'rows':>11} {'wall s':>8} {'cpu s':>8} {'rows/s':>11} {'/a wall':>8} {'/a cpu':>8} "
        f"{'peak RSS':>10} {'tree RSS':>10}"
    )
    print(head)
    print("-" * len(head))
    for row in rows:
        ratio_wall = f"{row['ratio_wall']:.2f}" if "ratio_wall" in row else "-"
        ratio_cpu = f"{row['ratio_cpu']:.2f}" if "ratio_cpu" in row else "-"
        print(
            f"{row['method']:<40} {row['rows']:>11,} {row['wall_s']:>8.2f} {row['cpu_s']:>8.2f} "
            f"{row['rows_per_s']:>11,.0f} "
            f"{ratio_wall:>8} {ratio_cpu:>8} {_mb(row['maxrss']):>10} {_mb(row['tree_rss']):>10}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="2,20", help="training sizes in millions of rows (default: %(default)s)")
    parser.add_argument(
        "--repeats", type=int, default=3, help="runs per method at sizes up to 2M (medians; larger sizes run once)"
    )
    parser.add_argument(
        "--workdir", default=str(Path(tempfile.gettempdir()) / "oloproof-bench-leakage"), help="where data is cached"
    )
    parser.add_argument("--no-pandas", action="store_true", help="skip (c)")
    parser.add_argument("--no-spark", action="store_true", help="skip (s)")
    parser.add_argument(
        "--near-max", type=float, default=2, help="(n) at sizes up to this many million rows (default: %(default)s)"
    )
    parser.add_argument(
        "--spark-max", type=float, default=2, help="(s) at sizes up to this many million rows (default: %(default)s)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated files larger than 2M rows")
    parser.add_argument(
        "--pandas-rows", type=float, default=2, help="size for (c), millions of rows (default: %(default)s)"
    )
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args()

    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    training, project, leaks = generate(workdir)
    out = workdir / "result.json"
    sizes = [int(float(size) * 1_000_000) for size in args.sizes.split(",")]
    results: list[dict] = []
    correct = True
    one_row = sized(training, 1)
    startup = [run_check(project, one_row, 1, out) for _ in range(args.repeats)]
    results.append(summarise("(b0) fixed cost: check 1 row", startup, 1, None))
    csv_2m = as_csv(training)
    spark = not args.no_spark and spark_ready()
    for rows in sizes:
        path = sized(training, rows)
        csv_path = sized_csv(csv_2m, rows)
        repeats = args.repeats if rows <= BASE_ROWS else 1
        near = rows <= args.near_max * 1_000_000
        in_spark = spark and rows <= args.spark_max * 1_000_000
        print(
            f"{rows:,} rows (JSONL {path.stat().st_size / 1e6:,.0f} MB, CSV {csv_path.stat().st_size / 1e6:,.0f} MB): "
            f"{repeats} run(s) of each …",
            flush=True,
        )
        runs: dict[str, list[dict]] = collections.defaultdict(list)
        for _ in range(repeats):  # interleaved, so load on a shared machine hits all methods alike
            runs["r"].append(run_read(path))
            runs["a"].append(run_parse(path))
            runs["b"].append(run_check(project, path, 2, out))
            runs["b1"].append(run_check(project, path, 1, out))
            runs["a-csv"].append(run_csv_parse(csv_path))
            runs["b-csv"].append(run_check(project, csv_path, 2, out))
            runs["b1-csv"].append(run_check(project, csv_path, 1, out))
            if near:
                runs["n"].append(run_check(project, path, 2, out, "--near"))
                runs["n1"].append(run_check(project, path, 1, out, "--near"))
            if in_spark:
                for master in ("local[1]", "local[2]"):
                    runs[master].append(
                        run_check(project, path, None, out, "--engine", "spark", "--spark-master", master)
                    )
        expected = expected_leaks(leaks, rows)
        for key, found in runs.items():
            for run in found:
                if "found" in run and sorted(run["found"]) != expected:
                    correct = False
                    print(f"  WRONG ({key}): found {len(run['found'])} leaks, expected {len(expected)}")
        near_sets = {json.dumps(run["near_ids"]) for key in ("n", "n1") for run in runs.get(key, [])}
        if len(near_sets) > 1:
            correct = False
            print("  WRONG: the near pass found different cases with --jobs 1 and --jobs 2")
        floor = summarise("(a) read + orjson parse", runs["a"], rows, None)
        csv_floor = summarise("(a-csv) read + csv.reader", runs["a-csv"], rows, None)
        results.append(summarise("(r) read only", runs["r"], rows, floor))
        results.append(floor)
        results.append(summarise("(b) check JSONL --jobs 2", runs["b"], rows, floor))
        results.append(summarise("(b1) check JSONL --jobs 1", runs["b1"], rows, floor))
        results.append(csv_floor)
        results.append(summarise("(b-csv) check CSV --jobs 2", runs["b-csv"], rows, csv_floor))
        results.append(summarise("(b1-csv) check CSV --jobs 1", runs["b1-csv"], rows, csv_floor))
        if near:
            n_found = len(runs["n"][0]["near_ids"])
            results.append(summarise(f"(n) --near --jobs 2 ({n_found} near)", runs["n"], rows, floor))
            results.append(summarise(f"(n1) --near --jobs 1 ({n_found} near)", runs["n1"], rows, floor))
        if in_spark:
            for master in ("local[1]", "local[2]"):
                results.append(summarise(f"(s) spark {master}", runs[master], rows, floor))
    if not args.no_pandas:
        rows = int(args.pandas_rows * 1_000_000)
        path = sized(training, rows)
        print(f"(c) pandas at {rows:,} rows …", flush=True)
        floor = next((row for row in results if row["rows"] == rows and row["method"].startswith("(a)")), None)
        pandas_run = run_pandas(project, path)
        if pandas_run is None:
            print("  (c) skipped: pandas is not installed (pip install pandas), or it failed (above)")
        else:
            expected = expected_leaks(leaks, rows)
            if sorted(pandas_run["found"]) != expected:
                print(f"  pandas found {len(pandas_run['found'])} of {len(expected)} leaks")
            results.append(summarise("(c) pandas json_normalize + merge", [pandas_run], rows, floor))
    load = os.getloadavg()
    print()
    print_table(results)
    print(
        f"\nleaks found by every check run (local, near and Spark, each compared with the planted ones): "
        f"{'all ' + str(len(leaks)) + ', no others' if correct else 'WRONG (see above)'}; "
        f"CPUs {os.cpu_count()}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print(
        "ratios are against (a) at the same size, the CSV check's against (a-csv), measured in the same run; tree RSS "
        "sums every process of the run"
    )
    if not args.keep:
        for rows in sizes:
            if rows > BASE_ROWS:
                sized(training, rows).unlink(missing_ok=True)
                sized_csv(csv_2m, rows).unlink(missing_ok=True)
    if args.json:
        Path(args.json).write_text(
            json.dumps({"results": results, "leaks_correct": correct, "loadavg": load}, indent=2)
        )
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
