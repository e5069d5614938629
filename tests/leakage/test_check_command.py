"""`oloproof leakage check` end to end: known leaks, formats, malformed rows, privacy, records.

The fixtures (tests/fixtures/leakage/README.md) hold six cases and seven training rows whose
leaks under each option are known; the same rows are read as JSONL, CSV, gzip and Parquet.
"""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

from oloproof.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "leakage"
MARKER = "zq-private-marker-7731"


def fixture_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "cases.jsonl").read_text().splitlines()]


@pytest.fixture
def leaky(project: Project) -> Project:
    project.write(cases=fixture_cases())
    return project


def check(project: Project, training: Path | str, *options: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(training), "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


# --------------------------------------------------------------------------- known leaks


@pytest.mark.parametrize(
    ("options", "found"),
    [
        ((), ["c01", "c05"]),
        (("--round", "3"), ["c01", "c03", "c05"]),
        (("--field", "text"), ["c01", "c03", "c04", "c05", "c06"]),
        (("--field", "features.income", "features.age"), ["c01", "c02", "c04", "c05"]),
        (("--field", "features.income", "--field", "features.age"), ["c01", "c02", "c04", "c05"]),
        (("--field", "features", "--round", "3"), ["c01", "c02", "c03", "c05"]),
    ],
)
@pytest.mark.parametrize("training", ["training.jsonl", "training.csv"])
def test_known_leaks(leaky: Project, training: str, options: tuple[str, ...], found: list[str]) -> None:
    code, result = check(leaky, FIXTURES / training, *options)
    assert result["leaked_ids"] == found
    assert code == 4  # found cases: their evidence is invalid (INSUFFICIENT_EVIDENCE), not a tool error
    counts = result["counts"]
    assert (counts["cases_checked"], counts["cases_leaked"], counts["rows_scanned"], counts["rows_malformed_skipped"]) == (6, len(found), 7, 0)
    assert 1 <= counts["rows_matched"] <= len(found)


def test_terminal_report_says_what_was_checked(leaky: Project, capsys: pytest.CaptureFixture[str]) -> None:
    code = leaky.cli("leakage", "check", "--training", str(FIXTURES / "training.csv"), "--round", "3")
    out = capsys.readouterr().out
    assert code == 4
    assert "cases checked: 6; found in the training data: 3" in out
    assert "c01, c03, c05" in out
    assert "rows scanned: 7" in out
    assert "Near-duplicates are not checked" in out
    assert "numbers rounded to 3 decimals" in out
    assert "found in the training data under other names: features.age as age, " in out  # the CSV columns are flat
    assert "features.income as income" in out
    assert "not recorded (pass --record" in out


def test_clean_check_exits_0(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=[{"id": "only", "text": "never seen", "expected": {"label": 1}}])  # a 1-row test set
    code, result = check(project, FIXTURES / "training.jsonl")
    assert code == 0
    assert result["clean"] is True and result["leaked_ids"] == []
    assert result["counts"]["cases_checked"] == 1 and result["counts"]["rows_scanned"] == 7


def test_one_case_test_set_that_leaks(project: Project) -> None:
    project.write(cases=[{"id": "solo", "text": "FILLER", "expected": {"label": 1}}])
    code, result = check(project, FIXTURES / "training.jsonl")
    assert (code, result["leaked_ids"]) == (4, ["solo"])


def test_compressed_training_files(leaky: Project, tmp_path: Path) -> None:
    gz = tmp_path / "training.jsonl.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "training.jsonl").read_bytes()))
    csv_gz = tmp_path / "rows.csv.gz"
    csv_gz.write_bytes(gzip.compress((FIXTURES / "training.csv").read_bytes()))
    disguised = tmp_path / "training.jsonl"  # gzip is recognised by its bytes, not its name
    disguised.write_bytes(gzip.compress((FIXTURES / "training.jsonl").read_bytes()))
    bz = tmp_path / "training.ndjson.bz2"
    bz.write_bytes(bz2.compress((FIXTURES / "training.jsonl").read_bytes()))
    for path in (gz, csv_gz, disguised, bz):
        _, result = check(leaky, path, "--round", "3")
        assert result["leaked_ids"] == ["c01", "c03", "c05"], path.name
        assert result["training"]["compression"] in ("gzip", "bz2")


def test_parquet(leaky: Project, tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [json.loads(line) for line in (FIXTURES / "training.jsonl").read_text().splitlines()]
    for row in rows:
        row["features"].setdefault("employment", None)
        row["features"]["income"] = float(row["features"]["income"])
        row["features"]["age"] = float(row["features"]["age"])
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "training.parquet")
    _, result = check(leaky, tmp_path / "training.parquet", "--round", "3")
    assert result["leaked_ids"] == ["c01", "c03", "c05"]
    assert result["training"]["format"] == "parquet"
    flat = pa.Table.from_pylist([{"income": row["features"]["income"], "text": row["text"]} for row in rows])
    pq.write_table(flat, tmp_path / "flat.pq")
    _, result = check(leaky, tmp_path / "flat.pq", "--field", "features.income", "text")
    assert result["leaked_ids"] == ["c01", "c04", "c05"]
    assert result["key_sources"] == {"features.income": "income"}


def test_nested_case_key_meets_flat_and_dotted_columns(leaky: Project, tmp_path: Path) -> None:
    dotted = tmp_path / "dotted.csv"  # pandas.json_normalize writes nested keys as dotted column names
    dotted.write_text("features.income,features.age,features.employment,text\n3,30,Salaried,THREE equals three point zero\n")
    _, result = check(leaky, dotted)
    assert result["leaked_ids"] == ["c05"]
    assert result["key_sources"] == {}
    flat_jsonl = tmp_path / "flat.jsonl"  # flat JSON keys, and one dotted flat key
    flat_jsonl.write_text(json.dumps({"income": 3, "age": 30, "features.employment": "salaried", "text": "three equals three point zero"}) + "\n")
    _, result = check(leaky, flat_jsonl)
    assert result["leaked_ids"] == ["c05"]
    assert result["key_sources"]["features.income"] == "income"
    assert result["key_sources"]["features.employment"] == "features.employment (one flat key)"


def test_a_row_missing_a_compared_key_cannot_match(leaky: Project, tmp_path: Path) -> None:
    training = tmp_path / "t.jsonl"
    training.write_text(
        json.dumps({"features": {"income": 10.5, "age": 60}, "text": "Nobody saw this one"}) + "\n"  # no employment
        + json.dumps({"features": {"income": 10.5, "age": 60, "employment": None}, "text": "Nobody saw this one"}) + "\n"  # null
        + json.dumps({"features": {"income": 1, "age": 1, "employment": "x"}, "text": "x"}) + "\n"
    )
    code, result = check(leaky, training)
    assert (code, result["leaked_ids"]) == (0, [])


def test_a_key_no_training_row_has_is_an_error(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / "t.jsonl"
    training.write_text(json.dumps({"features": {"income": 3, "age": 30}, "text": "hello"}) + "\n")
    code = leaky.cli("leakage", "check", "--training", str(training))
    err = capsys.readouterr().err
    assert code == 2
    assert "none of the first 1 training rows has the case key(s) features.employment" in err
    assert "--field" in err
    csv_file = tmp_path / "t.csv"
    csv_file.write_text("income,age,text\n3,30,hello\n")
    assert leaky.cli("leakage", "check", "--training", str(csv_file)) == 2
    assert "no column for case key 'features.employment' (looked for: features.employment, employment)" in capsys.readouterr().err


def test_field_missing_from_a_case_is_an_error(leaky: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert leaky.cli("leakage", "check", "--training", str(FIXTURES / "training.jsonl"), "--field", "features.zip") == 2
    assert "data/test.jsonl:1: case 'c01' has no 'features.zip' to compare (--field features.zip)" in capsys.readouterr().err


# --------------------------------------------------------------------------- malformed and empty files


def _bad_jsonl(tmp_path: Path) -> Path:
    training = tmp_path / "bad.jsonl"
    lines = (FIXTURES / "training.jsonl").read_text().splitlines()
    lines.insert(2, '{"text": "' + MARKER + '", ')  # truncated object
    lines.insert(4, "")  # a blank line is not a row, and not an error
    lines.insert(5, "[1, 2]")  # not an object
    training.write_text("\n".join(lines) + "\n")
    return training


def test_malformed_row_is_an_error_with_file_and_line(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = _bad_jsonl(tmp_path)
    code = leaky.cli("leakage", "check", "--training", str(training))
    captured = capsys.readouterr()
    assert code == 2
    assert f"{training}:3: not valid JSON (unexpected end of data at column " in captured.err
    assert "--skip-malformed" in captured.err
    assert MARKER not in captured.err + captured.out
    assert not (leaky.root / ".oloproof").exists()


def test_skip_malformed_counts_and_reports(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, result = check(leaky, _bad_jsonl(tmp_path), "--skip-malformed")
    assert result["leaked_ids"] == ["c01", "c05"]
    assert result["counts"]["rows_scanned"] == 7
    assert result["counts"]["rows_malformed_skipped"] == 2
    assert result["malformed_lines"] == [3, 6]
    assert result["options"]["skip_malformed"] is True
    leaky.cli("leakage", "check", "--training", str(_bad_jsonl(tmp_path)), "--skip-malformed")
    assert "malformed rows skipped: 2 (lines 3, 6)" in capsys.readouterr().out


def test_malformed_csv_rows(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / "bad.csv"
    text = (FIXTURES / "training.csv").read_bytes()
    training.write_bytes(text + b"1,2,3\n" + b"4,5,caf\xc3\xa9,x,1\n" + b'3,30,salaried,"unclosed\n')
    assert leaky.cli("leakage", "check", "--training", str(training)) == 2
    assert f"{training}:9: has 3 fields, the header has 5 (training row; pass --skip-malformed" in capsys.readouterr().err
    _, result = check(leaky, training, "--skip-malformed")
    assert result["leaked_ids"] == ["c01", "c05"]
    assert result["counts"]["rows_malformed_skipped"] == 2 and result["counts"]["rows_scanned"] == 8


def test_non_utf8_csv_row(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / "latin1.csv"
    training.write_bytes((FIXTURES / "training.csv").read_bytes() + b"4,5,caf\xe9,x,1\n" + b"filler,1,2,3,4\n")
    assert leaky.cli("leakage", "check", "--training", str(training)) == 2
    assert f"{training}:9: not valid UTF-8 (training row; pass --skip-malformed" in capsys.readouterr().err
    _, result = check(leaky, training, "--skip-malformed")
    assert result["leaked_ids"] == ["c01", "c05"]
    assert (result["counts"]["rows_malformed_skipped"], result["malformed_lines"], result["counts"]["rows_scanned"]) == (1, [9], 8)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"income,age,employment,text\n"])
def test_empty_training_file_is_an_error(leaky: Project, tmp_path: Path, content: bytes, capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / ("empty.csv" if content.startswith(b"income") else "empty.jsonl")
    training.write_bytes(content)
    assert leaky.cli("leakage", "check", "--training", str(training), "--record") == 2
    assert "the training file has no rows: there is nothing to check the test set against" in capsys.readouterr().err
    assert not (leaky.root / ".oloproof").exists()


def test_all_rows_malformed_and_skipped_is_still_empty(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / "junk.jsonl"
    training.write_text("nope\n[1]\n")
    assert leaky.cli("leakage", "check", "--training", str(training), "--skip-malformed") == 2
    assert "has no rows (2 malformed rows were skipped)" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--training", "missing.jsonl"], "missing.jsonl: training file not found"),
        (["--training", "{fixtures}/README.md"], "cannot tell the training file's format from its name; pass --format"),
        (["--training", "{fixtures}/training.jsonl", "--round", "-1"], "--round: expected a number of decimals from 0 to 15, got -1"),
        (["--training", "{fixtures}/training.jsonl", "--jobs", "0"], "--jobs: expected a positive number of processes, got 0"),
        (["--training", "{fixtures}/training.jsonl", "--field", "features..age"], "--field: expected key paths"),
    ],
)
def test_bad_arguments(leaky: Project, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = [arg.replace("{fixtures}", str(FIXTURES)) for arg in argv]
    assert leaky.cli("leakage", "check", *argv) == 2
    assert message in capsys.readouterr().err


def test_format_flag_overrides_the_name(leaky: Project, tmp_path: Path) -> None:
    training = tmp_path / "rows.txt"
    shutil.copy(FIXTURES / "training.csv", training)
    _, result = check(leaky, training, "--format", "csv")
    assert result["leaked_ids"] == ["c01", "c05"]


def test_config_before_or_after_the_action(leaky: Project) -> None:
    training = str(FIXTURES / "training.jsonl")
    assert main(["leakage", "-c", leaky.config, "check", "--training", training, "-q"]) == 4
    assert main(["leakage", "check", "-c", leaky.config, "--training", training, "-q"]) == 4


# --------------------------------------------------------------------------- record and privacy


def test_record_is_written_atomically_with_ids_counts_and_options_only(leaky: Project) -> None:
    _, result = check(leaky, FIXTURES / "training.jsonl", "--round", "3", "--record")
    records = list((leaky.root / ".oloproof" / "evidence" / "leakage").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert records[0].name.split(".")[0] == record["testset"]["digest"].split(":")[1]
    assert record["schema"] == "oloproof.leakage/1"
    assert record == result  # --json writes the same document
    assert record["leaked_ids"] == ["c01", "c03", "c05"]
    assert record["options"]["round"] == 3 and record["options"]["fields"] is None
    assert record["training"]["name"] == "training.jsonl"  # the name only, no directories
    assert record["training"]["size_bytes"] == (FIXTURES / "training.jsonl").stat().st_size
    assert record["training"]["sha256"].startswith("sha256:")
    assert record["checker"]["version"] and record["created_at"].endswith("Z")
    assert record["near_duplicates_checked"] is False
    assert not [p for p in records[0].parent.iterdir() if p.name.endswith(".tmp")]


def test_no_training_value_reaches_any_output_or_file(
    project: Project, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = fixture_cases()
    project.write(cases=cases, extra="leakage: required\n")
    training = tmp_path_factory.mktemp("private") / "training.jsonl"  # outside the project
    rows = (FIXTURES / "training.jsonl").read_text()
    secret = {"features": {"income": 123.456, "age": 77, "employment": MARKER}, "text": f"{MARKER} text", "label": 1, MARKER: MARKER}
    training.write_text(rows + json.dumps(secret) + "\n")
    code, _ = check(project, training, "--record")
    assert code == 4
    assert project.cli("gate", "--json", str(project.root / "gate.json")) == 4
    project.cli("leakage", "check", "--training", str(training), "--field", "features.employment")  # the marker's column
    captured = capsys.readouterr()
    assert MARKER not in captured.out + captured.err
    files = [path for path in project.root.rglob("*") if path.is_file()]
    assert len(files) >= 5, files  # the test set, release.yaml, the record, both reports at least
    for path in files:
        assert MARKER.encode() not in path.read_bytes(), path
    assert "private" not in (project.root / "leakage.json").read_text()  # no directory of the training file either


def test_a_new_check_replaces_the_record_of_the_same_test_set(leaky: Project) -> None:
    check(leaky, FIXTURES / "training.jsonl", "--record")
    check(leaky, FIXTURES / "training.jsonl", "--field", "text", "--record")
    records = list((leaky.root / ".oloproof" / "evidence" / "leakage").glob("*.json"))
    assert len(records) == 1
    assert json.loads(records[0].read_text())["options"]["fields"] == ["text"]


def test_long_csv_fields_are_read(leaky: Project, tmp_path: Path) -> None:
    training = tmp_path / "long.csv"
    long_text = "word " * 60_000  # 300 KB: past the csv module's default field limit
    training.write_text(f"text,label\n\"{long_text}\",1\nthe quick brown fox,1\n")
    _, result = check(leaky, training, "--field", "text")
    assert result["leaked_ids"] == ["c01"] and result["counts"]["rows_malformed_skipped"] == 0
    assert csv.field_size_limit() == 131072  # the global limit is restored
