"""The job-summary (Markdown) and annotation renderers: golden files, escaping, caps, trimming.

Golden files live in ``tests/report/gold/``; the sample result and the regenerate switch are in
``tests/report/conftest.py`` and ``golden.py`` (``OLOPROOF_REGOLD=1 python -m pytest tests/report``).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace

import pytest

from oloproof.report import annotations as ann
from oloproof.report import markdown
from oloproof.result import CheckReport, GateResult
from oloproof.verdicts import Verdict
from report.golden import HOSTILE, check_gold

# ---------------------------------------------------------------- golden files


def test_summary_gold(sample: GateResult) -> None:
    check_gold("summary.md", markdown.render(sample, fail_on=ann.FAILING, notes=("no check run: a note.",)))


def test_annotations_gold(sample: GateResult) -> None:
    fail_on = frozenset({Verdict.FAIL, Verdict.BLOCKED})
    text = ann.render(sample, fail_on=fail_on)
    check_gold("annotations.txt", text)
    api = [annotation.api() for annotation in ann.collect(sample, fail_on=fail_on)]
    check_gold("annotations-api.json", json.dumps(api, indent=2, ensure_ascii=False) + "\n")


# ---------------------------------------------------------------- markdown


def table_cells(line: str) -> int:
    return len(re.findall(r"(?<!\\)\|", line)) - 1


def test_every_table_row_keeps_its_columns_whatever_the_text(sample: GateResult) -> None:
    hostile = replace(sample, checks=(*sample.checks, CheckReport(name="x", title=HOSTILE, status=HOSTILE, lines=(HOSTILE,))))
    text = markdown.render(hostile)
    for block in text.split("\n\n"):
        rows = [line for line in block.splitlines() if line.startswith("|")]
        assert len({table_cells(row) for row in rows}) <= 1, block


def test_text_from_files_cannot_inject_markup(sample: GateResult) -> None:
    text = markdown.render(sample)
    assert "<script>" not in text and "](https://evil.example)" not in text and "*bold*" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert markdown.esc("a\nb") == "a<br>b"


def test_every_check_report_appears_without_the_renderer_knowing_it(sample: GateResult) -> None:
    text = markdown.render(sample)
    for report in sample.checks:
        assert f"| {markdown.esc(report.title)} | {markdown.esc(report.status)} |" in text
        for line in report.lines:
            assert f"- {markdown.esc(line)}" in text
    assert (
        "| <code>recipe&#95;accurate</code><br><sub><code>correct</code> · crossed cases × seeds</sub> | 👀\u00a0MANUAL_REVIEW "
        "| 0.882 | <code>[0.832,\u00a00.919]</code>\u00a0≈ |"
    ) in text
    assert "Near-duplicates of training rows are not checked." in text  # a check's own limitation


def test_absent_standard_checks_say_so(sample: GateResult) -> None:
    text = markdown.render(replace(sample, checks=()))
    assert "| Leakage | not checked (release.yaml declares no leakage check) | — |" in text
    assert "| Metamorphic transforms | no transforms declared in release.yaml | — |" in text
    assert "| Holdout | no holdout declared in release.yaml | — |" in text
    assert "Seeds" not in text  # shown only when configured


@pytest.mark.parametrize("limit", [600, 2_000, 5_000, 20_000])
def test_a_summary_over_its_limit_is_trimmed_to_fit_with_a_note(sample: GateResult, limit: int) -> None:
    many = replace(sample, problems=tuple(f"problem {i}: {'x' * 200}" for i in range(200)))
    text = markdown.render(many, limit=limit, full_report="oloproof-report.md")
    assert len(text.encode("utf-8")) <= limit
    assert text.startswith("## ⛔ oloproof gate: FAIL\n") or text.startswith(f"## {markdown.ICON[many.verdict]} oloproof gate:")
    if limit >= 2_000:
        assert "> **Trimmed:**" in text and "<code>oloproof-report.md</code>" in text
    if limit >= 5_000:
        rules = text[text.index("### Rules") :]
        assert rules.index("strict") < rules.index("accurate")  # most severe first when trimmed


def test_a_summary_within_its_limit_is_untouched(sample: GateResult) -> None:
    full = markdown.render(sample, limit=1 << 40)
    assert markdown.render(sample) == full and "Trimmed" not in full


def test_a_real_megabyte_summary_is_trimmed_under_one_mib(sample: GateResult) -> None:
    huge = replace(sample, problems=tuple(f"case c{i:06d}: output has no 'label' " + "y" * 80 for i in range(20_000)))
    text = markdown.render(huge, full_report="oloproof-report.md")
    assert len(markdown.render(huge, limit=1 << 40).encode()) > 1024 * 1024
    assert len(text.encode()) <= 1024 * 1024 and "> **Trimmed:**" in text and "### Rules" in text


# ---------------------------------------------------------------- annotations


def runner_unescape_data(text: str) -> str:
    # The runner's ActionCommand unescaping, in its order (actions/runner src/Runner.Common/ActionCommand.cs).
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def runner_unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


@pytest.mark.parametrize("text", ["plain", "100% sure", "a\nb\r\nc", "%0A literal", "k:v,w", HOSTILE, "%25%3A%2C"])
def test_escaping_round_trips_through_the_runner(text: str) -> None:
    assert runner_unescape_data(ann.escape_data(text)) == text
    assert runner_unescape_property(ann.escape_property(text)) == text
    assert "\n" not in ann.escape_data(text) and "," not in ann.escape_property(text)


def test_a_command_line_is_escaped_per_field() -> None:
    note = ann.Annotation(level="warning", title="rule a,b: x", message="50%\ndone", file="dir,1/release:yaml", line=7)
    assert note.command() == "::warning file=dir%2C1/release%3Ayaml,line=7,title=rule a%2Cb%3A x::50%25%0Adone"
    assert ann.Annotation(level="notice", title="", message="m").command() == "::notice::m"


def make(level: ann.Level, severity: int, name: str) -> ann.Annotation:
    return ann.Annotation(level=level, title=name, message=name, severity=severity)


def test_caps_keep_the_most_severe_ten_per_level_and_count_the_rest() -> None:
    items = [make("warning", 1, f"w{i}") for i in range(12)] + [make("error", 3 if i % 2 else 4, f"e{i}") for i in range(15)]
    items += [make("notice", 0, f"n{i}") for i in range(3)]
    kept = ann.capped(items)
    assert [a.title for a in kept if a.level == "error"] == ["e0", "e2", "e4", "e6", "e8", "e10", "e12", "e14", "e1", "e3"]
    assert [a.title for a in kept if a.level == "warning"] == [f"w{i}" for i in range(10)]
    notices = [a for a in kept if a.level == "notice"]
    assert [a.title for a in notices[:-1]] == ["n0", "n1", "n2"]
    assert notices[-1].message.startswith("7 more finding(s) are not shown")
    assert all(sum(1 for a in kept if a.level == level) <= 10 for level in ("error", "warning", "notice"))


def test_the_counting_notice_takes_a_notices_place() -> None:
    kept = ann.capped([make("notice", 0, f"n{i}") for i in range(10)])
    assert len(kept) == 10 and kept[-1].title == "n9"  # exactly ten: no overflow, no counting notice
    kept = ann.capped([make("notice", 0, f"n{i}") for i in range(11)])
    assert len(kept) == 10 and kept[-1].message.startswith("2 more finding(s)")


def test_levels_follow_fail_on(sample: GateResult) -> None:
    found = ann.collect(sample, fail_on=frozenset({Verdict.FAIL}))
    assert [(a.level, a.title) for a in found] == [
        ("error", "oloproof: rule strict is FAIL"),
        ("warning", "oloproof: rule borderline is INSUFFICIENT_EVIDENCE"),  # outranks MANUAL_REVIEW (issue 16)
        ("warning", "oloproof: rule recipe_accurate is MANUAL_REVIEW"),
        ("warning", "oloproof: Seeds: recipe loan-model is MANUAL_REVIEW"),
    ]


def test_paths_outside_the_repository_get_no_file(sample: GateResult) -> None:
    found = ann.collect(sample, path_of=lambda path: None)
    assert all(a.file is None and a.line is None for a in found)
    assert all("file=" not in a.command() for a in found)


def test_stop_commands_wraps_text_with_a_token_it_does_not_contain() -> None:
    text = "::error::from a model\n::add-mask::x"
    wrapped = ann.stop_commands(text, token="abc")
    assert wrapped == "::stop-commands::abc\n::error::from a model\n::add-mask::x\n::abc::\n"
    hostile = "::deadbeef::\n"
    assert not ann.stop_commands(hostile, token="deadbeef").startswith("::stop-commands::deadbeef\n")


@pytest.mark.parametrize("text", ["@octo-org/admins", "ask @alice", "a@b", "@@x"])
def test_no_summary_text_can_mention_a_person_or_team(text: str) -> None:
    from oloproof.report.md_text import code, esc, prose

    for escaped in (esc(text), code(text), prose(f"stratum `{text}` and {text}")):
        assert re.search(r"@[A-Za-z0-9@]", escaped) is None, escaped  # GitHub links @name, @org/team
    assert esc(text).replace("\u200b", "") == text.replace("&", "&amp;")  # reads the same
