"""Issue 16, point 4: a pull request cannot delete, rename, symlink or reset the holdout.

Whatever the base commit holds about a holdout (READS.log at whatever path the base's release.yaml
declared, the register, the outcome records) must still be there in the pull request, as a regular
file extending its base version, or the gate is BLOCKED with the reason. The set of evidence comes
from the base commit, never from the pull request's own release.yaml. Each test is a hostile pull
request against a committed base branch, run through the action's entry point.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from oloproof.cli.main import main as cli
from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import base_branch, git, pull_request, report

LOG = "evals/holdout/READS.log"
HOLDOUT_LINE = "holdout: {cases: evals/holdout/cases.jsonl, budget: 20}\n"


def gate(action: ActionRun, base: str) -> tuple[int, dict[str, object], str]:
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert (action.workspace / "oloproof-report.json").is_file(), result.stdout
    data = report(action)
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]  # type: ignore[union-attr]
    return result.code, check, result.summary


def blocked(action: ActionRun, base: str, *expected: str) -> str:
    code, check, summary = gate(action, base)
    assert code == 3, summary
    assert check["verdict"] == "BLOCKED" and check["reasons"] == ["holdout_log_tampered"], check
    for text in expected:
        assert text in check["sentence"], (text, check["sentence"])  # type: ignore[operator]
        assert text in summary, text
    return str(check["sentence"])


def drop_holdout_section(root: Path) -> None:
    text = (root / "release.yaml").read_text()
    assert HOLDOUT_LINE in text
    (root / "release.yaml").write_text(text.replace(HOLDOUT_LINE, ""))


def records(root: Path) -> list[Path]:
    return sorted((root / ".oloproof" / "holdout").glob("read-*.json"))


def test_removing_the_holdout_section_with_its_log_and_records_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    drop_holdout_section(root)
    (root / LOG).unlink()
    names = [path.name for path in records(root)]
    shutil.rmtree(root / ".oloproof" / "holdout")
    sentence = blocked(action, base, f"the holdout reads log {LOG} is removed by this pull request")
    for name in names:
        assert f"the holdout outcome record .oloproof/holdout/{name} is removed by this pull request" in sentence


def test_removing_everything_including_the_register_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    drop_holdout_section(root)
    shutil.rmtree(root / "evals")
    shutil.rmtree(root / ".oloproof" / "holdout")
    (root / ".oloproof" / "holdouts.jsonl").unlink()
    blocked(
        action, base,
        f"the holdout reads log {LOG} is removed by this pull request",
        "the holdout register .oloproof/holdouts.jsonl is removed by this pull request",
    )


def test_renaming_the_log_and_deleting_the_old_one_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text.replace("budget: 20}", "budget: 20, log: evals/holdout/READS-v2.log}"))
    (root / LOG).rename(root / "evals/holdout/READS-v2.log")  # the same bytes, a new name
    blocked(action, base, f"the holdout reads log {LOG} is removed by this pull request", "does not reset its budget")


def test_a_log_the_pull_request_no_longer_declares_must_still_extend(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evidence to check comes from the base commit: a PR whose release.yaml names a fresh log
    cannot make the old one unchecked and then shorten it."""
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text.replace("budget: 20}", "budget: 20, log: evals/fresh/READS.log}"))
    lines = (root / LOG).read_text().splitlines(keepends=True)
    (root / LOG).write_text("".join(lines[:-1]))
    blocked(action, base, f"{LOG} is not an extension of its version on the base branch")


@pytest.mark.parametrize("same_bytes", [False, True], ids=["rewritten copy", "identical copy"])
def test_reads_log_replaced_by_a_symlink_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch, same_bytes: bool
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    log = root / LOG
    copy = root / "evals" / "copy.log"
    data = log.read_bytes()
    copy.write_bytes(data if same_bytes else b"".join(data.splitlines(keepends=True)[:-1]))
    log.unlink()
    log.symlink_to(os.path.relpath(copy, log.parent))
    blocked(action, base, f"{LOG} is a symbolic link in this pull request")


