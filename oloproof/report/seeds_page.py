"""The seeds page: an offline single file listing every case under every checkpoint (every case
string escaped; no network, no script)."""

from __future__ import annotations

import html
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from oloproof.seeds.check import SeedsResult


def render(result: SeedsResult) -> str:
    """An offline page listing every case under every checkpoint (every case string escaped)."""
    import numpy as np  # lazy: start-up

    ids = [case.id for case in result.testset.cases]
    usable = [cp for cp in result.checkpoints if cp.problem is None]
    unstable = set(result.recipe.unstable_cases) if result.recipe else set()
    matrix = result.matrix
    made = {"new": "run now", "reused": "reused"}
    rates = result.recipe.seed_pass_rates if result.recipe else (None,) * len(usable)
    head_cells = "".join(
        f"<th>{html.escape(cp.name)}<br><small>{'failed' if rate is None else f'{rate:.1%}'} · "
        f"{html.escape(made.get(cp.origin, 'by ref'))}</small></th>"
        for cp, rate in zip(usable, rates, strict=True)
    )
    rows: list[str] = []
    for index, case_id in enumerate(ids):
        cells = []
        for column in range(len(usable)):
            value = matrix[index, column] if matrix is not None else np.nan
            text, cls = (
                ("—", "missing") if np.isnan(value) else (("pass", "pass") if value >= 0.5 else ("fail", "fail"))
            )
            cells.append(f'<td class="{cls}">{text}</td>')
        flag = ' class="unstable"' if index in unstable else ""
        rows.append(f"<tr{flag}><th scope=row>{html.escape(case_id)}</th>{''.join(cells)}</tr>")
    rule = result.rule
    interval = rule.interval
    summary = (
        f"{html.escape(rule.verdict.value)} — {html.escape(rule.full_sentence)}"
        if interval is None
        else f"{html.escape(rule.verdict.value)}: {interval.estimate:.1%} [{interval.low:.1%}, {interval.high:.1%}] "
        f"— {html.escape(rule.full_sentence)}"
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>oloproof seeds: {html.escape(result.spec.recipe)}</title>
<style>
body{{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse}} th,td{{border:1px solid #ccc;padding:2px 8px;text-align:center}}
th[scope=row]{{text-align:left;font-weight:normal;font-family:monospace}}
.pass{{background:#e6f4ea}} .fail{{background:#fce8e6}} .missing{{background:#eee;color:#777}}
tr.unstable th{{font-weight:bold}} tr.unstable{{outline:2px solid #f9ab00}}
h2{{font-size:16px;margin-top:1.5em}} li{{color:#555}}
</style></head><body>
<h1>Recipe {html.escape(result.spec.recipe)} across {len(usable)} seed(s)</h1>
<p>{summary}</p>
<p>dev set {html.escape(result.testset.path)} ({len(ids)} cases, {html.escape(result.testset.digest)}).
Cases whose verdict changes with the seed are outlined ({len(unstable)}).</p>
<table><thead><tr><th>case</th>{head_cells}</tr></thead><tbody>
{os.linesep.join(rows)}
</tbody></table>
<h2>What this cannot tell</h2>
<ul>{"".join(f"<li>{html.escape(item)}</li>" for item in result.limitations)}</ul>
</body></html>
"""
