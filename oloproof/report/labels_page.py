"""The labelling page: one offline HTML file to judge whether a transform kept each case's meaning.

Every changed case is shown as original and transformed input side by side (images embedded as
``data:`` URIs, text with the changed characters marked), with "preserved" / "changed meaning"
buttons and keyboard shortcuts. The page exports the labels file (JSONL, one ``{id, preserved,
digest}`` per labelled case) as a download made in the browser from a Blob: nothing leaves the
machine. A Content-Security-Policy forbids every network request, and every string that came
from a case is HTML-escaped (the script reads ids and digests back from escaped attributes and
writes only through ``textContent``).
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import html
import io
import json
from pathlib import Path
from typing import Any

import orjson

from oloproof.metamorphic.apply import TransformedSet
from oloproof.metamorphic.labels import Label, is_current
from oloproof.testset import Case
from oloproof.transforms.image import load_image, resolve_image

DIFF_LIMIT = 20_000  # characters; longer texts are shown without marks (difflib is quadratic)
_BROWSER_FORMATS = {
    "PNG": "image/png",
    "JPEG": "image/jpeg",
    "GIF": "image/gif",
    "WEBP": "image/webp",
    "BMP": "image/bmp",
}


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def image_data_uri(value: Any, base_dir: Path) -> str:
    """An image input as a data: URI (re-encoded as PNG when browsers cannot show its format)."""
    from PIL import Image  # lazy: start-up

    path = resolve_image(value, base_dir)
    raw = path.read_bytes()
    with Image.open(io.BytesIO(raw)) as handle:
        fmt = handle.format or ""
    if fmt not in _BROWSER_FORMATS:
        buffer = io.BytesIO()
        load_image(value, base_dir).save(buffer, format="PNG")
        raw, fmt = buffer.getvalue(), "PNG"
    return f"data:{_BROWSER_FORMATS[fmt]};base64,{base64.b64encode(raw).decode('ascii')}"


def _marked(text: str, other: str, *, side: str) -> str:
    """``text`` escaped, with the characters that differ from ``other`` wrapped in <del>/<ins>."""
    if len(text) + len(other) > DIFF_LIMIT:
        return _e(text)
    matcher = (
        difflib.SequenceMatcher(None, other, text, autojunk=False)
        if side == "after"
        else difflib.SequenceMatcher(None, text, other, autojunk=False)
    )
    tag = "ins" if side == "after" else "del"
    out: list[str] = []
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        piece = text[b0:b1] if side == "after" else text[a0:a1]
        if not piece:
            continue
        out.append(_e(piece) if op == "equal" else f"<{tag}>{_e(piece)}</{tag}>")
    return "".join(out)


def _value_html(variant: TransformedSet, case_id: str, *, side: str) -> str:
    spec = variant.spec
    value = variant.originals[case_id] if side == "before" else variant.transformed[case_id]
    other = variant.transformed[case_id] if side == "before" else variant.originals[case_id]
    if spec.family == "image":
        uri = image_data_uri(value, variant.base_dir)
        return f'<img alt="{_e(side)}" src="{uri}">'
    if isinstance(value, str) and isinstance(other, str):
        return f"<pre>{_marked(value, other, side=side)}</pre>"
    return f"<pre>{_e(_json(value, indent=True))}</pre>"


def _json(value: Any, *, indent: bool = False) -> str:
    """A value from a case as JSON text; an integer beyond 2**64 (which orjson cannot write) exactly."""
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2 if indent else 0).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, ensure_ascii=False, indent=2 if indent else None, separators=(",", ": "))


def render_page(
    variant: TransformedSet, labels: dict[str, Label] | None = None, *, labels_path: str | None = None
) -> str:
    """The page for ``variant``'s changed cases. Only current labels (``labels`` whose digest is
    that of the pair shown) are filled in; a label without a digest or made on another pair is
    not: the case is shown unlabelled, marked as needing a look, so exporting never re-binds a
    label to a pair nobody judged."""
    spec = variant.spec
    labels = labels or {}
    cases: dict[str, Case] = {case.id: case for case in variant.source.cases}
    cards: list[str] = []
    looks = 0
    for number, case_id in enumerate(variant.applicable, start=1):
        label = labels.get(case_id)
        digest = variant.pair_digests.get(case_id, "")
        state = look = ""
        if label is not None and is_current(label, digest):
            state = "yes" if label.preserved else "no"
        elif label is not None:
            looks += 1
            was = "preserved" if label.preserved else "changed meaning"
            why = "without a digest" if label.digest is None else "on a different change"
            look = f'<span class="look">needs a look: labelled {was} {why}</span>'
        expected = _json(cases[case_id].expected)
        cards.append(
            f'<section class="case" tabindex="-1" data-id="{_e(case_id)}" data-digest="{_e(digest)}"'
            f' data-label="{state}">'
            f'<header><span class="n">{number}</span> <code class="id">{_e(case_id)}</code>'
            f' <span class="expected">expected <code>{_e(expected)}</code></span>{look}'
            f'<span class="state"></span></header>'
            f'<div class="pair"><figure><figcaption>original</figcaption>'
            f"{_value_html(variant, case_id, side='before')}</figure>"
            f"<figure><figcaption>transformed</figcaption>{_value_html(variant, case_id, side='after')}</figure></div>"
            f'<div class="buttons"><button type="button" class="yes">preserved <kbd>y</kbd></button>'
            f'<button type="button" class="no">changed meaning <kbd>n</kbd></button></div>'
            f"</section>"
        )
    export_name = Path(labels_path).name if labels_path else f"{spec.name}.labels.jsonl"
    config = (
        orjson.dumps({"file": export_name})
        .decode()
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )
    empty = "" if cards else '<p class="empty">This transform changed no case: there is nothing to label.</p>'
    target = (
        f"save the file as <code>{_e(labels_path)}</code>"
        if labels_path
        else (
            f"save the file next to release.yaml and declare it as <code>labels:</code> of transform "
            f"<code>{_e(spec.name)}</code>"
        )
    )
    return _TEMPLATE.format(
        title=_e(f"oloproof labels: {spec.name}"),
        name=_e(spec.name),
        kind=_e(spec.kind),
        field=_e(spec.field),
        description=_e(spec.transform.describe()),
        n=len(cards),
        na=len(variant.not_applicable),
        cards="\n".join(cards),
        empty=empty,
        config=config,
        target=target,
        css=_CSS,
        script=_SCRIPT,
        csp=CSP,
        look=""
        if not looks
        else (
            f" <strong>{looks} case(s) need a look</strong>: labelled before without a digest or on a different "
            f"change, "
            "so not filled in; label them again."
        ),
    )


_CSS = """
*{box-sizing:border-box}body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#f6f6f4}
.bar{position:sticky;top:0;z-index:2;background:#fff;border-bottom:1px solid #ccc;padding:.6em 1em;
display:flex;gap:1em;align-items:center;flex-wrap:wrap}
.bar h1{font-size:1.05em;margin:0}.bar .progress{font-variant-numeric:tabular-nums}.bar .msg{color:#1a6d2f}
main{max-width:1100px;margin:0 auto;padding:1em}.intro{color:#444}
.case{background:#fff;border:2px solid #ddd;border-radius:6px;margin:1em 0;padding:.7em 1em;outline:none}
.case.current{border-color:#2864c7;box-shadow:0 0 0 3px #2864c733}
.case[data-label=yes]{background:#eef8f0}.case[data-label=no]{background:#fbeeee}
.case header{display:flex;gap:.6em;align-items:baseline}.case .n{color:#777;font-variant-numeric:tabular-nums}
.case .state{margin-left:auto;font-weight:600}
.case[data-label=yes] .state{color:#1a6d2f}.case[data-label=no] .state{color:#a12222}
.expected{color:#555;font-size:.9em}
.pair{display:grid;grid-template-columns:1fr 1fr;gap:1em;margin:.6em 0}figure{margin:0}
figcaption{font-size:.8em;text-transform:uppercase;letter-spacing:.05em;color:#666}
img{width:min(100%,360px);image-rendering:pixelated;border:1px solid #ccc;background:#fff}
pre{white-space:pre-wrap;word-break:break-word;background:#fafafa;border:1px solid #e2e2e2;padding:.5em;margin:.2em 0;
font-size:.95em}
ins{background:#c7f0cf;text-decoration:none;outline:1px solid #7cc48a}
del{background:#f6cccc;text-decoration:line-through}
button{font:inherit;padding:.35em .9em;border-radius:4px;border:1px solid #888;background:#fff;cursor:pointer}
.case[data-label=yes] button.yes{background:#1a6d2f;color:#fff}
.case[data-label=no] button.no{background:#a12222;color:#fff}
kbd{font:.8em ui-monospace,monospace;border:1px solid #aaa;border-radius:3px;padding:0 .3em;background:#f3f3f3;
color:#222}
.keys{font-size:.85em;color:#555}.empty{font-size:1.1em}
.look{color:#8a5a00;font-size:.9em}.case[data-label=yes] .look,.case[data-label=no] .look{display:none}
"""

_SCRIPT = r"""
(function () {
  "use strict";
  var config = JSON.parse(document.getElementById("config").textContent);
  var cases = Array.prototype.slice.call(document.querySelectorAll("section.case"));
  var current = 0;
  var progress = document.getElementById("progress");
  var msg = document.getElementById("msg");
  function words(label) { return label === "yes" ? "preserved" : label === "no" ? "changed meaning" : ""; }
  function update() {
    var yes = 0, no = 0;
    cases.forEach(function (c) {
      var label = c.getAttribute("data-label");
      if (label === "yes") { yes++; } else if (label === "no") { no++; }
      c.querySelector(".state").textContent = words(label);
    });
    progress.textContent = (yes + no) + " / " + cases.length + " labelled ("
      + yes + " preserved, " + no + " changed meaning)";
  }
  function focus(i, stay) {
    if (!cases.length) { return; }
    current = Math.max(0, Math.min(cases.length - 1, i));
    cases.forEach(function (c, k) { c.classList.toggle("current", k === current); });
    cases[current].focus({preventScroll: true});
    if (!stay) { cases[current].scrollIntoView({block: "center"}); }
  }
  function label(i, value) {
    cases[i].setAttribute("data-label", value);
    update();
    msg.textContent = "";
  }
  function exportLabels() {
    var lines = [];
    cases.forEach(function (c) {
      var value = c.getAttribute("data-label");
      if (value === "yes" || value === "no") {
        lines.push(JSON.stringify({id: c.dataset.id, preserved: value === "yes", digest: c.dataset.digest}));
      }
    });
    var blob = new Blob([lines.join("\n") + (lines.length ? "\n" : "")], {type: "application/x-ndjson"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = config.file;
    document.body.appendChild(a);
    a.click();
    a.remove();
    msg.textContent = "exported " + lines.length + " label(s) as " + config.file;
  }
  cases.forEach(function (c, i) {
    c.querySelector("button.yes").addEventListener("click", function () { focus(i); label(i, "yes"); });
    c.querySelector("button.no").addEventListener("click", function () { focus(i); label(i, "no"); });
    c.addEventListener("mousedown", function () { if (current !== i) { focus(i); } });
  });
  document.getElementById("export").addEventListener("click", exportLabels);
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key;
    if (key === "e") { exportLabels(); }
    else if (!cases.length) { return; }
    else if (key === "y" || key === "1") { label(current, "yes"); focus(current + 1); }
    else if (key === "n" || key === "2") { label(current, "no"); focus(current + 1); }
    else if (key === "u" || key === "Backspace") { label(current, ""); }
    else if (key === "j" || key === "ArrowDown") { focus(current + 1); }
    else if (key === "k" || key === "ArrowUp") { focus(current - 1); }
    else { return; }
    event.preventDefault();
  });
  update();
  var first = cases.findIndex(function (c) { return !c.getAttribute("data-label"); });
  // The page opens at its instructions: the first case to label is marked, not scrolled to.
  focus(first < 0 ? 0 : first, true);
  window.scrollTo(0, 0);
})();
"""


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


# No request of any kind (default-src 'none'); only this file's own style and script run, by
# hash, so even a case string that escaped escaping could not execute.
CSP = (
    f"default-src 'none'; img-src data:; style-src {_csp_hash(_CSS)}; script-src {_csp_hash(_SCRIPT)}; "
    "base-uri 'none'; form-action 'none'"
)

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{css}</style>
</head>
<body>
<div class="bar">
<h1>Label transform <code>{name}</code></h1>
<span class="progress" id="progress"></span>
<button type="button" id="export">export labels <kbd>e</kbd></button>
<span class="msg" id="msg" role="status"></span>
<span class="keys"><kbd>y</kbd> preserved <kbd>n</kbd> changed meaning <kbd>u</kbd> clear
<kbd>j</kbd>/<kbd>k</kbd> next/previous</span>
</div>
<main>
<p class="intro"><strong>{kind}</strong> on input <code>{field}</code>: {description}. {n} case(s) changed
({na} not applicable, not shown). For each case: would a careful person still give the transformed input the same
answer as the original? <em>Preserved</em> if yes; <em>changed meaning</em> if the change could make a different
answer correct. Then export the labels and {target}.{look}</p>
{empty}
{cards}
</main>
<script type="application/json" id="config">{config}</script>
<script>{script}</script>
</body>
</html>
"""
