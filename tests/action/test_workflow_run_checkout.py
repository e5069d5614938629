"""``mode: gate`` under ``workflow_run`` (red team, RT-H3): the check run goes on
``workflow_run.head_sha``, but actions/checkout checks out ``GITHUB_SHA``, which under
``workflow_run`` is the default branch's head. A PASS computed on main's code must never land on the
pull request's commit: the gate runs only on a checkout whose HEAD git shows to be that commit.

Each test uses a real git repository: a pull request's commit on a branch, main checked out (what
actions/checkout gives a ``workflow_run`` job by default), and a faked event payload.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from oloproof.errors import ExitCode
from tests.action.conftest import REPOSITORY, SHA, ActionRun, FakeGitHub

GIT = ["git", "-c", "user.name=tester", "-c", "user.email=tester@example.invalid", "-c", "commit.gpgsign=false"]

REFUSED = "mode: gate under a workflow_run event is refused: "
ADVICE = (
    ". Its check run would put a verdict on one commit's code on another commit. Use mode: publish to publish the "
    "report the triggering run uploaded (the fork-PR recipe in the action's docs), or check out "
    "workflow_run.head_sha before this step (only for a run whose code you trust: a workflow_run job holds the base "
    "repository's token and secrets)"
)


def git(root: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def pr_and_main(root: Path) -> tuple[str, str]:
    """A repository whose ``feature`` branch (the pull request) and ``main`` differ; main is checked
    out. Returns (the PR's commit, main's commit)."""
    git(root, "init", "-q", "-b", "main")
    return pr_and_main_existing(root)


def workflow_run(head_sha: Any) -> dict[str, Any]:
    return {
        "action": "completed",
        "workflow_run": {"id": 555, "event": "pull_request", "conclusion": "success", "head_sha": head_sha},
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


def under_workflow_run(action: ActionRun, fake_github: FakeGitHub, head_sha: Any) -> ActionRun:
    action.api_url = fake_github.url
    action.event_name, action.event = "workflow_run", workflow_run(head_sha)
    return action


def check_runs(fake_github: FakeGitHub) -> list[dict[str, Any]]:
    return [r.body for r in fake_github.requests if r.method == "POST" and r.path.endswith("/check-runs")]


def test_a_gate_on_the_default_branchs_checkout_never_posts_on_the_prs_commit(
    action: ActionRun, fake_github: FakeGitHub
) -> None:
    pr_sha, main_sha = pr_and_main(action.workspace)
    result = under_workflow_run(action, fake_github, pr_sha)()
    assert result.code == ExitCode.USAGE, result.stdout
    [error] = result.annotations("error")
    expected = (
        f"{REFUSED}the checked-out HEAD is {main_sha}, not workflow_run.head_sha {pr_sha} (actions/checkout checks "
        f"out GITHUB_SHA, which under workflow_run is the default branch's head){ADVICE}"
    )
    assert error.endswith("::" + expected), error
    assert result.outputs["verdict"] == "ERROR" and "PASS" not in result.summary
    assert not (action.workspace / ".oloproof").exists()  # refused before the system ran
    # Whatever reaches the PR's commit says the gate did not run: never a verdict, never success.
    for body in check_runs(fake_github):
        assert body["head_sha"] == pr_sha and body["conclusion"] == "failure"
        assert body["output"]["title"] == "ERROR: the gate could not run"


def test_a_checkout_of_workflow_run_head_sha_is_gated_and_posted_there(
    action: ActionRun, fake_github: FakeGitHub
) -> None:
    pr_sha, _ = pr_and_main(action.workspace)
    git(action.workspace, "switch", "-q", "--detach", pr_sha)  # actions/checkout with ref: workflow_run.head_sha
    result = under_workflow_run(action, fake_github, pr_sha)()
    assert result.code == 0, result.stdout
    [body] = check_runs(fake_github)
    assert body["head_sha"] == pr_sha and body["head_sha"] != SHA
    assert body["conclusion"] == "success" and result.outputs["verdict"] == "PASS"


def test_a_checkout_whose_head_git_cannot_read_is_refused(action: ActionRun, fake_github: FakeGitHub) -> None:
    pr_sha = "3" * 40  # the workspace is no git repository at all: nothing shows what is checked out
    result = under_workflow_run(action, fake_github, pr_sha)()
    assert result.code == ExitCode.USAGE, result.stdout
    [error] = result.annotations("error")
    expected = (
        f"{REFUSED}the checked-out HEAD cannot be read in . (neither git nor a .git there names a commit), so nothing "
        f"shows it is workflow_run.head_sha {pr_sha}{ADVICE}"
    )
    assert error.endswith("::" + expected), error
    assert not [body for body in check_runs(fake_github) if body["conclusion"] != "failure"]


def test_a_subdirectory_checkout_is_read_where_the_gate_runs(action: ActionRun, fake_github: FakeGitHub) -> None:
    """actions/checkout with ``path:``: the repository is the working directory's, not the workspace's."""
    sub = action.workspace / "model"
    sub.mkdir()
    for name in ("release.yaml", "data"):
        (action.workspace / name).rename(sub / name)
    pr_sha, main_sha = pr_and_main(sub)
    result = under_workflow_run(action, fake_github, pr_sha)(**{"working-directory": "model"})
    assert result.code == ExitCode.USAGE
    assert f"the checked-out HEAD is {main_sha}, not workflow_run.head_sha {pr_sha}" in result.stdout


def test_a_payload_without_head_sha_is_refused_and_gets_no_check_run(
    action: ActionRun, fake_github: FakeGitHub
) -> None:
    pr_and_main(action.workspace)
    result = under_workflow_run(action, fake_github, "not-a-sha")()
    assert result.code == ExitCode.USAGE
    [error] = result.annotations("error")
    expected = f"{REFUSED}the event payload does not name the triggering run's commit (workflow_run.head_sha){ADVICE}"
    assert error.endswith("::" + expected), error
    assert check_runs(fake_github) == []  # no commit to post on
    assert any("workflow_run.head_sha" in line for line in result.annotations("notice"))


# The Docker image has no git: HEAD is then read from .git itself (oloproof.vcs.head_from_files).


def without_git(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    empty = tmp_path / "no-git-here"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


@pytest.mark.parametrize("layout", ["loose", "packed"])
def test_without_git_the_default_branchs_checkout_is_still_refused(
    action: ActionRun, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, layout: str
) -> None:
    pr_sha, main_sha = pr_and_main(action.workspace)
    if layout == "packed":
        git(action.workspace, "pack-refs", "--all")
        assert not (action.workspace / ".git" / "refs" / "heads" / "main").exists()
    without_git(monkeypatch, tmp_path)
    result = under_workflow_run(action, fake_github, pr_sha)()
    assert result.code == ExitCode.USAGE, result.stdout
    assert f"the checked-out HEAD is {main_sha}, not workflow_run.head_sha {pr_sha}" in result.stdout


def test_without_git_a_detached_checkout_of_head_sha_is_gated(
    action: ActionRun, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pr_sha, _ = pr_and_main(action.workspace)
    git(action.workspace, "switch", "-q", "--detach", pr_sha)
    without_git(monkeypatch, tmp_path)
    result = under_workflow_run(action, fake_github, pr_sha)()
    assert result.code == 0, result.stdout
    [body] = check_runs(fake_github)
    assert body["head_sha"] == pr_sha and body["conclusion"] == "success"


def test_head_from_files_agrees_with_git_or_says_nothing(tmp_path: Path) -> None:
    from oloproof.vcs import head_from_files

    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "sub" / "f").write_text("x\n")
    assert head_from_files(repo) is None  # no repository
    git(repo, "init", "-q", "-b", "main")
    assert head_from_files(repo) is None  # no commit yet: the ref does not exist
    pr_sha, main_sha = pr_and_main_existing(repo)
    assert (
        head_from_files(repo / "sub") == main_sha == git(repo, "rev-parse", "HEAD")
    )  # a loose ref, from a subdirectory
    git(repo, "pack-refs", "--all")
    assert head_from_files(repo) == main_sha  # packed
    git(repo, "worktree", "add", "-q", "--detach", str(tmp_path / "wt"), pr_sha)
    assert head_from_files(tmp_path / "wt") == pr_sha  # a worktree: .git is a "gitdir:" file
    git(tmp_path / "wt", "switch", "-q", "-c", "other")
    assert (
        head_from_files(tmp_path / "wt") == pr_sha == git(tmp_path / "wt", "rev-parse", "HEAD")
    )  # its branch, in commondir
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/../../../etc/passwd\n")
    assert head_from_files(repo) is None  # never a path outside the refs


def pr_and_main_existing(root: Path) -> tuple[str, str]:
    """pr_and_main on a repository already initialised."""
    git(root, "add", "-A")
    git(root, "commit", "-qm", "main")
    main_sha = git(root, "rev-parse", "HEAD")
    git(root, "switch", "-q", "-c", "feature")
    (root / "NOTES.md").write_text("the pull request's change\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "the pull request")
    pr_sha = git(root, "rev-parse", "HEAD")
    git(root, "switch", "-q", "main")
    return pr_sha, main_sha
