"""Every subcommand once, through an installed ``oloproof`` console script (a wheel, or the image).

Run as a script by the interpreter of the install under test, so it imports nothing of oloproof
itself (and nothing but the standard library)::

    BIN/python tests/install/smoke.py BIN WORKDIR

BIN is the folder holding that install's ``python`` and ``oloproof``; WORKDIR an empty folder to
work in. Each step runs the console script in its own process, from a folder outside any source
tree, and must end with the exit code a user of the examples gets (their READMEs say which);
nothing may print a traceback. The script prints one line per step and, last, a JSON line with
where ``oloproof`` was imported from and the checker's identity, for the caller to compare with
the source tree's. Exit 0 when every step held, 1 otherwise (every failing step is listed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# (folder under WORKDIR to run in, arguments, the exit code expected)
STEPS: tuple[tuple[str, tuple[str, ...], int], ...] = (
    (".", ("--version",), 0),
    (".", ("init", "--list"), 0),
    (".", ("init", "--example", "model-validation", "mv"), 0),
    ("mv", ("gate",), 3),  # leakage: required and not yet checked: BLOCKED
    ("mv", ("leakage", "check", "--training", "data/training.jsonl", "--record"), 0),
    ("mv", ("gate", "--json", "gate.json", "--junit", "gate.xml", "--markdown", "gate.md"), 4),
    ("mv", ("seeds", "seeds.yaml", "--policy", "recipe.yaml", "--html", "seeds.html"), 0),
    ("mv", ("seeds", "seeds.yaml", "--policy", "recipe-strict.yaml"), 5),
    ("mv", ("metamorphic", "show"), 0),
    ("mv", ("runs",), 0),
    ("mv", ("run",), 0),
    ("mv", ("compare", "version:seed_1", "version:seed_2"), 0),
    ("mv/image", ("gate",), 1),
    ("mv/image", ("leakage", "check", "--training", "data/training.jsonl"), 4),
    (".", ("init", "--example", "classifier", "cl"), 0),
    ("cl", ("leakage", "check", "--training", "data/training.jsonl", "--record"), 0),
    ("cl", ("gate", "-v"), 0),
    (".", ("init", "--example", "prompt-holdout", "ph"), 0),
    ("ph", ("gate",), 0),
    ("ph", ("compare", "version:extract-v1", "version:extract-v6"), 0),
    ("ph", ("gap", "--baseline", "version:extract-v1"), 0),
    ("ph", ("holdout", "status"), 0),
    ("ph", ("holdout", "size", "--delta", "0.03333"), 0),
    (".", ("init", "--example", "redaction-pressure", "rp"), 0),  # the sub-project, from oloproof/environments/
    ("rp", ("gate",), 1),  # the baseline rule-writer: FAIL (its README shows the table)
    (".", ("schema", "release", "-o", "release.schema.json"), 0),
    (".", ("schema", "policy"), 0),
    (".", ("completion", "bash"), 0),
    (".", ("gate", "--config", "missing.yaml"), 2),
)
TIMEOUT_S = 300


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: smoke.py BIN WORKDIR", file=sys.stderr)
        return 2
    bin_dir, work = Path(argv[1]), Path(argv[2])
    work.mkdir(parents=True, exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"  # the example systems run `python`
    env["COLUMNS"] = "200"
    failures = []
    for folder, args, expected in STEPS:
        shown = "oloproof " + " ".join(args)
        done = subprocess.run(
            [str(bin_dir / "oloproof"), *args],
            cwd=work / folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            check=False,
        )
        output = done.stdout + done.stderr
        problem = ""
        if done.returncode != expected:
            problem = f"exit {done.returncode}, expected {expected}"
        elif "Traceback" in output:
            problem = "printed a traceback"
        print(f"{'ok  ' if not problem else 'FAIL'} [{folder}] {shown}: exit {done.returncode}")
        if problem:
            failures.append(f"[{folder}] {shown}: {problem}\n{output[-2000:]}")
    identity = subprocess.run(
        [
            str(bin_dir / "python"),
            "-c",
            "import json, oloproof, oloproof.identity as i; "
            "print(json.dumps({'file': oloproof.__file__, **i.checker_identity().to_json()}))",
        ],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    for failure in failures:
        print(failure, file=sys.stderr)
    print(identity.stdout.strip() or json.dumps({"error": identity.stderr[-2000:]}))
    return 1 if failures or identity.returncode else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
