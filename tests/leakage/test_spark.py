"""`oloproof leakage check --engine spark`: Spark executors scan the training data and return only
case indices and counts. On local[2] the result must be the local engine's: the same ids, the same
counts, the same malformed rows (strict and skipped), and no training value in any output or file.

The session is made once, with splits of 256 KiB, so a generated JSONL file is
split into several partitions and line numbers cross partition boundaries.
"""

from __future__ import annotations

import json
import random
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "leakage"
MARKER = "zq-private-marker-7731"

try:
    import pyspark  # noqa: F401

    SPARK = shutil.which("java") is not None
except ImportError:
    SPARK = False
needs_spark = pytest.mark.skipif(
    not SPARK, reason="SKIPPED LOUDLY: --engine spark tests need pip install 'oloproof[spark]' and a Java runtime"
)


def new_session() -> Any:
    import os

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers import this venv's packages
    session = (
        SparkSession.builder.master("local[2]")
        .appName("oloproof-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.pyspark.python", sys.executable)
        .config("spark.sql.files.maxPartitionBytes", str(256 << 10))
        .config("spark.default.parallelism", "2")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    return session


@pytest.fixture(scope="module")
def spark() -> Any:
    session = new_session()
    yield session
    session.stop()


def fixture_cases() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "cases.jsonl").read_text().splitlines()]


def check(project: Project, training: Path | str, *options: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(training), "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


SAME = ("leaked_ids", "counts", "malformed_lines", "compared_keys", "key_sources", "clean", "testset", "options")


def assert_same(local: dict[str, Any], spark: dict[str, Any]) -> None:
    for key in SAME:
        assert spark[key] == local[key], key
    assert local["engine"] == {"name": "local"}
    assert spark["engine"]["name"] == "spark" and spark["engine"]["version"]
    assert spark["schema"] == "oloproof.leakage/1"


def generated(tmp_path: Path, cases: list[dict[str, Any]], rows: int = 20_000) -> list[dict[str, Any]]:
    """Training rows: random ones, with copies of every fifth case planted (some with edited case
    and whitespace, some with --round-sensitive numbers)."""
    rng = random.Random(20)
    out: list[dict[str, Any]] = []
    for i in range(rows):
        out.append(
            {
                "features": {"income": round(rng.uniform(1, 9e5), 2), "age": rng.randint(18, 90)},
                "text": " ".join(rng.choice(["alpha", "beta", "gamma", "delta"]) for _ in range(6)),
                "label": i % 2,
            }
        )
    for index, case in enumerate(cases[::5]):
        copy = json.loads(json.dumps({key: value for key, value in case.items() if key not in ("id", "expected")}))
        if index % 2:
            copy["text"] = "  " + str(copy["text"]).upper() + "\t"
        copy["row"] = index
        out.insert(rng.randrange(len(out)), copy)
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["features.income", "features.age", "text", "label"])
        for row in rows:
            writer.writerow([row["features"]["income"], row["features"]["age"], row["text"], row.get("label", "")])
    return path


def many_cases(n: int = 200) -> list[dict[str, Any]]:
    rng = random.Random(3)
    return [
        {
            "id": f"g{i:03d}",
            "features": {"income": round(rng.uniform(1, 9e5), 2), "age": rng.randint(18, 90)},
            "text": f"case {i} " + " ".join(rng.choice(["one", "two", "three"]) for _ in range(4)),
            "expected": {"label": 1},
        }
        for i in range(n)
    ]


# --------------------------------------------------------------------------- equal to the local engine


@needs_spark
@pytest.mark.parametrize(
    "options",
    [
        (),
        ("--round", "3"),
        ("--field", "text"),
        ("--field", "features.income", "features.age"),
        ("--field", "features", "--round", "3"),
    ],
)
@pytest.mark.parametrize("training", ["training.jsonl", "training.csv"])
def test_fixture_leaks_equal_the_local_engine(
    spark: Any, project: Project, training: str, options: tuple[str, ...]
) -> None:
    project.write(cases=fixture_cases())
    local_code, local = check(project, FIXTURES / training, *options)
    spark_code, result = check(project, FIXTURES / training, "--engine", "spark", *options)
    assert spark_code == local_code
    assert result["leaked_ids"], "the fixtures leak under every option"
    assert_same(local, result)


