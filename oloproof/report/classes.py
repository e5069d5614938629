"""The classification report of each ``label_match`` criterion, for the Markdown summary and the
terminal's ``-v``: per-class precision, recall, F1 (with intervals) and support, the averages, and
the confusion matrix. Reads ``details["classification"]`` (``oloproof.classification``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from oloproof.inert import inert
from oloproof.result import GateResult

SHOWN_CLASSES = 20  # rows of the per-class table (by support); the JSON report lists all
MATRIX_SHOWN = 10  # classes of the confusion matrix shown here


def _label(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return inert(text if len(text) <= 24 else text[:23] + "…")


def _cell(value: float, interval: dict[str, Any] | None, defined: bool = True) -> str:
    if not defined:
        return "0.000 (undefined)"
    if interval is None:
        return f"{value:.3f}"
    star = "*" if interval["approximate"] else ""
    return f"{value:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]{star}"


def reports(result: GateResult) -> list[tuple[str, dict[str, Any]]]:
    found = []
    for criterion, outcome in result.outcomes.items():
        info = outcome.details.get("classification")
        if isinstance(info, dict):
            found.append((criterion, info))
    return found


def _shown_rows(info: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = info["per_class"]
    if len(rows) <= SHOWN_CLASSES:
        return rows
    keep = sorted(range(len(rows)), key=lambda i: -rows[i]["support"])[:SHOWN_CLASSES]
    return [rows[i] for i in sorted(keep)]


def _table(info: dict[str, Any]) -> list[list[str]]:
    """Header, one row per class, accuracy and the two averages (as scikit-learn lays them out)."""
    out = [["class", "precision", "recall", "f1", "support"]]
    for row in _shown_rows(info):
        out.append(
            [
                _label(row["label"]),
                _cell(row["precision"], row["precision_interval"], row["precision_defined"]),
                _cell(row["recall"], row["recall_interval"], row.get("recall_defined", True)),
                _cell(row["f1"], row["f1_interval"]),
                str(row["support"]),
            ]
        )
    n = str(info["n"])
    out.append(["accuracy", "", "", f"{info['accuracy']:.3f}", n])
    for name, key in (("macro avg", "macro_avg"), ("weighted avg", "weighted_avg")):
        avg = info[key]
        out.append([name, f"{avg['precision']:.3f}", f"{avg['recall']:.3f}", f"{avg['f1']:.3f}", n])
    return out


def _matrix(info: dict[str, Any]) -> list[list[str]] | None:
    matrix = info.get("matrix")
    if not matrix or len(matrix["labels"]) > MATRIX_SHOWN:
        return None
    labels = [_label(v) for v in matrix["labels"]]
    missing = any(matrix["no_output"])
    out = [["expected \\ predicted", *labels, *(["no output"] if missing else [])]]
    for i, label in enumerate(labels):
        out.append([label, *(str(x) for x in matrix["rows"][i]), *([str(matrix["no_output"][i])] if missing else [])])
    return out


def _notes(info: dict[str, Any]) -> list[str]:
    notes = [f"{info['confidence']:.0%} intervals. {info['intervals']}; * approximate."]
    if len(info["per_class"]) > SHOWN_CLASSES:
        notes.append(
            f"{len(info['per_class'])} classes: the {SHOWN_CLASSES} with most cases are shown; JSON lists all."
        )
    if _matrix(info) is None:
        notes.append(f"The confusion matrix is shown for at most {MATRIX_SHOWN} classes (JSON: up to 30).")
    return notes


def terminal_text(result: GateResult) -> str:
    """Plain text blocks, one per label_match criterion (``oloproof gate -v``)."""
    parts = []
    for criterion, info in reports(result):
        if "omitted" in info:
            parts.append(f"classification report ({inert(criterion)}): {inert(info['omitted'])}")
            continue
        lines = [f"classification report: {inert(criterion)} ({info['n']} cases)"]
        lines += _aligned(_table(info))
        matrix = _matrix(info)
        if matrix is not None:
            lines.append("confusion matrix (rows: expected, columns: predicted)")
            lines += _aligned(matrix)
        lines += _notes(info)
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows]


def markdown_block(result: GateResult, esc: Callable[[object], str], code: Callable[[object], str]) -> str:
    """One folded section (``<details>``) per label_match criterion: it is detail, not the verdict."""
    text = ""
    for criterion, info in reports(result):
        summary = f"Classification report: {code(criterion)}"
        if "omitted" in info:
            text += f"**{summary}**: {esc(info['omitted'])}\n\n"
            continue
        body = _markdown_table(_table(info), esc)
        matrix = _matrix(info)
        if matrix is not None:
            body += "Confusion matrix (rows: expected, columns: predicted)\n\n" + _markdown_table(matrix, esc)
        body += "".join(f"{esc(note)}\n" for note in _notes(info))
        text += f"<details><summary>{summary} ({info['n']} cases)</summary>\n\n{body}\n</details>\n\n"
    return text


def _markdown_table(rows: list[list[str]], esc: Callable[[object], str]) -> str:
    head = "| " + " | ".join(esc(cell) for cell in rows[0]) + " |\n"
    rule = "|" + "---|" * len(rows[0]) + "\n"
    return head + rule + "".join("| " + " | ".join(esc(cell) for cell in row) + " |\n" for row in rows[1:]) + "\n"
