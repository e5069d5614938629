"""A label_match criterion's classification report through the CLI, matched to scikit-learn's
classification_report on the same predictions (issue 18 §3). On main no report carried one."""

from __future__ import annotations

import re

import pytest

from oloproof.errors import ExitCode
from tests.conftest import Project, report

sklearn_metrics = pytest.importorskip("sklearn.metrics")

SPECIES = ("Adelie", "Chinstrap", "Gentoo", "Emperor")


def _cases() -> list[dict[str, object]]:
    """160 cases; Emperor is never predicted (precision undefined: scikit-learn's zero_division)."""
    cases = []
    for s_index, species in enumerate(SPECIES):
        for i in range(40):
            if species == "Emperor":
                answer = "Gentoo" if i % 2 else "Adelie"
            else:
                answer = SPECIES[(s_index + 1) % 3] if i < 3 + 2 * s_index else species
            cases.append({"id": f"{species}{i}", "answer": answer, "expected": {"label": species}})
    return cases


def _sklearn_rows(cases: list[dict[str, object]]) -> dict[str, list[str]]:
    truth = [case["expected"]["label"] for case in cases]  # type: ignore[index]
    predicted = [case["answer"] for case in cases]
    text = sklearn_metrics.classification_report(truth, predicted, digits=3, zero_division=0)
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = " ".join(part for part in parts if not re.fullmatch(r"[\d.]+", part))
        rows[name] = [part for part in parts if re.fullmatch(r"[\d.]+", part)]
    return rows


def test_json_markdown_and_terminal_match_scikit_learn_to_the_digit(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    cases = _cases()
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}")
    code, data = report(project)
    assert code == ExitCode.PASS
    info = data["criteria"]["correct"]["details"]["classification"]
    truth = [case["expected"]["label"] for case in cases]  # type: ignore[index]
    predicted = [case["answer"] for case in cases]
    labels = sorted(SPECIES)
    assert [row["label"] for row in info["per_class"]] == labels
    p, r, f, s = sklearn_metrics.precision_recall_fscore_support(truth, predicted, labels=labels, zero_division=0)
    assert [row["precision"] for row in info["per_class"]] == pytest.approx(list(p), abs=1e-15)
    assert [row["recall"] for row in info["per_class"]] == pytest.approx(list(r), abs=1e-15)
    assert [row["f1"] for row in info["per_class"]] == pytest.approx(list(f), abs=1e-15)
    assert [row["support"] for row in info["per_class"]] == list(s)
    emperor = info["per_class"][labels.index("Emperor")]
    assert emperor["precision_defined"] is False and emperor["precision_interval"] is None
    assert sklearn_metrics.confusion_matrix(truth, predicted, labels=labels).tolist() == info["matrix"]["rows"]
    assert info["per_class"][0]["f1_interval"]["approximate"] is True
    assert info["per_class"][0]["recall_interval"]["method"] == "clopper-pearson"

    # The terminal's -v table shows the same digits as scikit-learn's classification_report(digits=3).
    capsys.readouterr()
    md = project.root / "summary.md"
    project.cli("gate", "-v", "--markdown", str(md))
    out = capsys.readouterr().out
    reference = _sklearn_rows(cases)
    for label in labels:
        line = next(line for line in out.splitlines() if line.startswith(f"  {label} "))
        bare = re.sub(r"\[[^]]*\]\*?|\(undefined\)", "", line)  # intervals and notes out: the point values
        point_values = re.findall(r"\d\.\d{3}", bare)
        assert point_values == reference[label][:3], line
        assert line.split()[-1] == reference[label][3]  # support
    accuracy = next(line for line in out.splitlines() if line.startswith("  accuracy"))
    assert accuracy.split()[1:] == reference["accuracy"]
    for name in ("macro avg", "weighted avg"):
        line = next(line for line in out.splitlines() if line.startswith(f"  {name}"))
        assert line.split()[2:] == reference[name]
    assert "confusion matrix (rows: expected, columns: predicted)" in out
    text = md.read_text()
    assert "<details><summary>Classification report: <code>correct</code> (" in text  # folded (issue 19 §6)
    assert "| Emperor | 0.000 (undefined) | 0.000 &#91;0.000, 0.088&#93; |" in text
    # Without -v the terminal stays short.
    capsys.readouterr()
    project.cli("gate")
    assert "classification report" not in capsys.readouterr().out


def test_a_label_that_is_free_text_gets_no_report(project: Project) -> None:
    cases = [{"id": f"c{i}", "answer": f"text {i}", "expected": {"label": f"text {i}"}} for i in range(250)]
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}")
    _, data = report(project)
    assert data["criteria"]["correct"]["details"]["classification"] == {
        "omitted": "250 distinct labels (more than 200): these are not classes, so no classification report is made"
    }


def test_many_classes_cap_the_matrix(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [{"id": f"c{i}", "answer": i % 40, "expected": {"label": i % 40}} for i in range(400)]
    project.write(cases=cases, rules="  - {id: accurate, criterion: correct, min: 0.5}")
    _, data = report(project)
    info = data["criteria"]["correct"]["details"]["classification"]
    assert len(info["per_class"]) == 40 and info["matrix"] is None
    assert info["matrix_omitted"] == "40 classes: more than 30"
    assert [row["label"] for row in info["per_class"]][:3] == [0, 1, 2]  # numbers sorted as numbers
    capsys.readouterr()
    project.cli("gate", "-v")
    out = capsys.readouterr().out
    assert "40 classes: the 20 with most cases are shown; JSON lists all." in out
    assert "The confusion matrix is shown for at most 10 classes (JSON: up to 30)." in out