@needs_spark
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_generated_file_split_into_partitions_equals_the_local_engine(
    spark: Any, project: Project, tmp_path: Path, kind: str
) -> None:
    cases = many_cases()
    project.write(cases=cases)
    rows = generated(tmp_path, cases)
    training = (write_jsonl if kind == "jsonl" else write_csv)(tmp_path / f"train.{kind}", rows)
    assert training.stat().st_size > 3 * (256 << 10)  # several partitions of JSONL
    local_code, local = check(project, training, "--round", "2")
    spark_code, result = check(project, training, "--round", "2", "--engine", "spark")
    assert local_code == spark_code == 4
    assert len(local["leaked_ids"]) == 40
    assert_same(local, result)
    if kind == "jsonl":
        assert result["jobs"] > 2  # split: partitions of one file
    else:
        assert result["jobs"] == 1  # a CSV file is read whole (a quoted field may span lines)


@needs_spark
def test_a_directory_and_a_glob_of_parts_equal_the_whole_file(spark: Any, project: Project, tmp_path: Path) -> None:
    cases = many_cases()
    project.write(cases=cases)
    rows = generated(tmp_path, cases, rows=6000)
    whole = write_jsonl(tmp_path / "whole.jsonl", rows)
    parts = tmp_path / "parts"
    parts.mkdir()
    for number in range(3):
        write_jsonl(parts / f"part-{number:05d}.jsonl", rows[number::3])
    (parts / "_SUCCESS").write_text("")
    _, local = check(project, whole)
    for given in (parts, f"{parts}/part-*.jsonl"):
        _, result = check(project, given, "--engine", "spark")
        assert result["leaked_ids"] == local["leaked_ids"]
        assert result["counts"] == local["counts"]
        assert result["training"]["size_bytes"] == whole.stat().st_size


@needs_spark
def test_parquet_written_by_spark_equals_the_local_engine_on_the_same_rows(
    spark: Any, project: Project, tmp_path: Path
) -> None:
    """pyarrow is not needed: Spark writes the rows of a JSONL file as Parquet (structs, doubles,
    longs, strings), and the Spark engine's result on it must be the local engine's on the JSONL."""
    cases = many_cases()
    project.write(cases=cases)
    training = write_jsonl(tmp_path / "train.jsonl", generated(tmp_path, cases, rows=6000))
    folder = tmp_path / "train.parquet"
    spark.read.json(str(training)).repartition(3).write.parquet(str(folder))
    _, local = check(project, training, "--round", "2")
    code, result = check(project, folder, "--round", "2", "--engine", "spark")
    assert code == 4 and len(local["leaked_ids"]) == 40
    assert result["training"]["format"] == "parquet"
    assert_same(local, result)


