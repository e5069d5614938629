"""The opt-in sticky pull-request comment (``comment: true``), and the short digest of a JSON report
that it and the publish-only mode share.

The body holds the verdict, the rules, the checks that did not pass and, on a pull request, its
evidence (``report.pr_evidence``: every setting it changed in the gate's inputs, every file under
.oloproof/ that differs from the base branch), as the job summary and the check run's text say it.

The comment is one per pull request and check name, found again by a hidden marker on its first
line and updated in place: list the PR's comments, PATCH the one that carries the marker, else
create it. Only a comment the token's own identity wrote counts (its login from ``GET /user``, or
``github-actions[bot]`` when the token may not ask, as an Actions token may not): anyone can paste
the marker into a comment. The listing stops after ``MAX_PAGES`` pages; a pull request with more
comments than that, none of them ours, gets no comment and a notice, never a duplicate.

Two runs that race (both list, find none, both create) each list again after creating:
the oldest marked comment is kept, a run whose own comment is not the oldest writes its body into
the oldest and deletes its own. So a race leaves one comment (a second one lives for the time of one
API call), holding the body of whichever run wrote last, which names its commit.

Everything a repository or a pull request controls (rule ids, versions, check titles) is made inert
here: no Markdown or HTML, no ``@`` mention or autolink; the body is capped at GitHub's 65,536
characters. The body is built from the JSON report (``oloproof.gate/1``) so that both modes render
exactly the same thing.
"""

from __future__ import annotations

import hashlib
import math
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oloproof.action.checks_api import ChecksClient
from oloproof.action.github import GitHubApiError
from oloproof.inert import inert
from oloproof.report import pr_evidence
from oloproof.report.markdown import ICON, esc
from oloproof.verdicts import Verdict

COMMENT_LIMIT = 65_536  # characters in an issue comment's body (GitHub's limit)
MAX_PAGES = 30  # pages of comments listed at most (a PR with more is not searched further)
PER_PAGE = 100  # comments per page (GitHub's maximum)
ACTIONS_BOT = "github-actions[bot]"  # who an Actions GITHUB_TOKEN comments as (it may not ask GET /user)
MAX_CELL = 120  # characters of untrusted text in one table cell
EVIDENCE_LIMIT = 32_000  # characters of the pull request's evidence (the rules table has the rest)


def marker(check_name: str) -> str:
    """The hidden first line that finds this check's comment again (a digest: no text of the name)."""
    digest = hashlib.sha256(check_name.encode("utf-8")).hexdigest()[:16]
    return f"<!-- oloproof-sticky-comment {digest} -->"


def safe(text: object, limit: int = MAX_CELL) -> str:
    """Untrusted text as plain words in Markdown: one line, inert, no markup, no mention, no autolink."""
    value = " ".join(inert(text).split())
    if len(value) > limit:
        value = value[: limit - 1] + "…"
    # GitHub links @name, @org/team and URLs in rendered text: esc breaks each (a zero-width space
    # after every @, an entity in :// and www.); every ":" is an entity here too (mailto:, a scheme).
    return esc(value).replace(":", "&#58;")


