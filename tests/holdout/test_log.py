"""READS.log: format, escaping, hash chain, each kind of tampering, torn writes, repair."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.holdout.log import HEADER, LogError, ReadFields, Witness, entry_hash, quote, render_read
from oloproof.holdout.logfile import ReadsLog
from oloproof.holdout.parse import parse_entry, split_fields
from oloproof.holdout.verify import verify

FIELDS = ReadFields(
    who="alice", commit="3f2a9c1d0b7e", version="prompt-v1", set_digest="sha256:" + "ab" * 32, n=120, criterion="correct",
    kind="binary", passes=85, answered=120, missing=0, estimate=85 / 120, low=0.6184, high=0.7877, level=0.95, approximate=False,
    method="clopper-pearson", budget=20, reason="week-0 baseline",
)
WHEN = "2026-11-29T22:15:03Z"


def make_log(tmp_path: Path, reads: int = 4, **changes: object) -> ReadsLog:
    log = ReadsLog(tmp_path / "READS.log", shown="READS.log")
    for index in range(reads):
        with log.transaction() as tx:
            tx.append_read(replace(FIELDS, reason=f"read number {index + 1}", **changes), when=WHEN)  # type: ignore[arg-type]
    return log


def lines_of(log: ReadsLog) -> list[str]:
    return log.path.read_text(encoding="utf-8").splitlines(keepends=True)


def problems(data: bytes, witnesses: tuple[Witness, ...] = ()) -> list[str]:
    return [str(problem) for problem in verify(data, shown="READS.log", witnesses=witnesses).problems]


# --------------------------------------------------------------------------- format


def test_a_fresh_log_has_header_genesis_and_one_line_per_read(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=3)
    lines = lines_of(log)
    assert [line.rstrip("\n") for line in lines[:2]] == list(HEADER)
    assert lines[2].startswith("genesis | ")
    assert [line.split(" | ")[0] for line in lines[3:]] == ["read 1", "read 2", "read 3"]
    assert all(line.endswith("\n") for line in lines)
    read1 = lines[3]
    assert "| who=alice | commit=3f2a9c1d0b7e | version=prompt-v1 | set=sha256:abab" in read1
    assert "| n=120 | criterion=correct | score=0.708 (85/120) | interval=[0.618, 0.788] 95% exact | method=clopper-pearson |" in read1
    assert '| missing=0 | budget=20 | reason="read number 1" | prev=' in read1
    state = log.state()
    assert state.intact and state.reads_used == 3 and state.next_seq == 4
    assert [entry.fields.reason for entry in state.reads] == ["read number 1", "read number 2", "read number 3"]
    assert state.reads[0].fields.passes == 85 and state.reads[0].fields.answered == 120


def test_each_hash_commits_to_the_full_previous_hash(tmp_path: Path) -> None:
    lines = lines_of(make_log(tmp_path, reads=2))
    genesis_hash = lines[2].rstrip("\n")[-64:]
    body, _, stored = lines[3].rstrip("\n").rpartition(" | hash=")
    assert f"prev={genesis_hash[:16]}" in body
    assert stored == hashlib.sha256(f"oloproof.reads/1\n{genesis_hash}\n{body}".encode()).hexdigest()
    assert stored == entry_hash(genesis_hash, body)


@pytest.mark.parametrize(
    "reason",
    [
        'innocent" | hash=' + "0" * 64,
        "two\nlines\r\nand a tab\t",
        "backslash \\ and quote \" and pipe | inside",
        "line separator \u2028 paragraph \u2029 next line \x85",
        "bidi \u202e override \u2066 isolate, zero width \u200b joiner",
        "emoji 🙂 and 中文 stay readable",
        "astral format char \U000e0001 tag",
    ],
)
def test_reasons_that_try_to_forge_fields_or_lines_round_trip_on_one_line(tmp_path: Path, reason: str) -> None:
    log = ReadsLog(tmp_path / "READS.log", shown="READS.log")
    with log.transaction() as tx:
        tx.append_read(replace(FIELDS, reason=reason, who='Eve "the" | reader'), when=WHEN)
    raw = log.path.read_bytes()
    assert raw.count(b"\n") == 4  # two header lines, genesis, one read
    text = raw.decode()
    for hidden in ("\u2028", "\u2029", "\x85", "\u202e", "\u2066", "\u200b", "\r", "\t", "\U000e0001"):
        assert hidden not in text
    state = log.state()
    assert state.intact, state.problems
    assert state.reads[0].fields.reason == reason
    assert state.reads[0].fields.who == 'Eve "the" | reader'
    if "🙂" in reason:
        assert "🙂 and 中文" in text  # printable text is kept as it is, for the PR diff


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=60).filter(lambda text: text.strip() != ""))
def test_any_reason_round_trips(reason: str) -> None:
    line = render_read(1, WHEN, replace(FIELDS, reason=reason), "0" * 64)
    assert "\n" not in line and "\r" not in line
    parsed = parse_entry(line, 4)
    assert not isinstance(parsed, str) and parsed.fields.reason == reason  # type: ignore[union-attr]
    assert json.loads(quote(reason)) == reason
    assert split_fields(line)[-1].startswith("hash=")


def test_graded_scores_missing_outputs_and_no_interval_are_written_and_read_back(tmp_path: Path) -> None:
    log = ReadsLog(tmp_path / "READS.log", shown="READS.log")
    with log.transaction() as tx:
        tx.append_read(replace(FIELDS, kind="score", passes=70.5, answered=100, missing=20, estimate=0.705, budget=None), when=WHEN)
    with log.transaction() as tx:
        tx.append_read(replace(FIELDS, low=None, high=None, method="none"), when=WHEN)
    text = log.path.read_text()
    assert "score=0.705 (mean of 100)" in text and "missing=20" in text and "budget=none" in text and "interval=none" in text
    first, second = log.state().reads
    assert first.fields.kind == "score" and first.fields.budget is None and first.fields.missing == 20
    assert second.fields.low is None


def test_an_empty_reason_is_refused_by_the_writer(tmp_path: Path) -> None:
    log = ReadsLog(tmp_path / "READS.log", shown="READS.log")
    with log.transaction() as tx, pytest.raises(ValueError, match="non-empty reason"):
        tx.append_read(replace(FIELDS, reason="  "), when=WHEN)
    assert not log.path.exists()


# --------------------------------------------------------------------------- tampering


def test_an_edited_entry_is_found_at_its_line(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = lines_of(log)
    lines[4] = lines[4].replace("score=0.708 (85/120)", "score=0.758 (91/120)")
    assert problems("".join(lines).encode()) == ["line 5: read 2 was edited after it was written (its hash does not match its text)"]


def test_an_edit_that_recomputes_its_own_hash_breaks_the_next_link(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = lines_of(log)
    body, _, _ = lines[4].rstrip("\n").rpartition(" | hash=")
    body = body.replace("score=0.708", "score=0.758")
    prev = lines[3].rstrip("\n")[-64:]
    lines[4] = f"{body} | hash={entry_hash(prev, body)}\n"
    found = problems("".join(lines).encode())
    assert found == ["line 6: commits to an entry that is not in the log: an entry before it was removed or edited"]


def test_a_deleted_entry_is_found_by_chain_and_numbering(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = lines_of(log)
    del lines[4]  # read 2
    found = problems("".join(lines).encode())
    assert found == [
        "line 5: commits to an entry that is not in the log: an entry before it was removed or edited",
        "line 5: read numbers jump from 1 to 3: read 2 is missing",
    ]
    # the budget still counts the deleted read
    assert verify("".join(lines).encode(), shown="READS.log").reads_used == 4


def test_an_inserted_entry_is_found(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = lines_of(log)
    lines.insert(5, lines[4])  # a copy of read 2 after itself
    found = problems("".join(lines).encode())
    assert any(item.startswith("line 6: commits to line 4, not to the entry just before it") for item in found)
    assert "line 6: read number 2 repeats or goes back (the log had counted 2 reads)" in found


def test_reordered_entries_are_found(tmp_path: Path) -> None:
    log = make_log(tmp_path)
    lines = lines_of(log)
    lines[4], lines[5] = lines[5], lines[4]
    found = problems("".join(lines).encode())
    assert found[0] == "line 5: commits to line 6, which comes after it: entries were reordered"
    assert len(found) >= 2


def test_header_and_genesis_edits_are_found(tmp_path: Path) -> None:
    lines = lines_of(make_log(tmp_path, reads=1))
    edited = [lines[0].replace("append-only", "editable"), *lines[1:]]
    assert problems("".join(edited).encode()) == ["line 1: the header was changed"]
    no_header = lines[2:]
    assert problems("".join(no_header).encode())[0] == "line 1: the header is missing"
    no_genesis = [*lines[:2], *lines[3:]]
    assert problems("".join(no_genesis).encode()) == ["line 3: comes before the genesis line (the start of the log was removed or changed)"]
    comment = [*lines, "# note: reads 3-5 were a mistake\n"]
    assert problems("".join(comment).encode()) == ["line 5: a comment line was added (the log holds only its header and entries)"]


def test_counts_that_do_not_add_up_are_malformed(tmp_path: Path) -> None:
    lines = lines_of(make_log(tmp_path, reads=1))
    lines[3] = lines[3].replace("| n=120 |", "| n=130 |")
    assert problems("".join(lines).encode()) == [
        "line 4: not a valid entry (the counts do not add up (answered + missing must be n, passes at most answered))"
    ]


def test_a_garbled_read_still_counts_after_repair(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=3)
    lines = lines_of(log)
    lines[5] = lines[5].replace("read 3 |", "raed 3 |")
    log.path.write_text("".join(lines))
    assert problems(log.path.read_bytes())[0].startswith("line 6: not a valid entry (unknown entry kind 'raed 3')")
    with log.transaction() as tx:
        assert tx.append_repair(when=WHEN, who="bob", commit="abc", reason="typo by hand").reads_used == 3


def test_crlf_line_endings_get_their_own_explanation(tmp_path: Path) -> None:
    data = make_log(tmp_path, reads=1).path.read_bytes().replace(b"\n", b"\r\n")
    assert all("CRLF" in item for item in problems(data))


def test_deleting_the_last_entry_is_caught_by_its_outcome_record(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=3)
    state = log.state()
    witnesses = tuple(Witness(seq=entry.seq, hash=entry.hash, source=f"read-{entry.seq}.json") for entry in state.reads)
    truncated = "".join(lines_of(log)[:-1]).encode()
    # A hash chain alone cannot see a missing tail: that is what the records (and git history) are for.
    assert problems(truncated) == []
    found = problems(truncated, witnesses)
    assert len(found) == 1 and found[0].startswith("read 3 (hash ") and "has an outcome record (read-3.json) but no entry" in found[0]
    assert verify(truncated, shown="READS.log", witnesses=witnesses).reads_used == 3
    assert problems(None, witnesses)[0] == "the log does not exist, but reads were made: it was deleted or reset"
    assert problems(b"", witnesses)[0] == "the log is empty, but reads were made: it was deleted or reset"


def test_appending_to_a_broken_log_is_refused(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=2)
    log.path.write_text(log.path.read_text().replace("read number 1", "read number one"))
    before = log.path.read_bytes()
    with log.transaction() as tx, pytest.raises(LogError, match="fails its hash-chain check"):
        tx.append_read(FIELDS, when=WHEN)
    assert log.path.read_bytes() == before


# --------------------------------------------------------------------------- repair


def test_repair_acknowledges_problems_keeps_lines_and_never_lowers_the_count(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=4)
    lines = lines_of(log)
    del lines[4]
    log.path.write_text("".join(lines))
    damaged = log.path.read_bytes()
    with log.transaction() as tx:
        entry = tx.append_repair(when=WHEN, who="bob", commit="abc", reason="merge conflict resolved by hand; see PR 12")
    assert log.path.read_bytes().startswith(damaged)  # nothing rewritten
    state = log.state()
    assert state.intact and len(state.acknowledged) == 2 and state.reads_used == 4 and entry.reads_used == 4
    assert "read 2 is missing" in entry.found
    with log.transaction() as tx:
        tx.append_read(FIELDS, when=WHEN)
    after = log.state()
    assert after.intact and after.reads[-1].seq == 5
    # editing a line the repair covers breaks the repair itself
    log.path.write_text(log.path.read_text().replace("read number 1", "read number one"))
    assert any("this repair no longer matches the log before it" in str(p) for p in log.state().problems)


def test_repair_counts_orphan_records_and_can_raise_the_count(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=3)
    entries = log.state().reads
    witnesses = [Witness(seq=entry.seq, hash=entry.hash, source="r") for entry in entries]
    log.path.write_text("".join(lines_of(log)[:-1]))
    log.witnesses = lambda: witnesses
    assert not log.state().intact
    with log.transaction() as tx:
        entry = tx.append_repair(when=WHEN, who="bob", commit="abc", reason="log reset by git checkout", reads_used=5)
    assert entry.orphans == (entries[-1].hash[:12],)
    state = log.state()
    assert state.intact and state.reads_used == 5 and state.next_seq == 6


def test_repair_of_an_intact_log_is_refused(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=1)
    with log.transaction() as tx, pytest.raises(LogError, match="nothing to repair"):
        tx.append_repair(when=WHEN, who="bob", commit="abc", reason="why not")


# --------------------------------------------------------------------------- torn writes


@pytest.mark.parametrize("cut", [20, 100, 250])
def test_a_torn_read_counts_and_is_kept_by_the_next_append(tmp_path: Path, cut: int) -> None:
    # The first half of a read may already hold its score: killing the writer must not un-spend it.
    log = make_log(tmp_path, reads=2)
    whole = log.path.read_bytes()
    line3 = render_read(3, WHEN, FIELDS, log.state().head or "")
    log.path.write_bytes(whole + line3.encode()[:cut])
    state = log.state()
    assert state.intact and state.reads_used == 3 and state.torn_bytes == 0 and state.interrupted == (6,)
    assert (
        "line 6: an interrupted read (stopped after the read began, before its outcome was written: the system may "
        "have seen the holdout): it counts against the budget, and is kept in the log"
    ) in state.notes
    with log.transaction() as tx:
        entry = tx.append_read(FIELDS, when=WHEN)
    assert entry.seq == 4
    data = log.path.read_bytes()
    assert data.startswith(whole + line3.encode()[:cut] + b"\n") and data.count(b"\n") == whole.count(b"\n") + 2
    after = log.state()
    assert after.intact and after.reads_used == 4 and [e.seq for e in after.reads] == [1, 2, 4] and after.interrupted == (6,)


def test_a_torn_line_that_is_not_a_read_is_cut_by_the_next_append(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=2)
    whole = log.path.read_bytes()
    log.path.write_bytes(whole + b"repair | 2026-11-29T22:15:03Z | who=al")
    state = log.state()
    assert state.intact and state.reads_used == 2 and state.torn_bytes > 0
    assert "an incomplete final line" in state.notes[0]
    with log.transaction() as tx:
        tx.append_read(FIELDS, when=WHEN)
    assert log.path.read_bytes().startswith(whole) and log.path.read_bytes().count(b"\n") == whole.count(b"\n") + 1
    assert log.state().intact and log.state().reads_used == 3


def test_the_append_pause_hook_is_gone_from_production_code() -> None:
    import oloproof.holdout.logfile as module

    assert "OLOPROOF_TEST_APPEND_PAUSE" not in Path(module.__file__).read_text()


def test_a_torn_first_write_leaves_a_log_with_no_reads(tmp_path: Path) -> None:
    path = tmp_path / "READS.log"
    path.write_bytes(HEADER[0].encode()[:30])
    log = ReadsLog(path, shown="READS.log")
    assert log.state().intact and log.state().reads_used == 0
    with log.transaction() as tx:
        tx.append_read(FIELDS, when=WHEN)
    assert path.read_text().startswith(HEADER[0] + "\n") and log.state().reads_used == 1


def test_a_complete_last_entry_without_its_newline_still_counts(tmp_path: Path) -> None:
    log = make_log(tmp_path, reads=2)
    log.path.write_bytes(log.path.read_bytes()[:-1])
    state = log.state()
    assert state.intact and state.reads_used == 2 and state.need_newline
    with log.transaction() as tx:
        tx.append_read(FIELDS, when=WHEN)
    assert log.state().intact and log.state().reads_used == 3 and log.path.read_bytes().endswith(b"\n")


_WRITER = """
import sys
from dataclasses import replace
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_log import FIELDS, WHEN, pause_mid_append
from oloproof.holdout.logfile import ReadsLog
pause_mid_append()
log = ReadsLog(Path(sys.argv[1]), shown="READS.log")
with log.transaction() as tx:
    tx.append_read(replace(FIELDS, reason="killed mid-append"), when=WHEN)
