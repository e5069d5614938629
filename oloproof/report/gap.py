"""``oloproof gap`` as text for people.

Every score names its set; movements and differences are in points (hundredths), current minus
baseline. Holdout figures are counts, scores and digests only: no holdout case is at hand here.
Text from files (versions, refs, reasons, who) is made inert.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from oloproof.inert import inert
from oloproof.report.compare import interval_points, p_text, points

if TYPE_CHECKING:
    from rich.console import RenderableType

    from oloproof.holdout.composition import Composition
    from oloproof.holdout.gap import Drift, Gap, Movement, Side

AVERAGING = (
    "averaging the dev and the holdout score is not a method: the dev score measures quality plus fit to the dev "
    "set, the holdout score quality alone, so their mean estimates a mixture of two different things; report the "
    "real improvement above, with its interval"
)
CANNOT_TELL = (
    "whether both sets have gone stale against production (a shift reaches both through the calendar, so it cannot "
    "open a gap between them)",
    "a grader or judge that changed outside oloproof's own sources (only the checker's identity is compared; "
    "re-measuring the week-0 version on both sets is the test)",
    "how much the holdout itself was fit by the decisions its reads informed (every read counts against the budget)",
)
EXPLAIN = (
    "How to read it:",
    "- The week-0 reading is what makes the gap readable: the same version on both sets before any tuning. A "
    "difficulty difference between the sets shows there and cancels in the movements, which are paired "
    "(current − baseline on the same cases).",
    "- dev movement = real improvement + fit to the dev set + noise; holdout movement = real improvement + noise. "
    "Their difference is the fit, with a MOVER interval (the two sets are independent, so their variances add).",
    "- The real improvement is the holdout's paired difference, exact (Fay–Lumbard, compatible with McNemar's exact "
    "test) and approximate (Tango). It is the number that replaces the dev-set gain.",
    "- Composition: when the sets hold different mixes of strata, each set's scores are recombined under one shared "
    "set of weights (the holdout's, or --weights) before the levels and movements are compared: a score interval "
    "per stratum (Wilson with continuity correction for a level, Tango for a movement), combined by MOVER; every "
    "weighted stratum keeps its weight (approximate). The week-0 version's raw and reweighted level gaps say how "
    "much of the raw gap is composition.",
    "- Drift: the week-0 version measured again today on both sets should reproduce its first readings; if not, the "
    "measuring apparatus moved and every movement carries that change.",
    "- Averaging the two sets' scores is not a method: they estimate different quantities (quality plus fit, and "
    "quality), so their mean is an estimate of a mixture that nothing in the world corresponds to. Averaging helps "
    "only for two noisy readings of one quantity.",
)


def _side(side: Side) -> str:
    return f"{side.score:.3f} ({side.passes}/{side.n})"


def _movement(label: str, movement: Movement) -> list[str]:
    paired = movement.pairing
    return [
        f"{label}: {inert(movement.old.version)} {_side(movement.old)} → {inert(movement.new.version)} "
        f"{_side(movement.new)}, movement {points(paired.estimate)} points",
        f"  {interval_points(paired.tango)}; {interval_points(paired.exact)}"
        if paired.clustered is None
        else f"  {interval_points(paired.decisive)} on {paired.clustered.n_clusters} groups (the set declares groups: "
        "no exact paired interval applies)",
        f"  b = {paired.b}, c = {paired.c} of {paired.n} "
        f"({inert(movement.old.source)} and {inert(movement.new.source)})",
    ]


def _composition(comp: Composition) -> list[RenderableType]:
    from rich.table import Table  # lazy: start-up

    if not comp.available:
        return [f"composition: not checked — {inert(comp.why)}"]
    weights = "the holdout's mix" if comp.weights_source == "holdout" else f"declared in {inert(comp.weights_source)}"
    table = Table(header_style="bold", title=None)
    for column in (
        "stratum",
        "dev cases",
        "holdout cases",
        "weight",
        "dev baseline → current",
        "holdout baseline → current",
    ):
        table.add_column(column)
    for row in comp.rows:
        table.add_row(
            inert(row.name),
            f"{row.dev_n} ({row.dev_n / comp.dev_n:.1%})",
            f"{row.holdout_n} ({row.holdout_n / comp.holdout_n:.1%})",
            f"{row.weight:.3f}",
            f"{row.dev_passes[0]} → {row.dev_passes[1]} of {row.dev_n}",
            "withheld (under 5 cases)"
            if row.holdout_passes is None
            else f"{row.holdout_passes[0]} → {row.holdout_passes[1]} of {row.holdout_n}",
        )
    out: list[RenderableType] = [f"composition: cases per stratum; shared weights: {weights}", table]
    if comp.largest is not None:
        name, dev_share, hold_share = comp.largest
        out.append(
            f"  largest difference in share: {inert(name)}, {dev_share:.1%} of the dev set and {hold_share:.1%} of the "
            "holdout"
        )
    out.extend(_levels(comp))
    if comp.dev is None or comp.holdout is None or comp.fit is None:
        out.append(f"  not reweighted: {inert(comp.refused)}")
    else:
        out.append(
            f"  dev set reweighted: movement {points(comp.dev.movement.estimate)} points, "
            f"{interval_points(comp.dev.movement)}"
        )
        out.append(
            f"  holdout reweighted: movement {points(comp.holdout.movement.estimate)} points, "
            f"{interval_points(comp.holdout.movement)}"
        )
        out.append(f"  reweighted fit: {points(comp.fit.estimate)} points, {interval_points(comp.fit)}")
    out.extend(f"  {inert(sentence)}" for sentence in comp.notes)
    return out


def _levels(comp: Composition) -> list[RenderableType]:
    """Each version's level on both sets, raw then reweighted, and the week-0 composition sentence."""
    lines = ["  levels on the two sets (each set's own mix, then one shared mix):"]
    for number, level in enumerate(comp.levels):
        week0 = " (week 0)" if number == 0 else ""
        lines.append(
            f"    {inert(level.version)}{week0}: raw dev {level.raw_dev.estimate:.3f} vs holdout "
            f"{level.raw_holdout.estimate:.3f}, gap {points(level.raw_gap.estimate)} points, "
            f"{interval_points(level.raw_gap)}"
        )
        if level.dev is not None and level.holdout is not None and level.gap is not None:
            lines.append(
                f"    {'':<{len(inert(level.version)) + len(week0)}}  reweighted dev {level.dev.estimate:.3f} vs "
                f"holdout {level.holdout.estimate:.3f}, gap {points(level.gap.estimate)} points, "
                f"{interval_points(level.gap)}"
            )
    lines.extend(f"  {inert(level.sentence)}" for level in comp.levels if level.sentence)
    return ["\n".join(lines)]


