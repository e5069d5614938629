"""The action's report path, planted by a pull request as a symlink, never leads a write outside
the workspace (issue 16, point 7: reports go where they are sent, and nowhere else)."""

from __future__ import annotations

import os

from tests.action.conftest import ActionRun


def test_a_report_link_out_of_the_workspace_is_refused(action: ActionRun) -> None:
    precious = action.tmp / "runner-file"
    precious.write_text("runner's own")
    (action.workspace / "oloproof-report.json").symlink_to(os.path.relpath(precious, action.workspace))
    result = action()
    assert result.code == 2
    assert "json-report: 'oloproof-report.json' lies outside the workspace" in result.stdout
    assert precious.read_text() == "runner's own"
    assert (action.workspace / "oloproof-report.json").is_symlink()


def test_a_report_link_inside_the_workspace_writes_its_target(action: ActionRun) -> None:
    (action.workspace / "reports").mkdir()
    (action.workspace / "oloproof-report.json").symlink_to("reports/gate.json")
    result = action()
    assert result.code == 0, result.stdout
    assert '"verdict": "PASS"' in (action.workspace / "reports" / "gate.json").read_text()
    assert (action.workspace / "oloproof-report.json").is_symlink()