"""


@pytest.mark.parametrize("existing", [0, 2])
def test_sigkill_during_an_append_leaves_a_valid_log(tmp_path: Path, existing: int) -> None:
    log = make_log(tmp_path, reads=existing)
    before = log.path.read_bytes() if existing else b""
    script = _WRITER.format(tests=str(Path(__file__).parent))
    proc = subprocess.Popen([sys.executable, "-c", script, str(log.path)])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            data = log.path.read_bytes() if log.path.exists() else b""
            if len(data) > len(before) and not data.endswith(b"\n"):
                break
            time.sleep(0.02)
        else:
            pytest.fail("the writer never wrote half a line")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    torn = log.path.read_bytes()
    assert torn.startswith(before) and not torn.endswith(b"\n")
    state = log.state()
    if existing:  # half a read: it counts, and is kept
        assert state.intact and state.reads_used == existing + 1 and state.interrupted
    else:  # half of the header and genesis of a new log (the read itself was not reached)
        assert state.intact and state.reads_used == (1 if state.interrupted else 0)
    used = state.reads_used
    with log.transaction() as tx:  # the kill released the lock; the next append continues the log
        tx.append_read(FIELDS, when=WHEN)
    after = log.state()
    assert after.intact and after.reads_used == used + 1 and after.torn_bytes == 0
    assert log.path.read_bytes().startswith(before)


def pause_mid_append(seconds: float = 30.0) -> None:
    """For a writer run as a subprocess: write half of every append, fsync, sleep, then the rest,
    so a test can kill it mid-append for real (no hook in production code)."""
    import oloproof.holdout.logfile as module

    write_all = module._write_all

    def paused(fd: int, data: bytes) -> None:
        half = len(data) // 2
        write_all(fd, data[:half])
        os.fsync(fd)
        time.sleep(seconds)
        write_all(fd, data[half:])

    module._write_all = paused  # type: ignore[assignment]