@needs_spark
def test_a_damaged_file_is_an_error_that_quotes_nothing(
    spark: Any, project: Project, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Spark's own message for a file that is not Parquet quotes the bytes at its end: only its type
    is shown, and Spark's log is off."""
    project.write(cases=fixture_cases())
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(b"PAR1" + MARKER.encode() * 50)
    capfd.readouterr()
    assert project.cli("leakage", "check", "--training", str(damaged), "--engine", "spark") == 2
    captured = capfd.readouterr()
    assert (
        f"{damaged}: Spark could not scan the training data (Py4JJavaError; the executors' logs say why)"
        in captured.err
    )
    assert MARKER not in captured.out + captured.err
    assert "[" + ", ".join(str(b - 256 if b > 127 else b) for b in MARKER.encode()[-4:]) + "]" not in captured.err


EDGE_CASES = [
    {"id": "big", "n": 2**64 + 1, "t": "x y", "expected": {"label": 1}},
    {"id": "near-big", "n": 2**64, "t": "x y", "expected": {"label": 1}},
    {"id": "lines", "n": 5, "t": "Line one\nline two", "expected": {"label": 1}},
    {"id": "first", "n": 7, "t": "at the start", "expected": {"label": 1}},
]


@needs_spark
@pytest.mark.parametrize("kind", ["jsonl", "jsonl.gz", "csv", "csv.gz"])
def test_edge_rows_equal_the_local_engine(spark: Any, project: Project, tmp_path: Path, kind: str) -> None:
    """A byte-order mark before the first row, CRLF line ends, an integer beyond 2**64 (read exactly,
    never through a float), a quoted CSV field over two lines, gzip."""
    import gzip

    project.write(cases=EDGE_CASES)
    if kind.startswith("jsonl"):
        rows = [
            '{"n": 7, "t": "AT  the start"}',
            '{"n": 18446744073709551617, "t": "X  Y"}',
            '{"n": 5, "t": "line one line two"}',
            '{"n": 3, "t": "other"}',
        ]
    else:
        rows = ["n,t", "7,AT  the start", "18446744073709551617,X  Y", '5,"Line one', 'line two"', "3,other"]
    content = b"\xef\xbb\xbf" + "\r\n".join(rows).encode() + b"\r\n"
    training = tmp_path / f"edge.{kind}"
    training.write_bytes(gzip.compress(content) if kind.endswith(".gz") else content)
    _, local = check(project, training)
    _, result = check(project, training, "--engine", "spark")
    assert local["leaked_ids"] == ["big", "lines", "first"]
    assert_same(local, result)


@needs_spark
def test_a_path_that_names_nothing_is_an_error(
    spark: Any, project: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=fixture_cases())
    for given in (tmp_path / "gone.jsonl", f"{tmp_path}/none-*.jsonl"):
        assert project.cli("leakage", "check", "--training", str(given), "--engine", "spark") == 2
        assert (
            f"{given}: no training file found (a file, a directory or a glob Spark can read)" in capsys.readouterr().err
        )


# --------------------------------------------------------------------------- malformed rows


def _bad_rows(tmp_path: Path, kind: str) -> Path:
    cases = many_cases()
    rows = generated(tmp_path, cases, rows=12_000)
    if kind == "jsonl":
        lines = [json.dumps(row) for row in rows]
        lines.insert(2, '{"text": "' + MARKER + '", ')  # truncated object
        lines.insert(4, "")  # a blank line: not a row, not an error
        lines.insert(5, "[1, 2]")  # not an object
        lines.insert(9000, "{" + MARKER)  # in a later partition
        path = tmp_path / "bad.jsonl"
        path.write_text("\n".join(lines) + "\n")
        return path
    path = write_csv(tmp_path / "bad.csv", rows)
    lines = path.read_bytes().split(b"\r\n")
    lines.insert(3, b"1,2," + MARKER.encode())  # three fields, the header has four
    lines.insert(7000, b"1,2,\xff\xfe" + MARKER.encode() + b",1")  # not UTF-8
    path.write_bytes(b"\r\n".join(lines))
    return path


@needs_spark
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_malformed_rows_stop_the_check_as_the_local_engine_does(
    spark: Any, project: Project, tmp_path: Path, capfd: pytest.CaptureFixture[str], kind: str
) -> None:
    project.write(cases=many_cases())
    training = _bad_rows(tmp_path, kind)
    capfd.readouterr()
    assert project.cli("leakage", "check", "--training", str(training)) == 2
    local = capfd.readouterr().err
    assert project.cli("leakage", "check", "--training", str(training), "--engine", "spark") == 2
    captured = capfd.readouterr()
    assert f"{training}:{3 if kind == 'jsonl' else 4}: " in local
    error = [line for line in captured.err.splitlines() if str(training) in line]
    assert error == [line for line in local.splitlines() if str(training) in line]
    assert MARKER not in captured.out + captured.err
    assert not (project.root / ".oloproof").exists()


@needs_spark
@pytest.mark.parametrize("kind", ["jsonl", "csv"])
def test_skip_malformed_counts_the_same_rows(spark: Any, project: Project, tmp_path: Path, kind: str) -> None:
    project.write(cases=many_cases())
    training = _bad_rows(tmp_path, kind)
    _, local = check(project, training, "--skip-malformed")
    _, result = check(project, training, "--skip-malformed", "--engine", "spark")
    assert local["counts"]["rows_malformed_skipped"] == (3 if kind == "jsonl" else 2)
    assert_same(local, result)


# --------------------------------------------------------------------------- privacy and the gate


@needs_spark
def test_no_training_value_reaches_any_output_or_file(
    spark: Any, project: Project, tmp_path_factory: pytest.TempPathFactory, capfd: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=fixture_cases(), extra="leakage: required\n")
    training = tmp_path_factory.mktemp("private") / "training.jsonl"  # outside the project
    rows = (FIXTURES / "training.jsonl").read_text()
    secret = {
        "features": {"income": 123.456, "age": 77, "employment": MARKER},
        "text": f"{MARKER} text",
        "label": 1,
        MARKER: MARKER,
    }
    training.write_text(rows + json.dumps(secret) + "\n" + "{" + MARKER + "\n")
    code, result = check(project, training, "--record", "--engine", "spark", "--skip-malformed")
    assert code == 4 and result["counts"]["rows_malformed_skipped"] == 1
    assert project.cli("gate", "--json", str(project.root / "gate.json")) == 4  # leaked_cases: the record is read
    gate = json.loads((project.root / "gate.json").read_text())
    assert "leaked_cases" in json.dumps(gate)
    project.cli("leakage", "check", "--training", str(training), "--field", "features.employment", "--engine", "spark")
    captured = capfd.readouterr()  # the JVM's output too (it writes to the process's descriptors)
    assert MARKER not in captured.out + captured.err
    files = [path for path in project.root.rglob("*") if path.is_file()]
    assert len(files) >= 5, files
    for path in files:
        assert MARKER.encode() not in path.read_bytes(), path
    assert "private" not in (project.root / "leakage.json").read_text()


@needs_spark
def test_a_clean_spark_record_satisfies_leakage_required(spark: Any, project: Project, tmp_path: Path) -> None:
    project.write(cases=fixture_cases(), extra="leakage: required\n")
    assert project.cli("gate") == 3  # BLOCKED: nothing recorded
    clean = write_jsonl(
        tmp_path / "clean.jsonl",
        [{"text": "nothing like a case", "features": {"income": 1, "age": 2, "employment": "none"}}],
    )
    code, result = check(project, clean, "--record", "--engine", "spark")
    assert code == 0 and result["engine"]["name"] == "spark"
    assert project.cli("gate", "--json", str(project.root / "gate.json")) != 3
    gate = json.loads((project.root / "gate.json").read_text())
    assert "leakage_unchecked" not in json.dumps(gate)


# --------------------------------------------------------------------------- without the extra, and what it refuses


@pytest.mark.parametrize("engine", ["spark", 7, ["spark"], {"version": "3.5.3"}])
def test_a_record_with_a_forged_engine_is_not_valid(
    project: Project, capsys: pytest.CaptureFixture[str], engine: Any
) -> None:
    """A pull request that edits a record's engine gets a clear error from the gate, not a crash."""
    project.write(cases=fixture_cases(), extra="leakage: required\n")
    check(project, FIXTURES / "training.jsonl", "--record")
    (record,) = (project.root / ".oloproof" / "evidence" / "leakage").glob("*.json")
    data = json.loads(record.read_text())
    assert data["engine"] == {"name": "local"}
    data["engine"] = engine
    record.write_text(json.dumps(data))
    capsys.readouterr()
    assert project.cli("gate") == 2
    assert "not a valid leakage record (ValueError: engine must be an object with a name)" in capsys.readouterr().err


def test_without_pyspark_the_engine_says_what_to_install(
    project: Project, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project.write(cases=fixture_cases())
    monkeypatch.setitem(sys.modules, "pyspark", None)  # import pyspark raises ImportError
    assert project.cli("leakage", "check", "--training", str(FIXTURES / "training.jsonl"), "--engine", "spark") == 2
    assert (
        "--engine spark needs pyspark and a Java runtime (17): pip install 'oloproof[spark]'" in capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (("--engine", "spark", "--jobs", "2"), "--engine spark: --jobs and --image-root are for the local engine"),
        (
            ("--engine", "spark", "--image-root", "."),
            "--engine spark: --jobs and --image-root are for the local engine (Spark's parallelism is its master's)",
        ),
        (("--spark-master", "local[2]"), "--spark-master needs --engine spark"),
    ],
)
def test_options_of_the_local_engine_are_refused(
    project: Project, capsys: pytest.CaptureFixture[str], options: tuple[str, ...], message: str
) -> None:
    project.write(cases=fixture_cases())
    assert project.cli("leakage", "check", "--training", str(FIXTURES / "training.jsonl"), *options) == 2
    assert message in capsys.readouterr().err
