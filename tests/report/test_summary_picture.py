"""The picture of an interval against its threshold (issue 19 §6; ``oloproof.report.md_rules``), and
what trimming a summary to its limit does to the folded sections."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from oloproof.report import markdown
from oloproof.report.md_rules import WIDTH, margin_text, picture
from oloproof.result import GateResult

finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


@given(finite, finite, st.floats(min_value=0, max_value=1), finite)
def test_the_threshold_is_always_drawn_on_the_side_it_is(a: float, b: float, share: float, threshold: float) -> None:
    low, high = min(a, b), max(a, b)
    estimate = low + share * (high - low)
    shown = picture(low, high, estimate, threshold)
    assert len(shown) == WIDTH and shown.count("¦") == 1 and {shown[0], shown[-1]} <= {"\u00a0", "¦"}
    t = shown.index("¦")
    left = shown.index("├") if "├" in shown else shown.index("■")
    right = shown.index("┤") if "┤" in shown else shown.index("■")
    assert left <= right
    if threshold < low:
        assert t < left  # a lower bound that clears is drawn clear of the threshold, however small the gap
    elif threshold > high:
        assert t > right
    elif right - left >= 2:
        assert left < t < right  # a straddled threshold is drawn inside
    else:
        assert t in (left - 1, right + 1)


def test_the_picture_reads_the_examples() -> None:
    assert picture(0.765, 0.914, 0.85, 0.95).replace("\u00a0", " ") == " ├──────■─────┤  ¦ "
    assert picture(0.765, 0.914, 0.85, 0.8).replace("\u00a0", " ") == " ├───¦────■──────┤ "
    assert picture(0.9, 0.95, 0.93, 0.5).replace("\u00a0", " ") == " ¦             ├■┤ "  # clears by 8 widths of the interval
    assert margin_text(0.765, 0.914, 0.95, "min") == "misses by 0.036"
    assert margin_text(0.765, 0.914, 0.7, "min") == "clears by 0.065"
    assert margin_text(0.011, 0.076, 0.2, "max") == "clears by 0.124"
    assert margin_text(0.765, 0.914, 0.8, "min") == "straddles"


def test_a_trimmed_summary_closes_every_section_it_opens(sample: GateResult) -> None:
    many = replace(
        sample,
        limitations=tuple(f"limitation {i}: {'z' * 300}" for i in range(400)),
        problems=tuple(f"problem {i}" for i in range(50)),
    )
    for limit in (3_000, 8_000, 20_000, 60_000):
        text = markdown.render(many, limit=limit, full_report="oloproof-report.md")
        assert len(text.encode()) <= limit
        assert text.count("<details>") == text.count("</details>"), limit


def test_a_rule_without_a_finite_interval_has_no_picture(sample: GateResult) -> None:
    rule = sample.rules[0]
    assert rule.interval is not None
    odd = replace(rule, interval=replace(rule.interval, high=float("inf")))
    text = markdown.render(replace(sample, rules=(odd,)))
    row = next(line for line in text.splitlines() if line.startswith(f"| <code>{rule.rule_id}</code>"))
    assert "| — |" in row and "├" not in row
