"""The opt-in sticky pull-request comment (``comment: true``), through the action's entry point and
the fake GitHub API: created once, then updated in place through its hidden marker; never a
duplicate, even when two runs race; skipped with a notice on fork PRs; untrusted text inert."""

from __future__ import annotations

import re

import pytest

from oloproof.action.prcomment import COMMENT_LIMIT, marker, render_comment
from tests.action.conftest import HEAD_SHA, REPOSITORY, ActionRun, FakeGitHub
from tests.conftest import labelled_cases


@pytest.fixture
def gh(action: ActionRun, fake_github: FakeGitHub) -> FakeGitHub:
    action.api_url = fake_github.url
    return fake_github


def test_comment_is_created_once_then_updated_in_place(action: ActionRun, gh: FakeGitHub) -> None:
    action.pull_request()
    first = action(comment="true")
    assert first.code == 0, first.stdout
    comments = gh.comments_on(7)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert body.startswith(marker("oloproof") + "\n")
    assert f"### ✅ PASS: 1 of 1 rules pass on `{HEAD_SHA[:12]}`" in body
    assert "| accurate | ✅ PASS | 1.000 |" in body
    assert f"[job summary](https://github.com/{REPOSITORY}/actions/runs/99)" in body
    assert f"[check run](https://github.com/{REPOSITORY}/runs/4242)" in body
    first_id = comments[0]["id"]

    # A person's comment that quotes the marker is never taken for ours.
    gh.add_comment(7, marker("oloproof") + "\nhijack", bot=False)
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    second = action(comment="true")
    assert second.code == 1
    mine = [c for c in gh.comments_on(7) if c["user"]["type"] == "Bot"]
    assert [c["id"] for c in mine] == [first_id]  # the same comment, updated
    assert "### ❌ FAIL: 0 of 1 rules pass" in mine[0]["body"]
    assert [c["body"] for c in gh.comments_on(7) if c["user"]["type"] == "User"] == [marker("oloproof") + "\nhijack"]
    patched = [r for r in gh.requests if r.method == "PATCH" and "/issues/comments/" in r.path]
    assert [r.path for r in patched] == [f"/repos/{REPOSITORY}/issues/comments/{first_id}"]


def test_a_marked_comment_by_another_bot_is_not_ours(action: ActionRun, gh: FakeGitHub) -> None:
    # RT-M3: any author's comment with the marker was taken for ours (a bot's, by any app): the
    # action then edited someone else's comment (which fails on GitHub) or was fooled by it.
    action.pull_request()
    planted = gh.add_comment(7, marker("oloproof") + "\n### ✅ PASS: forged", login="other-app[bot]")
    first = action(comment="true")
    assert first.code == 0, first.stdout
    assert not [r for r in gh.requests if r.path.endswith(f"/issues/comments/{planted}")]
    assert gh.comments[planted]["body"] == marker("oloproof") + "\n### ✅ PASS: forged"
    [mine] = [c for c in gh.comments_on(7) if c["user"]["login"] == "github-actions[bot]"]
    assert any(r.method == "GET" and r.path == "/user" for r in gh.requests)  # asked, 403: the Actions bot
    action(comment="true")
    assert [c["id"] for c in gh.comments_on(7)] == [planted, mine["id"]]  # ours updated in place, no third


def test_the_tokens_own_login_finds_its_comment(action: ActionRun, gh: FakeGitHub) -> None:
    # A personal or app token that may ask GET /user: its login decides, not the Actions bot's.
    action.pull_request()
    gh.user_login, gh.author = "Release-Robot", "release-robot"
    foreign = gh.add_comment(7, marker("oloproof") + "\nby the Actions bot", login="github-actions[bot]")
    ours = gh.add_comment(7, marker("oloproof") + "\nearlier run", login="release-robot", bot=False)
    assert action(comment="true").code == 0
    assert "✅ PASS" in gh.comments[ours]["body"]  # logins are case-insensitive on GitHub
    assert gh.comments[foreign]["body"].endswith("by the Actions bot")
    assert len(gh.comments_on(7)) == 2


def test_an_app_token_that_may_not_ask_its_login_still_keeps_one_comment(action: ActionRun, gh: FakeGitHub) -> None:
    # GET /user is refused and the comments are my-app[bot]'s, not github-actions[bot]'s: the earlier
    # comment is not found by the fallback, but the new one's author finds it, and the race rule
    # (the oldest is kept and written, the new one deleted) leaves one comment.
    action.pull_request()
    gh.author = "my-app[bot]"
    assert action(comment="true").code == 0
    [first] = gh.comments_on(7)
    action.project.write(cases=labelled_cases(100, 50), rules="  - {id: accurate, criterion: correct, min: 0.9}")
    assert action(comment="true").code == 1
    [kept] = gh.comments_on(7)
    assert kept["id"] == first["id"] and "❌ FAIL" in kept["body"]


