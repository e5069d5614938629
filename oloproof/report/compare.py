"""``oloproof compare`` as text for people: the table, the difference and the cases that moved.

Differences are in points (hundredths), B minus A, and every score names its set (the dev set:
``compare`` never reads the holdout). Ids, refs and versions come from files and are made inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.inert import inert
from oloproof.pairs import JUDGE_PAIRED_CAVEAT, listed

if TYPE_CHECKING:
    from oloproof.compare.runs import Comparison
    from oloproof.runstore import RunRecord
    from oloproof.stats.interval import Interval

ID_LIMIT = 20  # ids shown per list in the terminal; the JSON report holds them all


def points(value: float) -> str:
    return f"{100 * value:+.1f}"


def interval_points(interval: Interval) -> str:
    kind = "approximate" if interval.approximate else "exact"
    return f"{interval.level:.0%} [{points(interval.low)}, {points(interval.high)}] ({interval.method}, {kind})"


def p_text(p: float | None) -> str:
    if p is None:
        return "none (no case answered by both)"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"


def _run_line(label: str, ref: str, record: RunRecord, passes: int, n: int) -> str:
    """One side of the comparison. The ref is shown in backquotes and never followed by a colon:
    ``version:A:`` would be the emoji shortcode ``:A:`` once pasted into GitHub Markdown or Slack
    (a code span renders no shortcode)."""
    state = "" if record.status == "ok" else f", {record.status}"
    shown = inert(ref).replace("`", "'")  # a backquote in the ref would end the code span
    return (
        f"  {label}  `{shown}` = run {inert(record.run_id)} (version {inert(record.version)}{state}), "
        f"dev score {passes / n:.3f} ({passes}/{n})"
    )


def lines(comparison: Comparison) -> list[str]:
    from oloproof.stats.clustered import few_groups_text  # lazy: start-up

    paired, n = comparison.pairing, len(comparison.ids)
    agree = n - paired.discordant
    out = [
        f"oloproof compare  criterion {inert(comparison.criterion)}, dev set {inert(comparison.testset_path)}: "
        f"{n} cases, {comparison.testset_digest[:19]}…",
        _run_line("A", comparison.old_ref, comparison.old, comparison.old_passes, n),
        _run_line("B", comparison.new_ref, comparison.new, comparison.new_passes, n),
        f"discordant: b = {paired.b} only B right, c = {paired.c} only A right ({agree} of {n} agree"
        + (f"; {len(paired.missing)} without an output, counted against B at the low end" if paired.missing else "")
        + ")",
        f"difference B − A on the dev set: {points(paired.estimate)} points",
        *(
            [f"  {interval_points(paired.exact)}", f"  {interval_points(paired.tango)}"]
            if paired.clustered is None
            else [
                f"  {interval_points(paired.decisive)} on {paired.clustered.n_clusters} groups"
                + (
                    f" ({few_groups_text(paired.clustered.n_clusters, paired.clustered.by_size)}: not trustworthy)"
                    if paired.clustered.few_clusters
                    else ""
                ),
                "  the set declares groups: cases of one group move together, so no exact paired interval applies",
            ]
        ),
        f"McNemar exact p = {p_text(paired.mcnemar_p)} (two-sided, on the {paired.b + paired.c} discordant cases"
        + ("; it treats the cases as independent, which grouped cases are not)" if paired.clustered else ")"),
    ]
    if paired.resolution is not None:
        out.append(
            f"resolution: this set resolves paired differences of about {100 * paired.resolution:.1f} points or more "
            f"(about 80% power, discordance {paired.discordance:.3f})"
        )
    else:
        out.append(f"resolution: none — {n} cases are too few to resolve any paired difference at about 80% power")
    regressed, improved = comparison.regressed_ids(), comparison.improved_ids()
    out.append(f"regressed ({len(regressed)}, dev set): " + (inert(listed(regressed, limit=ID_LIMIT)) or "none"))
    out.append(f"improved ({len(improved)}, dev set): " + (inert(listed(improved, limit=ID_LIMIT)) or "none"))
    out.extend(f"note: {inert(note)}" for note in comparison.notes)
    out.append(
        "cannot tell: how much of the difference holds beyond these cases; on a set that guided the changes it also "
        "measures fit to the set (`oloproof gap` separates the two with the holdout)"
    )
    decision = comparison.decision
    if comparison.pairing.judged and (decision is None or not decision.caveats):
        out.append(f"caveat: {JUDGE_PAIRED_CAVEAT}")  # no verdict asked: the interval still decides nothing
    if decision is not None:
        out.extend(f"caveat: {inert(text)}" for text in decision.caveats)
        out.append(f"verdict: {decision.verdict.value}  ({inert(decision.sentence)}; exit {comparison.exit_code})")
    return out
