"""The Markdown report: the job summary of the GitHub Action, and a check run's output.

It renders whatever the gate returned: every rule (including rows that checks add, such as
the seeds check's recipe rule), every check report (leakage, metamorphic flip rates, the
holdout budget, and any check added later) and what the evidence cannot tell. Nothing here
knows a check by more than its name.

Every string that came from a config, a case or a system is escaped (HTML entities, and
Markdown's active characters as entities), so a case id cannot inject markup or links.

GitHub drops a step summary over 1 MiB and a check run's summary over 65535 characters.
``render(result, limit=...)`` keeps within ``limit`` bytes of UTF-8: when the full text is
larger it keeps the header, the rules (most severe first) and as many sections as fit, and
says so in a note naming where the full report is.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oloproof.inert import inert_lines
from oloproof.report import classes, pr_evidence, slices
from oloproof.report.md_rules import rules_block, why_block
from oloproof.report.md_text import ICON, Block, code, esc, folded, prose, threshold_text, verdict_badge
from oloproof.result import accepted_text, shared_caveats
from oloproof.store import short_digest
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.result import CheckReport, GateResult

__all__ = ["ICON", "SUMMARY_LIMIT", "code", "esc", "prose", "render", "threshold_text", "verdict_badge"]

SUMMARY_LIMIT = 1024 * 1024 - 4096  # GitHub's 1 MiB per step, with room for a note another tool appends
# Checks every summary reports on, present or not (SPEC §8): their name and heading.
STANDARD_CHECKS = (("leakage", "Leakage"), ("metamorphic", "Metamorphic transforms"), ("holdout", "Holdout"))


# ---------------------------------------------------------------- blocks


def _title(result: GateResult, fail_on: frozenset[Verdict] | None) -> str:
    """The verdict heading and one line: the rule count by verdict and whether the job fails."""
    counts: dict[Verdict, int] = {}
    for rule in result.rules:
        counts[rule.verdict] = counts.get(rule.verdict, 0) + 1
    tally = ", ".join(f"{counts[v]} {v.value}" for v in sorted(counts, key=lambda v: -v.severity))
    sentence = (
        f"{len(result.rules)} rule{'s' if len(result.rules) != 1 else ''}: {tally}."
        if result.rules
        else "No rules were decided."
    )
    if advisory := sum(1 for rule in result.rules if rule.advisory):  # counted above, never in the verdict
        sentence += f" {advisory} advisory (shown, not counted in the verdict)."
    if fail_on is not None:
        failing = ", ".join(v.value for v in sorted(fail_on, key=lambda v: -v.severity)) or "none"
        if result.verdict in fail_on:
            sentence += f" **This verdict fails the job** (fail-on: {failing})."
        else:
            sentence += f" This verdict does not fail the job (fail-on: {failing})."
    return f"## {ICON[result.verdict]} oloproof gate: {result.verdict.value}\n\n{sentence}\n\n"


def _context(result: GateResult, *, cut: int | None = None) -> Block:
    """What was gated: the system, the dev set, the run and the policy, as one paragraph."""

    def short(value: object) -> str:
        text = str(value)
        return text if cut is None or len(text) <= cut else text[:cut] + "…"

    release, testset, run = result.release, result.testset, result.run
    declared = f" (release.yaml declares {code(short(release.system.version))})" if result.version_differs else ""
    parts = [
        f"**System** {code(short(result.version))}{declared}",
        f"**Dev set** {code(short(testset.path))}: {len(testset)} cases, {code(short_digest(testset.digest))}",
    ]
    if run is not None:
        how = "reused" if result.run_reused else "new"
        origin = f", imported from {code(short(run.imported_from))}" if run.imported_from else ""
        changed = " ⚠️ made by another checker version" if run.checker != result.checker.to_json() else ""
        parts.append(
            f"**Run** {code(run.run_id)} ({how}{origin}): {esc(run.status)}, {run.n_outputs}/{run.n_cases} "
            f"outputs{changed}"
        )
    else:
        parts.append("**Run** none: the system was not run")
    policy = release.policy
    methods = "approximate methods allowed" if policy.allow_approximate_methods else "exact methods only"
    parts.append(f"**Policy** {code(short(policy.source))}: {policy.confidence:.0%} intervals, {methods}")
    return Block(text=" · ".join(parts) + "\n\n", name="what was gated")


def _scores_note(result: GateResult) -> Block:
    level = f"{result.release.policy.confidence:.0%}"
    text = (
        f"Estimates and {level} two-sided intervals are on the **dev set**, never the holdout; a verdict is decided "
        "on the interval's bounds, never on the estimate; ≈ marks an approximate interval. Each picture draws the "
        "interval <code>├─■─┤</code> (■ the estimate) and the threshold <code>¦</code> on its own scale: the span of "
        "the interval and the threshold over 17 characters.\n\n"
    )
    for ids, caveat in shared_caveats(result.rules):  # one line each, however many rules share it
        text += f"**Caveat** ({', '.join(code(rule_id) for rule_id in ids)}): {prose(caveat)}\n\n"
    return Block(text=text, name="note on scores")


def _checks_blocks(result: GateResult) -> list[Block]:
    """A status row per check (the standard ones even when absent), then each one's details."""
    rank = {name: index for index, (name, _) in enumerate(STANDARD_CHECKS)}
    present = {report.name for report in result.checks}
    entries: list[tuple[int, int, str]] = [
        (rank[name], -1, f"| {title} | {esc(_absent_status(result, name))} | — |\n")
        for name, title in STANDARD_CHECKS
        if name not in present
    ]
    for order, report in enumerate(result.checks):
        verdict = verdict_badge(report.verdict) if report.verdict is not None else "—"
        entries.append(
            (rank.get(report.name, len(rank)), order, f"| {esc(report.title)} | {esc(report.status)} | {verdict} |\n")
        )
    entries.sort()
    blocks = [
        Block(
            head="### Checks\n\n| Check | Status | Verdict |\n|---|---|---|\n",
            rows=[row for *_, row in entries],
            name="checks",
        )
    ]
    said = [rule.sentence for rule in result.rules]  # a blocking check's sentence is the rules' why: said once
    for report in sorted(result.checks, key=lambda report: rank.get(report.name, len(rank))):
        if report.name == pr_evidence.NAME:  # the same evidence as the check run's text and the PR comment
            sentence = report.sentence if not any(report.sentence in text for text in said) else ""
            check = pr_evidence.as_json(
                report.name, report.title, report.status, report.sentence, report.lines, report.data
            )
            blocks.append(pr_evidence.block(check, sentence=sentence))
        else:
            blocks.append(_check_detail(report, said))
    return blocks


