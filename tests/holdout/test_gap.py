"""``oloproof gap`` and ``oloproof holdout size`` through the real CLI, on the prompt-holdout example.

The example is the gap chapter's six weeks (examples/prompt-holdout/): dev 0.72 → 0.89, holdout
0.708 → 0.742, 14 discordant holdout cases with 9 for the newer prompt.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "ph"
    assert main(["init", "--example", "prompt-holdout", str(target)]) == 0
    monkeypatch.chdir(target)
    return target


def gap(*extra: str) -> tuple[int, dict[str, Any]]:
    code = main(["gap", "--baseline", "version:extract-v1", "--json", "gap.json", *extra])
    return code, json.loads(Path("gap.json").read_text(encoding="utf-8"))


def points(value: float) -> float:
    return round(100 * value, 1)


def test_the_chapter_end_to_end(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code, data = gap()
    out = capsys.readouterr().out
    assert code == 0 and data["complete"] and data["schema"] == "oloproof.gap/1"
    dev, hold = data["dev"], data["holdout"]
    assert (dev["baseline"]["passes"], dev["current"]["passes"], dev["n"]) == (144, 178, 200)
    assert (hold["baseline"]["passes"], hold["current"]["passes"], hold["n"]) == (85, 89, 120)
    assert (hold["b"], hold["c"], hold["discordant"]) == (9, 5, 14)
    real = data["real_improvement"]
    assert points(real["exact"]["estimate"]) == 3.3
    assert (points(real["exact"]["low"]), points(real["exact"]["high"])) == (-3.7, 10.6)
    assert (points(real["approximate"]["low"]), points(real["approximate"]["high"])) == (-3.1, 10.2)
    fit = data["fit"]
    assert (points(fit["estimate"]), points(fit["low"]), points(fit["high"])) == (13.7, 5.1, 22.5)
    assert fit["method"] == "mover" and fit["approximate"] is True
    assert points(data["dev_gain"]) == 17.0 and points(data["holdout_resolution"]) == 8.7
    trajectory = [(r["read"], r["version"], r["versions_run_before"], r["passes"]) for r in data["trajectory"]]
    assert trajectory == [(1, "extract-v1", 1, 85), (2, "extract-v3", 16, 88), (3, "extract-v6", 31, 89)]
    comp = data["composition"]
    assert comp["available"] and comp["weights"] == "holdout"
    counts = {row["stratum"]: (row["dev_n"], row["holdout_n"]) for row in comp["strata"]}
    assert counts == {
        "employment": (20, 12),
        "lease": (30, 17),
        "nda": (40, 24),
        "services": (50, 29),
        "supply": (60, 38),
    }
    assert points(comp["fit"]["estimate"]) == 13.9
    assert [d["again"] for d in data["drift"]] == [None, None]
    assert "real improvement (paired on the holdout): +3.3 points, 95% [-3.7, +10.6] (fay-lumbard-melded, exact)" in out
    assert "fit = dev movement − holdout movement: +13.7 points, 95% [+5.1, +22.5] (mover, approximate)" in out
    assert "zero is inside it" in out
    assert "averaging the dev and the holdout score is not a method" in out
    assert "cannot tell:" in out


def test_no_holdout_case_appears(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [json.loads(line) for line in Path("evals/holdout/cases.jsonl").read_text(encoding="utf-8").splitlines()]
    capsys.readouterr()
    gap("--explain")
    out = capsys.readouterr().out + Path("gap.json").read_text(encoding="utf-8")
    leaked = [case["id"] for case in cases if case["id"] in out]
    assert not leaked
    assert not [case["text"][:40] for case in cases if case["text"][:40] in out]


def test_the_baseline_measured_again_is_the_drift_check(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    v1 = "python extractor.py --prompt prompts/extract@v1.md"
    assert main(["run", "-q", "--version", "extract-v1", "--command", v1]) == 0
    assert (
        main(
            ["holdout", "run", "-q", "--version", "extract-v1", "--command", v1, "--reason", "baseline re-measurement"]
        )
        == 0
    )
    capsys.readouterr()
    code, data = gap()
    assert code == 0
    dev, hold = data["drift"]
    assert dev["set"] == "dev" and dev["first"]["passes"] == dev["again"]["passes"] == 144
    assert hold["set"] == "holdout" and hold["first"]["source"] == "read 1" and hold["again"]["source"] == "read 4"
    assert hold["again"]["passes"] == 85 and hold["paired"]["discordant"] == 0
    # The movement still pairs the week-0 read with the current version's latest read.
    assert data["holdout"]["baseline"]["source"] == "read 1"
    assert data["trajectory"][-1]["reason"] == "baseline re-measurement"


def test_a_version_never_read_on_the_holdout(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code, data = gap("--current", "version:extract-v5")
    out = capsys.readouterr().out
    assert code == ExitCode.INSUFFICIENT_EVIDENCE
    assert data["holdout"] is None and data["fit"] is None and data["reasons"] == ["no_holdout_read"]
    assert "holds no read of extract-v5 under criterion correct" in out
    assert data["dev"]["current"]["version"] == "extract-v5"  # the dev side is still reported


def test_a_tampered_log_gives_no_holdout_figure(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = Path("evals/holdout/READS.log")
    log.write_text(
        log.read_text(encoding="utf-8").replace("score=0.708 (85/120)", "score=0.608 (73/120)"), encoding="utf-8"
    )
    capsys.readouterr()
    code, data = gap()
    assert code == ExitCode.BLOCKED
    assert data["reasons"] == ["holdout_log_tampered"] and data["holdout"] is None


def test_declared_weights(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("prod.yaml").write_text(
        "supply: 0.5\nservices: 0.2\nnda: 0.1\nlease: 0.1\nemployment: 0.1\n", encoding="utf-8"
    )
    code, data = gap("--weights", "prod.yaml")
    assert code == 0 and data["composition"]["weights"] == "prod.yaml"
    assert {row["stratum"]: row["weight"] for row in data["composition"]["strata"]}["supply"] == pytest.approx(0.5)
    Path("bad.yaml").write_text("supply: 0.5\nservices: lots\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["gap", "--baseline", "version:extract-v1", "--weights", "bad.yaml"]) == ExitCode.USAGE
    assert "bad.yaml:2: services:" in capsys.readouterr().err
    Path("short.yaml").write_text("supply: 1\n", encoding="utf-8")
    assert main(["gap", "--baseline", "version:extract-v1", "--weights", "short.yaml"]) == ExitCode.USAGE
    assert "name no weight for stratum 'employment'" in capsys.readouterr().err


def test_strata_recovered_for_older_records(example: Path) -> None:
    for record in Path(".oloproof/holdout").glob("read-*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        data.pop("strata", None)
        record.write_text(json.dumps(data), encoding="utf-8")
    code, data = gap()
    assert code == 0 and data["composition"]["available"]
    os.rename("evals/holdout/cases.jsonl", "evals/holdout/elsewhere.jsonl")  # the set is not here (a CI secret)
    code, data = gap()
    assert code == 0 and not data["composition"]["available"]
    assert "no stratum recorded for the holdout reads" in data["composition"]["why"]


def test_usage_errors(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["gap", "--baseline", "version:extract-v6"]) == ExitCode.USAGE
    assert "are both version extract-v6" in capsys.readouterr().err
    assert main(["gap", "--baseline", "version:nope"]) == ExitCode.USAGE
    assert main(["gap", "--baseline", "version:extract-v1", "--json", "data/dev.jsonl"]) == ExitCode.USAGE


def test_holdout_size_for_the_chapters_difference(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["holdout", "size", "--delta", "0.0333333", "--json", "size.json"]) == 0
    out = capsys.readouterr().out
    data = json.loads(Path("size.json").read_text(encoding="utf-8"))
    assert data["psi"] == pytest.approx(14 / 120) and data["cases"] == 825  # the chapter's 825 cases
    assert data["exact_power_at_cases"] < 0.8 and data["cases_exact"] > 825
    assert data["holdout"] == {"n": 120, "resolution": pytest.approx(data["holdout"]["resolution"])}
    assert round(100 * data["holdout"]["resolution"], 1) == 8.7
    assert "about 825 reserved cases" in out and "14 of 120 holdout cases differ between read 1" in out
    assert main(["holdout", "size", "--delta", "0.5"]) == ExitCode.USAGE
    assert "larger than the discordance" in capsys.readouterr().err


def _scrubbed(text: str) -> str:
    import re

    # The example's evidence names the oloproof that recorded it; any later source change adds a note.
    text = "".join(line for line in text.splitlines(keepends=True) if "the checker changed" not in line)
    text = re.sub(r"\d{8}T\d{6}Z-[0-9a-f]{6}", "<run>", text)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<when>", text)


def test_the_terminal_renderings_match_their_gold_files(
    example: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.report.golden import check_gold

    monkeypatch.setenv("COLUMNS", "160")
    capsys.readouterr()
    assert main(["gap", "--baseline", "version:extract-v1"]) == 0
    check_gold("gap.txt", _scrubbed(capsys.readouterr().out))
    assert main(["gap", "--baseline", "version:extract-v1", "--explain"]) == 0
    check_gold("gap-explain.txt", _scrubbed(capsys.readouterr().out))
    assert main(["gap", "--baseline", "version:extract-v1", "--markdown", "gap.md"]) == 0
    capsys.readouterr()
    check_gold("gap.md", _scrubbed(Path("gap.md").read_text(encoding="utf-8")))
    assert main(["compare", "version:extract-v1", "version:extract-v6", "--max-drop", "0.05"]) == 0
    check_gold("compare.txt", _scrubbed(capsys.readouterr().out))
    assert main(["holdout", "size", "--delta", "0.03333"]) == 0
    check_gold("holdout-size.txt", capsys.readouterr().out)


def test_an_edited_outcome_record_is_not_used(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Read 3 (extract-v6) scored 89/120 in the log; a record edited to pass one more case disagrees.
    record = next(Path(".oloproof/holdout").glob("read-0003-*.json"))
    data = json.loads(record.read_text(encoding="utf-8"))
    data["outcomes"][data["outcomes"].index(0)] = 1
    record.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    code, report = gap()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and report["reasons"] == ["no_outcome_record"]
    assert any(
        "disagrees with read 3 of the log (the outcomes add up to 90, the log says 89)" in n for n in report["notes"]
    )


def test_a_forged_read_not_in_the_register_is_not_used(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof.holdout.log import entry_hash

    log = Path("evals/holdout/READS.log")
    last = log.read_text(encoding="utf-8").splitlines()[-1]
    prev = last.rsplit("hash=", 1)[1]
    digest = next(part for part in last.split(" | ") if part.startswith("set="))
    body = " | ".join(
        [
            "read 4",
            "2026-12-01T12:00:00Z",
            "who=ci",
            "commit=unknown",
            "version=extract-v6",
            digest,
            "n=120",
            "criterion=correct",
            "score=1.000 (120/120)",
            "interval=[0.970, 1.000] 95% exact",
            "method=clopper-pearson",
            "missing=0",
            "budget=20",
            'reason="re-read"',
            f"prev={prev[:16]}",
        ]
    )
    forged = entry_hash(prev, body)
    with log.open("a", encoding="utf-8") as handle:
        handle.write(f"{body} | hash={forged}\n")
    record = json.loads(next(Path(".oloproof/holdout").glob("read-0003-*.json")).read_text(encoding="utf-8"))
    record.update(read=4, entry_hash=forged, outcomes=[1] * 120)
    Path(f".oloproof/holdout/read-0004-{forged[:12]}.json").write_text(json.dumps(record), encoding="utf-8")
    capsys.readouterr()
    code, data = gap()
    assert code == 0 and data["holdout"]["current"]["source"] == "read 3"  # the forged read 4 is not used
    assert points(data["real_improvement"]["exact"]["estimate"]) == 3.3
    assert any("read(s) 4 of evals/holdout/READS.log are not in the holdout register" in n for n in data["notes"])
    assert main(["holdout", "status"]) == 0
    assert "read(s) 4 are not in the holdout register" in capsys.readouterr().out


def test_two_records_for_one_read_are_both_refused(example: Path) -> None:
    original = next(Path(".oloproof/holdout").glob("read-0003-*.json"))
    data = json.loads(original.read_text(encoding="utf-8"))
    data["outcomes"] = sorted(data["outcomes"], reverse=True)  # the same counts, other cases passing
    original.with_name(original.stem + "z.json").write_text(json.dumps(data), encoding="utf-8")
    code, report = gap()
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and report["reasons"] == ["no_outcome_record"]
    assert any("2 outcome records name read 3" in note and "none of them is used" in note for note in report["notes"])


def test_a_report_is_never_written_into_the_evidence(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = next(Path(".oloproof/holdout").glob("read-0001-*.json"))
    before = record.read_bytes()
    capsys.readouterr()
    assert main(["gap", "--baseline", "version:extract-v1", "--json", str(record)]) == ExitCode.USAGE
    assert "is inside .oloproof/, where oloproof keeps its evidence" in capsys.readouterr().err
    assert record.read_bytes() == before
    for target in (".oloproof/holdouts.jsonl", ".oloproof/runs/new.json"):
        assert main(["compare", "version:extract-v1", "version:extract-v6", "--json", target]) == ExitCode.USAGE
        assert main(["holdout", "size", "--delta", "0.05", "--json", target]) == ExitCode.USAGE
    assert not Path(".oloproof/runs/new.json").exists()


def _set_strata(change: dict[str, str]) -> None:
    for path in Path(".oloproof/holdout").glob("read-*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        data["strata"] = [change.get(label, label) for label in data["strata"]]
        path.write_text(json.dumps(data), encoding="utf-8")


def test_a_dev_stratum_the_holdout_lacks_gets_weight_zero(example: Path) -> None:
    _set_strata({"employment": "services"})
    code, data = gap()
    assert code == 0 and data["composition"]["available"]
    rows = {row["stratum"]: row for row in data["composition"]["strata"]}
    assert rows["employment"]["holdout_n"] == 0 and rows["employment"]["weight"] == 0
    assert any("stratum employment has no holdout case" in line for line in data["composition"]["notes"])


def test_small_holdout_strata_show_counts_not_outcomes(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = next(Path(".oloproof/holdout").glob("read-0001-*.json"))
    first = json.loads(path.read_text(encoding="utf-8"))
    tiny = [i for i, label in enumerate(first["strata"]) if label == "supply"][:2]
    for record in Path(".oloproof/holdout").glob("read-*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        for index in tiny:
            data["strata"][index] = "tiny"
        record.write_text(json.dumps(data), encoding="utf-8")
    capsys.readouterr()
    code, data = gap()
    out = capsys.readouterr().out
    row = next(row for row in data["composition"]["strata"] if row["stratum"] == "tiny")
    assert code == 0 and row["holdout_n"] == 2 and row["holdout_passes"] is None
    assert "withheld (under 5 cases)" in out


def test_weights_that_name_a_stratum_no_set_holds_or_overflow_are_refused(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    Path("typo.yaml").write_text(
        "supply: 1\nservices: 1\nnda: 1\nlease: 1\nemployment: 1\nsuply: 3\n", encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["gap", "--baseline", "version:extract-v1", "--weights", "typo.yaml"]) == ExitCode.USAGE
    assert "name stratum 'suply', which neither set holds" in capsys.readouterr().err
    Path("huge.yaml").write_text(
        "supply: 1.0e+308\nservices: 1.0e+308\nnda: 1\nlease: 1\nemployment: 1\n", encoding="utf-8"
    )
    assert main(["gap", "--baseline", "version:extract-v1", "--weights", "huge.yaml"]) == ExitCode.USAGE
    assert "must add up to a positive, finite number" in capsys.readouterr().err


def test_holdout_size_bounds(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["holdout", "size", "--delta", "0.05", "--power", "0.2"]) == ExitCode.USAGE
    assert "give a power of at least 0.5" in capsys.readouterr().err
    assert main(["holdout", "size", "--delta", "0.0001", "--json", "size.json"]) == 0  # seconds, not minutes
    data = json.loads(Path("size.json").read_text(encoding="utf-8"))
    assert data["cases"] > 10**7 and data["exact_power_at_cases"] is None and data["cases_exact"] is None
    assert data["psi_range"][0] < 14 / 120 < data["psi_range"][1]
