"""A pull request that changes the gate's own inputs is named (issue 16: refs and rules mean what they say).

Lowering a threshold or swapping the test set turns FAIL into PASS without forging any evidence:
the gate cannot judge that decision, but the reviewer must see it. The `Pull request evidence`
row names every such file the pull request adds or changes, in the report and the job summary.
"""

from __future__ import annotations

import pytest

from tests.action.conftest import ActionRun
from tests.action.test_pull_request_trust import base_branch, pull_request, report
from tests.conftest import labelled_cases, write_cases


def pr_row(action: ActionRun, base: str) -> tuple[dict[str, object], str, str]:
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED, FAIL"})
    data = report(action)
    [check] = [item for item in data["checks"] if item["name"] == "pull-request"]  # type: ignore[union-attr]
    return check, result.summary, str(data["verdict"])


def test_a_lowered_threshold_is_named(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_branch(action, monkeypatch)
    release = action.workspace / "release.yaml"
    text = release.read_text()
    assert "min: 0.9" in text
    release.write_text(text.replace("min: 0.9", "min: 0.5"))
    check, summary, verdict = pr_row(action, base)
    assert verdict == "PASS"  # the gate cannot tell a lowered bar from a justified one...
    line = (
        "release.yaml is changed by this pull request: the gate's rules, baselines, test set, labels and judges are "
        "decisions"
    )
    assert any(str(item).startswith(line) for item in check["lines"]), check  # type: ignore[union-attr]
    assert line in summary  # ...but the reviewer is told
    # ...and told what changed, key by key (every release bumps the version: that alone is not said).
    assert any("; settings changed: policy.rules[id=accurate].min: 0.9 -> 0.5" in str(item) for item in check["lines"])  # type: ignore[union-attr]
    assert "; 1 setting(s) changed:\n  - policy.rules&#91;id=accurate&#93;.min: 0.9 -&gt; 0.5\n" in summary, summary


def test_a_swapped_test_set_is_named_and_an_untouched_project_is_not(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = base_branch(action, monkeypatch)
    check, _, _ = pr_row(action, base)
    assert not [line for line in check["lines"] if "by this pull request: the gate's rules" in str(line)]  # type: ignore[union-attr]
    release = action.workspace / "release.yaml"
    release.write_text(release.read_text().replace("version: ", "version: next-", 1))
    check, summary, _ = pr_row(action, base)
    assert "release.yaml is changed by this pull request" in summary and "settings changed" not in summary
    write_cases(action.workspace / "data" / "test.jsonl", labelled_cases(100, 99))
    check, summary, _ = pr_row(action, base)
    assert "data/test.jsonl is changed by this pull request" in summary


def test_failing_cases_removed_in_a_pull_request_are_said_even_when_the_note_is_deleted(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last-gate note is read from the base commit in a pull request: deleting it (or editing
    it) does not hide that the failing cases left the test set."""
    import shutil

    from oloproof.cli.main import main as cli
    from tests.action.test_pull_request_trust import git

    root = action.workspace
    write_cases(root / "data" / "test.jsonl", labelled_cases(100, 85))
    monkeypatch.chdir(root)
    assert cli(["gate", "--quiet"]) in (1, 4)  # 85/100 against min 0.9; the note records the 15 failures
    assert (root / ".oloproof" / "gates").is_dir()
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    base = git(root, "rev-parse", "HEAD")
    write_cases(root / "data" / "test.jsonl", labelled_cases(100, 85)[:85])  # the 15 failures removed
    shutil.rmtree(root / ".oloproof" / "gates")
    result = pull_request(action, base)(**{"github-token": "", "fail-on": "BLOCKED, FAIL"})
    assert "15 cases removed since the last gate" in result.summary, result.summary
    assert "all of them were failures" in result.summary


def test_rewritten_judge_labels_are_named(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue 17: a judge rule's interval rests on the human labels; a pull request that turns
    # people's failures into passes forges no run, so the reviewer must be told.
    import json
    import sys

    from tests.conftest import FIXTURES, judge_label

    root = action.workspace
    (root / "judge.py").write_text((FIXTURES / "judge_system.py").read_text())
    labels = root / "data" / "judge-labels.jsonl"
    labels.parent.mkdir(parents=True, exist_ok=True)
    labels.write_text(
        "".join(
            json.dumps(judge_label(f"c{i:05d}", i < 85, {"id": f"c{i:05d}", "label": int(i < 85)})) + "\n"
            for i in range(100)
        )
    )
    release = root / "release.yaml"
    command = json.dumps([sys.executable, "judge.py"])
    text = release.read_text().replace(
        "evaluators:\n", f"evaluators:\n  - {{type: judge, command: {command}, labels: data/judge-labels.jsonl}}\n"
    )
    release.write_text(text)
    base = base_branch(action, monkeypatch)
    check, _, _ = pr_row(action, base)
    assert not [line for line in check["lines"] if "judge-labels" in str(line)]  # type: ignore[union-attr]
    labels.write_text(
        "".join(
            json.dumps(judge_label(f"c{i:05d}", True, {"id": f"c{i:05d}", "label": int(i < 85)})) + "\n"
            for i in range(100)
        )
    )
    check, summary, _ = pr_row(action, base)
    assert "data/judge-labels.jsonl is changed by this pull request" in summary


def test_a_rewritten_judge_script_and_a_weakened_judge_policy_are_named(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The red team of issue 17: a PR that only rewrites the judge's code (to agree with people on the
    # labelled cases and pass failures elsewhere) turned INSUFFICIENT_EVIDENCE into PASS, unnamed;
    # a PR adding `unbound_labels: allow` looked like a version bump.
    import sys

    from tests.conftest import FIXTURES

    root = action.workspace
    (root / "judge.py").write_text((FIXTURES / "judge_system.py").read_text())
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "judge-labels.jsonl").write_text("")
    release = root / "release.yaml"
    command = f"[{sys.executable!r}, judge.py]".replace("'", '"')
    release.write_text(
        release.read_text().replace(
            "evaluators:\n", f"evaluators:\n  - {{type: judge, command: {command}, labels: data/judge-labels.jsonl}}\n"
        )
    )
    base = base_branch(action, monkeypatch)
    (root / "judge.py").write_text((root / "judge.py").read_text() + "\n# now agrees with the labels file\n")
    text = release.read_text()
    assert "policy:\n" in text
    release.write_text(text.replace("policy:\n", "policy:\n  judges: {unbound_labels: allow}\n", 1))
    check, summary, _ = pr_row(action, base)
    assert "judge.py is changed by this pull request" in summary
    lines = [str(item) for item in check["lines"]]  # type: ignore[union-attr]
    assert any(line.endswith("settings changed: policy.judges.unbound_labels: (unset) -> allow") for line in lines)


def test_rewritten_transform_labels_are_named(action: ActionRun, monkeypatch: pytest.MonkeyPatch) -> None:
    from oloproof.action.config_diff import changed_settings

    root = action.workspace
    labels = root / "labels" / "t.jsonl"
    labels.parent.mkdir(parents=True)
    labels.write_text('{"id": "c00001", "preserved": false, "digest": "x"}\n')
    release = root / "release.yaml"
    release.write_text(
        release.read_text()
        + "metamorphic:\n  transforms:\n    - {name: upper, field: answer, perturb: {kind: case, to: upper}, labels: labels/t.jsonl}\n"
    )
    base = base_branch(action, monkeypatch)
    labels.write_text('{"id": "c00001", "preserved": true, "digest": "x"}\n')
    _, summary, _ = pr_row(action, base)
    assert "labels/t.jsonl is changed by this pull request" in summary
    # An alias bomb is not expanded: it is said that the file could not be compared key by key.
    bomb = b"a: &a [x, x, x, x, x, x, x, x, x]\n" + b"".join(
        b"%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n"
        % ((bytes([98 + i]), bytes([98 + i])) + (bytes([97 + i]),) * 8)
        for i in range(8)
    )
    assert changed_settings(b"a: 1\n", bomb, "release.yaml") == [
        "(its settings could not be compared key by key: review the whole file)"
    ]


def test_a_pull_request_that_makes_a_rule_advisory_or_approximate_cannot_hide_it(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 18 §6-7: a hostile PR turns the failing rule advisory, lets a rule decide on an
    # approximate interval and accepts a transform, behind a dozen harmless-looking edits: the
    # gate passes (it cannot judge the decision), but the reviewer sees those keys first.
    base = base_branch(action, monkeypatch)  # 85/100 against min 0.9: FAIL on the base branch
    release = action.workspace / "release.yaml"
    text = release.read_text()
    rule = "  - {id: accurate, criterion: correct, min: 0.9}"
    assert rule in text
    noise = "".join(f"  - {{id: filler{i}, criterion: correct, min: 0.5, description: note {i}}}\n" for i in range(14))
    hostile = (
        "  - {id: accurate, criterion: correct, min: 0.9, advisory: true}\n"
        + noise
        + "  - {id: loose, criterion: correct, min: 0.5, approximate: allow}"
    )
    release.write_text(text.replace(rule, hostile))
    check, summary, verdict = pr_row(action, base)
    assert verdict == "PASS"
    lines = [str(item) for item in check["lines"]]  # type: ignore[union-attr]
    [row] = [line for line in lines if "settings changed:" in line]
    shown = row.split("settings changed: ", 1)[1]
    assert shown.startswith(
        "policy.rules[id=accurate].advisory: (unset) -> true; policy.rules[id=loose].approximate: (unset) -> allow"
    ), row
    assert shown.count("; ") + 1 == 2 + 14 * 4 + 3 == 61  # every change is listed, the fillers too (4 keys each)
    assert "; 61 setting(s) changed (the first 12 here, every other one below):\n  - policy.rules&#91;id=accurate&#93;" \
        ".advisory: (unset) -&gt; true\n" in summary, summary
    assert "<details><summary>Every other changed setting and file (49)</summary>" in summary
    assert "release.yaml: policy.rules&#91;id=filler13&#93;.description: (unset) -&gt; note 13\n" in summary


def test_a_lowered_threshold_behind_twelve_decoys_of_the_same_rank_is_listed(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # RT-H2: twelve existing rules get a harmless threshold edit, written before the one that
    # matters; all are thresholds of existing rules (one rank), so file order decided, and only
    # twelve were listed: the 13th, min 0.9 -> 0.1, was "and 1 more".
    release = action.workspace / "release.yaml"
    rule = "  - {id: accurate, criterion: correct, min: 0.9}"
    decoys = "".join(f"  - {{id: decoy{i}, criterion: correct, min: 0.5}}\n" for i in range(12))
    release.write_text(release.read_text().replace(rule, decoys + rule))
    base = base_branch(action, monkeypatch)
    text = release.read_text()
    release.write_text(text.replace("min: 0.5}", "min: 0.45}").replace("min: 0.9}", "min: 0.1}"))
    check, summary, _ = pr_row(action, base)
    lowered = "policy.rules[id=accurate].min: 0.9 -> 0.1"
    [row] = [str(line) for line in check["lines"] if "settings changed:" in str(line)]  # type: ignore[union-attr]
    assert row.endswith("policy.rules[id=decoy11].min: 0.5 -> 0.45; " + lowered), row
    data = check["data"]["config"]  # type: ignore[index]
    assert [entry["settings"][-1] for entry in data] == [lowered]
    assert "release.yaml: policy.rules&#91;id=accurate&#93;.min: 0.9 -&gt; 0.1\n" in summary, summary
    assert " more" not in row


def test_a_seeds_file_that_gains_approximate_allow_is_named_key_by_key(
    action: ActionRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The recipe rule may live in its own seeds file: its settings are compared key by key too.
    root = action.workspace
    (root / "seeds.yaml").write_text(
        "recipe: r1\ncheckpoints: {s1: 'version:v1'}\nrule: {id: recipe_ok, criterion: correct, min: 0.5}\n"
    )
    release = root / "release.yaml"
    release.write_text(release.read_text() + "seeds: seeds.yaml\n")
    base = base_branch(action, monkeypatch)
    seeds = root / "seeds.yaml"
    seeds.write_text(seeds.read_text().replace("min: 0.5}", "min: 0.5, approximate: allow, advisory: true}"))
    check, summary, _ = pr_row(action, base)
    lines = [str(item) for item in check["lines"]]  # type: ignore[union-attr]
    assert any(
        line.startswith("seeds.yaml is changed by this pull request")
        and line.endswith(
            "settings changed: rule.approximate: (unset) -> allow; rule.advisory: (unset) -> true"
        )
        for line in lines
    ), lines
    assert "seeds.yaml is changed by this pull request" in summary


def test_an_accepted_transform_is_listed_before_other_changes() -> None:
    from oloproof.action.config_diff import changed_settings

    base = (  # the transform comes after the rules: in file order its acceptance would be listed last
        "policy:\n  rules:\n"
        + "".join(f"    - {{id: r{i}, criterion: correct, min: 0.{i + 1}}}\n" for i in range(14))
        + "metamorphic:\n  transforms:\n    - {name: sensor, field: x, perturb: {kind: numeric_noise, scale: 0.5}}\n"
    )
    head = base.replace("scale: 0.5}}", "scale: 0.5}, accepted: {by: me, reason: fine}}").replace("min: 0.", "min: 0.0")
    lines = changed_settings(base.encode(), head.encode(), "release.yaml")
    assert lines[:2] == [
        "metamorphic.transforms[name=sensor].accepted.by: (unset) -> me",
        "metamorphic.transforms[name=sensor].accepted.reason: (unset) -> fine",
    ]
