"""Nine small projects on disk, one per state a job summary has to read well in (issue 19 §6),
each gated through the real CLI (``oloproof gate --markdown FILE``, in process).

``build(name, root)`` makes the project under ``root`` and returns the Markdown the gate wrote.
Used by tests/report/test_summary_rendered.py and by ``python -m tests.report.summary_states DIR``
(which writes ``DIR/<state>.md``: how the screenshots under docs/summary/ are made).
"""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from oloproof.cli.main import main
from tests.conftest import Project, labelled_cases, write_cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
APPROX = "  allow_approximate_methods: true\n"


def _gate(project: Project, expected: int) -> str:
    out = project.root / "summary.md"
    with contextlib.chdir(project.root), contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):  # type: ignore[type-var]
        code = main(["gate", "-c", "release.yaml", "--markdown", str(out)])
    assert code == expected, (project.root, code)
    return out.read_text(encoding="utf-8")


def _quiet(argv: list[str], root: Path) -> int:
    with contextlib.chdir(root), contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):  # type: ignore[type-var]
        return main(argv)


def _seeds(project: Project, *, n: int = 300, allow: bool, extra: str = "") -> None:
    rng = np.random.default_rng(11)
    ease = rng.uniform(0.75, 1.0, size=n)  # per-case difficulty shared by every seed
    project.write(cases=labelled_cases(n, n))
    for k in range(1, 6):
        right = rng.uniform(size=n) < ease
        preds = project.root / f"s{k}.jsonl"
        preds.write_text("".join(json.dumps({"id": f"c{i:05d}", "label": int(r)}) + "\n" for i, r in enumerate(right)))
        assert _quiet(["run", "-c", project.config, "--outputs", str(preds), "--version", f"s{k}"], project.root) == 0
    (project.root / "seeds.yaml").write_text(
        "recipe: loan-model\n"
        "checkpoints: {seed_1: 'version:s1', seed_2: 'version:s2', seed_3: 'version:s3', seed_4: 'version:s4', "
        "seed_5: 'version:s5'}\n"
        "rule: {id: recipe_accurate, criterion: correct, min: 0.7}\n"
    )
    project.write(
        rules="  - {id: accurate, criterion: correct, min: 0.7}",
        extra="seeds: seeds.yaml\n" + extra,
        policy_extra=APPROX if allow else "",
    )


def pass_(root: Path) -> str:
    project = Project(root).write(
        cases=labelled_cases(400, 388),
        rules="  - {id: accurate, criterion: correct, min: 0.9}\n  - {id: usable, criterion: correct, min: 0.8}",
    )
    return _gate(project, 0)


def fail(root: Path) -> str:
    project = Project(root).write(
        cases=labelled_cases(200, 150),
        rules="  - {id: accurate, criterion: correct, min: 0.9}\n  - {id: usable, criterion: correct, min: 0.6}",
    )
    return _gate(project, 1)


def blocked(root: Path) -> str:
    """``leakage: required`` and no leakage check recorded, with a seeds recipe declared."""
    project = Project(root)
    _seeds(project, allow=True, extra="leakage: required\n")
    return _gate(project, 3)


def insufficient(root: Path) -> str:
    project = Project(root).write(
        cases=labelled_cases(100, 85),
        rules="  - {id: accurate, criterion: correct, min: 0.8}\n  - {id: usable, criterion: correct, min: 0.6}",
    )
    return _gate(project, 4)


def manual_review(root: Path) -> str:
    """A seeds recipe whose approximate interval the policy does not allow."""
    project = Project(root)
    _seeds(project, allow=False)
    return _gate(project, 5)


def seeds(root: Path) -> str:
    project = Project(root)
    _seeds(project, allow=True)
    return _gate(project, 0)


def per(root: Path) -> str:
    species = ("Adelie", "Chinstrap", "Gentoo")
    wrong = {"Adelie": 2, "Chinstrap": 9, "Gentoo": 1}
    cases = [
        {
            "id": f"{name[:2]}{i:03d}",
            "answer": species[(k + 1) % 3] if i < wrong[name] else name,
            "expected": {"label": name},
        }
        for k, name in enumerate(species)
        for i in range(60)
    ]
    project = Project(root).write(
        cases=cases,
        rules="  - {id: accurate, criterion: correct, min: 0.8}\n"
        "  - {id: per_species, criterion: correct, min: 0.8, per: expected.label}",
    )
    return _gate(project, 4)


def advisory(root: Path) -> str:
    project = Project(root).write(
        cases=labelled_cases(300, 282),
        rules="  - {id: accurate, criterion: correct, min: 0.85}\n"
        "  - {id: stretch, criterion: correct, min: 0.97, advisory: true}",
    )
    return _gate(project, 0)


def metamorphic(root: Path) -> str:
    """A declared transform a rule reads (accepted by a person), and one no rule reads (reported only)."""
    rng = np.random.default_rng(5)
    xs = rng.normal(0.0, 1.0, size=150)
    cases = [{"id": f"t{i:03d}", "features": {"x": round(float(x), 3)}, "expected": {"label": int(x > 0)}} for i, x in enumerate(xs)]
    write_cases(root / "data" / "test.jsonl", cases)
    system = json.dumps([sys.executable, str(FIXTURES / "metamorphic" / "system.py")])
    (root / "release.yaml").write_text(
        f"system:\n  version: v1\n  command: {system}\n  timeout_s: 30\n"
        "testset:\n  cases: data/test.jsonl\n"
        "evaluators:\n  - {type: label_match, field: label}\n"
        "  - {type: metamorphic_relation, relation: same_label, transform: sensor, field: label}\n"
        "  - {type: metamorphic_relation, relation: same_label, transform: drift, field: label}\n"
        "metamorphic:\n  transforms:\n"
        "    - name: sensor\n      field: features\n      perturb: {kind: numeric_noise, scale: {x: 0.05}, seed: 7}\n"
        "      accepted: {by: Dana Reyes, reason: 0.05 is the stated sensor error}\n"
        "    - name: drift\n      field: features\n      perturb: {kind: numeric_noise, scale: {x: 0.5}, seed: 3}\n"
        "policy:\n  confidence: 0.95\n  rules:\n"
        "    - {id: accurate, criterion: correct, min: 0.9}\n"
        "    - {id: stable, criterion: flips_under_sensor, max: 0.2}\n",
        encoding="utf-8",
    )
    return _gate(Project(root), 0)


STATES: dict[str, Callable[[Path], str]] = {
    "pass": pass_,
    "fail": fail,
    "blocked": blocked,
    "insufficient": insufficient,
    "manual-review": manual_review,
    "per": per,
    "advisory": advisory,
    "seeds": seeds,
    "metamorphic": metamorphic,
}


def build(name: str, root: Path) -> str:
    root.mkdir(parents=True, exist_ok=True)
    return STATES[name](root)


if __name__ == "__main__":  # python -m tests.report.summary_states OUT_DIR [state ...]
    import tempfile

    out_dir = Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    for state in sys.argv[2:] or list(STATES):
        with tempfile.TemporaryDirectory() as tmp:
            (out_dir / f"{state}.md").write_text(build(state, Path(tmp) / state), encoding="utf-8")