def _drift(drift: Drift) -> str:
    label = "dev set" if drift.set == "dev" else "holdout"
    first = f"{inert(drift.first.version)} {_side(drift.first)} ({inert(drift.first.source)}, {drift.first.when})"
    if drift.again is None or drift.pairing is None:
        cost = " (costs one holdout read)" if drift.set == "holdout" else ""
        return (
            f"  {label}: {first}; not measured again — run the week-0 version on this set today{cost} to check that "
            "the measuring apparatus has not moved"
        )
    again = drift.again
    changed = {True: "; the checker changed in between", False: "; same checker", None: ""}[drift.checker_changed]
    return (
        f"  {label}: {first}, again {_side(again)} ({inert(again.source)}, {again.when}): "
        f"{points(drift.pairing.estimate)} points, {interval_points(drift.pairing.decisive)}{changed}"
    )


def _trajectory(gap: Gap) -> list[RenderableType]:
    from rich.table import Table  # lazy: start-up

    if not gap.trajectory:
        return ["trajectory: no holdout read yet"]
    table = Table(header_style="bold")
    for column in ("read", "when", "who", "version", "versions run on dev", "holdout score", "dev score", "reason"):
        table.add_column(column, overflow="fold")
    for row in gap.trajectory:
        score = "none" if row.answered == 0 else f"{row.passes / row.n:.3f} ({row.passes:g}/{row.n})"
        table.add_row(
            str(row.seq),
            row.when,
            inert(row.who),
            inert(row.version),
            str(row.versions_before),
            score,
            "-" if row.dev_score is None else f"{row.dev_score:.3f}",
            inert(row.reason),
        )
    return [f"trajectory: every read of {inert(gap.holdout_log)}, with the versions run on the dev set by then", table]


def build(gap: Gap, *, explain: bool = False) -> list[RenderableType]:
    out: list[RenderableType] = [
        f"oloproof gap  baseline {inert(gap.baseline_ref)} → current {inert(gap.current_ref)}; criterion "
        f"{inert(gap.criterion)}; dev set {inert(gap.dev_path)}, holdout log {inert(gap.holdout_log)}",
    ]
    body = [*_movement(f"dev set, {gap.dev.pairing.n} cases", gap.dev)]
    holdout = gap.holdout
    if holdout is not None:
        body += _movement(f"holdout set, {holdout.pairing.n} cases", holdout)
    out.append("\n".join(body))
    if holdout is None or gap.fit is None:
        out.append(f"holdout: {inert(gap.sentence)}")
    else:
        real = holdout.pairing
        zero = (
            f"zero is inside it: the best reading is still {points(real.estimate)} points, but a holdout of "
            f"{real.n} cases cannot tell a change this size from none"
            if real.decisive.low <= 0.0 <= real.decisive.high
            else "zero is outside it"
        )
        resolution = (
            ""
            if real.resolution is None
            else f"; it resolves about {100 * real.resolution:.1f} points (about 80% power)"
        )
        out.append(
            "\n".join(
                [
                    f"fit = dev movement − holdout movement: {points(gap.fit.estimate)} points, "
                    f"{interval_points(gap.fit)}",
                    f"real improvement (paired on the holdout): {points(real.estimate)} points, "
                    f"{interval_points(real.decisive)}",
                    *([f"{'':<42}{interval_points(real.tango)}"] if real.clustered is None else []),
                    f"  it replaces the dev-set gain of {points(gap.dev.pairing.estimate)} points: {real.discordant} "
                    f"holdout cases discordant, {real.b} for {inert(holdout.new.version)} and {real.c} for "
                    f"{inert(holdout.old.version)}, McNemar exact p = {p_text(real.mcnemar_p)}"
                    + (" (cases treated as independent)" if real.clustered else ""),
                    f"  {zero}{resolution}",
                ]
            )
        )
    out.extend(_composition(gap.composition))
    if gap.drift:
        out.append(
            "\n".join(["drift: the week-0 version measured again against its first reading", *map(_drift, gap.drift)])
        )
    out.extend(_trajectory(gap))
    out.extend(f"note: {inert(note)}" for note in gap.notes)
    out.append("\n".join(EXPLAIN) if explain else f"{AVERAGING} (--explain says more)")
    out.append("\n".join(["cannot tell:", *(f"  - {line}" for line in CANNOT_TELL)]))
    if gap.verdict is not None:
        out.append(f"verdict: {gap.verdict.value}  ({', '.join(gap.reasons)}; exit {gap.exit_code})")
    return out
