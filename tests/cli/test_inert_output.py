"""Output is inert in every command (issue 16, point 9).

Case ids, checkpoint names and system versions come from files a pull request can edit. Printed by
the plain CLI into a CI log, a line starting (after blanks) with ``::error::`` or ``::add-mask::``,
or holding ``##[`` anywhere, is a workflow command GitHub's runner executes; controls, bidi
overrides and emoji in them reach the terminal. A hypothesis property drives hostile names through
every command that prints them (gate, its Markdown and JUnit on stdout, leakage check, seeds,
runs, compare) and checks every line of stdout and stderr, whatever the exit code.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from oloproof.cli.main import main
from oloproof.inert import inert, safe_line

ECHO = Path(__file__).resolve().parents[1] / "fixtures" / "echo_system.py"

# What must never reach a terminal raw: controls, bidi and zero-width formatting, odd spaces,
# variation selectors and tags, emoji and pictographs (the tool's table borders are U+2500..U+257F).
RAW = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\xa0\u061c\u1680\u180e\u2000-\u200f\u2028-\u202f\u205f-\u2064\u2066-\u206f"
    "\u2600-\u27bf\u2b00-\u2bff\u3000\ufe00-\ufe0f\ufeff\U0001f000-\U0001faff\U000e0000-\U000e007f]"
)
HOSTILE_PIECES = [
    "::error::pwned", "::add-mask::x", "::warning file=a::b", " ::notice::n", "##[error]legacy", "##[add-mask]m",
    "\u202eevil", "\u2066iso\u2069", "\u200bzw", "\U0001f600", "\u2705 ok", "\x1b[31mred", "\x1b]8;;http://x\x07",
    "\n::error::after newline", "\r::error::cr", "\u2028::error::ls", "\u0085::error::nel", "\ufe0f", "\U000e0041",
    "\u00a0nbsp", ":", "#", "[", "]", "%",
]
hostile = st.lists(st.sampled_from(HOSTILE_PIECES) | st.text(alphabet="ab:#[]% ", min_size=1, max_size=4), min_size=1, max_size=3).map(
    "".join
)


def commands_in_log(text: str) -> list[str]:
    """Lines GitHub's runner would act on: ``::`` at the start after blanks, or ``##[`` anywhere."""
    lines = re.split(r"\r\n|\r|\n", text)
    return [line for line in lines if line.lstrip().startswith("::") or "##[" in line]


