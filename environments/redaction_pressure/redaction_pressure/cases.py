"""The case files Oloproof gates on, written from the splits (and checked by a test).

    python -m redaction_pressure.cases             # writes data/dev.jsonl (committed)
    python -m redaction_pressure.cases --private   # writes evals/holdout/private_eval.jsonl (needs the secret)
    python -m redaction_pressure.cases --check     # exit 0 only if the secret is the one that file was written for
                                                   # and the gate's `python` (on PATH) can run the system

A case is ``{"id", "split", "index", "expected": {"clean": true}}``: the system receives
``{"id", "split", "index"}`` (Oloproof never shows it ``expected``), and ``expected`` states the
clean gate every episode should pass, for the ``label_match`` evaluator on ``clean``. A private
case also names the secret's ``commitment``, so the holdout set's digest is bound to one secret:
a wrong secret makes the system refuse the batch instead of scoring other tasks under the same
set digest, and a new secret is a new holdout set with its own budget. Private cases take indices
from ``HOLDOUT_START`` (500,000) on, which Verifiers' ``private_eval`` split refuses to serve: the
holdout is read only through ``oloproof holdout run``, metered in READS.log. Neither file holds a seed
or a record; a private case's content exists only where ``REDACTION_PRESSURE_PRIVATE_SEED`` is set.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from redaction_pressure.splits import (
    HOLDOUT_START,
    PRIVATE_SPLIT,
    PUBLIC_SPLITS,
    SECRET_ENV,
    PrivateSeedError,
    TaskRef,
    read_secret,
    secret_commitment,
)

ROOT = Path(__file__).resolve().parent.parent
DEV_FILE = ROOT / "data" / "dev.jsonl"
PRIVATE_FILE = ROOT / "evals" / "holdout" / "private_eval.jsonl"
PRIVATE_CASES = 64


def case_lines(split: str, count: int, *, commitment: str | None = None, start: int = 0) -> str:
    lines = []
    for index in range(start, start + count):
        ref = TaskRef(split=split, index=index)
        case: dict[str, object] = {"id": ref.id, "split": split, "index": index}
        if split == PRIVATE_SPLIT:
            case["commitment"] = commitment
        case["expected"] = {"clean": True}
        lines.append(json.dumps(case) + "\n")
    return "".join(lines)


def dev_cases() -> str:
    return case_lines("dev", PUBLIC_SPLITS["dev"].size)


def private_cases(secret: str) -> str:
    # Oloproof's holdout range: disjoint from what Verifiers' private_eval split can serve.
    return case_lines(PRIVATE_SPLIT, PRIVATE_CASES, commitment=secret_commitment(secret), start=HOLDOUT_START)


def gate_interpreter() -> str:
    """The interpreter the gate runs the system with: the first word of release.yaml's
    ``system.command`` (``python``), looked up on PATH as Oloproof will."""
    release = ROOT / "release.yaml"
    found = re.search(r"^system:\n(?:[ \t]+.*\n)*?[ \t]+command:[ \t]*(\S+)", release.read_text(encoding="utf-8"), re.M) if release.is_file() else None
    return found.group(1) if found else "python"


def interpreter_problem() -> str | None:
    """Why the gate's interpreter cannot run the system, or None. A read whose system fails
    still counts, so this is checked before every holdout read (``--check``)."""
    word = gate_interpreter()
    path = shutil.which(word)
    if path is None:
        return (f"`{word}` (release.yaml's system.command) is not on PATH: Oloproof would run the system with its own "
                "interpreter instead; put the interpreter you mean first on PATH")
    probe = "import platform, regex, redaction_pressure.system; print(platform.python_version(), regex.__version__)"
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV}
    try:
        done = subprocess.run([path, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"the gate's interpreter {path} did not run ({exc})"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        return f"the gate's interpreter {path} cannot run the system ({last})"
    return None


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args not in ([], ["--private"], ["--check"]):
        print("usage: python -m redaction_pressure.cases [--private | --check]", file=sys.stderr)
        return 2
    if not args:
        write_atomically(DEV_FILE, dev_cases())
        print(f"wrote {DEV_FILE.relative_to(ROOT)}", file=sys.stderr)
        return 0
    try:
        text = private_cases(read_secret())
    except PrivateSeedError as exc:
        print(f"redaction_pressure.cases: {exc}", file=sys.stderr)
        return 2
    if args == ["--check"]:
        # Before `oloproof holdout run`: a read whose system fails still counts against the budget.
        problem = interpreter_problem()
        if problem is not None:
            print(f"redaction_pressure.cases: {problem}; a read now would fail and still count", file=sys.stderr)
            return 2
        if not PRIVATE_FILE.exists():
            print(f"redaction_pressure.cases: {PRIVATE_FILE.relative_to(ROOT)} does not exist; write it with --private", file=sys.stderr)
            return 2
        if PRIVATE_FILE.read_text(encoding="utf-8") != text:
            print(
                f"redaction_pressure.cases: {SECRET_ENV} is not the secret {PRIVATE_FILE.relative_to(ROOT)} was written for "
                "(or the file was edited); a read now would fail and still count", file=sys.stderr,
            )
            return 2
        print(
            f"ok: {PRIVATE_FILE.relative_to(ROOT)} matches {SECRET_ENV} (commitment {secret_commitment(read_secret())}); "
            f"the gate's `{gate_interpreter()}` is {shutil.which(gate_interpreter())} and runs the system", file=sys.stderr,
        )
        return 0
    if PRIVATE_FILE.exists() and PRIVATE_FILE.read_text(encoding="utf-8") != text:
        print(
            f"redaction_pressure.cases: {PRIVATE_FILE.relative_to(ROOT)} exists for another secret; a new secret is a new "
            "holdout set: move that file and its READS.log away first (it is never overwritten)", file=sys.stderr,
        )
        return 2
    write_atomically(PRIVATE_FILE, text)
    print(f"wrote {PRIVATE_FILE.relative_to(ROOT)} ({PRIVATE_CASES} cases, commitment {secret_commitment(read_secret())})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
