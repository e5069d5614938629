"""The pull request's evidence is where the reviewer reads it (RT-M2, RT-L1): the job summary, the
check run's text and the sticky comment all carry every changed setting and every file under
.oloproof/ that differs from the base branch, rendered by one renderer and escaped once."""

from __future__ import annotations

import pytest

from oloproof.action.prcomment import safe
from oloproof.report import pr_evidence
from tests.action.conftest import REPOSITORY, ActionRun, FakeGitHub
from tests.action.test_pull_request_trust import base_branch, forge, pull_request, report, run_dir

LOWERED = "policy.rules&#91;id=accurate&#93;.min: 0.9 -&gt; 0.1"


def evidence_of(text: str) -> str:
    """The evidence as a surface renders it: its list, from the first item to the end."""
    start = text.index("- release.yaml is changed by this pull request")
    end = text.find("\n\n", start)
    return text[start:end]


def test_the_check_run_and_the_comment_carry_the_summarys_evidence(
    action: ActionRun, fake_github: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch)
    release = action.workspace / "release.yaml"
    release.write_text(
        release.read_text().replace("min: 0.9}", "min: 0.1, description: ask @octo-org/admins <b>now</b>}")
    )
    forged = forge(run_dir(action.workspace), run_id="29990101T000000Z-f0f0f0", all_correct=True)
    action.api_url = fake_github.url
    result = pull_request(action, base)(comment="true", **{"fail-on": "none"})
    assert result.code == 0, result.stdout

    [created] = [r for r in fake_github.requests if r.method == "POST" and r.path.endswith("/check-runs")]
    text = created.body["output"]["text"]
    [comment] = fake_github.comments_on(7)
    body = comment["body"]
    for surface in (result.summary, text, body):
        evidence = evidence_of(surface)
        assert f"  - {LOWERED}\n" in evidence, evidence
        assert f".oloproof/runs/{forged.name}/run.json (added)" in evidence
        assert f".oloproof/runs/{forged.name}/outputs.jsonl (added)" in evidence
        assert "2 file(s) under .oloproof/ differ from the base branch" in evidence
        # Escaped once, as the summary escapes: one zero-width space after the @, no live tag.
        assert "ask @\u200bocto-org/admins &lt;b&gt;now&lt;/b&gt;" in evidence, evidence
        assert "@\u200b\u200b" not in surface and "<b>" not in evidence
    assert evidence_of(text) == evidence_of(result.summary) == evidence_of(body)
    assert text.startswith("### Pull request evidence\n\nruns and holdout logs as on the base branch ")
    assert "### Pull request evidence\n\nruns and holdout logs" in body
    # The JSON report holds the same lists, for any other consumer.
    [check] = [item for item in report(action)["checks"] if item["name"] == "pull-request"]
    assert check["data"]["store"]["files"] == [
        f".oloproof/runs/{forged.name}/outputs.jsonl (added)",
        f".oloproof/runs/{forged.name}/run.json (added)",
    ]
    assert check["lines"][check["data"]["store"]["line"]].endswith(f"{forged.name}/run.json (added)")


def test_outside_a_pull_request_the_check_run_has_no_evidence_text(
    action: ActionRun, fake_github: FakeGitHub
) -> None:
    action.api_url = fake_github.url
    assert action().code == 0
    [created] = [r for r in fake_github.requests if r.method == "POST" and r.path == f"/repos/{REPOSITORY}/check-runs"]
    assert "text" not in created.body["output"]


def evidence_check(settings: int, files: int = 0) -> dict[str, object]:
    config = {
        "file": "release.yaml",
        "change": "changed",
        "headline": "release.yaml is changed by this pull request: review the change",
        "settings": [f"policy.rules[id=r{i:05d}].min: 0.9 -> 0.1" for i in range(settings)],
        "line": 0,
    }
    store = {"headline": f"{files} file(s) under .oloproof/ differ", "files": [f"f{i} (added)" for i in range(files)], "line": 1}
    return {
        "name": "pull-request",
        "title": "Pull request evidence",
        "status": "runs and holdout logs as on the base branch",
        "sentence": "",
        "lines": ["release.yaml is changed ... (every setting)", "files ..."],
        "data": {"config": [config], "store": store},
    }


def test_a_long_list_is_folded_whole_and_a_hard_limit_says_what_it_left_out() -> None:
    check = evidence_check(40, files=3)
    text = pr_evidence.render(check, budget=10**6, where="elsewhere")
    assert text.count("policy.rules") == 40  # all listed: twelve open, the rest folded
    assert "; 40 setting(s) changed (the first 12 here, every other one below):\n" in text
    assert "<details><summary>Every other changed setting and file (28)</summary>" in text
    assert text.rstrip().endswith("</details>")
    assert "- f2 (added)" in text
    cut = pr_evidence.render(evidence_check(4000), budget=20_000, where="the job summary lists every one")
    assert len(cut) <= 20_000
    assert cut.count("<details>") == cut.count("</details>") == 1
    shown = cut.count("policy.rules")
    assert f"*… {4000 - shown} more line(s) of this evidence did not fit here: the job summary lists every one.*" in cut


def test_a_hostile_report_cannot_break_the_renderer() -> None:
    # mode: publish renders a report an untrusted job wrote: wrong types are skipped, text escaped.
    check = {"name": "pull-request", "lines": ["<img src=x>", 3], "data": {"config": [{"line": True}, "x"], "store": 7}}
    text = pr_evidence.render(check, budget=10_000, where="x")
    assert "<img" not in text and "&lt;img src=x&gt;" in text and "- 3\n" in text


def test_the_comment_escapes_a_mention_once() -> None:
    assert safe("@octo-org/admins") == "@\u200bocto-org/admins"
    assert safe("see https://x.example") == "see https&#58;//x.example"
