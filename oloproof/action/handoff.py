"""What the action hands to later steps: the step outputs drawn from the JSON report (counts per
verdict, the rules that did not pass, the check run's URL, the summary's path) and the sticky
pull-request comment. Shared by the gate (``publish``) and the publish-only mode (``publish_only``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from oloproof.action.checks_api import ChecksClient
from oloproof.action.github import GitHubApiError
from oloproof.action.inputs import Inputs
from oloproof.action.prcomment import render_comment, upsert_comment
from oloproof.action.session import Session
from oloproof.policy import RULE_ID_PATTERN
from oloproof.verdicts import Verdict

# Output name of each verdict's rule count: rules-pass, rules-fail, rules-blocked, ...
COUNT_OUTPUTS = {verdict: "rules-" + verdict.value.lower().replace("_", "-") for verdict in Verdict}
EMPTY_OUTPUTS = {**dict.fromkeys(COUNT_OUTPUTS.values(), ""), "failing-rules": "", "check-url": "", "summary": ""}


def report_outputs(report: Mapping[str, Any], *, check_url: str | None, summary: str | None) -> dict[str, str]:
    """``rules-<verdict>`` counts, ``failing-rules`` (a JSON list of the ids of rules that did not
    pass), ``check-url`` and ``summary`` (the full Markdown summary's path in the repository)."""
    rules = [rule for rule in report.get("rules", []) if isinstance(rule, dict)]
    counts = dict.fromkeys(COUNT_OUTPUTS.values(), 0)
    for rule in rules:
        try:
            counts[COUNT_OUTPUTS[Verdict(rule.get("verdict"))]] += 1
        except ValueError:
            continue
    failing = [
        _output_id(rule.get("id"), index)
        for index, rule in enumerate(rules)
        if rule.get("verdict") != Verdict.PASS.value
    ]
    return {
        **{name: str(count) for name, count in counts.items()},
        "failing-rules": json.dumps(failing, ensure_ascii=True),
        "check-url": check_url or "",
        "summary": summary or "",
    }


def _output_id(rule_id: object, index: int) -> str:
    """A rule id as ``failing-rules`` gives it: one the policy accepts (``RULE_ID_PATTERN``), else,
    defensively (a report that skipped the policy), ``invalid-rule-id-N`` (N: its place in the
    report's rules, from 0): a later step may paste the output into a script, so no text from the
    report other than such an id ever reaches it."""
    if isinstance(rule_id, str) and re.fullmatch(RULE_ID_PATTERN, rule_id):
        return rule_id
    return f"invalid-rule-id-{index}"


def comment(
    session: Session,
    inputs: Inputs,
    report: Mapping[str, Any],
    *,
    number: int | None,
    check_url: str | None,
    banner: str = "",
    why_not: str | None = None,
) -> str | None:
    """Post or update the sticky comment on PR ``number``; returns a notice when none was made."""
    if not inputs.comment:
        return None
    env = session.env
    if why_not is not None:
        return why_not
    if number is None:
        return "no pull-request comment: this run belongs to no pull request (comment: true comments on pull requests)"
    if not inputs.github_token:
        return "no pull-request comment: github-token is empty"
    body = render_comment(
        report,
        check_name=inputs.check_name,
        head_sha=env.head_sha,
        summary_url=env.run_url,
        check_url=check_url,
        banner=banner,
    )
    try:
        client = ChecksClient(env.api_url, inputs.github_token, env.repository, deadline=session.start_publishing())
    except GitHubApiError as exc:
        return f"no pull-request comment: {exc.message}"
    outcome = upsert_comment(client, number, inputs.check_name, body)
    if outcome.notice is None:
        session.say(f"pull-request comment on #{number}" + (f": {outcome.url}" if outcome.url else ""))
    return outcome.notice


FORK_NO_COMMENT = (
    "no pull-request comment: this pull request comes from a fork, whose token is read-only; "
    "publish it from a workflow_run job with mode: publish (see the action's docs, 'Fork PRs')"
)