def run(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue() + err.getvalue()


def yaml_str(text: str) -> str:
    """``text`` as a YAML double-quoted scalar that reads back as exactly ``text`` (YAML's own
    escapes for what it would not take raw: controls, line breaks, astral characters)."""

    def one(ch: str) -> str:
        code = ord(ch)
        if ch in '"\\':
            return "\\" + ch
        if code < 0x20 or 0x7F <= code <= 0x9F or code in (0x2028, 0x2029, 0xFEFF) or 0xD800 <= code <= 0xDFFF:
            return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
        if code > 0xFFFF:
            return f"\\U{code:08x}"
        return ch

    return '"' + "".join(one(ch) for ch in text) + '"'


def project(root: Path, ids: list[str], version: str) -> Path:
    cases = [{"id": case_id, "text": f"row number {i}", "answer": i % 2, "expected": {"label": 1}} for i, case_id in enumerate(ids)]
    (root / "test.jsonl").write_text("".join(json.dumps(case) + "\n" for case in cases))
    (root / "train.jsonl").write_text("".join(json.dumps({"text": case["text"]}) + "\n" for case in cases))
    config = root / "release.yaml"
    config.write_text(
        f"system:\n  version: {yaml_str(version)}\n  command: {json.dumps([sys.executable, str(ECHO)])}\n"
        "testset:\n  cases: test.jsonl\nevaluators:\n  - {type: label_match, field: label}\n"
        "policy:\n  confidence: 0.95\n  allow_approximate_methods: true\n"
        "  rules:\n    - {id: accurate, criterion: correct, min: 0.9}\n"
    )
    return config


# No shrinking: each example runs seven commands; a failure prints its (already small) example.
@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
# A version of blanks only is a config error (system.version: must not be empty), not a name to print.
@given(ids=st.lists(hostile, min_size=2, max_size=5, unique=True), version=hostile.filter(str.strip), checkpoint=hostile)
def test_no_command_prints_a_workflow_command_or_a_raw_control(ids: list[str], version: str, checkpoint: str) -> None:
    ids = [f"{case_id}" for case_id in ids]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        config = str(project(root, ids, version))
        (root / "seeds.yaml").write_text(
            "recipe: r\ncheckpoints: {"
            + ", ".join(f"{yaml_str(checkpoint + str(k))}: {yaml_str('version:' + version)}" for k in range(3))
            + "}\nrule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
        )
        outputs: list[tuple[str, str]] = []
        for argv in (
            ("gate", "-c", config, "-q"),
            ("gate", "-c", config, "-q", "--markdown", "-"),
            ("gate", "-c", config, "-q", "--junit", "-"),
            ("leakage", "check", "-c", config, "--training", str(root / "train.jsonl"), "--field", "text", "-q"),
            ("seeds", "-c", config, str(root / "seeds.yaml"), "-q"),
            ("runs", "-c", config),
            ("compare", "-c", config, "latest", "latest"),
        ):
            code, text = run(*argv)
            assert code in (0, 1, 2, 3, 4, 5), (argv, code, text)
            if argv[0] == "gate":
                assert code in (1, 4), (argv, code, text)  # the gate ran: names reached every report
            outputs.append((" ".join(argv), text))
        for name, text in outputs:
            assert commands_in_log(text) == [], (name, commands_in_log(text))
            if "--markdown" not in name and "--junit" not in name:
                assert RAW.findall(text) == [], (name, RAW.findall(text))


@given(st.text())
def test_inert_text_is_inert_anywhere_in_a_line(text: str) -> None:
    shown = inert(text)
    assert "\n" not in shown and "\r" not in shown and "##[" not in shown
    assert not shown.lstrip().startswith("::")
    assert RAW.findall(shown) == []
    assert not safe_line("  " + shown).lstrip().startswith("::")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("::error::x", "\\x3a:error::x"),
        ("a##[error]b", "a#\\x23[error]b"),
        ("cat\U0001f600", "cat\\U0001f600"),
        ("\u2705 passed", "\\u2705 passed"),
        ("r\u202etxt", "r\\u202etxt"),
        ("a\u00a0b", "a\\xa0b"),
        ("ok-id_1.2", "ok-id_1.2"),
        ("ns::name", "ns::name"),
        ("Ärger ünïcödé 日本", "Ärger ünïcödé 日本"),
    ],
)
def test_inert_pins_how_text_is_shown(raw: str, shown: str) -> None:
    assert inert(raw) == shown


def test_the_leaked_ids_line_of_leakage_check_cannot_issue_a_command(tmp_path: Path) -> None:
    config = str(project(tmp_path, ["::error::pwned", "##[add-mask]x", "a\u202eb", "cat\U0001f600"], "v1"))
    code, text = run("leakage", "check", "-c", config, "--training", str(tmp_path / "train.jsonl"), "--field", "text", "-q")
    assert code == 4
    assert "\\x3a:error::pwned, #\\x23[add-mask]x, a\\u202eb, cat\\U0001f600" in text
    assert commands_in_log(text) == []


@pytest.mark.parametrize("flag", ["--json", "--junit", "--markdown"])
def test_a_report_on_stdout_holds_no_workflow_command_and_means_the_same(tmp_path: Path, flag: str) -> None:
    ids = ["##[error]legacy", "::error::start", "plain"]
    config = str(project(tmp_path, ids, "##[add-mask]v"))
    code, text = run("gate", "-c", config, "-q", flag, "-")
    assert code in (1, 4)
    assert commands_in_log(text) == []
    if flag == "--json":
        report = json.loads(text[: text.rindex("}") + 1])
        assert report["system"]["version"] == "##[add-mask]v"
