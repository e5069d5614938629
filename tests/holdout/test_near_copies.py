"""The holdout guard sees what the leakage check sees (issue 16 §5): with the budget spent, the
holdout scored in full as a "dev set" by editing each case a little (a space, a doubled space, a
``!``, case, Unicode forms, number forms, quotes) is refused, by count and line, never by content;
cases that genuinely differ are not. Through the CLI, on real files."""

from __future__ import annotations

import copy
import json
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from conftest import Project, write_cases

from holdout.test_read import read, setup
from oloproof.cli.main import main

MARKER = "SECRETCLAUSE"


def holdout() -> list[dict[str, Any]]:
    return [
        {
            "id": f"held-{MARKER}-{i:03d}",
            "text": f"Review {MARKER} number {i}: the product was fine",
            "stars": i % 5,
            "meta": {"lang": "en", "score": 0.5},
            "answer": 1,
            "expected": {"label": 1},
        }
        for i in range(40)
    ]


def spent(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    setup(project, budget=1, holdout=holdout())
    assert read(project, "the one read") == 0
    assert read(project, "one more") == 3  # the budget is spent
    capsys.readouterr()


def as_dev(project: Project, cases: list[dict[str, Any]]) -> None:
    write_cases(project.root / "data" / "test.jsonl", cases)


def edited(edit: Callable[[dict[str, Any]], None]) -> list[dict[str, Any]]:
    cases = copy.deepcopy(holdout())
    for case in cases:
        case["id"] = "dev-" + case["id"]
        edit(case)
    return cases


def _set(key: str, make: Callable[[Any], Any]) -> Callable[[dict[str, Any]], None]:
    def edit(case: dict[str, Any]) -> None:
        case[key] = make(case[key])

    return edit


def _flat_meta(case: dict[str, Any]) -> None:
    meta = case.pop("meta")
    case["meta.lang"], case["meta.score"] = meta["lang"].upper(), str(meta["score"])


EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "one space appended": _set("text", lambda text: text + " "),
    "a doubled space": _set("text", lambda text: text.replace(" ", "  ", 1)),
    "a tab and a newline": _set("text", lambda text: "\t" + text.replace(" ", "\n", 1)),
    "! appended": _set("text", lambda text: text + "!"),
    "?! appended after a space": _set("text", lambda text: text + " ?!"),
    "a full stop": _set("text", lambda text: text + "."),
    "quoted": _set("text", lambda text: f'"{text}"'),
    "curly-quoted with a full stop": _set("text", lambda text: f"\u201c{text}.\u201d"),
    "upper case": _set("text", str.upper),
    "fullwidth letters (NFKC)": _set(
        "text", lambda text: "".join(chr(ord(c) + 0xFEE0) if c.isalpha() else c for c in text)
    ),
    "a zero-width space": _set("text", lambda text: text[:3] + "\u200b" + text[3:]),
    "a number as a float": _set("stars", float),
    "a number as a string": _set("stars", lambda stars: f" {stars}.0 "),
    "nested keys written flat, upper case, number as text": _flat_meta,
    "an extra input field": lambda case: case.update(nonce=case["id"]),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_copy_of_the_holdout_is_refused_as_a_dev_set(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    spent(project, capsys)
    as_dev(project, edited(EDITS[name]))
    for command in ("gate", "run"):
        assert project.cli(command) == 2, command
        err = " ".join(capsys.readouterr().err.split())
        assert (
            "shares 40 case(s) with the declared holdout (holdout.cases): 40 near copies (equal after leakage " in err
        )
        assert "at line(s) 1, 2, 3, 4, 5, … (+35) of the dev set" in err
        assert MARKER.lower() not in err.lower() and "held-" not in err
    assert not (project.root / ".oloproof" / "runs").exists()


def test_exact_and_near_copies_are_counted_apart_among_dev_cases(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    spent(project, capsys)
    own = [
        {
            "id": f"own{i}",
            "text": f"my own dev case {i}",
            "stars": 1,
            "meta": {"lang": "en", "score": 0.5},
            "answer": 1,
            "expected": {"label": 1},
        }
        for i in range(10)
    ]
    copies = holdout()[:3] + edited(EDITS["one space appended"])[3:5]
    for case in copies:
        case["id"] = "dev-" + case["id"]
    as_dev(project, own + copies)
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    expected = (
        "shares 5 case(s) with the declared holdout (holdout.cases): 3 exact copies and 2 near copies (equal after "
        "leakage normalisation, edge punctuation and quotes dropped; number forms by value) of holdout inputs, at "
        "line(s) 11, 12, 13, 14, 15 of the dev set (no id or value is shown: they may be the holdout's)"
    )
    assert expected in " ".join(err.split())


DISTINCT: dict[str, Callable[[dict[str, Any]], None]] = {
    "a word changed": _set("text", lambda text: text.replace("fine", "broken")),
    "punctuation inside the text": _set("text", lambda text: text.replace(":", ",")),
    "a mark that is not sentence-final": _set("text", lambda text: text + "#"),
}


@pytest.mark.parametrize("name", list(DISTINCT))
def test_genuinely_different_cases_are_not_refused(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    spent(project, capsys)
    as_dev(project, edited(DISTINCT[name]))
    assert project.cli("run") == 0, capsys.readouterr().err


def _moved(case: dict[str, Any]) -> None:
    case["prompt"] = case.pop("text")


def _nested(case: dict[str, Any]) -> None:
    case["meta"]["text"] = case.pop("text")


# The review's text is the holdout's, whatever else changed: a long value that identifies one
# holdout case, under any key (renamed, nested, beside a changed or missing field), is a near copy.
SAME_TEXT: dict[str, Callable[[dict[str, Any]], None]] = {
    "the text under another key": _moved,
    "the text nested under meta": _nested,
    "a comma appended": _set("text", lambda text: text + ","),
    "a semicolon appended": _set("text", lambda text: text + ";"),
    "a dash appended": _set("text", lambda text: text + " -"),
    "a digit moved past a point": _set("stars", lambda stars: stars + 0.5),
    "another number": _set("stars", lambda stars: stars + 5),
    "a nested value changed": lambda case: case["meta"].update(score=0.25),
    "a field missing": lambda case: case.pop("stars"),
    "a boolean for a number": _set("stars", lambda stars: stars == 1),
}


@pytest.mark.parametrize("name", list(SAME_TEXT))
def test_a_dev_case_holding_a_holdout_cases_distinctive_text_is_refused(
    project: Project, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    spent(project, capsys)
    as_dev(project, edited(SAME_TEXT[name]))
    assert project.cli("run") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "shares 40 case(s) with the declared holdout (holdout.cases): 40 near copies" in err
    assert MARKER.lower() not in err.lower()


def test_a_long_value_every_holdout_case_shares_identifies_none(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    """A prompt template or boilerplate clause shared by holdout cases is no sign of a copy."""
    template = "You are a careful reviewer. Read the review below and answer with one label."
    held = [{**case, "instruction": template} for case in holdout()]
    setup(project, budget=1, holdout=held)
    assert read(project, "the one read") == 0
    capsys.readouterr()
    own = [
        {"id": f"own{i}", "instruction": template, "text": f"a dev review of my own, number {i}", "stars": 1,
         "meta": {"lang": "en", "score": 0.5}, "answer": 1, "expected": {"label": 1}}
        for i in range(10)
    ]
    as_dev(project, own)
    assert project.cli("run") == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("held", "dev"),
    [
        ("?", "!"),  # a value made only of marks keeps them
        ("Let's eat, grandma", "Let's eat grandma"),
        ("C", "C#"),
        ("1.5", "15"),
        ("'a'", "a'"),  # an unpaired quote is content
    ],
)
def test_values_that_differ_only_in_punctuation_that_matters_stay_apart(
    project: Project, capsys: pytest.CaptureFixture[str], held: str, dev: str
) -> None:
    setup(project, holdout=[{"id": "h1", "text": held, "answer": 1, "expected": {"label": 1}}])
    as_dev(project, [{"id": "d1", "text": dev, "answer": 1, "expected": {"label": 1}}])
    capsys.readouterr()
    assert project.cli("run") == 0, capsys.readouterr().err


def test_the_refusal_never_prints_a_holdout_value_even_in_json_errors(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    spent(project, capsys)
    as_dev(project, edited(EDITS["! appended"]))
    out = project.root / "report.json"
    assert project.cli("gate", "--json", str(out)) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err + (out.read_text() if out.exists() else "")
    assert MARKER.lower() not in text.lower()
    if out.exists():
        json.loads(out.read_text())


def test_near_copies_of_a_registered_holdout_are_refused_under_a_config_without_one(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    spent(project, capsys)
    other = project.root / "elsewhere"
    (other / "data").mkdir(parents=True)
    write_cases(other / "data" / "test.jsonl", edited(EDITS["! appended"])[:30])
    text = (project.root / "release.yaml").read_text().split("holdout:")[0]  # no holdout declared here
    (other / "release.yaml").write_text(text)
    for command in ("gate", "run"):
        assert main([command, "-c", str(other / "release.yaml")]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "shares 30 case(s) with a holdout set of this repository (1 read(s) under evals/holdout/READS.log" in err
        assert "30 near copies (equal after leakage normalisation" in err
        assert MARKER.lower() not in err.lower()
    register = (project.root / ".oloproof" / "holdouts.jsonl").read_text()
    assert MARKER.lower() not in register.lower() and "product" not in register


def test_a_set_registered_before_near_copies_gains_them_at_its_next_read(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    setup(project, budget=5, holdout=holdout())
    assert read(project, "one") == 0
    path = project.root / ".oloproof" / "holdouts.jsonl"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:  # as an older oloproof wrote it
        line.pop("near", None), line.pop("fields", None)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    other = project.root / "elsewhere"
    (other / "data").mkdir(parents=True)
    write_cases(other / "data" / "test.jsonl", edited(EDITS["one space appended"]))
    (other / "release.yaml").write_text((project.root / "release.yaml").read_text().split("holdout:")[0])
    capsys.readouterr()
    assert main(["run", "-c", str(other / "release.yaml")]) == 0  # an old register: exact commitments only
    assert read(project, "two") == 0
    assert main(["run", "-c", str(other / "release.yaml")]) == 2
    assert "40 near copies" in " ".join(capsys.readouterr().err.split())


def test_near_copies_are_refused_where_the_holdout_file_cannot_be_reached(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """In CI or a pull request the holdout file is often out of reach (its ${VAR} unset): the
    register's near-copy commitments still refuse an edited copy of it."""
    subprocess.run(["git", "init", "-q"], cwd=project.root, check=True)
    monkeypatch.setenv("HOLDOUT_FILE", str(project.root / "evals" / "holdout" / "cases.jsonl"))
    setup(project, budget=3, holdout=holdout(), cases_path="${HOLDOUT_FILE}")
    assert read(project, "one") == 0
    monkeypatch.delenv("HOLDOUT_FILE")
    as_dev(project, edited(EDITS["a doubled space"]))
    capsys.readouterr()
    assert project.cli("gate") == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "shares 40 case(s) with a holdout set of this repository" in err and "40 near copies" in err
