"""A leakage check's result for people: plain lines, which the CLI styles."""

from __future__ import annotations

from oloproof.leakage.normalise import NEAR_DUPLICATES
from oloproof.leakage.record import NORMALISATION_TEXT, SHOWN_IDS, LeakageResult, id_list, near_note, short


def describe(result: LeakageResult, *, shown_ids: int = SHOWN_IDS) -> list[str]:
    """The check's report as plain lines (the CLI styles them)."""
    rate = result.rows_scanned / result.duration_s if result.duration_s > 0 else 0.0
    compression = f", {result.training_compression}" if result.training_compression else ""
    lines = [
        f"test set {result.testset_path}: {result.n_cases} cases, {short(result.testset_digest)}",
        f"training data {result.training_name} ({result.training_format}{compression}, {result.training_size:,} bytes)",
        f"compared: {result.options_text()}; {NORMALISATION_TEXT}",
        f"  {len(result.compared)} key(s): {', '.join(result.compared)}",
    ]
    if result.image_keys:
        lines.append(
            f"  images compared by their decoded pixels (mode, size, pixels), not their paths: "
            f"{', '.join(result.image_keys)}"
        )
    if result.key_sources:
        found = ", ".join(f"{key} as {where}" for key, where in sorted(result.key_sources.items()))
        lines.append(f"  found in the training data under other names: {found}")
    engine = result.engine
    workers = (
        f"{result.jobs} process(es)"
        if engine.get("name", "local") == "local"
        else f"Spark {engine.get('version', '')} on {engine.get('master', '?')}, {result.jobs} partition(s)"
    )
    lines.append(f"rows scanned: {result.rows_scanned:,} in {result.duration_s:.2f} s ({rate:,.0f} rows/s, {workers})")
    if result.rows_malformed:
        more = ", …" if result.rows_malformed > len(result.malformed_lines) else ""
        lines.append(
            f"malformed rows skipped: {result.rows_malformed:,} (lines "
            f"{', '.join(map(str, result.malformed_lines))}{more})"
        )
    lines.append(f"cases checked: {result.n_cases}; found in the training data: {len(result.leaked_ids)}")
    if result.leaked_ids:
        lines.append("  " + id_list(result.leaked_ids, shown_ids))
    if result.near is None:
        lines.append(NEAR_DUPLICATES)
        return lines
    near = result.near
    lines.append(near_note(near))
    for case in near.cases[:shown_ids]:
        detail = "".join(f", {name} {value:g}" for name, value in case.detail)
        lines.append(
            f"  {case.id}: {case.kind}, similarity {case.similarity:.2f}{detail}, {case.count} training row(s)"
        )
    if len(near.cases) > shown_ids:
        lines.append(f"  … and {len(near.cases) - shown_ids} more (all in the JSON)")
    return lines
