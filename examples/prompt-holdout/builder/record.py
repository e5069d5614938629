"""Recording the six weeks with the real ``oloproof`` command line.

Every run and every holdout read of the example is made by ``python -m oloproof`` in a child
process, exactly as the team would have typed it: ``oloproof run`` for the release candidate of
release.yaml, ``oloproof run --command ... --version ...`` for each variant tried, and
``oloproof holdout run --reason ...`` for the three reads. Nothing under ``.oloproof/`` or in
READS.log is written by this script.

The child processes get a clean environment, so the evidence does not depend on who builds it:
no ``GITHUB_*`` or ``GIT_*`` variables, no global or system git configuration, and git may not
look for a repository above the build directory. A read's ``who`` is therefore ``$USER`` (set
to the reader of the chapter's timeline) and its ``commit`` is ``unknown``.

Time: oloproof records the time of each run and read as it happens, and its library offers no
way to record another (``oloproof.holdout.read_holdout`` takes no clock; ``oloproof.run.execute``
neither). The evidence is therefore dated when the build runs, in the timeline's order. The
script waits a little over a second around each read so that a read's time (to the second) is
never ambiguous against the runs before and after it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from builder.prompts import LINEAGE, READ_AFTER, command

READERS = {0: "alice", 15: "alice", 30: "bob"}  # iteration after which the holdout is read -> who reads it
REASONS = {
    0: "week-0 baseline, before any tuning",
    15: "week-3 check of the current prompt",
    30: "week-6 release candidate",
}
SETTLE_S = 1.1  # more than the one-second resolution of a read's time

RELEASE_TEMPLATE = """\
# The gate for the governing-law extractor (see README.md in this folder).
# Schema for editors: `oloproof schema release` (or docs/schema/release.schema.json).
system:
  version: {version}
  command: {command}
  timeout_s: 120
testset:
  cases: data/dev.jsonl            # the dev set: every accept-or-reject decision was made on it
evaluators:
  - {{type: label_match, field: clause}}   # criterion `correct`: the answer equals expected.clause
policy: policy.yaml
holdout: {{cases: evals/holdout/cases.jsonl, budget: 20, log: evals/holdout/READS.log}}
"""


def release_yaml(version: str) -> str:
    return RELEASE_TEMPLATE.format(version=version, command=command(version))


def clean_environment(workdir: Path, home: Path, user: str) -> dict[str, str]:
    """The environment of every oloproof call: the caller's minus anything that names a person,
    a repository or a CI run."""
    private = ("GITHUB_", "GIT_", "INPUT_", "ACTIONS_", "RUNNER_", "OLOPROOF_")
    personal = ("CI", "USER", "LOGNAME", "USERNAME", "HOME")
    env = {name: value for name, value in os.environ.items() if not name.startswith(private) and name not in personal}
    env.update({
        "HOME": str(home), "USER": user, "LOGNAME": user,
        "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CEILING_DIRECTORIES": str(workdir.parent),  # never find a repository above the build
        "PYTHONHASHSEED": "0", "TZ": "UTC", "NO_COLOR": "1", "COLUMNS": "200",
    })
    return env


@dataclass
class Recorder:
    workdir: Path
    home: Path
    log: list[str]
    quiet: bool = False

    def oloproof(self, args: Sequence[str], *, user: str = "alice", expect: int = 0) -> str:
        argv = [sys.executable, "-m", "oloproof", *args]
        proc = subprocess.run(argv, cwd=self.workdir, env=clean_environment(self.workdir, self.home, user),
                              capture_output=True, text=True, timeout=600, check=False)
        shown = "oloproof " + " ".join(_quote(a) for a in args)
        if proc.returncode != expect:
            raise SystemExit(f"build: `{shown}` exited {proc.returncode} (expected {expect})\n{proc.stdout}{proc.stderr}")
        self.log.append(f"$ {shown}\n{proc.stdout}")
        if not self.quiet:
            print(f"  $ {shown}", file=sys.stderr)
        return proc.stdout

    def write_release(self, version: str) -> None:
        (self.workdir / "release.yaml").write_text(release_yaml(version), encoding="utf-8")

    def run(self, version: str, *, candidate: bool) -> None:
        if candidate:
            self.oloproof(["run", "-q", "--command", command(version), "--version", version])
        else:
            self.oloproof(["run", "-q"])

    def read(self, after: int) -> None:
        time.sleep(SETTLE_S)
        self.oloproof(["holdout", "run", "-q", "--reason", REASONS[after]], user=READERS[after])
        time.sleep(SETTLE_S)


def record_six_weeks(recorder: Recorder) -> None:
    """Week 0: run extract-v1 and read the holdout once. Then thirty iterations, each run on the dev
    set; each round's keeper becomes system.version; the holdout is read at weeks 3 and 6."""
    recorder.write_release("extract-v1")
    recorder.run("extract-v1", candidate=False)
    recorder.read(0)
    for iteration in LINEAGE:
        if iteration.major:
            recorder.write_release(iteration.version)
            recorder.run(iteration.version, candidate=False)
        else:
            recorder.run(iteration.version, candidate=True)
        if iteration.number in READ_AFTER:
            recorder.read(iteration.number)


def _quote(arg: str) -> str:
    return f'"{arg}"' if (" " in arg or not arg) else arg
