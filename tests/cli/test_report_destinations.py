"""Reports go where they are sent, and nowhere else (issue 16, point 7).

A report path that is a symlink is written to its target, never replaced by a regular file (as
root, ``--json /dev/stdout`` used to replace the device link); a pipe, a FIFO or a character
device is written into; ``-`` is standard output for every report flag; GitHub's step summary is
appended to. The literal ``/dev/stdout`` is not used here: on the old code, as root, it would
replace the machine's own link. A link of our own to it is the same class of path.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import Project, labelled_cases

ROOT = Path(__file__).resolve().parents[2]


def oloproof(project: Project, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """The CLI as a script runs it: its stdout a pipe."""
    split = 2 if argv[0] in ("holdout", "metamorphic", "leakage") else 1
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    environ.pop("GITHUB_STEP_SUMMARY", None)
    environ.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "oloproof", *argv[:split], "-c", project.config, *argv[split:]],
        capture_output=True,
        cwd=project.root,
        env=environ,
        timeout=120,
        check=False,
    )


@pytest.fixture
def passing(project: Project) -> Project:
    return project.write(cases=labelled_cases(60, 60))


@pytest.mark.parametrize("flag", ["--json", "--junit", "--markdown"])
def test_a_link_to_stdout_is_written_through_not_replaced(passing: Project, flag: str) -> None:
    link = passing.root / "out"
    link.symlink_to("/dev/stdout")
    done = oloproof(passing, "gate", flag, str(link))
    assert done.returncode == 0, done.stderr.decode()
    assert link.is_symlink() and os.readlink(link) == "/dev/stdout"
    text = done.stdout.decode()
    if flag == "--json":
        assert json.loads(text)["verdict"] == "PASS"  # stdout holds the report alone: people's text went to stderr
        assert "PASS" in done.stderr.decode()
    elif flag == "--junit":
        assert text.startswith("<?xml")
    else:
        assert "PASS" in text


def test_proc_self_fd_1_is_standard_output(passing: Project) -> None:
    done = oloproof(passing, "gate", "--json", "/proc/self/fd/1")
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout)["verdict"] == "PASS"


@pytest.mark.parametrize(
    "argv",
    [
        ("gate", "--json", "-"),
        ("gate", "--junit", "-"),
        ("gate", "--markdown", "-"),
        ("runs", "--json", "-"),
        ("holdout", "size", "--delta", "0.05", "--json", "-"),
    ],
)
def test_dash_is_standard_output_for_every_report_flag(passing: Project, argv: tuple[str, ...]) -> None:
    done = oloproof(passing, *argv)
    assert done.returncode == 0, done.stderr.decode()
    assert not (passing.root / "-").exists()
    out = done.stdout.decode()
    if argv[1] == "--json" or argv[-2] == "--json":
        json.loads(out)  # one document, nothing else on stdout
    elif argv[1] == "--junit":
        assert out.startswith("<?xml") and out.rstrip().endswith(">")
    else:
        assert out.lstrip().startswith(("#", "<", "**", "|")) or "PASS" in out


def test_seeds_html_dash_is_standard_output(project: Project) -> None:
    from tests.seeds.test_check import five_seeds, seeds_file

    five_seeds(project)
    seeds = seeds_file(project, ["s1", "s2", "s3", "s4", "s5"])
    done = oloproof(project, "seeds", str(seeds), "--policy", str(project.root / "recipe.yaml"), "--html", "-")
    assert done.returncode in (0, 1, 4, 5), done.stderr.decode()
    assert not (project.root / "-").exists()
    page = done.stdout.decode()
    assert page.lstrip().lower().startswith("<!doctype html") and page.rstrip().endswith("</html>")


def test_two_reports_on_standard_output_are_refused(passing: Project) -> None:
    done = oloproof(passing, "gate", "--json", "-", "--markdown", "/proc/self/fd/1")
    assert done.returncode == 2
    assert b"named for two reports" in done.stderr
    assert b"both standard output" in done.stderr


def test_a_symlink_to_a_file_writes_the_target(passing: Project) -> None:
    target = passing.root / "reports" / "real.json"
    target.parent.mkdir()
    target.write_text("old")
    link = passing.root / "report.json"
    link.symlink_to(target)
    assert passing.cli("gate", "--json", str(link)) == 0
    assert link.is_symlink()
    assert json.loads(target.read_text())["verdict"] == "PASS"


def test_a_dangling_symlink_creates_its_target(passing: Project) -> None:
    link = passing.root / "report.json"
    link.symlink_to("made/later.json")
    assert passing.cli("gate", "--json", str(link)) == 0
    assert link.is_symlink()
    assert json.loads((passing.root / "made" / "later.json").read_text())["verdict"] == "PASS"


def test_a_symlink_to_an_input_is_still_refused(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    link = passing.root / "report.json"
    link.symlink_to(passing.root / "data" / "test.jsonl")
    before = (passing.root / "data" / "test.jsonl").read_bytes()
    assert passing.cli("gate", "--json", str(link)) == 2
    assert "is an input of this command" in capsys.readouterr().err
    assert (passing.root / "data" / "test.jsonl").read_bytes() == before and link.is_symlink()


def test_a_symlink_into_the_evidence_is_still_refused(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert passing.cli("gate") == 0
    link = passing.root / "report.json"
    link.symlink_to(passing.root / ".oloproof" / "sneaky.json")
    assert passing.cli("gate", "--json", str(link)) == 2
    assert "is inside .oloproof/" in capsys.readouterr().err


def test_a_fifo_is_written_into(passing: Project) -> None:
    fifo = passing.root / "report.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as handle:
            got.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert passing.cli("gate", "--json", str(fifo)) == 0
    reader.join(timeout=30)
    assert fifo.is_fifo()
    assert json.loads(got[0])["verdict"] == "PASS"


def test_a_fifo_nobody_reads_is_an_error_not_a_wait(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = passing.root / "report.fifo"
    os.mkfifo(fifo)
    assert passing.cli("gate", "--json", str(fifo)) == 2
    assert f"{fifo}: is a FIFO (named pipe) that nothing is reading" in capsys.readouterr().err
    assert fifo.is_fifo()


def test_dev_null_is_written_into_twice(passing: Project) -> None:
    assert passing.cli("gate", "--json", os.devnull, "--junit", os.devnull) == 0
    assert Path(os.devnull).is_char_device()


def test_a_directory_is_still_refused(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert passing.cli("gate", "--json", str(passing.root)) == 2
    assert "is a directory; give a file name for the report" in capsys.readouterr().err


def test_markdown_to_the_step_summary_appends(passing: Project) -> None:
    summary = passing.root / "step_summary"
    summary.write_text("## earlier in this step\n")
    done = oloproof(passing, "gate", "--markdown", str(summary), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stderr.decode()
    text = summary.read_text()
    assert text.startswith("## earlier in this step\n") and "PASS" in text


def test_markdown_elsewhere_replaces(passing: Project) -> None:
    other = passing.root / "summary.md"
    other.write_text("## yesterday\n")
    summary = passing.root / "step_summary"
    done = oloproof(passing, "gate", "--markdown", str(other), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert done.returncode == 0, done.stderr.decode()
    assert "yesterday" not in other.read_text()


def test_a_closed_reader_on_dash_keeps_the_verdict(passing: Project) -> None:
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    script = (
        f"{sys.executable} -m oloproof gate -c {passing.config} --json - | head -c 1 >/dev/null; "
        "echo ${PIPESTATUS[0]}"
    )
    done = subprocess.run(["bash", "-c", script], capture_output=True, env=environ, timeout=120, check=False)
    assert done.stdout.decode().strip() == "0", done.stderr.decode()


def test_a_symlink_out_of_its_directory_is_refused(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """A checkout's report.json planted as a link to a file elsewhere (~/.bashrc, a runner's file)
    is neither replaced nor written through."""
    outside = passing.root.parent / "outside-precious.txt"
    outside.write_text("precious")
    link = passing.root / "report.json"
    link.symlink_to(os.path.relpath(outside, passing.root))
    assert passing.cli("gate", "--json", str(link)) == 2
    err = capsys.readouterr().err
    assert f"{link}: is a symlink to {outside}, outside its own directory; a report follows a link only within it" in err
    assert outside.read_text() == "precious" and link.is_symlink()


def test_a_symlink_to_a_device_elsewhere_is_refused(passing: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """A planted report.json -> /dev/<device> (as root, /dev/mem or /dev/kmsg) is not written into;
    /dev/null through a link is harmless and allowed."""
    device = Path("/dev/zero")
    link = passing.root / "report.json"
    link.symlink_to(device)
    assert passing.cli("gate", "--json", str(link)) == 2
    assert f"{link}: is a symlink to {device}, outside its own directory" in capsys.readouterr().err
    link.unlink()
    link.symlink_to(os.devnull)
    assert passing.cli("gate", "--json", str(link)) == 0
    assert link.is_symlink() and Path(os.devnull).is_char_device()