def _absent_status(result: GateResult, name: str) -> str:
    release = result.release
    if name == "leakage":
        if release.leakage is None:
            return "not checked (release.yaml declares no leakage check)"
        return f"leakage: {release.leakage} is declared, but no leakage report was made"
    if name == "holdout":
        if release.holdout is None:
            return "no holdout declared in release.yaml"
        return "declared, not read by this run"
    if name == "metamorphic":
        spec = release.metamorphic
        if spec is None or not spec.transforms:
            return "no transforms declared in release.yaml"
        return f"declared: {', '.join(spec.names())}; flip rates below"
    return "not configured"


LABEL_STATUS = {"changes_meaning": "changes meaning"}  # the label states (SPEC §5), as words


def _metamorphic_block(result: GateResult) -> Block:
    """One row per declared transform and relation: its flip rate, whether or not a rule reads it (SPEC §8).

    From the criteria outcomes' ``details["metamorphic"]``, as the JSON and terminal reports read them.
    """
    spec = result.release.metamorphic
    declared = spec.names() if spec is not None else []
    read_by: dict[str, list[str]] = {}
    for rule in result.rules:
        read_by.setdefault(rule.criterion, []).append(rule.rule_id)
    found: dict[str, list[tuple[str, dict[str, object]]]] = {}
    for criterion, outcome in result.outcomes.items():
        info = outcome.details.get("metamorphic")
        if isinstance(info, dict):
            found.setdefault(str(info.get("transform")), []).append((criterion, info))
    if not declared and not found:
        return Block()
    rows: list[str] = []
    for name in [*declared, *(name for name in found if name not in declared)]:
        entries = found.get(name)
        if not entries:
            compared = any(getattr(evaluator, "transform", None) == name for evaluator in result.release.evaluators)
            why = (
                "not measured: the system was not run"
                if compared
                else "no metamorphic_relation evaluator compares outputs under it"
            )
            rows.append(f"| {code(name)} | — | — | — | — | {esc(why)} | — |\n")
            continue
        for criterion, info in entries:
            rate = info.get("flip_rate")
            missing = info.get("missing") or 0
            answered = f"{info.get('flips')}/{info.get('answered')}" + (f" ({missing} missing)" if missing else "")
            status, accepted = str(info.get("status")), info.get("accepted")
            status = accepted_text(accepted) if isinstance(accepted, dict) else LABEL_STATUS.get(status, status)
            readers = " ".join(code(rule_id) for rule_id in read_by.get(criterion, [])) or "none (reported only)"
            rows.append(
                f"| {code(name)}<br><sub>{esc(info.get('kind'))} on {esc(info.get('input_field'))}</sub> | "
                f"{code(criterion)} | "
                f"{'—' if not isinstance(rate, (int, float)) else f'{rate:.3f}'} | {esc(answered)} | "
                f"{esc(info.get('not_applicable'))} | "
                f"{esc(status)} | {readers} |\n"
            )
    head = (
        "### Metamorphic flip rates\n\n"
        "Flips over the dev-set cases each declared transform changed; a rule decides on a rate only when its "
        "transform is "
        "validated.\n\n"
        "| Transform | Criterion | Flip rate | Flips / answered | Not applicable | Status | Read by |\n"
        "|---|---|--:|--:|--:|---|---|\n"
    )
    unread = _unread_problems(result)
    tail = "No rule reads these rates:\n\n" + "".join(f"- {prose(p)}\n" for p in unread) + "\n" if unread else ""
    return Block(head=head, rows=rows, name="metamorphic flip rates", tail=tail)


