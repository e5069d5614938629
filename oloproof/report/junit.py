"""JUnit XML: one test case per rule, so any CI can show rules as tests.

PASS passes; FAIL, INSUFFICIENT_EVIDENCE and MANUAL_REVIEW are failures (each fails the gate
by default) with the verdict as the failure type; BLOCKED is an error. An advisory rule that does
not pass is skipped (it never fails the gate), its verdict in the message. What is said beside a
rule's verdict (advisory, its own ``approximate: allow``, an accepted transform) is its system-out.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from oloproof.result import GateResult
from oloproof.verdicts import Verdict


def render(result: GateResult) -> str:
    counted = [rule for rule in result.rules if not rule.advisory]
    failures = sum(1 for rule in counted if rule.verdict not in (Verdict.PASS, Verdict.BLOCKED))
    errors = sum(1 for rule in counted if rule.verdict is Verdict.BLOCKED)
    skipped = sum(1 for rule in result.rules if rule.advisory and rule.verdict is not Verdict.PASS)
    suite = ET.Element(
        "testsuite",
        name=f"oloproof gate ({result.release.path})",
        tests=str(len(result.rules)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        timestamp=result.generated_at,
    )
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("verdict", result.verdict.value),
        ("system.version", result.version),
        ("testset.digest", result.testset.digest),
        ("config.digest", result.release.digest),
        ("checker.version", result.checker.version),
        ("checker.source_digest", result.checker.source_digest),
    ):
        ET.SubElement(props, "property", name=name, value=value)
    for rule in result.rules:
        case = ET.SubElement(
            suite, "testcase", classname=f"oloproof.{rule.criterion}", name=rule.rule_id, file=rule.source
        )
        if rule.line is not None:
            case.set("line", str(rule.line))
        if rule.marks:
            ET.SubElement(case, "system-out").text = "\n".join(rule.marks)
        if rule.verdict is Verdict.PASS:
            continue
        tag = "skipped" if rule.advisory else "error" if rule.verdict is Verdict.BLOCKED else "failure"
        element = ET.SubElement(
            case, tag, type=rule.verdict.value, message=f"{rule.verdict.value}: {rule.full_sentence}"
        )
        element.text = "reasons: " + ", ".join(rule.reasons)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
