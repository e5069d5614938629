"""A job summary as GitHub shows it: the Markdown rendered by GitHub's own Markdown (cmark-gfm, the
``cmarkgfm`` wheel, with the extensions github.com enables: table, strikethrough, autolink,
tagfilter; raw HTML passed through, as GitHub's sanitiser then filters it to an allow-list), in a
page styled like GitHub's markdown-body (tests/fixtures/summary/markdown-body.css, 1000 px), laid
out by headless Chromium (tests/fixtures/metamorphic/chromium.py) and measured in the DOM."""

from __future__ import annotations

import base64
import html
import io
import re
from pathlib import Path
from typing import Any

CSS = Path(__file__).resolve().parents[1] / "fixtures" / "summary" / "markdown-body.css"
WIDTH = 1000
# Tags github.com's sanitiser keeps (a subset of its allow-list: the ones a summary may use).
GITHUB_TAGS = frozenset(
    "a b blockquote br code del details div em h1 h2 h3 h4 h5 h6 hr i img input kbd li ol p pre s sub "
    "summary sup strong table tbody td th thead tr tt ul".split()
)


def to_html(markdown: str) -> str:
    import cmarkgfm  # lazy: start-up (a dev extra, only these tests need it)
    from cmarkgfm.cmark import Options  # lazy: start-up

    return cmarkgfm.markdown_to_html_with_extensions(
        markdown,
        options=Options.CMARK_OPT_UNSAFE | Options.CMARK_OPT_GITHUB_PRE_LANG,
        extensions=["table", "strikethrough", "autolink", "tagfilter"],
    )


def tags(body: str) -> set[str]:
    return {match.lower() for match in re.findall(r"</?([A-Za-z][A-Za-z0-9-]*)", body)}


def page(markdown: str, title: str = "summary") -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{CSS.read_text(encoding='utf-8')}</style></head>"
        f"<body><article class='markdown-body'>{to_html(markdown)}</article></body></html>"
    )


# Measured in the page: every number a test asserts on.
MEASURE = r"""
(function () {
  const body = document.querySelector('.markdown-body');
  const tables = [...body.querySelectorAll('table')].map(t => ({
    scroll: t.scrollWidth, client: t.clientWidth, width: t.getBoundingClientRect().width}));
  const emptyHeads = [...body.querySelectorAll('thead tr')].filter(
    tr => [...tr.children].every(th => th.textContent.trim() === '')).length;
  // Every interval "[0.765, 0.914]" in a table cell, as laid out: on how many lines it sits.
  const interval = /\[-?\d+(\.\d+)?,\s-?\d+(\.\d+)?\]/g;
  const wrapped = [];
  let intervals = 0;
  for (const td of body.querySelectorAll('td')) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const m of node.textContent.matchAll(interval)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
        intervals += 1;
        if (tops.size > 1) wrapped.push(m[0]);
      }
    }
  }
  const pictures = [...body.querySelectorAll('code')].filter(e => /[├┤■]/.test(e.textContent));
  const picturesWrapped = pictures.filter(e => e.getClientRects().length > 1).map(e => e.textContent);
  const h2 = body.querySelector('h2');
  const why = [...body.querySelectorAll('p')].find(e => /^Why\b/.test(e.textContent.trim()));
  const whyList = why && why.nextElementSibling && why.nextElementSibling.tagName === 'UL' ? why.nextElementSibling : why;
  const text = body.innerText;
  return {
    height: Math.ceil(document.documentElement.scrollHeight),
    bodyWidth: body.clientWidth,
    tables, emptyHeads, wrapped, pictures: pictures.length, picturesWrapped,
    verdictTop: h2 ? h2.getBoundingClientRect().top : null,
    verdict: h2 ? h2.textContent : null,
    whyBottom: whyList ? whyList.getBoundingClientRect().bottom : null,
    intervals,
    backticks: (text.match(/`/g) || []).length,
    headings: [...body.querySelectorAll('h2, h3, h4')].map(h => h.textContent),
    text,
  };
})()
"""


def measure(browser: Any, file: Path) -> dict[str, Any]:
    browser.open(file)
    result: dict[str, Any] = browser.js(MEASURE)
    return result


def screenshot(browser: Any, file: Path, height: int, *, colours: int = 64) -> None:
    """The page clipped to its content, as a palette PNG (small enough to keep in docs/)."""
    from PIL import Image  # lazy: start-up

    data = browser.page(
        "Page.captureScreenshot",
        format="png",
        captureBeyondViewport=True,
        clip={"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1},
    )["data"]
    with Image.open(io.BytesIO(base64.b64decode(data))) as image:
        small = image.convert("RGB").quantize(colors=colours, method=Image.Quantize.MEDIANCUT)
        small.save(file, format="PNG", optimize=True)
