"""``oloproof gap --markdown FILE``: the gap as Markdown (a pull request comment, a job summary).

The headline figures (each set's movement, the fit, the real improvement), then the composition
check as it is made — each version's level on both sets, raw and reweighted, the sentence that
says how much of the raw gap is composition, the reweighted movements and fit — and what the gap
cannot tell. Every string from a file is escaped (``oloproof.report.markdown.esc``/``code``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.report.compare import interval_points, points
from oloproof.report.gap import CANNOT_TELL
from oloproof.report.markdown import code, esc

if TYPE_CHECKING:
    from oloproof.holdout.composition import Composition
    from oloproof.holdout.gap import Gap, Movement
    from oloproof.pairs import Pairing


def _movement(label: str, movement: Movement) -> str:
    paired = movement.pairing
    return (
        f"| {label} | {code(movement.old.version)} {movement.old.score:.3f} ({movement.old.passes}/{movement.old.n}) "
        f"→ {code(movement.new.version)} {movement.new.score:.3f} ({movement.new.passes}/{movement.new.n}) | "
        f"{points(paired.estimate)} | {_intervals(paired)} |"
    )


def _intervals(paired: Pairing) -> str:
    """Tango's and the exact interval, or the clustered one alone on a set that declares groups."""
    if paired.clustered is not None:
        return esc(f"{interval_points(paired.decisive)} on {paired.clustered.n_clusters} groups (clustered)")
    return f"{esc(interval_points(paired.tango))}<br>{esc(interval_points(paired.exact))}"


def _composition(comp: Composition) -> list[str]:
    if not comp.available:
        return ["### Composition", "", f"Not checked: {esc(comp.why)}"]
    weights = "the holdout's mix" if comp.weights_source == "holdout" else f"declared in {code(comp.weights_source)}"
    out = [
        "### Composition",
        "",
        f"Shared weights: {weights}.",
        "",
        "| stratum | dev cases | holdout cases | weight |",
        "|---|---:|---:|---:|",
    ]
    out += [f"| {code(row.name)} | {row.dev_n} | {row.holdout_n} | {row.weight:.3f} |" for row in comp.rows]
    out += ["", "| version | set | dev | holdout | gap (points) |", "|---|---|---:|---:|---|"]
    for number, level in enumerate(comp.levels):
        name = code(level.version) + (" (week 0)" if number == 0 else "")
        out.append(
            f"| {name} | raw | {level.raw_dev.estimate:.3f} | {level.raw_holdout.estimate:.3f} | "
            f"{points(level.raw_gap.estimate)}, {esc(interval_points(level.raw_gap))} |"
        )
        if level.dev is not None and level.holdout is not None and level.gap is not None:
            out.append(
                f"| {name} | reweighted | {level.dev.estimate:.3f} | {level.holdout.estimate:.3f} | "
                f"{points(level.gap.estimate)}, {esc(interval_points(level.gap))} |"
            )
    out.append("")
    out += [f"**{esc(level.sentence)}**" for level in comp.levels if level.sentence]
    if comp.dev is None or comp.holdout is None or comp.fit is None:
        out += ["", f"Not reweighted: {esc(comp.refused)}"]
    else:
        out += [
            "",
            f"- dev set reweighted: movement {points(comp.dev.movement.estimate)} points, "
            f"{esc(interval_points(comp.dev.movement))}",
            f"- holdout reweighted: movement {points(comp.holdout.movement.estimate)} points, "
            f"{esc(interval_points(comp.holdout.movement))}",
            f"- reweighted fit: {points(comp.fit.estimate)} points, {esc(interval_points(comp.fit))}",
        ]
    out += [f"- {esc(note)}" for note in comp.notes]
    return out


def render(gap: Gap) -> str:
    out = [
        f"## oloproof gap: {code(gap.baseline_ref)} → {code(gap.current_ref)}",
        "",
        f"Criterion {code(gap.criterion)}; dev set {code(gap.dev_path)}; holdout log {code(gap.holdout_log)}.",
        "",
        "| set | baseline → current | movement (points) | interval |",
        "|---|---|---:|---|",
        _movement(f"dev, {gap.dev.pairing.n} cases", gap.dev),
    ]
    holdout = gap.holdout
    if holdout is not None:
        out.append(_movement(f"holdout, {holdout.pairing.n} cases", holdout))
    out.append("")
    if holdout is None or gap.fit is None:
        out.append(f"Holdout: {esc(gap.sentence)}")
    else:
        real = holdout.pairing
        out += [
            f"- **fit** = dev movement − holdout movement: {points(gap.fit.estimate)} points, "
            f"{esc(interval_points(gap.fit))}",
            f"- **real improvement** (paired on the holdout): {points(real.estimate)} points, "
            + esc(interval_points(real.decisive))
            + ("" if real.clustered is not None else f"; {esc(interval_points(real.tango))}"),
        ]
    out += ["", *_composition(gap.composition), ""]
    out += [f"> note: {esc(note)}" for note in gap.notes]
    out += ["### Cannot tell", "", *(f"- {esc(line)}" for line in CANNOT_TELL)]
    if gap.verdict is not None:
        out += ["", f"**verdict: {gap.verdict.value}** ({esc(', '.join(gap.reasons))}; exit {gap.exit_code})"]
    return "\n".join(out) + "\n"
