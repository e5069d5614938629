"""Issue 17, point 4, through the CLI: ``oloproof gap`` shows the chapter's composition point as it
is made (raw levels, reweighted levels, the sentence) in the terminal, Markdown and JSON reports;
every weighted stratum keeps its weight; a stratum is called thin only when its own interval says
next to nothing; a weighted stratum one set lacks makes the reweighting refused, with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, write_cases

from oloproof.stats.interval import Interval

COMPOSITION = (
    "the apparent gap of +5.0 points between the sets is composition: recombined under one mix, v0 scores 0.700 "
    "on the dev set and 0.700 on the holdout (the raw gap itself lies within noise, 95% [-8.0, +17.8]: this is the "
    "best reading of these sets, not a finding)"
)


def cases(prefix: str, strata: dict[str, tuple[int, int]], *, source: str) -> list[dict[str, Any]]:
    """``strata``: stratum → (cases, passing). The echo system answers ``answer``; label 1 is right."""
    out = []
    for name, (n, passing) in strata.items():
        out += [
            {
                "id": f"{prefix}-{name}-{i:04d}",
                "answer": 1 if i < passing else 0,
                "source": source,
                "stratum": name,
                "expected": {"label": 1},
            }
            for i in range(n)
        ]
    return out


def build(project: Project, dev: dict[str, tuple[int, int]], holdout: dict[str, tuple[int, int]]) -> None:
    """Week 0: v0 run on the dev set and read on the holdout; then v1 (answering the same), run and read."""
    project.write(
        cases=cases("d", dev, source="dev"),
        extra="holdout:\n  cases: evals/holdout/cases.jsonl\n  budget: 20\n  log: evals/holdout/READS.log\n",
        version="v0",
    )
    write_cases(project.root / "evals" / "holdout" / "cases.jsonl", cases("h", holdout, source="holdout"))
    for version in ("v0", "v1"):
        text = (project.root / "release.yaml").read_text()
        (project.root / "release.yaml").write_text(text.replace("version: v0", f"version: {version}"))
        assert project.cli("run", "--quiet") == 0
        assert project.cli("holdout", "run", "--reason", f"{version} read", "--quiet") == 0


def gap(project: Project, *extra: str) -> tuple[int, dict[str, Any], str]:
    out, md = project.root / "gap.json", project.root / "gap.md"
    code = project.cli("gap", "--baseline", "version:v0", "--json", str(out), "--markdown", str(md), *extra)
    return code, json.loads(out.read_text()), md.read_text()


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def test_the_chapters_composition_point_is_shown_as_it_is_made(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # Dev 40% supply (the easy category), holdout 20%; within each category the sets score alike.
    build(project, dev={"supply": (40, 36), "other": (60, 39)}, holdout={"supply": (20, 18), "other": (80, 52)})
    capsys.readouterr()
    code, data, markdown = gap(project)
    out = capsys.readouterr().out
    assert code == 0, out
    week0 = data["composition"]["levels"][0]
    assert week0["version"] == "v0"
    raw, reweighted = week0["raw"], week0["reweighted"]
    assert (round(raw["dev"]["estimate"], 3), round(raw["holdout"]["estimate"], 3)) == (0.75, 0.7)
    assert (round(reweighted["dev"]["estimate"], 3), round(reweighted["holdout"]["estimate"], 3)) == (0.7, 0.7)
    assert round(100 * week0["composition_share"], 1) == 5.0
    assert reweighted["dev"]["method"] == "wilson-cc-mover" and reweighted["dev"]["approximate"] is True
    # The reweighted dev level: Wilson (continuity-corrected) per stratum, MOVER under weights 0.2 / 0.8
    # (tests/stats/test_reweight.py pins the same numbers against an independent computation).
    assert (reweighted["dev"]["low"], reweighted["dev"]["high"]) == pytest.approx(
        (0.5882866062010148, 0.7934066689714111), abs=1e-12
    )
    assert week0["sentence"] == COMPOSITION
    assert "    v0 (week 0): raw dev 0.750 vs holdout 0.700, gap +5.0 points, 95% [" in out
    assert "reweighted dev 0.700 vs holdout 0.700, gap +0.0 points, 95% [" in out
    assert f"  {COMPOSITION}\n" in out
    assert "| <code>v0</code> (week 0) | raw | 0.750 | 0.700 | +5.0, " in markdown
    assert "| <code>v0</code> (week 0) | reweighted | 0.700 | 0.700 | +0.0, " in markdown
    assert "**" + COMPOSITION.replace("[", "&#91;").replace("]", "&#93;") + "**" in markdown
    assert data["composition"]["notes"] == [] and data["composition"]["refused"] is None


def test_strata_of_80_and_120_with_no_movement_are_not_called_thin(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, dev={"a": (80, 60), "b": (120, 100)}, holdout={"a": (80, 60), "b": (120, 100)})
    capsys.readouterr()
    code, data, markdown = gap(project)
    out = capsys.readouterr().out
    assert code == 0
    comp = data["composition"]
    assert comp["thin"] == [] and comp["notes"] == []
    assert "too thin" not in out and "too thin" not in markdown and "scored together" not in out
    movement = comp["holdout"]["movement"]
    assert movement["estimate"] == 0.0 and movement["low"] < 0.0 < movement["high"]  # Tango: positive width
    assert movement["method"] == "tango-mover"
    assert comp["levels"][0]["sentence"].startswith("composition explains none of the raw gap of +0.0 points")


def test_a_thin_stratum_keeps_its_weight_and_is_named(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    build(project, dev={"rare": (3, 3), "common": (100, 70)}, holdout={"rare": (6, 5), "common": (100, 70)})
    weights = project.root / "weights.yaml"
    weights.write_text("rare: 1\ncommon: 1\n")
    capsys.readouterr()
    code, data, _ = gap(project, "--weights", str(weights))
    out = capsys.readouterr().out
    assert code == 0
    comp = data["composition"]
    assert comp["thin"] == [{"set": "dev", "stratum": "rare", "n": 3}, {"set": "holdout", "stratum": "rare", "n": 6}]
    assert comp["thin_width"] == 0.6
    # Its weight is kept: the reweighted dev level is 0.5·3/3 + 0.5·70/100, not a pooled rate.
    dev = comp["levels"][0]["reweighted"]["dev"]
    assert dev["estimate"] == pytest.approx(0.5 * 1.0 + 0.5 * 0.7)
    assert 0.0 <= dev["low"] < dev["estimate"] <= dev["high"] <= 1.0
    sentence = (
        "stratum rare has 3 case(s) on the dev set: too thin to say much about its rate there (its 95% interval is "
        "wider than 60 points); it keeps its weight 0.500, and its width is carried into the reweighted intervals"
    )
    assert sentence in comp["notes"] and f"  {sentence}" in out


def test_a_weighted_stratum_one_set_lacks_is_refused_with_the_reason(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, dev={"only-dev": (10, 9), "shared": (60, 40)}, holdout={"shared": (60, 40)})
    weights = project.root / "weights.yaml"
    weights.write_text("only-dev: 1\nshared: 3\n")
    capsys.readouterr()
    code, data, markdown = gap(project, "--weights", str(weights))
    out = capsys.readouterr().out
    assert code == 0  # the rest of the gap stands
    comp = data["composition"]
    reason = (
        "stratum only-dev carries weight 0.250 but has no case in the holdout: its rate there is unknown, so this "
        "set is not reweighted (declare its weight 0 with --weights to leave it out of both sets)"
    )
    assert comp["refused"] == reason
    assert comp["dev"] is None and comp["holdout"] is None and comp["fit"] is None
    assert comp["levels"][0]["reweighted"] is None and comp["levels"][0]["raw"]["gap"] is not None
    assert f"  not reweighted: {reason}" in out
    assert "Not reweighted: stratum only-dev carries weight 0.250" in markdown
    assert data["fit"] is not None  # the unweighted fit is still computed


def test_a_holdout_stratum_the_dev_set_lacks_refuses_the_reweighting(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, dev={"shared": (60, 40)}, holdout={"only-holdout": (30, 20), "shared": (60, 40)})
    code, data, _ = gap(project)
    assert code == 0
    assert data["composition"]["refused"] == (
        "stratum only-holdout carries weight 0.333 but has no case in the dev set: its rate there is unknown, so "
        "this set is not reweighted (declare its weight 0 with --weights to leave it out of both sets)"
    )
    weights = project.root / "weights.yaml"
    weights.write_text("only-holdout: 0.0000001\nshared: 1\n")
    _, data, _ = gap(project, "--weights", str(weights))
    assert data["composition"]["refused"].startswith("stratum only-holdout carries weight 1.0e-07 but has no case")


def test_the_holdout_mix_leaves_a_dev_only_stratum_out_and_says_so(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    build(project, dev={"only-dev": (10, 9), "shared": (60, 40)}, holdout={"shared": (60, 40)})
    code, data, _ = gap(project)
    comp = data["composition"]
    assert code == 0 and comp["refused"] is None
    assert comp["notes"][0].startswith("stratum only-dev has no holdout case: the holdout's mix gives it weight 0")
    assert comp["levels"][0]["reweighted"]["dev"]["estimate"] == pytest.approx(40 / 60)


def test_a_hostile_stratum_name_is_inert_in_markdown(project: Project) -> None:
    name = "x|<script>alert(1)</script>*[l](https://evil.example)"
    build(project, dev={name: (20, 15), "b": (20, 15)}, holdout={name: (20, 15), "b": (20, 15)})
    _, _, markdown = gap(project)
    assert "<script>" not in markdown and "](https://evil" not in markdown
    assert Path(project.root / "gap.md").exists()


def test_the_markdown_report_never_replaces_an_input(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    build(project, dev={"a": (20, 15)}, holdout={"a": (20, 15)})
    [record] = sorted((project.root / ".oloproof" / "holdout").glob("read-0001-*.json"))
    weights = project.root / "weights.yaml"
    weights.write_text("a: 1\n")
    inputs = {path: path.read_bytes() for path in (record, weights, project.root / "release.yaml")}
    for target in inputs:
        capsys.readouterr()
        code = project.cli("gap", "--baseline", "version:v0", "--weights", str(weights), "--markdown", str(target))
        assert code == 2, target
        assert capsys.readouterr().err.strip()
    assert {path: path.read_bytes() for path in inputs} == inputs


def _iv(estimate: float, low: float, high: float) -> Interval:
    return Interval(estimate=estimate, low=low, high=high, level=0.95, method="wilson-cc-mover", approximate=True)


@pytest.mark.parametrize(
    ("raw", "reweighted", "start"),
    [
        ((0.05, -0.08, 0.18), (0.0, -0.14, 0.14), "the apparent gap of +5.0 points between the sets is composition: "),
        ((0.05, -0.08, 0.18), (0.02, -0.1, 0.14), "+3.0 of the apparent +5.0 points between the sets is composition"),
        ((0.15, 0.05, 0.25), (0.1, 0.02, 0.2), "composition accounts for +5.0 of the +15.0 points between the sets;"),
        ((0.012, -0.09, 0.12), (0.01, -0.09, 0.12), "composition explains none of the raw gap of +1.2 points (the two"),
        ((0.12, 0.02, 0.22), (0.12, 0.02, 0.22), "composition explains none of the raw gap of +12.0 points: "),
        (
            (0.0, -0.1, 0.1),
            (-0.06, -0.15, 0.03),
            "composition hides a gap rather than explains one: the raw gap is +0.0",
        ),
    ],
)
def test_the_composition_sentence_in_each_case(
    raw: tuple[float, float, float], reweighted: tuple[float, float, float], start: str
) -> None:
    from oloproof.holdout.levels import composition_sentence

    dev, hold = _iv(0.7 + reweighted[0], 0.6, 0.8), _iv(0.7, 0.6, 0.8)
    sentence = composition_sentence("v0", _iv(*raw), _iv(*reweighted), dev, hold)
    assert sentence.startswith(start), sentence


def test_many_thin_strata_are_counted_not_listed_one_by_one(project: Project) -> None:
    strata = {f"s{i:02d}": (3, 2) for i in range(12)}
    build(project, dev=strata, holdout=strata)
    code, data, _ = gap(project)
    comp = data["composition"]
    assert code == 0 and len(comp["thin"]) == 24
    assert len(comp["notes"]) == 9 and comp["notes"][-1] == (
        "and 16 more thin strata, each keeping its weight (all are listed under composition.thin in the --json report)"
    )
    assert {row["weight"] for row in comp["strata"]} == {1 / 12}