FOLD_OVER = 2  # a check's lines beyond this many (the seeds' checkpoints and run ids) are folded


def _check_detail(report: CheckReport, said: Sequence[str] = ()) -> Block:
    """A check's sentence (unless the why above already says it) and its lines (run ids, per-seed
    scores: folded in ``<details>``)."""
    sentence = report.sentence if report.sentence and not any(report.sentence in text for text in said) else ""
    if not sentence and not report.lines:
        return Block()
    title = f"**{esc(report.title)}.**"
    if not report.lines:
        return Block(text=f"{title} {prose(sentence)}\n\n", name=report.title)
    rows = [f"- {esc(line)}\n" for line in report.lines]
    head = f"{title} {prose(sentence)}\n\n" if sentence else f"{title}\n\n"
    if len(rows) <= FOLD_OVER:
        return Block(head=head, rows=rows, name=report.title)
    head = (head if sentence else "") + f"<details><summary>{esc(report.title)} ({len(rows)})</summary>\n\n"
    return Block(head=head, rows=rows, name=report.title, tail="</details>\n\n")


STDERR_LINES = 20  # of a failed system's stderr tail


def _regression_block(result: GateResult) -> Block:
    """Every regression guard, whatever its verdict: the cases that regressed and what the set resolves."""
    rows = []
    for rule in result.rules:
        if rule.kind != "regression" or "b" not in rule.details:
            continue
        details = rule.details
        ids = [str(case_id) for case_id in details.get("regressed_ids", [])]
        shown = ", ".join(code(case_id) for case_id in ids[:10]) + (
            f" and {len(ids) - 10} more" if len(ids) > 10 else ""
        )
        resolution = f"{rule.resolution:.3f}" if rule.resolution is not None else "—"
        rows.append(
            f"| {code(rule.rule_id)} | {esc(details.get('baseline', ''))} | {details['b']} / {details['c']} of "
            f"{details['n']} | {len(ids)}{': ' + shown if ids else ''} | {resolution} |\n"
        )
    if not rows:
        return Block()
    head = (
        "### Regression guards (dev set)\n\n"
        "b: cases only the gated version gets right; c: only the baseline. The resolution is the smallest paired "
        "difference this set detects at about 80% power (a normal approximation: the exact McNemar test's power at "
        "that difference is 0.77–0.81).\n\n"
        "| Rule | Baseline | b / c | Regressed cases | Resolution |\n|---|---|---|---|--:|\n"
    )
    return Block(head=head, rows=rows, name="regression guards")


def _run_block(result: GateResult) -> Block:
    """Why the run that decides is the one it is, and a failed system's last stderr lines."""
    run = result.run
    rows = [f"- {esc(note)}\n" for note in result.run_notes]
    if run is not None and run.failure is not None and run.stderr_tail.strip():
        tail = "\n".join(inert_lines(run.stderr_tail)[-STDERR_LINES:])
        rows.append(
            f"- the system failed ({esc(run.failure)}); the last lines of its stderr:\n\n"
            f"  <pre>{html.escape(tail)}</pre>\n"
        )
    if not rows:
        return Block()
    return Block(head="### The run\n\n", rows=rows, name="the run")


def _unread_problems(result: GateResult) -> list[str]:
    """Problems of criteria no rule reads (a declared transform's flip rate, reported only)."""
    read = {rule.criterion for rule in result.rules}
    return [p for criterion, outcome in result.outcomes.items() if criterion not in read for p in outcome.problems]


def _problems_block(result: GateResult) -> Block:
    unread = set(_unread_problems(result))  # said under the flip rates: nothing is decided on them
    rows = [f"- {prose(problem)}\n" for problem in result.problems if problem not in unread]
    if not rows:
        return Block()
    return Block(head="### Problems\n\n", rows=rows, name="problems")


