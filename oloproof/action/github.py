"""GitHub Actions, from inside the action's container: the only module that reads ``GITHUB_*``.

It reads the runner's environment and the triggering event's payload, writes the file
commands (``GITHUB_OUTPUT``, ``GITHUB_STEP_SUMMARY``) and trusts the workspace for git. The
Checks API client is ``checks_api``.

Facts it relies on (../shared/notes/github-actions.md, checked against the runner's code):

- ``GITHUB_TOKEN`` is not in a container action's environment; the token arrives as an input.
- For ``pull_request`` events ``GITHUB_SHA`` is a synthetic merge commit: a check run goes on
  ``event.pull_request.head.sha``.
- Fork and Dependabot PRs get a read-only token: creating a check run answers 403
  "Resource not accessible by integration". The caller degrades to summary + annotations.
- At most 50 annotations per Checks API request; more are added with PATCH.
- ``output.title/summary/text`` hold at most 65535 characters each.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from oloproof.process import system_environment

# Events whose payload carries ``pull_request`` (with ``head.sha``): GITHUB_SHA is not the PR's head.
PULL_REQUEST_EVENTS = frozenset(
    {"pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment"}
)
# Events whose run belongs to a pull request although GITHUB_SHA is not its head commit.
PR_LIKE_EVENTS = PULL_REQUEST_EVENTS | {"issue_comment"}
# Events on which a holdout read may happen: the read log can be committed to the default branch.
HOLDOUT_READ_EVENTS = ("release", "push", "workflow_dispatch", "schedule")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a commit id as the API takes it


class GitHubApiError(Exception):
    """A Checks API call failed: ``status`` is the HTTP status, or None when none came back."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(f"HTTP {status}: {message}" if status is not None else message)


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionEnv:
    """What the runner tells a container action about its job (``GITHUB_*`` and the event)."""

    in_actions: bool  # GITHUB_ACTIONS=true
    workspace: Path  # GITHUB_WORKSPACE (the repository checkout), /github/workspace in the container
    event_name: str
    event: Mapping[str, Any]  # the payload at GITHUB_EVENT_PATH ({} when absent)
    repository: str  # owner/name
    sha: str
    ref: str
    ref_name: str
    actor: str
    api_url: str
    server_url: str
    run_id: str
    step_summary: Path | None
    output: Path | None
    problems: tuple[str, ...] = ()  # e.g. an unreadable event payload

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> ActionEnv:
        problems: list[str] = []
        event: Mapping[str, Any] = {}
        event_path = environ.get("GITHUB_EVENT_PATH", "")
        if event_path:
            try:
                loaded = json.loads(Path(event_path).read_text(encoding="utf-8"))
            except FileNotFoundError:
                problems.append(f"GITHUB_EVENT_PATH {event_path}: file not found")
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                problems.append(f"GITHUB_EVENT_PATH {event_path}: not a readable JSON event ({exc})")
            else:
                if isinstance(loaded, dict):
                    event = loaded
                else:
                    problems.append(f"GITHUB_EVENT_PATH {event_path}: expected a JSON object")
        workspace = environ.get("GITHUB_WORKSPACE") or os.getcwd()
        return cls(
            in_actions=environ.get("GITHUB_ACTIONS") == "true",
            workspace=Path(workspace).resolve(),
            event_name=environ.get("GITHUB_EVENT_NAME", ""),
            event=event,
            repository=environ.get("GITHUB_REPOSITORY", ""),
            sha=environ.get("GITHUB_SHA", ""),
            ref=environ.get("GITHUB_REF", ""),
            ref_name=environ.get("GITHUB_REF_NAME", ""),
            actor=environ.get("GITHUB_ACTOR", ""),
            api_url=(environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/"),
            server_url=(environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            run_id=environ.get("GITHUB_RUN_ID", ""),
            step_summary=Path(environ["GITHUB_STEP_SUMMARY"]) if environ.get("GITHUB_STEP_SUMMARY") else None,
            output=Path(environ["GITHUB_OUTPUT"]) if environ.get("GITHUB_OUTPUT") else None,
            problems=tuple(problems),
        )

    # ---------------------------------------------------------------- the event

    @property
    def pull_request(self) -> Mapping[str, Any] | None:
        pr = self.event.get("pull_request") if self.event_name in PULL_REQUEST_EVENTS else None
        return pr if isinstance(pr, dict) else None

    @property
    def may_read_holdout(self) -> bool:
        """Holdout reads only on events whose read log can be committed to the default branch."""
        return self.event_name in HOLDOUT_READ_EVENTS

    @property
    def is_pr_like(self) -> bool:
        """A run for a pull request, whatever its payload says: GITHUB_SHA is not the PR's head then.

        ``issue_comment`` counts only for a comment on a PR (``issue.pull_request`` is set); with
        no payload to tell, it counts too (never guess the commit).
        """
        if self.event_name in PULL_REQUEST_EVENTS:
            return True
        if self.event_name == "issue_comment":
            issue = self.event.get("issue")
            return not isinstance(issue, dict) or issue.get("pull_request") is not None
        return False

    @property
    def head_sha(self) -> str:
        """The commit a check run belongs on: the PR's head, never the synthetic merge commit.

        Empty for a pull-request run whose payload does not name the head (unreadable event file,
        or ``issue_comment``, whose payload never does): GITHUB_SHA would be the wrong commit.
        """
        if self.is_pr_like:
            sha = _dig(self.pull_request or {}, "head", "sha")
            return sha if isinstance(sha, str) and sha else ""
        if self.event_name == "merge_group":
            sha = _dig(self.event, "merge_group", "head_sha")
            if isinstance(sha, str) and sha:
                return sha
        if self.event_name == "workflow_run":  # GITHUB_SHA is the default branch's head, not the run's commit
            sha = _dig(self.event, "workflow_run", "head_sha")
            return sha if isinstance(sha, str) and _SHA.fullmatch(sha) else ""
        return self.sha

    @property
    def workflow_run(self) -> Mapping[str, Any] | None:
        """The run that triggered a ``workflow_run`` event (its ``head_sha``, ``pull_requests``...)."""
        run = self.event.get("workflow_run") if self.event_name == "workflow_run" else None
        return run if isinstance(run, dict) else None

    @property
    def pr_number(self) -> int | None:
        """The pull request of a pull-request event (never of a ``workflow_run``: see ``prcomment``)."""
        number = (self.pull_request or {}).get("number")
        return number if isinstance(number, int) and not isinstance(number, bool) and number > 0 else None

    def no_check_sha(self) -> str | None:
        """Why no commit can carry a check run for this run, or None when ``head_sha`` is the one."""
        if self.head_sha:
            return None
        if self.is_pr_like:
            return (
                f"this {self.event_name} run's event payload does not name the pull request's head commit "
                "(pull_request.head.sha), and GITHUB_SHA is not that commit"
            )
        if self.event_name == "workflow_run":
            return (
                "this workflow_run event's payload does not name the triggering run's commit (workflow_run.head_sha), "
                "and GITHUB_SHA is the default branch's head, not that commit"
            )
        return "the commit (GITHUB_SHA) is unknown"

    @property
    def is_fork_pr(self) -> bool:
        """A PR from another repository: its token is read-only (no check runs, no pushes)."""
        pr = self.pull_request
        if pr is None:
            return False
        head_repo = _dig(pr, "head", "repo", "full_name")
        if not isinstance(head_repo, str) or not head_repo:
            return True  # the head repository was deleted: treat as a fork, never as trusted
        return head_repo.lower() != self.repository.lower()

    @property
    def release_tag(self) -> str | None:
        """The tag being released: a ``release`` event's tag, or a pushed tag."""
        if self.event_name == "release":
            tag = _dig(self.event, "release", "tag_name")
            if isinstance(tag, str) and tag:
                return tag
        if self.event_name == "push" and self.ref.startswith("refs/tags/"):
            return self.ref[len("refs/tags/") :]
        return None

    @property
    def dispatch_reason(self) -> str | None:
        """``workflow_dispatch`` input ``reason`` (or ``holdout-reason``), when the run was started by hand."""
        if self.event_name != "workflow_dispatch":
            return None
        inputs = self.event.get("inputs")
        if isinstance(inputs, dict):
            for key in ("holdout-reason", "holdout_reason", "reason"):
                value = inputs.get(key)
                if isinstance(value, str) and value.strip():
                    return value.strip()
        return None

    def describe_trigger(self) -> str:
        """A short phrase for logs: what started this run."""
        if self.release_tag:
            return f"release {self.release_tag}"
        if self.pull_request is not None:
            number = self.pull_request.get("number")
            return f"pull request #{number}" if number is not None else "pull request"
        if self.event_name:
            return f"{self.event_name} of {self.ref_name or self.ref or self.sha[:12]}"
        return "a local run"

    @property
    def run_url(self) -> str | None:
        if self.repository and self.run_id:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None


def _dig(data: Mapping[str, Any], *keys: str) -> Any:
    node: Any = data
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


# ---------------------------------------------------------------- file commands


def step_summary_file(environ: Mapping[str, str]) -> str | None:
    """The job summary file of this step (``GITHUB_STEP_SUMMARY``), which reports append to."""
    return environ.get("GITHUB_STEP_SUMMARY") or None


def write_outputs(env: ActionEnv, values: Mapping[str, str]) -> None:
    """Append step outputs to ``GITHUB_OUTPUT`` (multi-line values get a random delimiter)."""
    if env.output is None:
        return
    lines: list[str] = []
    for name, value in values.items():
        if "\n" in value or "\r" in value:
            delimiter = f"ghadelimiter_{secrets.token_hex(16)}"
            lines.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
        else:
            lines.append(f"{name}={value}\n")
    with open(env.output, "a", encoding="utf-8") as handle:
        handle.write("".join(lines))


def append_summary(env: ActionEnv, markdown: str) -> bool:
    """Append to the job summary; False when there is none (not running in Actions)."""
    if env.step_summary is None:
        return False
    with open(env.step_summary, "a", encoding="utf-8") as handle:
        handle.write(markdown)
    return True


TOKEN_KEPT = (
    "the checkout keeps the job's token in .git/config (actions/checkout's default, persist-credentials: true), "
    "where the system under test can read it: set `persist-credentials: false` on the checkout step (with "
    "`fetch-depth: 0` the action needs no credentials to read the pull request's base commit)"
)


def checkout_keeps_token(env: ActionEnv) -> bool:
    """Whether the workspace's git config holds an HTTP extra header (how actions/checkout keeps
    the job's token for later git calls): a file the system under test can read like any other."""
    config = env.workspace / ".git" / "config"
    try:
        with config.open("rb") as handle:
            text = handle.read(1 << 20)
    except OSError:
        return False
    return b"extraheader" in text.lower()


def trust_workspace(env: ActionEnv, environ: Mapping[str, str]) -> bool:
    """``git config --global --add safe.directory <workspace>``, before any git call.

    Returns whether the workspace is trusted; never raises (git then answers as it would anyway).

    The workspace is owned by the runner's user and the container runs as root, so git
    refuses it ("dubious ownership") until it is trusted. Only inside Actions (``HOME`` is then
    the job's own ``/github/home``): a local run must not edit a person's ~/.gitconfig. No git
    in the image means no git call can happen, so there is nothing to trust.
    """
    git = shutil.which("git", path=environ.get("PATH"))
    if not env.in_actions or git is None:
        return False
    try:  # the composite action runs as the workspace's owner: git trusts it already, leave ~/.gitconfig alone
        if env.workspace.stat().st_uid == os.geteuid():
            return True
    except OSError:
        pass
    target = str(env.workspace)
    child_env = system_environment(environ)  # git never sees the token
    try:
        listed = subprocess.run(
            [git, "config", "--global", "--get-all", "safe.directory"],
            capture_output=True,
            text=True,
            env=child_env,
            check=False,
            timeout=30,
        )
        if target in listed.stdout.splitlines() or "*" in listed.stdout.splitlines():
            return True
        added = subprocess.run(
            [git, "config", "--global", "--add", "safe.directory", target],
            capture_output=True,
            env=child_env,
            check=False,
            timeout=30,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return added.returncode == 0


# ---------------------------------------------------------------- Checks API
