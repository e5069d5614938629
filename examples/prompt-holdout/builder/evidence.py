"""Reading the example's evidence back: the dev runs, READS.log and the holdout outcome records.

Read straight from the files in their documented formats (docs/runs.md, docs/holdout.md), so
``build.py --check`` and ``--report`` look at exactly what a user gets after ``oloproof init``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class DevRun:
    run_id: str
    version: str
    created_ns: int
    started_at: str
    command: str | None
    status: str
    testset_digest: str
    config_digest: str
    checker: dict[str, str]
    outputs: dict[str, Any]  # case id -> the output's clause

    def correct(self, cases: list[dict[str, Any]]) -> list[bool]:
        """Per dev case (file order): the output equals expected.clause (a missing output is wrong)."""
        return [case["id"] in self.outputs and self.outputs[case["id"]] == case["expected"]["clause"] for case in cases]


@dataclass(frozen=True)
class HoldoutRead:
    seq: int
    when: str
    who: str
    commit: str
    version: str
    set_digest: str
    score: str
    reason: str
    fields: dict[str, str]  # every field of the log entry, as written
    record: dict[str, Any]  # its outcome record


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def dev_runs(root: Path) -> list[DevRun]:
    """Every recorded run, oldest first (as `oloproof runs` orders them)."""
    runs: list[DevRun] = []
    folder = root / ".oloproof" / "runs"
    for meta in sorted(folder.glob("*/run.json")):
        data = json.loads(meta.read_text(encoding="utf-8"))
        outputs = {row["id"]: row.get("clause") for row in load_jsonl(meta.parent / "outputs.jsonl")}
        runs.append(DevRun(
            run_id=data["run_id"], version=data["version"], created_ns=int(data["created_ns"]), started_at=data["started_at"],
            command=data["command"], status=data["status"], testset_digest=data["testset"]["digest"],
            config_digest=data["config_digest"], checker=data["checker"], outputs=outputs,
        ))
    runs.sort(key=lambda run: (run.created_ns, run.run_id))
    return runs


def _split_fields(line: str) -> list[str]:
    """Split a log line on ' | ' outside quoted strings (docs/holdout.md, "Text fields")."""
    parts: list[str] = []
    current: list[str] = []
    quoted = escaped = False
    i = 0
    while i < len(line):
        ch = line[i]
        if quoted:
            current.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                quoted = False
        elif line.startswith(" | ", i):
            parts.append("".join(current))
            current = []
            i += 3
            continue
        else:
            current.append(ch)
            quoted = ch == '"'
        i += 1
    parts.append("".join(current))
    return parts


def _text(value: str) -> str:
    return json.loads(value) if value.startswith('"') else value


def holdout_reads(root: Path, log: str = "evals/holdout/READS.log") -> list[HoldoutRead]:
    """Every read entry of the log with its outcome record, in log order."""
    records = {}
    for file in sorted((root / ".oloproof" / "holdout").glob("read-*.json")):
        data = json.loads(file.read_text(encoding="utf-8"))
        records[data["entry_hash"]] = data
    reads: list[HoldoutRead] = []
    for line in (root / log).read_text(encoding="utf-8").splitlines():
        if not line.startswith("read "):
            continue
        parts = _split_fields(line)
        fields = {"head": parts[0], "when": parts[1]}
        for part in parts[2:]:
            key, _, value = part.partition("=")
            fields[key] = value
        reads.append(HoldoutRead(
            seq=int(parts[0].split()[1]), when=parts[1], who=_text(fields["who"]), commit=_text(fields["commit"]),
            version=_text(fields["version"]), set_digest=fields["set"], score=fields["score"], reason=_text(fields["reason"]),
            fields=fields, record=records[fields["hash"]],
        ))
    return reads


def canonical_keys(cases_file: Path) -> dict[str, str]:
    """Case id -> SHA-256 (hex) of its canonical line: the order of an outcome record's vector."""
    from oloproof.jsonl import dumps_line

    return {case["id"]: hashlib.sha256(dumps_line(case)).hexdigest() for case in load_jsonl(cases_file)}


def aligned_outcomes(record: dict[str, Any], cases: list[dict[str, Any]], keys: dict[str, str]) -> list[bool | None]:
    """A read's outcomes in the order of ``cases`` (file order), from the record's content order."""
    order = sorted(range(len(cases)), key=lambda i: keys[cases[i]["id"]])
    values: list[bool | None] = [None] * len(cases)
    for position, index in enumerate(order):
        value = record["outcomes"][position]
        values[index] = None if value is None else bool(value)
    return values
