"""Issue 17, point 3, for ``oloproof gap``: on grouped sets each movement is the clustered paired
interval (approximate, wider than the case-level one), and the fit's MOVER combines those.

Dev and holdout: 40 documents × 5 cases each. The week-0 version answers every case right; the
current one gets two whole documents wrong on the dev set and two on the holdout. Before issue 17
the gap paired the cases as if independent: MOVER over Tango intervals, and an exact holdout
interval, both too narrow for cases that move by document.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main
from tests.conftest import write_cases

SYSTEM = """import json, sys
field = sys.argv[1]
for line in sys.stdin.read().splitlines():
    case = json.loads(line)
    print(json.dumps({"id": case["id"], "label": case[field]}))
"""


def cases(prefix: str, *, grouped: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(200):
        case: dict[str, Any] = {
            "id": f"{prefix}{i:03d}",
            "text": f"{prefix} clause {i}",
            "old": 1,
            "new": 0 if i < 10 else 1,
            "expected": {"label": 1},
            "stratum": "odd" if i % 2 else "even",  # recorded strata: the file is read for the groups anyway
        }
        if grouped:
            case["group"] = f"{prefix}-doc{i // 5:02d}"
        out.append(case)
    return out


def release(root: Path, version: str, field: str) -> None:
    command = json.dumps([sys.executable, str(root / "system.py"), field])
    (root / "release.yaml").write_text(
        f"system:\n  version: {version}\n  command: {command}\n  timeout_s: 20\n"
        "testset:\n  cases: data/dev.jsonl\n"
        "evaluators:\n  - {type: label_match, field: label}\n"
        "policy:\n  confidence: 0.95\n  rules:\n  - {id: accurate, criterion: correct, min: 0.5}\n"
        "holdout:\n  cases: evals/holdout/cases.jsonl\n  budget: 20\n  log: evals/holdout/READS.log\n",
        encoding="utf-8",
    )


def project(root: Path, *, grouped: bool) -> dict[str, Any]:
    root.mkdir()
    (root / "system.py").write_text(SYSTEM, encoding="utf-8")
    write_cases(root / "data" / "dev.jsonl", cases("d", grouped=grouped))
    write_cases(root / "evals" / "holdout" / "cases.jsonl", cases("h", grouped=grouped))
    config = str(root / "release.yaml")
    for version, field, reason in (("v0", "old", "week 0"), ("v1", "new", "week 3")):
        release(root, version, field)
        assert main(["run", "-c", config, "--quiet"]) == 0
        assert main(["holdout", "run", "-c", config, "--reason", reason, "--quiet"]) == 0
    out = root / "gap.json"
    assert main(["gap", "-c", config, "--baseline", "version:v0", "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture
def both(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    return project(tmp_path / "grouped", grouped=True), project(tmp_path / "plain", grouped=False)


def test_grouped_movements_are_clustered_approximate_and_wider(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    grouped, plain = both
    for which in ("dev", "holdout"):
        movement, before = grouped[which], plain[which]
        assert movement["exact"] is None and before["exact"]["method"] == "fay-lumbard-melded"
        interval = movement["approximate"]
        assert interval["method"] == "clustered-paired-melded" and interval["approximate"] is True
        assert movement["clustered"]["groups"] == 40
        assert interval["low"] < before["exact"]["low"] and interval["high"] > before["exact"]["high"]
        assert interval["low"] == pytest.approx(-0.2293753375, abs=1e-9)  # as compare's: same table, same groups
    assert (
        "the sets declare groups: the movements and the fit above are clustered, but the reweighted figures of the "
        "composition check treat the cases as independent, so their intervals are too narrow" in grouped["notes"]
    )
    assert not any("declare groups" in note for note in plain["notes"])
    assert grouped["real_improvement"]["exact"] is None
    assert grouped["real_improvement"]["approximate"]["method"] == "clustered-paired-melded"


def test_the_fit_takes_the_clustered_movements(both: tuple[dict[str, Any], dict[str, Any]]) -> None:
    grouped, plain = both
    fit, before = grouped["fit"], plain["fit"]
    assert fit["method"] == "mover" and fit["approximate"] is True and fit["estimate"] == pytest.approx(0.0)
    # MOVER of two equal clustered intervals [−0.229, +0.118] around −0.05: √(0.168² + 0.179²).
    assert fit["high"] == pytest.approx(0.2460706352, abs=1e-9)
    assert fit["low"] == pytest.approx(-0.2460706352, abs=1e-9)
    assert fit["high"] - fit["low"] > before["high"] - before["low"]


def test_the_report_says_clustered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project(tmp_path / "grouped", grouped=True)
    capsys.readouterr()
    config = str(tmp_path / "grouped" / "release.yaml")
    assert main(["gap", "-c", config, "--baseline", "version:v0"]) == 0
    text = capsys.readouterr().out
    assert (
        "(clustered-paired-melded, approximate) on 40 groups (the set declares groups: no exact paired interval" in text
    )
    assert "fay-lumbard-melded" not in text


def test_holdout_records_keep_group_numbers_not_names(tmp_path: Path) -> None:
    project(tmp_path / "grouped", grouped=True)
    for record in (tmp_path / "grouped" / ".oloproof" / "holdout").glob("read-*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        assert sorted(set(data["groups"])) == list(range(40)) and len(data["groups"]) == 200
        assert "h-doc" not in record.read_text(encoding="utf-8")


def _edit_records(root: Path, change: Any) -> None:
    for record in (root / ".oloproof" / "holdout").glob("read-*.json"):
        data = json.loads(record.read_text(encoding="utf-8"))
        change(data)
        record.write_text(json.dumps(data), encoding="utf-8")


def _gap(root: Path) -> dict[str, Any]:
    out = root / "again.json"
    assert main(["gap", "-c", str(root / "release.yaml"), "--baseline", "version:v0", "--json", str(out)]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def test_edited_or_dropped_group_numbers_yield_to_the_holdout_file(tmp_path: Path) -> None:
    root = tmp_path / "grouped"
    project(root, grouped=True)
    # A hostile edit: every case its own group (a narrower interval), or no groups at all.
    _edit_records(root, lambda data: data.update(groups=list(range(len(data["groups"])))))
    assert _gap(root)["holdout"]["clustered"]["groups"] == 40
    _edit_records(root, lambda data: data.pop("groups"))
    assert _gap(root)["holdout"]["clustered"]["groups"] == 40


def test_a_holdout_without_recorded_groups_says_its_movement_ignores_them(tmp_path: Path) -> None:
    root = tmp_path / "grouped"
    project(root, grouped=True)
    _edit_records(root, lambda data: data.pop("groups"))
    (root / "evals" / "holdout" / "cases.jsonl").rename(root / "evals" / "holdout" / "elsewhere.jsonl")  # a CI secret
    data = _gap(root)
    assert data["holdout"]["clustered"] is None
    assert (
        "the dev set declares groups but the holdout reads record none: the holdout movement treats its cases as "
        "independent" in data["notes"]
    )


def test_the_markdown_report_says_clustered(tmp_path: Path) -> None:
    root = tmp_path / "grouped"
    project(root, grouped=True)
    out = root / "gap.md"
    assert main(["gap", "-c", str(root / "release.yaml"), "--baseline", "version:v0", "--markdown", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "(clustered-paired-melded, approximate) on 40 groups (clustered)" in text
    assert "fay-lumbard-melded" not in text
