"""Regressions from the leakage check's review: pipes, runaway CSV quotes, Unicode equivalence,
damaged files, worker signals and --jobs, the lock file, the normalisation version."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from conftest import Project

from oloproof.errors import DataError
from oloproof.leakage.normalise import normalise_string, normalise_text, normalise_value
from oloproof.leakage.readers import detect

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "leakage"


@pytest.fixture
def leaky(project: Project) -> Project:
    project.write(cases=[json.loads(line) for line in (FIXTURES / "cases.jsonl").read_text().splitlines()])
    return project


def check(project: Project, training: Path | str, *options: str) -> tuple[int, dict[str, Any]]:
    out = project.root / "leakage.json"
    out.unlink(missing_ok=True)
    code = project.cli("leakage", "check", "--training", str(training), "--json", str(out), "-q", *options)
    return code, (json.loads(out.read_text()) if out.exists() else {})


# --------------------------------------------------------------------------- 1. pipes and devices


def test_a_device_is_refused(leaky: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert leaky.cli("leakage", "check", "--training", "/dev/null", "--format", "jsonl") == 2
    assert (
        "/dev/null: not a regular file (a pipe or device cannot be read the several times a check needs); save it to a file first"
        in capsys.readouterr().err
    )


def test_a_pipe_is_refused(tmp_path: Path) -> None:
    fifo = tmp_path / "training.jsonl"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # a writer, so that an open() for reading does not block
    try:
        os.write(keep, b'{"text": "x"}\n')
        with pytest.raises(DataError, match="not a regular file"):
            detect(str(fifo))
    finally:
        os.close(keep)


# --------------------------------------------------------------------------- 2. a stray CSV quote


def _stray_quote(tmp_path: Path, rows: int) -> Path:
    training = tmp_path / "stray.csv"
    good = "".join(f"{i},{i},retired,row {i},0\n" for i in range(rows))
    training.write_text((FIXTURES / "training.csv").read_text() + '1,2,retired,"stray quote,0\n' + good)
    return training


def test_a_stray_quote_names_the_line_where_the_row_began(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = _stray_quote(tmp_path, 50)
    assert leaky.cli("leakage", "check", "--training", str(training)) == 2
    err = capsys.readouterr().err
    assert f"{training}:9: not valid CSV" in err  # the row began on line 9, not at the end of the file
    assert "ran over 51 lines" in err


def test_a_stray_quote_cannot_give_a_result_from_part_of_the_file(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = _stray_quote(tmp_path, 50)
    code, result = check(leaky, training, "--skip-malformed")
    assert code == 2 and result == {}
    assert f"{training}:9: a malformed row began here and ran over 51 lines" in capsys.readouterr().err


def test_a_stray_quote_is_bounded_by_the_field_limit(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    training = _stray_quote(tmp_path, 100_000)  # ~2.5 MB after the quote: past the 1 MiB field cap
    assert leaky.cli("leakage", "check", "--training", str(training), "-q") == 2
    err = capsys.readouterr().err
    assert f"{training}:9: not valid CSV (a field longer than 1 MiB); the row began on this line and ran over " in err


# --------------------------------------------------------------------------- 3. Unicode equivalence


EQUIVALENT = [
    ("caf\u00e9", "cafe\u0301"),  # NFC, NFD
    ("zero\u200bwidth", "zerowidth"),  # zero-width space
    ("soft\u00adhyphen", "softhyphen"),
    ("in\ufeffstring bom", "instring bom"),
    ("\uff26\uff55\uff4c\uff4c\uff57\uff49\uff44\uff54\uff48", "fullwidth"),
    ("Stra\u00dfe", "STRASSE"),
    ("  Mixed\u00a0 Case\u3000", "mixed case"),
]


@pytest.mark.parametrize(("left", "right"), EQUIVALENT)
def test_canonically_equivalent_strings_match(left: str, right: str) -> None:
    assert normalise_string(left) == normalise_string(right)
    assert normalise_value(left, None) == normalise_value(right, None)
    assert normalise_text(left, None) == normalise_text(right, None)


@pytest.mark.parametrize("suffix", ["jsonl", "csv"])
def test_equivalent_strings_match_through_every_path(project: Project, tmp_path: Path, suffix: str) -> None:
    project.write(cases=[{"id": f"u{i}", "text": left, "expected": {"label": 1}} for i, (left, _) in enumerate(EQUIVALENT)])
    training = tmp_path / f"training.{suffix}"
    if suffix == "jsonl":  # one key: the fast path
        training.write_text("".join(json.dumps({"text": right}) + "\n" for _, right in EQUIVALENT), encoding="utf-8")
    else:
        training.write_text("text\n" + "".join(f'"{right}"\n' for _, right in EQUIVALENT), encoding="utf-8")
    code, result = check(project, training)
    assert (code, result["leaked_ids"]) == (4, [f"u{i}" for i in range(len(EQUIVALENT))])
    assert result["normalisation"] == "nfkc-casefold-cf-ws/1"


def test_a_record_of_another_normalisation_is_stale(project: Project, tmp_path: Path) -> None:
    project.write(cases=[{"id": "c1", "text": "hello", "expected": {"label": 1}}], extra="leakage: required\n")
    training = tmp_path / "t.jsonl"
    training.write_text(json.dumps({"text": "other"}) + "\n")
    assert project.cli("leakage", "check", "--training", str(training), "--record", "-q") == 0
    (record,) = (project.root / ".oloproof" / "evidence" / "leakage").glob("*.json")
    for version in ("lower-ws/0", None):
        data = json.loads(record.read_text())
        if version is None:
            data.pop("normalisation")
        else:
            data["normalisation"] = version
        record.write_text(json.dumps(data))
        out = project.root / "gate.json"
        assert project.cli("gate", "--json", str(out), "-q") == 3
        leakage = next(c for c in json.loads(out.read_text())["checks"] if c["name"] == "leakage")
        assert leakage["reasons"] == ["leakage_stale"] and leakage["data"]["status"] == "stale"


# --------------------------------------------------------------------------- 4. damaged files


def test_a_corrupted_gzip_is_a_data_error(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = bytearray(gzip.compress((FIXTURES / "training.jsonl").read_bytes() * 50))
    data[30:60] = b"\xff" * 30  # inside the deflate stream: zlib.error
    training = tmp_path / "corrupt.jsonl.gz"
    training.write_bytes(bytes(data))
    assert leaky.cli("leakage", "check", "--training", str(training)) == 2
    assert f"{training}: cannot read the gzip stream" in capsys.readouterr().err


def test_a_truncated_gzip_is_a_data_error(leaky: Project, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = gzip.compress((FIXTURES / "training.jsonl").read_bytes())
    training = tmp_path / "truncated.jsonl.gz"
    training.write_bytes(data[: len(data) // 2])
    assert leaky.cli("leakage", "check", "--training", str(training)) == 2
    assert f"{training}: cannot read the gzip stream (EOFError)" in capsys.readouterr().err


@pytest.mark.parametrize("fields", [(), ("--field", "text")])  # the general path, and the fast one
def test_a_deeply_nested_value_is_a_malformed_row(leaky: Project, tmp_path: Path, fields: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    training = tmp_path / "deep.jsonl"
    deep = "[" * 900 + "]" * 900
    lines = (FIXTURES / "training.jsonl").read_text().splitlines()
    lines.insert(1, '{"features": {"income": 52.31, "age": 41, "employment": "salaried"}, "text": ' + deep + "}")
    training.write_text("\n".join(lines) + "\n")
    assert leaky.cli("leakage", "check", "--training", str(training), *fields) == 2
    assert f"{training}:2: a value is nested too deeply to compare" in capsys.readouterr().err
    code, result = check(leaky, training, "--skip-malformed", *fields)
    assert code == 4 and result["malformed_lines"] == [2] and result["counts"]["rows_scanned"] == 7


# --------------------------------------------------------------------------- 5. workers


def test_a_worker_resets_the_signal_handlers_it_inherits(monkeypatch: pytest.MonkeyPatch) -> None:
    from oloproof.leakage import scan as leakage_scan

    def report(*_: Any) -> tuple[str, Any]:
        return "ok", (signal.getsignal(signal.SIGTERM) == signal.SIG_DFL, signal.getsignal(signal.SIGINT) == signal.SIG_DFL)

    monkeypatch.setattr(leakage_scan, "_scan_range", report)
    previous = signal.signal(signal.SIGTERM, lambda *_: None)  # as the CLI installs one
    try:
        context = multiprocessing.get_context("fork")
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=leakage_scan._worker_main, args=(sender,))
        process.start()
        sender.close()
        assert receiver.recv() == ("ok", (True, True))
        process.join(10)
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_jobs_are_clamped_to_the_usable_cpus() -> None:
    from oloproof.leakage.scan import _workers

    usable = len(os.sched_getaffinity(0))
    assert _workers(10_000) == usable
    assert _workers(1) == 1


# --------------------------------------------------------------------------- 6. the lock


def test_recording_leaves_no_lock_in_the_evidence(leaky: Project) -> None:
    assert leaky.cli("leakage", "check", "--training", str(FIXTURES / "training.jsonl"), "--record", "-q") == 4
    evidence = leaky.root / ".oloproof" / "evidence" / "leakage"
    assert [path.suffix for path in evidence.iterdir()] == [".json"]
    assert ".locks/" in (leaky.root / ".oloproof" / ".gitignore").read_text()