def _number(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "—"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _badge(verdict: str) -> str:
    try:
        return f"{ICON[Verdict(verdict)]} {verdict}"
    except ValueError:
        return safe(verdict, 40)


def verdict_line(report: Mapping[str, Any], *, head_sha: str) -> str:
    rules = [rule for rule in report.get("rules", []) if isinstance(rule, dict)]
    passing = sum(1 for rule in rules if rule.get("verdict") == "PASS")
    on = f" on `{head_sha[:12]}`" if head_sha else ""
    return f"### {_badge(str(report.get('verdict')))}: {passing} of {len(rules)} rules pass{on}"


def rules_table(report: Mapping[str, Any], *, budget: int) -> str:
    """One line per rule; rows that would pass ``budget`` characters are counted, not shown."""
    rows = ["| Rule | Verdict | Estimate | Interval | Threshold |", "|---|---|---|---|---|"]
    used = sum(len(row) + 1 for row in rows)
    rules = [rule for rule in report.get("rules", []) if isinstance(rule, dict)]
    for shown, rule in enumerate(rules):
        given = rule.get("interval")
        interval: Mapping[str, Any] = given if isinstance(given, dict) else {}
        low, high = _number(interval.get("low")), _number(interval.get("high"))
        span = f"[{low}, {high}]" if low != "—" or high != "—" else "—"
        threshold = f"{safe(rule.get('kind', ''), 20)} {_number(rule.get('threshold'))}".strip()
        row = (
            f"| {safe(rule.get('id', '?'), 60)} | {_badge(str(rule.get('verdict')))} | "
            f"{_number(rule.get('estimate'))} | {span} | {threshold} |"
        )
        if used + len(row) + 1 > budget:
            rows.append(f"\n… and {len(rules) - shown} more rule(s): see the job summary.")
            break
        rows.append(row)
        used += len(row) + 1
    if not rules:
        rows = ["No rule was decided."]
    return "\n".join(rows)


def checks_lines(report: Mapping[str, Any]) -> list[str]:
    """The checks that have a verdict of their own (leakage, seeds, holdout...), one line each."""
    lines = []
    for check in report.get("checks", []):
        if isinstance(check, dict) and check.get("verdict") not in (None, "PASS"):
            lines.append(
                f"- {safe(check.get('title', check.get('name', '?')), 60)}: {_badge(str(check.get('verdict')))}"
            )
    return lines[:20]


def render_comment(
    report: Mapping[str, Any],
    *,
    check_name: str,
    head_sha: str,
    summary_url: str | None,
    check_url: str | None,
    banner: str = "",
) -> str:
    """The comment's body: marker, verdict line, the rules table, links; at most ``COMMENT_LIMIT`` characters."""
    head = [marker(check_name), verdict_line(report, head_sha=head_sha)]
    if banner:
        head.append(banner)
    links = []
    if summary_url:
        links.append(f"[job summary]({summary_url})")
    if check_url:
        links.append(f"[check run]({check_url})")
    tail = []
    checks = checks_lines(report)
    if checks:
        tail.append("\n".join(checks))
    if links:
        tail.append("Details: " + " · ".join(links))
    tail.append(f"<sub>oloproof · check {safe(check_name, 100)} · this comment is updated in place</sub>")
    # What the pull request changed in the gate's inputs and under .oloproof/, as the summary and the
    # check run say it (every setting; past its share of the comment, counted with where they all are).
    evidence = pr_evidence.section(report, budget=EVIDENCE_LIMIT, where="the job summary lists every one").rstrip()
    if evidence:
        tail.insert(1 if checks else 0, evidence)
    fixed = "\n\n".join(head) + "\n\n" + "\n\n".join(tail)
    table = rules_table(report, budget=COMMENT_LIMIT - len(fixed) - 200)
    body = "\n\n".join([*head, table, *tail]) + "\n"
    return body[:COMMENT_LIMIT]


@dataclass(frozen=True, slots=True)
class CommentOutcome:
    url: str | None = None
    notice: str | None = None  # why no comment (or only part of it) was made


def upsert_comment(client: ChecksClient, number: int, check_name: str, body: str) -> CommentOutcome:
    """Create the sticky comment on PR ``number``, or update it in place; never raises for the API."""
    mark = marker(check_name)
    try:
        author = client.login() or ACTIONS_BOT
        existing, complete = _marked(client, number, mark, author)
        if existing:
            keep = existing[0]
            answer = client.call("PATCH", f"/issues/comments/{keep['id']}", {"body": body})
            for extra in existing[1:]:  # left by an earlier race
                client.call("DELETE", f"/issues/comments/{extra['id']}")
            return CommentOutcome(url=_url(answer) or _url(keep))
        if not complete:
            return CommentOutcome(
                notice=f"no pull-request comment: the pull request has more than {MAX_PAGES * PER_PAGE} comments and "
                f"none of the first {MAX_PAGES * PER_PAGE} is ours ({inert(author)}'s, with the marker), so a new "
                "one could duplicate one further on; the job summary and the check run hold the result"
            )
        created = client.call("POST", f"/issues/{number}/comments", {"body": body})
        mine = created.get("id") if isinstance(created, dict) else None
        user = created.get("user") if isinstance(created, dict) else None
        if isinstance(user, dict) and isinstance(user.get("login"), str) and user["login"]:
            author = user["login"]  # who GitHub says wrote it: the token's identity, asked or not
        again, _ = _marked(client, number, mark, author)  # another run may have created one meanwhile
        if again and isinstance(mine, int) and again[0]["id"] != mine:
            answer = client.call("PATCH", f"/issues/comments/{again[0]['id']}", {"body": body})
            client.call("DELETE", f"/issues/comments/{mine}")
            return CommentOutcome(url=_url(answer) or _url(again[0]))
        return CommentOutcome(url=_url(created))
    except GitHubApiError as exc:
        hint = " (grant `permissions: pull-requests: write`)" if exc.status == 403 else ""
        return CommentOutcome(notice=f"no pull-request comment: the API call failed ({exc}){hint}")


def _marked(client: ChecksClient, number: int, mark: str, author: str) -> tuple[list[Mapping[str, Any]], bool]:
    """The PR's comments that ``author`` (the token's own login) wrote with ``mark`` on their first
    line, oldest first; and whether every comment was listed (False: ``MAX_PAGES`` were full)."""
    found: list[Mapping[str, Any]] = []
    complete = False
    for page in range(1, MAX_PAGES + 1):
        batch = client.call("GET", f"/issues/{number}/comments?per_page={PER_PAGE}&page={page}")
        if not isinstance(batch, list):
            complete = True
            break
        for item in batch:
            if not isinstance(item, dict) or not isinstance(item.get("id"), int):
                continue
            user = item.get("user")
            login = user.get("login") if isinstance(user, dict) else None
            body = item.get("body")
            # Anyone (a person, another app's bot) can paste the marker into a comment of their own:
            # only the token's own comments are ours (logins are case-insensitive on GitHub).
            if isinstance(login, str) and login.casefold() == author.casefold() and isinstance(body, str):
                if body.startswith(mark):
                    found.append(item)
        if len(batch) < PER_PAGE:
            complete = True
            break
    return sorted(found, key=lambda item: int(item["id"])), complete


def _url(answer: Any) -> str | None:
    url = answer.get("html_url") if isinstance(answer, dict) else None
    return url if isinstance(url, str) else None


def pr_for_workflow_run(client: ChecksClient, run: Mapping[str, Any], head_sha: str) -> int | None:
    """The open pull request whose head is ``head_sha``, from the trusted ``workflow_run`` payload only.

    ``workflow_run.pull_requests`` is empty for a fork's pull request (GitHub's behaviour), so the
    open PRs of ``head_repository.owner:head_branch`` are asked for, and only one whose head commit
    is ``head_sha`` counts. Nothing the uploaded report says picks the pull request.
    """
    for pr in run.get("pull_requests") or []:
        if isinstance(pr, dict) and _dig_sha(pr) == head_sha and _is_number(pr.get("number")):
            return int(pr["number"])
    repo = run.get("head_repository")
    owner_of = repo.get("owner") if isinstance(repo, dict) else None
    owner = owner_of.get("login") if isinstance(owner_of, dict) else None
    branch = run.get("head_branch")
    if not isinstance(owner, str) or not isinstance(branch, str) or not owner or not branch:
        return None
    query = urllib.parse.urlencode({"state": "open", "head": f"{owner}:{branch}", "per_page": "100"})
    try:
        found = client.call("GET", f"/pulls?{query}")
    except GitHubApiError:
        return None
    matches: Sequence[Any] = found if isinstance(found, list) else []
    for pr in matches:
        if isinstance(pr, dict) and _dig_sha(pr) == head_sha and _is_number(pr.get("number")):
            return int(pr["number"])
    return None


def _dig_sha(pr: Mapping[str, Any]) -> str | None:
    head = pr.get("head")
    sha = head.get("sha") if isinstance(head, dict) else None
    return sha if isinstance(sha, str) else None


def _is_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
