"""The job summary as GitHub shows it (issue 19 §6), for the nine states a summary has to read well
in, each made by the real CLI (``oloproof gate --markdown FILE``) on a small project
(tests/report/summary_states.py), rendered by GitHub's Markdown (cmark-gfm) and laid out by headless
Chromium at 1000 px (tests/report/rendered.py): no table wider than its column, no interval over two
lines, no empty header row, no literal backtick, the verdict and the why on the first screen (900 px).

Screenshots go to the test's tmp directory; with OLOPROOF_REGOLD=1 they are also written to
docs/summary/ (the ones docs/action.md shows)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.fixtures.metamorphic.chromium import Browser, chromium_path
from tests.report import rendered, summary_states

pytest.importorskip("cmarkgfm")
pytestmark = pytest.mark.skipif(chromium_path() is None, reason="needs chromium (Debian: apt-get install chromium)")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "summary"
FIRST_SCREEN = 900  # px: what a reader sees without scrolling


@pytest.fixture(scope="module")
def summaries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("states")
    return {name: summary_states.build(name, root / name) for name in summary_states.STATES}


@pytest.fixture(scope="module")
def laid_out(summaries: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("pages")
    found: dict[str, dict[str, Any]] = {}
    with Browser(width=rendered.WIDTH, height=FIRST_SCREEN) as browser:
        for name, markdown in summaries.items():
            page = out / f"{name}.html"
            page.write_text(rendered.page(markdown, name), encoding="utf-8")
            found[name] = rendered.measure(browser, page)
            shot = out / f"{name}.png"
            rendered.screenshot(browser, shot, found[name]["height"])
            found[name]["png"] = shot
            if os.environ.get("OLOPROOF_REGOLD") == "1":
                DOCS.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(shot, DOCS / f"{name}.png")
    return found


STATES = list(summary_states.STATES)


@pytest.mark.parametrize("state", STATES)
def test_the_summary_fits_github_s_column(laid_out: dict[str, dict[str, Any]], state: str) -> None:
    page = laid_out[state]
    assert page["tables"], "no table rendered"
    for table in page["tables"]:
        assert table["scroll"] <= table["client"], (state, table)  # no horizontal scroll bar, nothing cut off
    assert (page["intervals"] > 0 or state == "blocked") and page["wrapped"] == [], (state, page["wrapped"])
    assert page["picturesWrapped"] == [], state
    assert page["emptyHeads"] == 0, state  # an empty header row renders as a grey strip
    assert page["backticks"] == 0, state  # commands are code, not `literal backticks`
    assert page["png"].stat().st_size < 400_000


@pytest.mark.parametrize("state", STATES)
def test_the_verdict_and_why_are_on_the_first_screen(laid_out: dict[str, dict[str, Any]], state: str) -> None:
    page = laid_out[state]
    assert page["verdict"].startswith(("✅", "❌", "⛔", "⚠️", "👀")) and "oloproof gate:" in page["verdict"]
    assert page["verdictTop"] < 100
    assert page["whyBottom"] is not None and page["whyBottom"] <= FIRST_SCREEN, (state, page["whyBottom"])


@pytest.mark.parametrize("state", STATES)
def test_the_rendered_html_stays_within_github_s_allow_list(summaries: dict[str, str], state: str) -> None:
    body = rendered.to_html(summaries[state])
    assert rendered.tags(body) <= rendered.GITHUB_TAGS, rendered.tags(body) - rendered.GITHUB_TAGS
    assert "<script" not in body.lower() and " on" not in re.sub(r">[^<]*<", "><", body)  # no event handler


def test_each_state_has_its_verdict(laid_out: dict[str, dict[str, Any]]) -> None:
    verdicts = {name: page["verdict"].split(": ")[-1] for name, page in laid_out.items()}
    assert verdicts == {
        "pass": "PASS",
        "fail": "FAIL",
        "blocked": "BLOCKED",
        "insufficient": "INSUFFICIENT_EVIDENCE",
        "manual-review": "MANUAL_REVIEW",
        "per": "INSUFFICIENT_EVIDENCE",
        "advisory": "PASS",
        "seeds": "PASS",
        "metamorphic": "PASS",
    }


def test_a_pass_is_short(laid_out: dict[str, dict[str, Any]]) -> None:
    # Was 1708 px (1.9 screens) with the classification report, headers and limitations unfolded.
    assert laid_out["pass"]["height"] <= 1.2 * FIRST_SCREEN


def test_a_blocked_gate_says_its_reason_once_and_counts_every_rule(summaries: dict[str, str]) -> None:
    blocked, seeds = summaries["blocked"], summaries["seeds"]
    assert blocked.count("no leakage check of") == 1  # was three times: the why, the check table, the check's line
    assert "<code>oloproof leakage check --training FILE --record</code>" in blocked
    assert "<code>accurate</code>, <code>recipe&#95;accurate</code> **BLOCKED**" in blocked
    assert "2 rules: 2 BLOCKED." in blocked and "2 rules: 2 PASS." in seeds  # the recipe rule is counted in both


def test_a_pass_shows_no_problems_heading_for_a_transform_no_rule_reads(summaries: dict[str, str]) -> None:
    text = summaries["metamorphic"]
    assert "### Problems" not in text
    unread = text.index("No rule reads these rates:")
    assert text.index("flips&#95;under&#95;drift (drift: numeric&#95;noise) is a declared transform") > unread


def test_detail_is_folded(summaries: dict[str, str]) -> None:
    seeds = summaries["seeds"]
    assert "<details><summary>What this cannot tell (" in seeds
    runs = seeds.index("<details><summary>Recipe across seeds (5)</summary>")
    assert seeds.index("- seed&#95;1: run ") > runs  # the run ids are inside it
    assert "<details><summary>Classification report: <code>correct</code> (300 cases)</summary>" in seeds


def test_per_rows_and_advisory_rules_read_in_the_table(summaries: dict[str, str]) -> None:
    per = summaries["per"]
    rows = [line for line in per.splitlines() if line.startswith("| ↳")]
    assert [row.split("<code>")[1].split("</code>")[0] for row in rows] == ["Adelie", "Chinstrap", "Gentoo"]
    chinstrap = rows[1]
    assert "INSUFFICIENT_EVIDENCE" in chinstrap and "<code>[0.734,\u00a00.929]</code>" in chinstrap
    assert "straddles" in chinstrap and "n=60 · 95%" in chinstrap
    advisory = summaries["advisory"]
    assert "<br><sub>advisory</sub>" in advisory and "**FAIL, advisory**" in advisory
    assert "1 advisory (shown, not counted in the verdict)" in advisory


HOSTILE_LABELS = ("<img src=x onerror=alert(1)>", "`rm -rf` | a | b", "[x](https://evil.example) **b** ::error::")


def test_hostile_per_labels_and_rule_ids_stay_text(tmp_path: Path) -> None:
    """A per: value from the cases (and a rule id) is text in the table: no tag, no link, no code
    span of its own, the row keeps its six columns."""
    from tests.conftest import Project

    cases = [
        {"id": f"h{k}{i:03d}", "answer": label if i >= 1 else "no", "expected": {"label": label}}
        for k, label in enumerate(HOSTILE_LABELS)
        for i in range(100)
    ]
    project = Project(tmp_path).write(
        cases=cases, rules="  - {id: 'by_label', criterion: correct, min: 0.8, per: expected.label}"
    )
    text = summary_states._gate(project, 0)
    rows = [line for line in text.splitlines() if line.startswith("| ↳")]
    assert len(rows) == 3
    body = rendered.to_html(text)
    assert "<img" not in body and "<a " not in body and "<strong>b</strong>" not in body
    assert rendered.tags(body) <= rendered.GITHUB_TAGS
    table = body[body.index("<table>") : body.index("</table>")]
    for row in table.split("<tr>")[2:]:
        assert row.count("<td") == 6, row
