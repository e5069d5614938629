"""Fixtures for the GitHub Action's tests: a workspace, the runner's environment, a fake API.

``ActionRun`` fakes what the runner gives a container action: ``INPUT_*`` (hyphens kept),
``GITHUB_*``, an event payload file, the file-command files, and ``GITHUB_API_URL`` pointing
at ``FakeGitHub``, an HTTP server on 127.0.0.1 that records every request.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from oloproof.action.main import main
from tests.conftest import Project, labelled_cases

TOKEN = "ghs_faketoken0123456789"
REPOSITORY = "octo-org/loan-model"
SHA = "1111111111111111111111111111111111111111"  # GITHUB_SHA (a merge commit on PRs)
HEAD_SHA = "2222222222222222222222222222222222222222"  # the PR's head


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class FakeGitHub:
    """Answers the Checks API like GitHub: 201 with an id on POST, 200 on PATCH, or a scripted error."""

    requests: list[Recorded] = field(default_factory=list)
    fail_with: int | None = None  # e.g. 403: every request gets this status
    fail_message: str = "Resource not accessible by integration"
    fail_after: int | None = None  # fail only from this request number (0-based) on
    raw_reply: bytes | None = None  # sent as it is instead of an HTTP answer (a broken server or proxy)
    drip_s: float | None = None  # send the answer one byte every drip_s seconds (a server that never finishes)
    url: str = ""
    # Issue comments (id -> comment, with "issue" = the PR number) and open pull requests (GET /pulls).
    comments: dict[int, dict[str, Any]] = field(default_factory=dict)
    pulls: list[dict[str, Any]] = field(default_factory=list)
    after_comment_created: Any = None  # called with the fake after a POST .../comments (to stage a race)
    # Who the token's comments are written by, and what GET /user answers: None is a 403, as for an
    # Actions GITHUB_TOKEN (whose comments are github-actions[bot]'s) or an app's installation token.
    author: str = "github-actions[bot]"
    user_login: str | None = None

    def add_comment(
        self, issue: int, body: str, *, bot: bool = True, login: str | None = None
    ) -> int:
        """A comment by ``login`` (default: github-actions[bot] for a bot, mallory for a person)."""
        comment_id = 1000 + len(self.comments) + sum(1 for r in self.requests if r.method == "POST")
        author = login or ("github-actions[bot]" if bot else "mallory")
        self.comments[comment_id] = {
            "id": comment_id, "issue": issue, "body": body,
            "user": {"login": author, "type": "Bot" if bot else "User"},
            "html_url": f"https://github.com/{REPOSITORY}/pull/{issue}#issuecomment-{comment_id}",
        }
        return comment_id

    def comments_on(self, issue: int) -> list[dict[str, Any]]:
        return [c for _, c in sorted(self.comments.items()) if c["issue"] == issue]

    def _issues(self, method: str, path: str, body: Any) -> tuple[int, Any] | None:
        import re
        from urllib.parse import parse_qs, urlsplit

        parts = urlsplit(path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        listed = re.fullmatch(rf"/repos/{REPOSITORY}/issues/(\d+)/comments", parts.path)
        one = re.fullmatch(rf"/repos/{REPOSITORY}/issues/comments/(\d+)", parts.path)
        if listed and method == "GET":
            page, per = int(query.get("page", 1)), int(query.get("per_page", 30))
            return 200, self.comments_on(int(listed[1]))[(page - 1) * per : page * per]
        if parts.path == "/user" and method == "GET":
            if self.user_login is None:
                return 403, {"message": "Resource not accessible by integration"}
            return 200, {"login": self.user_login, "type": "User"}
        if listed and method == "POST":
            new = self.add_comment(int(listed[1]), body["body"], login=self.author, bot=self.author.endswith("[bot]"))
            if self.after_comment_created is not None:
                self.after_comment_created(self)
            return 201, self.comments[new]
        if one and method == "PATCH":
            comment = self.comments.get(int(one[1]))
            if comment is None:
                return 404, {"message": "Not Found"}
            comment["body"] = body["body"]
            return 200, comment
        if one and method == "DELETE":
            return (204, None) if self.comments.pop(int(one[1]), None) is not None else (404, {"message": "Not Found"})
        if parts.path == f"/repos/{REPOSITORY}/pulls" and method == "GET":
            head = query.get("head")
            return 200, [pr for pr in self.pulls if head is None or pr["head"]["label"] == head]
        return None

    def handle(self, method: str, path: str, headers: dict[str, str], body: Any) -> tuple[int, Any]:
        number = len(self.requests)
        self.requests.append(Recorded(method, path, headers, body))
        if self.fail_with is not None and (self.fail_after is None or number >= self.fail_after):
            return self.fail_with, {"message": self.fail_message, "documentation_url": "https://docs.github.com/rest"}
        answered = self._issues(method, path, body)
        if answered is not None:
            return answered
        if method == "POST" and path == f"/repos/{REPOSITORY}/check-runs":
            return 201, {"id": 4242, "html_url": f"https://github.com/{REPOSITORY}/runs/4242", "name": body.get("name")}
        if method == "PATCH" and path == f"/repos/{REPOSITORY}/check-runs/4242":
            return 200, {"id": 4242}
        return 404, {"message": "Not Found"}


@pytest.fixture
def fake_github() -> Iterator[FakeGitHub]:
    fake = FakeGitHub()

    class Handler(BaseHTTPRequestHandler):
        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            status, answer = fake.handle(self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            if fake.raw_reply is not None:
                self.wfile.write(fake.raw_reply)
                self.close_connection = True
                return
            if status == 204:
                self.send_response(204)
                self.end_headers()
                return
            data = json.dumps(answer).encode()
            if fake.drip_s is not None:
                head = f"HTTP/1.1 {status} OK\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n"
                try:
                    for byte in head.encode() + data:
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(fake.drip_s)
                except OSError:
                    pass
                self.close_connection = True
                return
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_POST = do_PATCH = do_GET = do_DELETE = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class ActionResult:
    code: int
    stdout: str
    summary: str
    outputs: dict[str, str]

    @property
    def unprotected(self) -> list[str]:
        """Every log line outside ``::stop-commands::`` blocks (what the runner parses for commands)."""
        lines: list[str] = []
        stop: str | None = None
        for line in self.stdout.splitlines():
            if stop is not None:
                if line == f"::{stop}::":
                    stop = None
                continue
            if line.startswith("::stop-commands::"):
                stop = line[len("::stop-commands::") :]
                continue
            lines.append(line)
        return lines

    @property
    def commands(self) -> list[str]:
        """Workflow-command lines outside ``::stop-commands::`` blocks (what the runner acts on)."""
        return [line for line in self.unprotected if line.startswith("::")]

    def annotations(self, level: str) -> list[str]:
        return [line for line in self.commands if line.startswith(f"::{level}")]


def parse_outputs(text: str) -> dict[str, str]:
    values: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            collected = []
            for inner in lines:
                if inner == delimiter:
                    break
                collected.append(inner)
            values[name] = "\n".join(collected)
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
    return values


class ActionRun:
    """One run of the action's entry point, in-process, with the runner's environment faked."""

    def __init__(self, tmp: Path, project: Project, api_url: str = "http://127.0.0.1:9") -> None:
        self.tmp = tmp
        self.workspace = project.root
        self.project = project
        self.files = tmp / "file_commands"
        self.files.mkdir()
        (tmp / "home").mkdir()
        self.event_name = "push"
        self.event: dict[str, Any] = {"ref": "refs/heads/main", "after": SHA}
        self.inputs: dict[str, str] = {"github-token": TOKEN}
        self.api_url = api_url
        self.extra: dict[str, str] = {}

    def pull_request(self, *, fork: bool = False) -> ActionRun:
        self.event_name = "pull_request"
        head_repo = "someone/loan-model" if fork else REPOSITORY
        self.event = {
            "number": 7,
            "pull_request": {"number": 7, "head": {"sha": HEAD_SHA, "repo": {"full_name": head_repo}}, "base": {"sha": SHA}},
        }
        return self

    def release(self, tag: str = "v1.2.0") -> ActionRun:
        self.event_name = "release"
        self.event = {"action": "published", "release": {"tag_name": tag}}
        return self

    def environ(self) -> dict[str, str]:
        event_path = self.tmp / "event.json"
        event_path.write_text(json.dumps(self.event))
        summary, output = self.files / "step_summary", self.files / "output"
        summary.touch()
        output.touch()
        env = {
            "PATH": __import__("os").environ.get("PATH", ""),
            "HOME": str(self.tmp / "home"),
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": SHA,
            "GITHUB_REF": "refs/heads/main",
            "GITHUB_REF_NAME": "main",
            "GITHUB_ACTOR": "octocat",
            "GITHUB_API_URL": self.api_url,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_RUN_ID": "99",
            "GITHUB_STEP_SUMMARY": str(summary),
            "GITHUB_OUTPUT": str(output),
        }
        env.update({f"INPUT_{name.upper()}": value for name, value in self.inputs.items()})
        env.update(self.extra)
        return env

    def __call__(self, **inputs: str) -> ActionResult:
        self.inputs.update({name.replace("_", "-"): value for name, value in inputs.items()})
        out = io.StringIO()
        code = main(self.environ(), out=out)
        return ActionResult(
            code=code, stdout=out.getvalue(), summary=(self.files / "step_summary").read_text(),
            outputs=parse_outputs((self.files / "output").read_text()),
        )


@pytest.fixture
def action(tmp_path: Path) -> ActionRun:
    root = tmp_path / "workspace"
    root.mkdir()
    project = Project(root).write(cases=labelled_cases(100, 100), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    return ActionRun(tmp_path, project)


# The example's model with only its accuracy rule: the example itself declares leakage, the noise
# transform and the seeds (test_every_declared_check_runs_in_the_container runs all of them).
ACCURACY_ONLY = """\
system:
  version: loan-model-v3
  command: python model/predict.py --weights model/weights.npz