def _limitations_block(result: GateResult) -> Block:
    if not result.cannot_tell:
        return Block()
    rows = [f"- {prose(item)}\n" for item in result.cannot_tell]
    return Block(
        head=f"<details><summary>What this cannot tell ({len(rows)})</summary>\n\n",
        rows=rows,
        name="what this cannot tell",
        tail="</details>\n\n",
    )


def _provenance_block(result: GateResult) -> Block:
    checker, release = result.checker, result.release
    body = (
        f"- oloproof {esc(checker.version)}, sources {code(checker.source_digest)}\n"
        f"- config {code(release.path)} {code(release.digest)}\n"
        f"- dev set {code(result.testset.digest)}\n"
        f"- generated {esc(result.generated_at)}\n"
    )
    return Block(text=folded("Provenance", body), name="provenance")


def _notes_block(notes: Sequence[str]) -> Block:
    if not notes:
        return Block()
    return Block(text=">\n".join(f"> **Note:** {prose(note)}\n" for note in notes) + "\n", name="notes")


def _body(result: GateResult, notes: Sequence[str], *, severe_first: bool, cut: int | None = None) -> list[Block]:
    return [
        why_block(result),
        _notes_block(notes),
        rules_block(result, severe_first=severe_first),
        _scores_note(result),
        _context(result, cut=cut),
        Block(text=slices.markdown_block(result, esc, code), name="subsets and slices"),
        Block(text=classes.markdown_block(result, esc, code), name="classification reports"),
        _regression_block(result),
        _run_block(result),
        *_checks_blocks(result),
        _metamorphic_block(result),
        _problems_block(result),
        _limitations_block(result),
        _provenance_block(result),
    ]


# ---------------------------------------------------------------- rendering


def render(
    result: GateResult,
    *,
    limit: int = SUMMARY_LIMIT,
    fail_on: frozenset[Verdict] | None = None,
    notes: Sequence[str] = (),
    full_report: str | None = None,
) -> str:
    """The summary in at most ``limit`` bytes of UTF-8.

    ``fail_on`` (the action's input) adds whether this verdict fails the job; ``notes`` are
    sentences shown under the header (e.g. why no check run was made); ``full_report`` names
    where the untrimmed report is, for the note a trimmed summary carries.
    """
    full = _title(result, fail_on) + "".join(block.full() for block in _body(result, notes, severe_first=False))
    if len(full.encode("utf-8")) <= limit:
        return full
    return _trimmed(
        result, limit=limit, fail_on=fail_on, notes=notes, full_report=full_report, full_size=len(full.encode("utf-8"))
    )


def _trimmed(
    result: GateResult,
    *,
    limit: int,
    fail_on: frozenset[Verdict] | None,
    notes: Sequence[str],
    full_report: str | None,
    full_size: int,
) -> str:
    header = _title(result, fail_on)
    where = f"the full report is in {code(full_report)}" if full_report else "the JSON report holds every detail"
    note_reserve = 1024
    budget = limit - len(header.encode("utf-8")) - note_reserve
    if budget < 0:  # a limit too small for anything but the verdict
        return f"## {ICON[result.verdict]} oloproof gate: {result.verdict.value}\n"[: max(limit, 0)]
    parts: list[str] = []
    left_out: list[str] = []
    used = 0
    for block in _body(result, notes, severe_first=True, cut=200):
        text = block.full()
        if not text:
            continue
        size = len(text.encode("utf-8"))
        if used + size <= budget:
            parts.append(text)
            used += size
            continue
        if block.head and used + len(block.head.encode("utf-8")) + 200 <= budget:
            kept = [block.head]
            used += len(block.head.encode("utf-8"))
            shown = 0
            for row in block.rows:
                row_size = len(row.encode("utf-8"))
                if used + row_size + 200 > budget:
                    break
                kept.append(row)
                used += row_size
                shown += 1
            omitted = len(block.rows) - shown
            tail = f"\n*… {omitted} more not shown (trimmed).*\n\n" if omitted else "\n"
            kept.append(tail + block.tail)
            tail += block.tail
            used += len(tail.encode("utf-8"))
            parts.append("".join(kept))
            if omitted:
                left_out.append(f"part of {block.name}")
            continue
        left_out.append(block.name or "a section")
    dropped = f" Left out: {esc(', '.join(left_out))}." if left_out else ""
    note = (
        f"> **Trimmed:** the full summary is {full_size / 1024 / 1024:.1f} MiB, over GitHub's limit; "
        f"{where}.{dropped}\n\n"
    )
    if len(note.encode("utf-8")) > note_reserve:
        note = f"> **Trimmed:** the full summary is over GitHub's limit; {where}.\n\n"
    return header + note + "".join(parts)
