"""The Checks API, over the standard library: a check run with its annotations (batches of 50),
every call within one total deadline, the token only over HTTPS (or to loopback, for tests),
redirects refused. Failures never raise to the caller's report: the outcome says what happened.

Facts it relies on (../shared/notes/github-actions.md): at most 50 annotations per request, more
with PATCH; ``output.title/summary/text`` hold at most 65535 characters each; fork and Dependabot
PRs get a read-only token (403 "Resource not accessible by integration").
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from oloproof import __version__
from oloproof.action.github import GitHubApiError

API_BATCH = 50  # annotations per Checks API request (GitHub's limit)
API_TEXT_LIMIT = 65535  # characters in output.title, output.summary, output.text
API_TIMEOUT_S = 30.0  # one API call, in all (connect, send, the whole answer)
PUBLISH_DEADLINE_S = 90.0  # every API call of one action run together; the summary and outputs follow anyway


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRunRequest:
    """What to publish as a check run; ``annotations`` are Checks API annotation objects."""

    name: str
    head_sha: str
    conclusion: str  # success | failure | neutral
    title: str
    summary: str
    text: str = ""  # output.text: the pull request's evidence, below the summary ("" for none)
    annotations: Sequence[Mapping[str, Any]] = ()
    details_url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckRunOutcome:
    created: bool
    check_run_id: int | None = None
    html_url: str | None = None
    skipped: str | None = None  # why no check run was made (a sentence for a notice)
    status: int | None = None  # HTTP status of the failed call, if any
    requests: int = 0
    details: list[str] = field(default_factory=list)


class ChecksClient:
    """A minimal Checks API client over urllib.

    The token only travels over HTTPS, or plain HTTP to a loopback address (the tests' fake
    server); redirects are refused rather than followed, so the Authorization header never
    reaches another host.
    """

    def __init__(
        self,
        api_url: str,
        token: str,
        repository: str,
        *,
        timeout_s: float = API_TIMEOUT_S,
        deadline: float | None = None,
    ) -> None:
        parsed = urllib.parse.urlsplit(api_url)
        if parsed.scheme not in ("https", "http") or not parsed.hostname:
            raise GitHubApiError(None, f"GITHUB_API_URL {api_url!r} is not an http(s) URL")
        loopback = _is_loopback(parsed.hostname)
        if parsed.scheme == "http" and not loopback:
            raise GitHubApiError(None, f"GITHUB_API_URL {api_url!r}: refusing to send a token over plain HTTP")
        if "/" not in repository:
            raise GitHubApiError(None, f"GITHUB_REPOSITORY {repository!r} is not owner/name")
        self.base = api_url.rstrip("/")
        self.token = token
        self.repository = repository
        self.timeout_s = timeout_s
        self.deadline = deadline  # time.monotonic() by which every call must be done (the publish step's)
        handlers: list[urllib.request.BaseHandler] = [_NoRedirect()]
        if loopback:
            handlers.append(urllib.request.ProxyHandler({}))  # never route the loopback server via a proxy
        self._opener = urllib.request.build_opener(*handlers)

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None) -> Any:
        """One API call within one total deadline: ``timeout_s`` for the call, and no later than the
        client's ``deadline``. The socket timeout alone bounds each wait, not the call: a server that
        drips a byte a second would hold it forever; the call runs in a worker thread that is
        abandoned (a daemon) when its time is up."""
        allowed = self.timeout_s if self.deadline is None else min(self.timeout_s, self.deadline - time.monotonic())
        if allowed <= 0:
            raise GitHubApiError(None, f"{method} {path}: not sent: the time for publishing is spent")
        box: dict[str, Any] = {}

        def call() -> None:
            try:
                box["value"] = self._send(method, path, body, timeout_s=allowed)
            except BaseException as exc:  # handed to the caller's thread
                box["error"] = exc

        worker = threading.Thread(target=call, name="oloproof-github-api", daemon=True)
        worker.start()
        worker.join(allowed)
        if worker.is_alive():
            raise GitHubApiError(None, f"{method} {path}: no complete answer within {allowed:.0f} s (abandoned)")
        if "error" in box:
            raise box["error"]
        return box["value"]

    def _send(self, method: str, path: str, body: Mapping[str, Any] | None, *, timeout_s: float) -> Any:
        data = None if body is None else json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        request = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={
                "Accept": "application/vnd.github+json",
                "Authorization": f"Bearer {self.token}",
                "Content-Type": "application/json; charset=utf-8",
                "User-Agent": f"oloproof-action/{__version__}",
                "X-GitHub-Api-Version": "2022-11-28",
            },
        )
        # No message below quotes an exception raised while sending: http.client's texts can hold
        # header values ("Invalid header value b'Bearer ...'"), and the messages end up in
        # annotations, the job summary and the check run.
        try:
            with self._opener.open(request, timeout=timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise GitHubApiError(exc.code, _error_message(exc)) from None
        except urllib.error.URLError as exc:  # DNS, refused connections, TLS: socket-level texts
            raise GitHubApiError(None, f"cannot reach {self.base}: {self._redact(str(exc.reason))}") from None
        except http.client.HTTPException as exc:  # garbage status line, a body shorter than its Content-Length, ...
            raise GitHubApiError(
                None, f"{method} {path}: the answer is not valid HTTP ({type(exc).__name__})"
            ) from None
        except ValueError as exc:  # e.g. a header value http.client refuses; its text may quote the value
            raise GitHubApiError(
                None, f"{method} {path}: the request could not be sent ({type(exc).__name__})"
            ) from None
        except OSError as exc:  # timeouts, resets after the connection was made
            raise GitHubApiError(
                None, f"{method} {path}: the connection failed ({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            parsed = json.loads(raw or b"{}")
        except ValueError:  # not JSON, or not UTF-8
            raise GitHubApiError(None, f"{method} {path}: the answer is not JSON") from None
        return parsed if isinstance(parsed, (dict, list)) else {}

    def call(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """Any REST call under this repository (``path`` starts after ``/repos/OWNER/NAME``): a dict or a list."""
        return self._request(method, f"/repos/{self.repository}{path}", body)

    def login(self) -> str | None:
        """The login of the token's own account (``GET /user``); None when the token may not ask
        (an Actions ``GITHUB_TOKEN`` gets 403 there, as does an app's installation token)."""
        try:
            answer = self._request("GET", "/user", None)
        except GitHubApiError as exc:
            if exc.status in (401, 403, 404):
                return None
            raise
        login = answer.get("login") if isinstance(answer, dict) else None
        return login if isinstance(login, str) and login else None

    def _redact(self, text: str) -> str:
        return text.replace(self.token, "***") if self.token else text

    def create_check_run(self, body: Mapping[str, Any]) -> dict[str, Any]:
        answer = self._request("POST", f"/repos/{self.repository}/check-runs", body)
        return answer if isinstance(answer, dict) else {}

    def update_check_run(self, check_run_id: int, body: Mapping[str, Any]) -> dict[str, Any]:
        answer = self._request("PATCH", f"/repos/{self.repository}/check-runs/{check_run_id}", body)
        return answer if isinstance(answer, dict) else {}


def publish_check_run(client: ChecksClient, request: CheckRunRequest) -> CheckRunOutcome:
    """Create a completed check run; annotations beyond the first 50 follow in PATCHes of 50.

    Never raises for an API failure: the outcome says what happened, so the caller can fall
    back to the job summary and workflow-command annotations.
    """
    title = request.title[:API_TEXT_LIMIT]
    summary = request.summary[:API_TEXT_LIMIT]
    output: dict[str, Any] = {"title": title, "summary": summary}
    if request.text:
        output["text"] = request.text[:API_TEXT_LIMIT]  # every PATCH carries it too: the output is replaced
    batches = [list(request.annotations[i : i + API_BATCH]) for i in range(0, len(request.annotations), API_BATCH)] or [
        []
    ]
    body: dict[str, Any] = {
        "name": request.name,
        "head_sha": request.head_sha,
        "status": "completed",
        "conclusion": request.conclusion,
        "output": {**output, "annotations": batches[0]},
    }
    if request.details_url:
        body["details_url"] = request.details_url
    sent = 0
    try:
        created = client.create_check_run(body)
        sent += 1
        check_run_id = created.get("id")
        if not isinstance(check_run_id, int):
            return CheckRunOutcome(
                created=False, skipped="the Checks API answered without a check run id", requests=sent
            )
        for batch in batches[1:]:
            client.update_check_run(check_run_id, {"output": {**output, "annotations": batch}})
            sent += 1
    except GitHubApiError as exc:
        if exc.status == 403:
            why = (
                f"the token may not create check runs ({exc.message}); grant `permissions: checks: write` "
                "(fork PRs always get a read-only token)"
            )
        else:
            why = f"the Checks API call failed ({exc})"
        partial = " after the check run was created (some annotations are missing from it)" if sent else ""
        return CheckRunOutcome(created=sent > 0, skipped=why + partial, status=exc.status, requests=sent)
    url = created.get("html_url")
    return CheckRunOutcome(
        created=True, check_run_id=check_run_id, html_url=url if isinstance(url, str) else None, requests=sent
    )


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> None:
        raise urllib.error.HTTPError(req.full_url, code, f"redirect to {newurl} refused", headers, fp)


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _error_message(exc: urllib.error.HTTPError) -> str:
    try:
        body = json.loads(exc.read() or b"{}")
    except (OSError, ValueError, http.client.HTTPException):  # not JSON, or cut short
        body = {}
    message = body.get("message") if isinstance(body, dict) else None
    return str(message) if message else str(exc.reason)
