"""The terminal, JSON and JUnit renderers against their gold files (the same sample result as the
summary and annotations; ``OLOPROOF_REGOLD=1 python -m pytest tests/report`` regenerates)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

from oloproof.report import jsonreport, junit, terminal
from oloproof.result import GateResult
from report.golden import check_gold, scrub


def test_terminal_gold(sample: GateResult, tmp_path: Path) -> None:
    check_gold("terminal.txt", scrub(terminal.render(sample, width=140), tmp_path))


def test_json_gold(sample: GateResult, tmp_path: Path) -> None:
    text = scrub(jsonreport.render(sample), tmp_path)
    check_gold("report.json", text)
    data = json.loads(text)
    assert data["schema"] == "oloproof.gate/1" and data["verdict"] == sample.verdict.value
    assert [rule["id"] for rule in data["rules"]] == [rule.rule_id for rule in sample.rules]


def test_junit_gold(sample: GateResult, tmp_path: Path) -> None:
    text = scrub(junit.render(sample), tmp_path)
    check_gold("junit.xml", text)
    suite = ET.fromstring(text.encode())
    cases = suite.iter("testcase")
    assert [case.get("name") for case in cases] == [rule.rule_id for rule in sample.rules]