def test_a_directory_symlink_on_the_way_to_the_log_is_blocked(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    shutil.copytree(root / "evals" / "holdout", root / "evals" / "elsewhere")
    (root / "evals" / "elsewhere" / "READS.log").write_text("")  # a reset budget, reached through a link
    shutil.rmtree(root / "evals" / "holdout")
    (root / "evals" / "holdout").symlink_to("elsewhere")
    blocked(action, base, "evals/holdout is a symbolic link in this pull request")


def test_the_whole_store_replaced_by_a_symlink_to_a_rewritten_copy_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    shutil.copytree(root / ".oloproof", root / "store-copy")
    register = root / "store-copy" / "holdouts.jsonl"
    register.write_bytes(register.read_bytes().splitlines(keepends=True)[0])  # reads dropped
    shutil.rmtree(root / ".oloproof")
    (root / ".oloproof").symlink_to("store-copy")
    blocked(action, base, ".oloproof is a symbolic link in this pull request")


def test_register_replaced_by_a_symlink_stops_the_gate(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    """The register is read before any rule (the dev set is checked against every registered holdout),
    so a linked register stops the gate itself: exit 2 naming the file, never a PASS."""
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    register = root / ".oloproof" / "holdouts.jsonl"
    copy = root / "register-copy.jsonl"
    copy.write_bytes(register.read_bytes().splitlines(keepends=True)[0])  # the salt only: no read
    register.unlink()
    register.symlink_to(os.path.relpath(copy, register.parent))
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 2, result.stdout
    assert (
        "::error title=oloproof%3A cannot gate::.oloproof/holdouts.jsonl: is a symbolic link, expected the holdout "
        "register (a symlink is never read as evidence)"
    ) in result.stdout
    assert result.outputs["verdict"] != "PASS"


def bounded_action(action: ActionRun, base: str) -> subprocess.CompletedProcess[str]:
    """The action's entry point in a child process with 1 GiB of address space and 120 s: a
    regression that reads /dev/zero or waits on a FIFO fails this test, not the machine."""
    pull_request(action, base)
    action.inputs.update({"github-token": "", "fail-on": "BLOCKED"})
    env = action.environ()
    env["PYTHONPATH"] = os.pathsep.join(sys.path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    code = "import sys; from oloproof.action.main import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=action.workspace, capture_output=True, text=True, timeout=120,
        preexec_fn=limit, check=False,
    )


def test_log_symlinked_to_dev_zero_or_a_fifo_is_blocked_without_reading_it(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    log = action.workspace / LOG
    log.unlink()
    log.symlink_to("/dev/zero")
    done = bounded_action(action, base)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"{LOG} is a symbolic link in this pull request" in done.stdout
    log.unlink()
    os.mkfifo(log)  # no writer: a read would wait forever
    done = bounded_action(action, base)
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"the holdout reads log {LOG} is held by the base branch" in done.stdout
    assert f"{LOG}: is a FIFO (named pipe), expected the holdout reads log (only regular files are read)" in done.stdout


def test_an_outcome_record_replaced_by_a_symlink_to_the_same_bytes_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch, holdout=True)
    [first, *_] = records(action.workspace)
    copy = action.workspace / "kept.json"
    copy.write_bytes(first.read_bytes())
    first.unlink()
    first.symlink_to(os.path.relpath(copy, first.parent))
    blocked(action, base, f".oloproof/holdout/{first.name} is a symbolic link in this pull request")


def merge(root: Path, message: str) -> str:
    """The pull request merged: its tree becomes the base of the next one."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")


def spend_budget(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> str:
    """A base branch whose holdout budget (2) is spent by its two reads."""
    base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text.replace("budget: 20", "budget: 2"))
    assert cli(["holdout", "run", "--reason", "one more", "--quiet"]) == 3  # refused: spent
    return merge(root, "budget 2: spent")


def test_two_pull_requests_in_a_row_cannot_reset_a_spent_budget(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first PR only adds (the holdout section dropped, a new log declared): nothing the base held
    is gone, so it passes and is merged. The second removes the old log, records and register,
    which the new base still holds: BLOCKED, although the PR's own release.yaml names none of them."""
    base = spend_budget(action, monkeypatch)
    root = action.workspace
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(re.sub(r"holdout: \{.*\}\n", "", text))
    code, check, summary = gate(action, base)
    assert code == 0 and check["verdict"] is None, summary  # nothing removed yet
    base = merge(root, "PR 1: holdout section dropped")

    (root / "release.yaml").write_text(
        (root / "release.yaml").read_text() + "holdout: {cases: evals/holdout/cases.jsonl, budget: 2, "
        "log: evals/holdout/READS-2.log}\n"
    )
    (root / LOG).unlink()
    shutil.rmtree(root / ".oloproof" / "holdout")
    (root / ".oloproof" / "holdouts.jsonl").unlink()
    blocked(
        action, base,
        f"the holdout reads log {LOG} is removed by this pull request",
        "the holdout register .oloproof/holdouts.jsonl is removed by this pull request",
        "the holdout outcome record .oloproof/holdout/read-0001-",
    )


def test_a_renamed_log_merged_then_emptied_in_a_second_pull_request_is_blocked(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PR 1 copies the log under a new name (the old one stays): merged. PR 2 empties both and
    rewrites the records' log: every one of them is base evidence now."""
    base = spend_budget(action, monkeypatch)
    root = action.workspace
    new = "evals/holdout/READS-2.log"
    shutil.copyfile(root / LOG, root / new)
    text = (root / "release.yaml").read_text()
    (root / "release.yaml").write_text(text.replace("budget: 2}", f"budget: 2, log: {new}}}"))
    code, _, summary = gate(action, base)
    assert code == 0, summary
    base = merge(root, "PR 1: the log copied under a new name")
    (root / LOG).write_bytes(b"")
    (root / new).write_bytes(b"")
    blocked(
        action, base,
        f"{LOG} is not an extension of its version on the base branch",
        f"{new} is not an extension of its version on the base branch",
    )


def test_appending_to_the_log_and_register_and_adding_records_still_passes(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a false alarm: a pull request that only extends the evidence is not blocked by it."""
    base = base_branch(action, monkeypatch, holdout=True)
    assert cli(["holdout", "run", "--reason", "week 6", "--quiet"]) == 0
    code, check, summary = gate(action, base)
    assert code == 0 and check["verdict"] is None, summary


def test_a_pull_request_that_gates_another_directory_still_keeps_the_old_projects_holdout(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workflow is the pull request's too: it may point working-directory at a fresh project.
    The evidence list is the base commit's whole tree, so the old project's holdout is still held."""
    base = base_branch(action, monkeypatch, holdout=True)
    root = action.workspace
    fresh = root / "v2"
    (fresh / "data").mkdir(parents=True)
    shutil.copyfile(root / "data" / "test.jsonl", fresh / "data" / "test.jsonl")
    text = (root / "release.yaml").read_text()
    (fresh / "release.yaml").write_text(text.replace(HOLDOUT_LINE, ""))
    shutil.rmtree(root / "evals")
    shutil.rmtree(root / ".oloproof" / "holdout")
    (root / ".oloproof" / "holdouts.jsonl").unlink()
    action.inputs["working-directory"] = "v2"
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED"})
    assert result.code == 3, result.stdout
    data = json.loads((fresh / "oloproof-report.json").read_text())
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]
    assert f"the holdout reads log {LOG} is removed by this pull request" in check["sentence"]
    assert "the holdout register .oloproof/holdouts.jsonl is removed by this pull request" in check["sentence"]


def test_a_budget_entry_a_pull_request_adds_is_named_for_the_reviewer(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Raising a spent budget is an append (`oloproof holdout budget`), made and reviewed in a pull
    request: not blocked, but never silent."""
    base = spend_budget(action, monkeypatch)
    root = action.workspace
    (root / "release.yaml").write_text((root / "release.yaml").read_text().replace("budget: 2", "budget: 9"))
    assert cli(["holdout", "budget", "9", "--reason", "more reads please"]) == 0
    code, check, summary = gate(action, base)
    assert code == 0, summary
    assert any(
        f"{LOG} gains a budget entry in this pull request (a budget of 9 read(s), by " in line
        and ": more reads please): raising a holdout's budget spends independence" in line
        for line in check["lines"]  # type: ignore[union-attr]
    ), check["lines"]
