"""A ref that names no stored run, on a CI checkout, is said in CI words: which run is missing and
how to commit or import it, never "`oloproof gate` reproduces this locally" (it does not: the run
is on someone's laptop)."""

from __future__ import annotations

from tests.action.conftest import ActionRun
from tests.conftest import labelled_cases

REGRESSION = "  - {id: no_regression, criterion: correct, baseline: 'version:v1', max_drop: 0.05}"


def test_a_baseline_run_that_was_never_committed_is_said_in_ci_words(action: ActionRun) -> None:
    action.project.write(cases=labelled_cases(50, 50), rules=REGRESSION, version="v2")
    result = action(**{"github-token": ""})
    assert result.code == 2 and result.outputs["verdict"] == "ERROR"
    assert "reproduces this locally" not in result.summary
    text = result.summary.replace("&#96;", "`").replace("&#95;", "_").replace("&amp;", "&")
    assert "The run that 'version:v1' names is not in .oloproof/runs/ of this checkout (111111111111)" in text
    assert "A CI job sees only the runs committed to the repository" in text
    assert "<code>outputs</code> input" in result.summary
    # Commands are code, not literal backticks (19-D8), and name a command that exists (19-D3).
    assert "<code>git add .oloproof/runs/ &amp;&amp; git commit</code>" in result.summary
    assert "<code>oloproof run --outputs FILE --version NAME</code>" in result.summary
    assert "&#96;" not in result.summary and "run import" not in result.summary


def test_other_configuration_errors_keep_their_advice(action: ActionRun) -> None:
    action.project.write(cases=labelled_cases(50, 50), rules="  - {id: x, criterion: nope, min: 0.9}")
    result = action(**{"github-token": ""})
    assert result.code == 2
    assert "<code>oloproof gate</code> reproduces this locally" in result.summary
    assert "&#96;" not in result.summary
    assert "A CI job sees only" not in result.summary
