"""`oloproof leakage check --engine spark --near` and the Spark record's training digest.

On local[2], with splits of 256 KiB (several partitions per file), the near section of a Spark
record must be the local engine's: the same case ids, kinds, similarity figures and row counts, for
text (n-gram overlap and MinHash + LSH Jaccard) and tabular (tolerance, --round) near copies, from
JSONL, CSV and Parquet; and no training value in any output or file.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

from tests.leakage.test_near import MARKER, edits, words
from tests.leakage.test_spark import needs_spark, new_session

pytest.importorskip("datasketch", reason="SKIPPED LOUDLY: near-duplicate tests need pip install 'oloproof[near]'")

@pytest.fixture(scope="module")
def spark() -> Any:
    session = new_session()
    yield session
    session.stop()


SAME = ("leaked_ids", "counts", "near", "near_duplicates_checked", "note", "compared_keys", "key_sources")


def check(project: Project, training: Path | str, *options: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(training), "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


def near_project(project: Project, root: Path, rows: int = 3000, extra: str = "") -> list[dict[str, Any]]:
    """40 prompts; training rows of random words with every edit of test_near planted twice, an
    exact copy, numbers within and beyond a tolerance, and a row holding the privacy marker."""
    rng = random.Random(11)
    cases = [
        {"id": f"p{i:02d}", "prompt": words(rng, 40), "score": 10.0 + i, "expected": {"label": 1}} for i in range(40)
    ]
    project.write(cases=cases, system_args="--field label", extra=extra)
    out: list[dict[str, Any]] = [
        {"prompt": words(rng, rng.randint(20, 80)), "score": round(rng.uniform(0, 100), 3)} for _ in range(rows)
    ]
    by_id = {case["id"]: case for case in cases}
    planted: list[dict[str, Any]] = []
    for number, (case_id, edit) in enumerate(edits().items()):
        for copy in range(2):
            other = by_id[f"p{10 + number:02d}"]
            planted.append({"prompt": edit(by_id[case_id]["prompt"]), "score": 99.5 + copy})
            planted.append({"prompt": other["prompt"], "score": other["score"] + 0.03 * (copy + 1)})  # tolerance
    planted.append({"prompt": by_id["p20"]["prompt"], "score": 30.0})  # an exact copy
    planted.append({"prompt": f"{MARKER} " + words(rng, 30), "score": 1.0, MARKER: MARKER})
    for row in planted:
        out.insert(rng.randrange(len(out)), row)
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def write_csv(path: Path, rows: list[dict[str, Any]]) -> Path:
    import csv

    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["prompt", "score"])
        for row in rows:
            writer.writerow([row["prompt"], row["score"]])
    return path


NEAR = ("--near", "--tolerance", "score=0.07")


@needs_spark
@pytest.mark.parametrize("kind", ["jsonl", "csv", "parquet"])
def test_near_on_spark_equals_the_local_engine(spark: Any, project: Project, tmp_path: Path, kind: str) -> None:
    rows = near_project(project, tmp_path)
    jsonl = write_jsonl(tmp_path / "train.jsonl", rows)
    training: Path = jsonl
    if kind == "csv":
        training = write_csv(tmp_path / "train.csv", rows)
    local_code, local = check(project, training if kind != "parquet" else jsonl, *NEAR)
    if kind == "parquet":
        training = tmp_path / "train.parquet"
        spark.read.json(str(jsonl)).repartition(3).write.parquet(str(training))
    code, result = check(project, training, "--engine", "spark", *NEAR)
    assert code == local_code == 4  # the exact copy
    assert local["leaked_ids"] == ["p20"]
    ids = [(case["id"], case["kind"], case["count"]) for case in local["near"]["cases"]]
    assert ids[:5] == [("p00", "text", 2), ("p01", "text", 2), ("p02", "text", 2), ("p03", "text", 2), ("p04", "text", 2)]
    assert ("p10", "tabular", 2) in ids and ("p14", "tabular", 2) in ids  # within 0.07: both copies
    for key in SAME:
        assert result[key] == local[key], key
    assert result["engine"]["name"] == "spark"
    if kind == "jsonl":
        assert jsonl.stat().st_size > 3 * (256 << 10)  # several partitions


@needs_spark
def test_near_declared_in_release_yaml_runs_on_spark_and_the_gate_reads_it(
    spark: Any, project: Project, tmp_path: Path
) -> None:
    rows = near_project(project, tmp_path, rows=500, extra="leakage: {required: true, near: invalidate}\n")
    rows = [row for row in rows if row.get("score") != 30.0]  # no exact copy: only near ones
    training = write_jsonl(tmp_path / "train.jsonl", rows)
    code, result = check(project, training, "--engine", "spark", "--record")
    assert code == 4 and result["leaked_ids"] == [] and result["near"]["n_cases"] >= 5  # near: invalidate
    gate = project.root / "gate.json"
    project.cli("gate", "--json", str(gate))
    assert "near_duplicate_cases" in gate.read_text()


@needs_spark
def test_no_training_value_reaches_any_output_or_file_with_near_on_spark(
    spark: Any, project: Project, tmp_path_factory: pytest.TempPathFactory, capfd: pytest.CaptureFixture[str]
) -> None:
    private = tmp_path_factory.mktemp("private")
    rows = near_project(project, private, rows=300, extra="leakage: {required: true, near: report}\n")
    training = write_jsonl(private / "training.jsonl", rows)
    for kind, given in (("jsonl", training), ("csv", write_csv(private / "training.csv", rows))):
        code, result = check(project, given, "--engine", "spark", "--record")
        assert code == 4 and result["near"]["cases"], kind
    captured = capfd.readouterr()
    assert MARKER not in captured.out + captured.err
    files = [path for path in project.root.rglob("*") if path.is_file()]
    for path in files:
        assert MARKER.encode() not in path.read_bytes(), path


@needs_spark
def test_a_picture_key_with_near_is_refused_on_spark(spark: Any, project: Project, tmp_path: Path) -> None:
    from PIL import Image

    Image.new("RGB", (8, 8), (1, 2, 3)).save(project.root / "a.png")
    project.write(cases=[{"id": "i1", "image": "a.png", "expected": {"label": 1}}])
    training = write_jsonl(tmp_path / "t.jsonl", [{"image": "a.png"}])
    capsys = None
    del capsys
    assert project.cli("leakage", "check", "--training", str(training), "--engine", "spark", "--near") == 2


# --------------------------------------------------------------------------- the training file's digest


@needs_spark
def test_a_single_local_file_is_hashed_as_the_local_engine_hashes_it(
    spark: Any, project: Project, tmp_path: Path
) -> None:
    rows = near_project(project, tmp_path, rows=200)
    training = write_jsonl(tmp_path / "train.jsonl", rows)
    _, local = check(project, training)
    _, result = check(project, training, "--engine", "spark")
    assert local["training"]["sha256"].startswith("sha256:")
    assert result["training"]["sha256"] == local["training"]["sha256"]
    assert "sha256_note" not in result["training"] and "sha256_note" not in local["training"]
    csv = write_csv(tmp_path / "train.csv", rows)
    _, local = check(project, csv)
    _, result = check(project, csv, "--engine", "spark")
    assert result["training"]["sha256"] == local["training"]["sha256"] is not None


@needs_spark
def test_a_directory_or_glob_has_no_digest_and_says_why(spark: Any, project: Project, tmp_path: Path) -> None:
    rows = near_project(project, tmp_path, rows=200)
    parts = tmp_path / "parts"
    parts.mkdir()
    write_jsonl(parts / "part-0.jsonl", rows[::2])
    write_jsonl(parts / "part-1.jsonl", rows[1::2])
    for given in (parts, f"{parts}/part-*.jsonl", f"{parts}/part-0.jsonl*"):
        code, result = check(project, given, "--engine", "spark", "--record")
        assert code in (0, 4) and result["counts"]["rows_scanned"] > 0, given
        assert result["training"]["sha256"] is None
        assert result["training"]["sha256_note"] == (
            "not computed: --engine spark hashes a single local file only (as the local engine does); this was a "
            "directory, a glob, a remote URI or a file that could not be read again"
        )
    assert project.cli("gate") == 4  # the stored record (sha256 null, with its note) is read: leaked_cases


@needs_spark
def test_several_small_files_in_one_partition_each_lose_their_byte_order_mark(
    spark: Any, project: Project, tmp_path: Path
) -> None:
    """Every file's first line has its BOM dropped (a partition may hold splits of several small
    files; the executor tracks each file's split, not only the partition's first row), so a near
    copy on the first line of each file is found, as in the BOM-less concatenation. (Whether Spark
    packed these files into one partition here was not verified: the test passes without the
    per-split tracking too.)"""
    rows = near_project(project, tmp_path, rows=90)
    prompts = [json.loads(line)["prompt"] for line in (project.root / "data" / "test.jsonl").read_text().splitlines()]
    parts = tmp_path / "parts"
    parts.mkdir()
    for number in range(3):
        chunk = [{"prompt": "  " + prompts[30 + number].upper() + " !", "score": 0.5}, *rows[number::3]]
        (parts / f"part-{number}.jsonl").write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r) + "\n" for r in chunk).encode())
    whole = write_jsonl(
        tmp_path / "whole.jsonl",
        [row for n in range(3) for row in ({"prompt": "  " + prompts[30 + n].upper() + " !", "score": 0.5}, *rows[n::3])],
    )
    conf = spark.conf
    conf.set("spark.sql.files.openCostInBytes", "1")
    conf.set("spark.sql.files.maxPartitionBytes", str(64 << 20))
    try:
        code, result = check(project, parts, "--engine", "spark", *NEAR)
    finally:
        conf.set("spark.sql.files.openCostInBytes", str(4 << 20))
        conf.set("spark.sql.files.maxPartitionBytes", str(256 << 10))
    local_code, local = check(project, whole, *NEAR)
    assert code == local_code
    assert result["near"] == local["near"] and result["leaked_ids"] == local["leaked_ids"]
    assert {"p30", "p31", "p32"} <= {case["id"] for case in result["near"]["cases"]}
