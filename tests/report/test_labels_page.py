"""The labelling page: offline, escaped, and usable — driven for real in headless Chromium."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw

from oloproof.cli.main import main
from oloproof.config import load_release
from oloproof.gate import load_dev_testset
from oloproof.metamorphic.variants import transformed_cases
from oloproof.report.labels_page import CSP
from tests.conftest import FIXTURES, write_cases
from tests.fixtures.metamorphic.chromium import Browser, chromium_path

SYSTEM = FIXTURES / "metamorphic" / "system.py"
HOSTILE = "<script>window.__pwned = 1</script><img src=x onerror=\"window.__pwned = 2\"> good & \"quoted\" 'single'"


def project(root: Path, cases: list[dict[str, Any]], *, field: str, perturb: str, labels: bool = True) -> str:
    write_cases(root / "data" / "test.jsonl", cases)
    (root / "release.yaml").write_text(
        f"system:\n  version: v1\n  command: {json.dumps([sys.executable, str(SYSTEM)])}\n"
        "testset:\n  cases: data/test.jsonl\n"
        "evaluators:\n  - {type: label_match, field: label}\n"
        "  - {type: metamorphic_relation, relation: same_label, transform: t, field: label}\n"
        f"metamorphic:\n  transforms:\n    - name: t\n      field: {field}\n      perturb: {perturb}\n"
        + ("      labels: labels/t.jsonl\n" if labels else "")
        + "policy:\n  rules:\n    - {id: stable, criterion: flips_under_t, max: 0.5}\n",
        encoding="utf-8",
    )
    return str(root / "release.yaml")


def text_cases() -> list[dict[str, Any]]:
    return [
        {"id": "plain", "text": "a good film", "expected": {"label": 1}},
        {"id": "hostile<script>x</script>", "text": HOSTILE, "expected": {"label": "</script><b>"}},
        {"id": "third", "text": "good enough", "expected": {"label": 1}},
        {"id": "untouched", "text": "nothing here", "expected": {"label": 0}},
    ]


def render(root: Path, cases: list[dict[str, Any]], *, field: str, perturb: str) -> tuple[str, Path]:
    config = project(root, cases, field=field, perturb=perturb)
    page = root / "labels.html"
    assert main(["metamorphic", "label", "t", "-c", config, "-o", str(page)]) == 0
    return config, page


def test_the_page_is_offline_and_escapes_every_case_string(tmp_path: Path) -> None:
    _, page = render(tmp_path, text_cases(), field="text", perturb="{kind: word_swap, mapping: {good: fine}}")
    html = page.read_text()
    assert "<script>window.__pwned" not in html and "<img src=x" not in html and "</script><b>" not in html
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in html
    assert 'data-id="hostile&lt;script&gt;x&lt;/script&gt;"' in html
    assert not re.search(r"(?i)(https?:|ftp:)?//[a-z0-9]", html.replace(CSP, "")), "no external URL of any kind"
    assert html.count("<script") == 2 and '<script type="application/json" id="config">' in html
    assert f'content="{CSP}"' in html and "default-src 'none'" in CSP
    assert 'data-id="untouched"' not in html  # not applicable: nothing to label
    assert html.count('<section class="case"') == 3


def test_images_are_embedded_as_data_uris(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    image = Image.new("RGB", (24, 24), (210, 210, 200))
    ImageDraw.Draw(image).line([(2, 2), (20, 18)], fill=(20, 20, 20))
    image.save(tmp_path / "images" / "a.png")
    _, page = render(tmp_path, [{"id": "a", "image": "images/a.png", "expected": {"label": 1}}], field="image",
                     perturb="{kind: jpeg, quality: 10}")
    html = page.read_text()
    assert html.count('src="data:image/png;base64,') == 1 and html.count('src="data:image/jpeg;base64,') == 1
    assert "images/a.png" not in html


def current_digests(config: str) -> dict[str, str]:
    release = load_release(config)
    return transformed_cases(release, load_dev_testset(release), "t").pair_digests


def with_old_labels(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[str, Path]:
    """A page over labels of three kinds: current (plain), without a digest (third), stale (hostile)."""
    config = project(root, text_cases(), field="text", perturb="{kind: word_swap, mapping: {good: fine}}")
    digests = current_digests(config)
    write_cases(root / "labels" / "t.jsonl", [
        {"id": "plain", "preserved": True, "digest": digests["plain"]},
        {"id": "third", "preserved": False},
        {"id": "hostile<script>x</script>", "preserved": True, "digest": "sha256:" + "0" * 64},
    ])
    page = root / "labels.html"
    capsys.readouterr()
    assert main(["metamorphic", "label", "t", "-c", config, "-o", str(page)]) == 0
    return config, page


def test_only_current_labels_are_filled_in(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, page = with_old_labels(tmp_path, capsys)
    assert capsys.readouterr().out.startswith(
        f"wrote {page}: 3 changed case(s) to label (1 already labelled in labels/t.jsonl; 2 labelled without a digest or on "
        "a different change, shown again as needing a look)"
    )
    html = page.read_text()
    assert re.search(r'data-id="plain" data-digest="sha256:[0-9a-f]{64}" data-label="yes"', html)
    assert re.search(r'data-id="third" data-digest="sha256:[0-9a-f]{64}" data-label=""', html)
    assert re.search(r'data-id="hostile&lt;script&gt;x&lt;/script&gt;" data-digest="sha256:[0-9a-f]{64}" data-label=""', html)
    assert "needs a look: labelled changed meaning without a digest" in html
    assert "needs a look: labelled preserved on a different change" in html
    assert "2 case(s) need a look" in html
    assert '"file":"t.jsonl"' in html  # the export is named after the declared labels file


def test_a_declared_labels_file_that_does_not_exist_yet_gets_a_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, page = render(tmp_path, text_cases(), field="text", perturb="{kind: word_swap, mapping: {good: fine}}")
    assert "(labels/t.jsonl does not exist yet: save the exported file there)" in capsys.readouterr().out
    assert 'data-label="yes"' not in page.read_text() and "save the file as <code>labels/t.jsonl</code>" in page.read_text()


@pytest.fixture
def browser() -> Any:
    if chromium_path() is None:
        pytest.skip(
            "CHROMIUM IS NOT INSTALLED: the labelling page was NOT tested in a browser "
            "(apt-get install chromium chromium-driver)"
        )
    with Browser() as driven:
        yield driven


def test_labelling_in_chromium_exports_a_labels_file_the_gate_reads(tmp_path: Path, browser: Browser) -> None:
    config, page = render(tmp_path, text_cases(), field="text", perturb="{kind: word_swap, mapping: {good: fine}}")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.allow_downloads(downloads)
    browser.page("Network.enable")
    browser.open(page)
    assert browser.js("document.title") == "oloproof labels: t"
    assert browser.js("window.__pwned === undefined && !document.querySelector('img[src=x]')")
    assert browser.js("document.getElementById('progress').textContent") == "0 / 3 labelled (0 preserved, 0 changed meaning)"
    assert browser.js("document.activeElement.dataset.id") == "plain"

    browser.key("y")  # plain: preserved, then the hostile case gets the focus
    browser.key("n")  # hostile: changed meaning
    browser.click("section.case:nth-of-type(3) button.yes")  # third, by mouse
    browser.key("k")
    browser.key("u")  # clear the hostile case again ...
    browser.key("n")  # ... and label it once more
    assert browser.js("document.getElementById('progress').textContent") == "3 / 3 labelled (2 preserved, 1 changed meaning)"
    browser.screenshot(tmp_path / "labels.png")
    assert (tmp_path / "labels.png").stat().st_size > 10_000
    browser.key("e")
    while browser.wait_event("Browser.downloadProgress")["params"]["state"] != "completed":
        pass
    requests = [event["params"]["request"]["url"] for event in browser.events if event.get("method") == "Network.requestWillBeSent"]
    assert all(url.startswith(("file:", "data:", "blob:")) for url in requests), requests

    exported = downloads / "t.jsonl"
    labels = [json.loads(line) for line in exported.read_text().splitlines()]
    assert [(label["id"], label["preserved"]) for label in labels] == [
        ("plain", True), ("hostile<script>x</script>", False), ("third", True),
    ]
    release = load_release(config)
    variant = transformed_cases(release, load_dev_testset(release), "t")
    assert {label["id"]: label["digest"] for label in labels} == variant.pair_digests

    # The exported file, saved where release.yaml says, is what the gate reads.
    (tmp_path / "labels").mkdir()
    exported.rename(tmp_path / "labels" / "t.jsonl")
    report = tmp_path / "report.json"
    assert main(["gate", "-c", config, "-q", "--json", str(report)]) == 4
    details = json.loads(report.read_text())["criteria"]["flips_under_t"]["details"]["metamorphic"]
    assert details["status"] == "changes_meaning"
    assert details["labels"]["changed_meaning_ids"] == ["hostile<script>x</script>"]


def test_exporting_never_rebinds_a_label_nobody_looked_at_again(tmp_path: Path, browser: Browser, capsys: pytest.CaptureFixture[str]) -> None:
    config, page = with_old_labels(tmp_path, capsys)
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser.allow_downloads(downloads)
    browser.open(page)
    assert browser.js("document.getElementById('progress').textContent") == "1 / 3 labelled (1 preserved, 0 changed meaning)"
    assert browser.js("document.activeElement.dataset.id") == "hostile<script>x</script>"  # the first case needing a look
    assert browser.js("getComputedStyle(document.querySelector('section.case:nth-of-type(2) .look')).display") != "none"
    browser.key("e")
    while browser.wait_event("Browser.downloadProgress")["params"]["state"] != "completed":
        pass
    exported = [json.loads(line) for line in (downloads / "t.jsonl").read_text().splitlines()]
    assert exported == [{"id": "plain", "preserved": True, "digest": current_digests(config)["plain"]}]


def test_the_page_opens_at_its_instructions(tmp_path: Path, browser: Browser) -> None:
    """Issue 19, point 8: a long page opens at the top, where the instructions are, with the first
    case still to label marked (not scrolled to); the first key takes the reader there."""
    cases = [{"id": f"c{i:02d}", "text": f"a good film number {i}", "expected": {"label": 1}} for i in range(40)]
    config = project(tmp_path, cases, field="text", perturb="{kind: word_swap, mapping: {good: fine}}")
    release = load_release(config)
    digests = transformed_cases(release, load_dev_testset(release), "t").pair_digests
    done = [{"id": f"c{i:02d}", "preserved": True, "digest": digests[f"c{i:02d}"]} for i in range(30)]
    write_cases(tmp_path / "labels" / "t.jsonl", done)
    page = tmp_path / "labels.html"
    assert main(["metamorphic", "label", "t", "-c", config, "-o", str(page)]) == 0
    browser.open(page)
    assert browser.js("window.scrollY") == 0
    assert browser.js("document.querySelector('p.intro').getBoundingClientRect().bottom <= window.innerHeight")
    assert browser.js("document.activeElement.dataset.id") == "c30"
    assert browser.js("document.querySelector('section.case.current').dataset.id") == "c30"
    browser.key("y")
    assert browser.js("document.activeElement.dataset.id") == "c31"
    assert browser.js("window.scrollY") > 0
