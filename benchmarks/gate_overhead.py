"""The gate's own cost per case, and CLI start-up time.

One command: ``python benchmarks/gate_overhead.py [--sizes 1000 10000 100000] [--repeat 5]``
CI's check: ``python benchmarks/gate_overhead.py --check benchmarks/recorded.json`` runs the size
recorded there and exits 1 when the gate/floor ratio is more than twice the recorded one.

For each size it builds a project whose outputs are imported (so no system time is
counted), then times ``oloproof gate`` in-process reusing that run: loading release.yaml,
the test set and the run's outputs, evaluating and deciding. The baseline measured in the
same run is the bare cost of reading and JSON-parsing the test set and the outputs with
orjson — the floor any gate must pay. Start-up is ``oloproof --version`` in a fresh
interpreter against ``python -c pass``. Medians are printed; the machines are shared and
noisy, so compare ratios, not absolute times.

Gate and floor are timed in alternation (gate, floor, gate, floor...) so a burst of load elsewhere
on the machine falls on both; the ratio printed is the median of the per-pair ratios.

Targets (issue 20): <= 5 µs per case at 100k, linear to 1M; start-up <= 30 ms over bare Python.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

RELEASE = """\
system:
  version: bench
testset:
  cases: data/test.jsonl
evaluators:
  - {type: label_match, field: label}
policy:
  rules:
    - {id: accurate, criterion: correct, min: 0.8}
    - {id: not_too_good, criterion: correct, max: 0.99}
"""


def build(root: Path, n: int) -> None:
    (root / "data").mkdir(parents=True)
    with open(root / "data" / "test.jsonl", "wb") as cases, open(root / "preds.jsonl", "wb") as preds:
        for i in range(n):
            case_id = f"case-{i:07d}"
            label = i % 2
            features = {"income": 20.0 + i % 97, "debt_ratio": (i % 13) / 13, "purpose": "car"}
            cases.write(orjson.dumps({"id": case_id, "features": features, "expected": {"label": label}}) + b"\n")
            preds.write(orjson.dumps({"id": case_id, "label": label if i % 10 else 1 - label, "score": 0.5}) + b"\n")
    (root / "release.yaml").write_text(RELEASE)


def floor(root: Path) -> float:
    started = time.perf_counter()
    for name in ("data/test.jsonl", "preds.jsonl"):
        with open(root / name, "rb") as handle:
            for line in handle:
                orjson.loads(line)
    return time.perf_counter() - started


def gate_once(root: Path) -> float:
    from oloproof.config import load_release
    from oloproof.gate import run_gate

    started = time.perf_counter()
    result = run_gate(load_release(root / "release.yaml"), run_ref="version:bench")
    elapsed = time.perf_counter() - started
    assert result.rules, "the gate decided nothing"
    return elapsed


def startup(repeat: int) -> tuple[float, float]:
    def timed(argv: list[str]) -> float:
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        return time.perf_counter() - started

    bare = statistics.median(timed([sys.executable, "-c", "pass"]) for _ in range(repeat))
    cli = statistics.median(timed([sys.executable, "-m", "oloproof", "--version"]) for _ in range(repeat))
    return bare, cli


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--check", type=Path, help="recorded figures (JSON): fail if the ratio exceeds twice them")
    parser.add_argument("--no-startup", action="store_true", help="skip the start-up measurement")
    args = parser.parse_args()
    recorded: dict[str, float] | None = None
    if args.check is not None:
        recorded = orjson.loads(args.check.read_bytes())
        args.sizes = [int(recorded["size"])]
    from oloproof.cli.main import main as cli

    print(
        f"{'cases':>8} {'gate median':>12} {'µs/case':>9} {'floor (parse)':>14} {'overhead µs/case':>17} "
        f"{'gate/floor':>11}"
    )
    per_case: list[float] = []
    for n in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            build(root, n)
            assert (
                cli(
                    [
                        "run",
                        "-c",
                        str(root / "release.yaml"),
                        "--outputs",
                        str(root / "preds.jsonl"),
                        "--version",
                        "bench",
                        "-q",
                    ]
                )
                == 0
            )
            gate_once(root)  # warm caches and lazy imports
            gates, floors = [], []
            for _ in range(args.repeat):
                gates.append(gate_once(root))
                floors.append(floor(root))
        gate, base = statistics.median(gates), statistics.median(floors)
        ratio = statistics.median(g / f for g, f in zip(gates, floors, strict=True))
        overhead = (gate - base) / n * 1e6
        per_case.append(gate / n * 1e6)
        print(f"{n:>8} {gate:>11.3f}s {gate / n * 1e6:>9.2f} {base:>13.3f}s {overhead:>17.2f} {ratio:>10.2f}x")
    if recorded is not None:
        limit = 2 * float(recorded["gate_floor_ratio"])
        verdict = "ok" if ratio <= limit else "REGRESSION"
        print(
            f"check: gate/floor {ratio:.2f}x at {n} cases; recorded {recorded['gate_floor_ratio']}x, "
            f"limit {limit:.2f}x: {verdict}"
        )
        raise SystemExit(0 if ratio <= limit else 1)
    if len(per_case) > 1:
        print(
            f"growth: µs/case at the largest size is {per_case[-1] / per_case[0]:.2f}x that at the smallest (1.0x = "
            f"linear)"
        )
    if args.no_startup:
        return
    bare, cli_time = startup(max(args.repeat, 7))
    print(
        f"start-up: `oloproof --version` {cli_time:.3f}s median vs `python -c pass` {bare:.3f}s "
        f"({cli_time - bare:.3f}s of oloproof)"
    )


if __name__ == "__main__":
    main()
