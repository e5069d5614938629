"""The JSON report of ``oloproof gate`` (schema ``oloproof.gate/1``, docs/report-json.md).

Scripts read this instead of terminal text. Additive changes keep the schema name; a
change that removes or renames a field bumps it.
"""

from __future__ import annotations

from typing import Any

import orjson

from oloproof.measures.registry import measure_of
from oloproof.result import GATE_SCHEMA, GateResult


def to_json(result: GateResult) -> dict[str, Any]:
    import numpy as np  # lazy: start-up

    release, testset, run = result.release, result.testset, result.run
    criteria: dict[str, Any] = {}
    all_ids = [case.id for case in testset.cases]
    for name, outcome in result.outcomes.items():
        values = outcome.values
        ids = list(outcome.case_ids) if outcome.case_ids is not None else all_ids  # a transform's changed cases only
        missing = np.isnan(values)
        counted = measure_of(outcome.kind).proportion  # a 0 is a failure only where values are rates
        criteria[name] = {
            "kind": outcome.kind,
            "n": int(values.size),
            "missing": int(missing.sum()),
            "missing_ids": [ids[i] for i in np.flatnonzero(missing)],
            "failed_ids": [ids[i] for i in np.flatnonzero(values == 0.0)] if counted else [],
            "reasons": list(outcome.reasons),
            "notes": dict(outcome.notes),
            "details": dict(outcome.details),
        }
    return {
        "schema": GATE_SCHEMA,
        "verdict": result.verdict.value,
        "exit_code": int(result.verdict.exit_code),
        "generated_at": result.generated_at,
        "checker": result.checker.to_json(),
        "config": {"path": release.path, "digest": release.digest},
        "system": {
            "version": result.version,
            "declared_version": release.system.version,
            "command": release.system.command_text,
        },
        "testset": {
            "set": "dev",
            "path": testset.path,
            "digest": testset.digest,
            "n_cases": len(testset),
            "has_groups": testset.has_groups,
        },
        "policy": {
            "confidence": release.policy.confidence,
            "allow_approximate_methods": release.policy.allow_approximate_methods,
            "rules_allowing_approximate": [  # the seeds recipe rule too: it is decided like the others
                rule.id
                for rule in (*release.policy.rules, *([release.seeds.rule] if release.seeds is not None else []))
                if rule.approximate == "allow"
            ],
            "source": release.policy.source,
        },
        "run": None
        if run is None
        else {
            "run_id": run.run_id,
            "version": run.version,
            "status": run.status,
            "reused": result.run_reused,
            "failure": run.failure,
            "n_cases": run.n_cases,
            "n_outputs": run.n_outputs,
            "started_at": run.started_at,
            "imported_from": run.imported_from,
            "imported": run.imported,
            "fingerprint": None if run.fingerprint is None else run.fingerprint.to_json(),
            "fingerprint_covers": None
            if run.fingerprint is None
            else {
                "count": len(run.fingerprint.files),
                "shown": list(run.fingerprint.covered()),
                "code_only": run.fingerprint.code_only,
            },
            "stderr_tail": run.stderr_tail,
            "checker": run.checker,
            "checker_changed": run.checker != result.checker.to_json(),
        },
        "run_notes": list(result.run_notes),
        "rules": [rule.to_json() for rule in result.rules],
        "checks": [
            {
                "name": report.name,
                "title": report.title,
                "status": report.status,
                "verdict": report.verdict.value if report.verdict else None,
                "reasons": list(report.reasons),
                "sentence": report.sentence,
                "blocks": report.blocks,
                "invalidates": list(report.invalidates),
                "lines": list(report.lines),
                "data": report.data,
                "limitations": list(report.limitations),
            }
            for report in result.checks
        ],
        "criteria": criteria,
        "problems": list(result.problems),
        "limitations": list(result.cannot_tell),
    }


def render(result: GateResult) -> str:
    return orjson.dumps(to_json(result), option=orjson.OPT_INDENT_2 | orjson.OPT_SERIALIZE_NUMPY).decode() + "\n"