testset:
  cases: data/test.jsonl
evaluators:
  - {type: label_match, field: label}
policy: policy.yaml
"""
ACCURACY_POLICY = "confidence: 0.95\nrules:\n  - {id: accurate, criterion: correct, min: 0.85}\n"


# The fork-PR recipe's second workflow (mode: publish; tests/action/test_fork_publish.py).

RUN_HTML = f"https://github.com/{REPOSITORY}/actions/runs/555"


def workflow_run_event(*, pull_requests: list[dict[str, Any]] | None = None, conclusion: str = "success") -> dict[str, Any]:
    """What GitHub sends a workflow_run job: for a fork's PR, pull_requests is empty."""
    return {
        "action": "completed",
        "workflow_run": {
            "id": 555, "name": "release gate", "event": "pull_request", "status": "completed",
            "conclusion": conclusion, "head_sha": HEAD_SHA, "head_branch": "feature",
            "html_url": RUN_HTML, "pull_requests": pull_requests or [],
            "head_repository": {"full_name": "someone/loan-model", "owner": {"login": "someone"}},
        },
        "repository": {"full_name": REPOSITORY, "default_branch": "main"},
    }


@pytest.fixture
def publisher(tmp_path: Path, fake_github: FakeGitHub) -> ActionRun:
    """The trusted job: a checkout of the default branch with no release.yaml at all (it runs nothing)."""
    root = tmp_path / "publish" / "workspace"
    root.mkdir(parents=True)
    run = ActionRun(tmp_path / "publish", Project(root), api_url=fake_github.url)
    run.event_name, run.event = "workflow_run", workflow_run_event()
    run.inputs.update({"mode": "publish", "json-report": "artifact/oloproof-report.json"})
    fake_github.pulls = [{"number": 7, "head": {"sha": HEAD_SHA, "label": "someone:feature"}}]
    return run


def hand_over(publisher: ActionRun, report: dict[str, Any] | str) -> Path:
    artifact = publisher.workspace / "artifact" / "oloproof-report.json"
    artifact.parent.mkdir(exist_ok=True)
    artifact.write_text(report if isinstance(report, str) else json.dumps(report))
    return artifact
