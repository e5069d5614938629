"""The pages for people (the seeds page, a labelling page per validated transform) are written to
the workspace under oloproof-pages/, named in the summary and in the `pages` output, for an
upload-artifact step; a JUnit file is written where `junit` says, for test-report actions."""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET

from tests.action.conftest import ActionRun
from tests.conftest import ECHO, Project, write_cases
from tests.seeds.test_check import five_seeds, seeds_file


def test_seeds_page_is_written_and_named(action: ActionRun) -> None:
    project: Project = action.project
    five_seeds(project)
    seeds_file(project, [f"s{k}" for k in range(1, 6)], min_=0.7)
    project.write(extra="seeds: seeds.yaml\n", policy_extra="  allow_approximate_methods: true\n",
                  rules="  - {id: accurate, criterion: correct, min: 0.1}", command=None, version="s1")
    result = action(**{"github-token": "", "reuse": "all"})
    assert result.outputs["pages"] == "oloproof-pages/seeds.html", result.stdout
    page = (project.root / "oloproof-pages" / "seeds.html").read_text()
    assert page.startswith("<!DOCTYPE html>") or page.lstrip().lower().startswith("<!doctype html")
    assert "s5" in page and "r1" in page
    assert "<code>oloproof-pages/seeds.html</code>" in result.summary
    assert "upload `oloproof-pages/` with actions/upload-artifact" in result.summary


def test_a_labelling_page_per_validated_transform_and_junit(action: ActionRun) -> None:
    root = action.workspace
    cases = [{"id": f"c{i}", "text": f"Hello world {i}", "expected": {"label": 1}, "answer": 1} for i in range(30)]
    write_cases(root / "data" / "test.jsonl", cases)
    (root / "release.yaml").write_text(
        f"system:\n  version: v1\n  command: {json.dumps([sys.executable, str(ECHO)])}\n  timeout_s: 30\n"
        "testset:\n  cases: data/test.jsonl\n"
        "evaluators:\n  - {type: label_match, field: label}\n"
        "  - {type: metamorphic_relation, transform: shout, relation: same_label, field: label}\n"
        "metamorphic:\n  transforms:\n    - name: shout\n      field: text\n      perturb: {kind: case, to: upper}\n"
        "policy:\n  rules:\n    - {id: accurate, criterion: correct, min: 0.5}\n"
    )
    result = action(**{"github-token": "", "junit": "reports/junit.xml"})
    assert result.outputs["pages"] == "oloproof-pages/labels-shout.html", result.stdout
    page = (root / "oloproof-pages" / "labels-shout.html").read_text()
    assert 'c0" data-digest="sha256:' in page and 'c29" data-digest' in page
    junit = ET.parse(root / "reports" / "junit.xml").getroot()
    assert junit.tag == "testsuite" and next(junit.iter("testcase")).get("name") == "accurate"


def test_junit_is_never_written_over_an_input(action: ActionRun) -> None:
    result = action(**{"junit": "release.yaml"})
    assert result.code == 2
    assert (action.workspace / "release.yaml").read_text().startswith("system:")


def test_no_pages_when_nothing_needs_one(action: ActionRun) -> None:
    result = action(**{"github-token": ""})
    assert result.outputs["pages"] == "" and not (action.workspace / "oloproof-pages").exists()
    assert "Pages for people" not in result.summary