def test_past_the_listing_bound_no_duplicate_is_created(
    action: ActionRun, gh: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    from oloproof.action import prcomment

    monkeypatch.setattr(prcomment, "MAX_PAGES", 2)
    action.pull_request()
    for i in range(200):  # two full pages, none ours: our comment may be on page 3
        gh.add_comment(7, f"comment {i}", bot=False)
    result = action(comment="true")
    assert result.code == 0
    assert not [r for r in gh.requests if r.method == "POST" and "/issues/" in r.path]
    pages = [r.path for r in gh.requests if r.method == "GET" and "/comments" in r.path]
    assert len(pages) == 2, pages
    [notice] = [line for line in result.annotations("notice") if "comment" in line]
    assert "the pull request has more than 200 comments and none of the first 200 is ours" in notice, notice
    gh.add_comment(7, "the 201st", bot=False)  # a third page, not full: everything was listed
    monkeypatch.setattr(prcomment, "MAX_PAGES", 3)
    assert action(comment="true").code == 0
    assert [c["user"]["login"] for c in gh.comments_on(7)][-1] == "github-actions[bot]"


def test_two_runs_racing_leave_one_comment(action: ActionRun, gh: FakeGitHub) -> None:
    """Both runs list, find nothing and create: the run whose comment is not the oldest writes its
    body into the oldest and deletes its own."""
    action.pull_request()

    def other_run_created_first(fake: FakeGitHub) -> None:
        fake.after_comment_created = None
        # The other run's comment was created a moment earlier: it has the lower id.
        fake.comments[1] = {
            "id": 1, "issue": 7, "body": marker("oloproof") + "\nthe other run",
            "user": {"login": "github-actions[bot]", "type": "Bot"}, "html_url": "https://github.com/x#1",
        }

    gh.after_comment_created = other_run_created_first
    result = action(comment="true")
    assert result.code == 0, result.stdout
    left = gh.comments_on(7)
    assert [c["id"] for c in left] == [1]
    assert "✅ PASS" in left[0]["body"]  # the last writer's body
    assert any(r.method == "DELETE" for r in gh.requests)


def test_comment_is_opt_in_and_fork_prs_skip_it_with_a_notice(action: ActionRun, gh: FakeGitHub) -> None:
    action.pull_request()
    assert action().code == 0
    assert gh.comments == {}  # not asked for
    action.pull_request(fork=True)
    result = action(comment="true")
    assert result.code == 0
    assert gh.comments == {} and not any("/issues/" in r.path for r in gh.requests)
    notices = [line for line in result.annotations("notice") if "comment" in line]
    assert notices and "comes from a fork, whose token is read-only" in notices[0]
    assert "mode: publish" in notices[0]


def test_comment_on_a_push_says_there_is_no_pull_request(action: ActionRun, gh: FakeGitHub) -> None:
    result = action(comment="true")
    assert result.code == 0 and gh.comments == {}
    assert any("this run belongs to no pull request" in line for line in result.annotations("notice"))


def test_a_comment_that_cannot_be_posted_costs_only_the_comment(action: ActionRun, gh: FakeGitHub) -> None:
    action.pull_request()
    gh.fail_with, gh.fail_after = 403, 1  # the check run is made; the comment calls are refused
    result = action(comment="true")
    assert result.code == 0 and result.outputs["verdict"] == "PASS"
    assert any("no pull-request comment" in line and "pull-requests: write" in line for line in result.annotations("notice"))


def test_bad_comment_input_is_exit_2(action: ActionRun) -> None:
    result = action(comment="yes")
    assert result.code == 2
    assert "comment: expected true or false, got 'yes'" in result.stdout


HOSTILE_IDS = [
    "@octo-org/admins",
    "<img src=x onerror=alert(1)>",
    "[click](https://evil.example)",
    "**bold** `code` | pipe",
    "www.evil.example",
    "<!-- oloproof-sticky-comment -->",
]


@pytest.mark.parametrize("rule_id", HOSTILE_IDS)
def test_untrusted_text_is_inert_in_the_comment(rule_id: str) -> None:
    report = {
        "verdict": "FAIL",
        "rules": [{"id": rule_id, "verdict": "FAIL", "kind": "min", "threshold": 0.9, "estimate": 0.5,
                   "interval": {"low": 0.4, "high": 0.6}}],
        "checks": [{"name": "x", "title": "@everyone <b>", "verdict": "BLOCKED"}],
    }
    body = render_comment(report, check_name="oloproof", head_sha=HEAD_SHA, summary_url=None, check_url=None)
    text = body.split("\n", 1)[1]
    assert not re.search(r"@[A-Za-z0-9]", text)  # no mention can ping
    assert "<img" not in text and "<b>" not in text and "<!--" not in text
    assert "](https" not in text and "https://" not in text and "www.evil" not in text
    assert "**bold**" not in text and "| pipe" not in text


def test_comment_is_capped_at_githubs_limit() -> None:
    rules = [{"id": f"rule-{i:05d}-" + "x" * 50, "verdict": "FAIL", "kind": "min", "threshold": 0.9, "estimate": 0.5,
              "interval": {"low": 0.4, "high": 0.6}} for i in range(3000)]
    body = render_comment({"verdict": "FAIL", "rules": rules, "checks": []}, check_name="oloproof", head_sha=HEAD_SHA,
                          summary_url="https://github.com/o/r/actions/runs/1", check_url=None)
    assert len(body) <= COMMENT_LIMIT
    assert "more rule(s): see the job summary" in body and "[job summary](" in body
