"""Seeds are counted by checkpoint, not by outcome (issue 17, point 5), through the real CLI.

Distinct checkpoints (different weights files) that answer every case alike are separate seeds
(a stable recipe can pass); a checkpoint whose files are byte-identical to another's is one seed
(the copy attack), whatever its name or path; when every checkpoint answers alike the report says
the training is deterministic under these seeds; where no recorded file can tell checkpoints apart
(imported outputs) identical outcomes still count once, and the sentence says why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from oloproof.errors import ExitCode
from tests.conftest import FIXTURES, Project, labelled_cases

SEED_SYSTEM = FIXTURES / "seed_system.py"
APPROX = "confidence: 0.95\nallow_approximate_methods: true\nrules:\n  - {id: r, criterion: correct, min: 0.5}\n"


def stable_recipe(
    project: Project, weights: dict[int, str], *, n: int = 200, min_: float = 0.9, wrong: int = 1
) -> None:
    """k checkpoints, each its own weights file (text given), on n cases the last of which every
    checkpoint gets wrong (its answer is 0): with error 0 every checkpoint makes that single error."""
    project.write(cases=labelled_cases(n, n - wrong))
    (project.root / "weights").mkdir(exist_ok=True)
    lines = []
    for k, text in weights.items():
        (project.root / "weights" / f"seed_{k}.json").write_text(text)
        command = f"{sys.executable} {SEED_SYSTEM} --weights weights/seed_{k}.json"
        lines.append(f"  seed_{k}: {{command: '{command}'}}\n")
    (project.root / "seeds.yaml").write_text(
        "recipe: rf\ncheckpoints:\n" + "".join(lines) + f"rule: {{id: recipe_ok, criterion: correct, min: {min_}}}\n"
    )
    (project.root / "recipe.yaml").write_text(APPROX)


def seeds(project: Project) -> tuple[int, dict[str, Any]]:
    out = project.root / "seeds.json"
    out.unlink(missing_ok=True)
    code = project.cli(
        "seeds", str(project.root / "seeds.yaml"), "--policy", str(project.root / "recipe.yaml"), "--json", str(out)
    )
    return code, json.loads(out.read_text())


def distinct(k: int, error: float = 0.0) -> str:
    return json.dumps({"seed": k, "error": error})


def test_five_distinct_checkpoints_with_the_same_single_error_are_five_seeds(project: Project) -> None:
    stable_recipe(project, {k: distinct(k) for k in range(1, 6)})
    code, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 5, rule
    assert "duplicate_seeds" not in rule["reasons"] and "too_few_seeds" not in rule["reasons"]
    assert code == ExitCode.PASS and rule["verdict"] == "PASS", rule["sentence"]
    assert rule["interval"]["estimate"] == 0.995 and rule["interval"]["low"] > 0.9
    assert "deterministic_seeds" in rule["reasons"] and rule["details"]["deterministic"] is True
    assert (
        "Every checkpoint answered every case identically and their files differ: the training is deterministic "
        "under these 5 seeds, so the recipe is its model: decide it with the plain rule on one checkpoint"
    ) in rule["sentence"]


def test_adding_distinct_seeds_helps_a_stable_recipe(project: Project) -> None:
    """"Add seeds" must narrow the interval of a recipe whose seeds all agree."""
    lows = []
    for k in (3, 4, 6):
        stable_recipe(project, {i: distinct(i) for i in range(1, k + 1)}, min_=0.95)
        _, data = seeds(project)
        assert data["rule"]["details"]["k"] == k
        lows.append(data["rule"]["interval"]["low"])
    assert lows[0] < lows[1] < lows[2], lows


def test_the_same_recipe_through_the_gate(project: Project) -> None:
    stable_recipe(project, {k: distinct(k) for k in range(1, 6)})
    project.write(extra="seeds: seeds.yaml\n", policy_extra="  allow_approximate_methods: true\n",
                  rules="  - {id: accurate, criterion: correct, min: 0.5}")
    out = project.root / "gate.json"
    assert project.cli("gate", "--json", str(out)) == ExitCode.PASS
    [rule] = [r for r in json.loads(out.read_text())["rules"] if r["id"] == "recipe_ok"]
    assert rule["verdict"] == "PASS" and rule["details"]["k"] == 5 and rule["details"]["deterministic"] is True


def test_byte_identical_files_under_other_names_count_once(project: Project) -> None:
    """The copy attack: seed_4 and seed_5 are seed_1's bytes under other file names. Their
    outcomes equal seed_1's, the other two seeds differ: three seeds, said by file."""
    weights = {1: distinct(1, 0.05), 2: distinct(2, 0.05), 3: distinct(3, 0.05)}
    weights |= {4: weights[1], 5: weights[1]}
    stable_recipe(project, weights, min_=0.5)
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 3 and rule["reasons"][:2] == ["interval_clears_threshold", "duplicate_seeds"]
    assert rule["details"]["identical_files"] == [["seed_1", "seed_4", "seed_5"]]
    assert (
        "Note: seed_1, seed_4 and seed_5 ran byte-identical files (one checkpoint under several names); they count "
        "as one seed."
    ) in rule["sentence"]
    assert "deterministic" not in rule["details"]


def test_a_copy_of_a_stable_checkpoint_is_not_a_seed_even_when_all_agree(project: Project) -> None:
    weights = {k: distinct(k) for k in range(1, 4)} | {4: distinct(1)}
    stable_recipe(project, weights)
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 3 and rule["details"]["identical_files"] == [["seed_1", "seed_4"]]
    assert rule["details"]["deterministic"] is True and "under these 3 seeds" in rule["sentence"]


def test_a_copy_with_one_junk_byte_is_counted_and_named(project: Project) -> None:
    """Not detected (docs/seeds.md says so): bytes are compared, not what they mean. The pair is
    still named in the sentence, so a reviewer sees two checkpoints that answered alike."""
    weights = {1: distinct(1, 0.05), 2: distinct(2, 0.05), 3: distinct(3, 0.05)}
    weights[4] = weights[1] + " "  # still valid JSON: the same model
    stable_recipe(project, weights, min_=0.5)
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 4 and "duplicate_seeds" not in rule["reasons"]
    assert rule["details"]["alike_outputs"] == [["seed_1", "seed_4"]]
    assert (
        "Note: seed_1 and seed_4 answered every case identically; their files differ, so they count as separate "
        "seeds (only byte-identical files are a copy: a copy with one byte changed is not detected)."
    ) in rule["sentence"]


def test_imported_runs_that_agree_count_once_and_say_why(project: Project) -> None:
    """Imported outputs record no file: identical outcomes cannot be told from a copy, so they count
    once (conservative), and the sentence says how to count them apart."""
    project.write(cases=labelled_cases(200, 199))
    rng = np.random.default_rng(5)
    columns = [np.ones(200, dtype=bool) for _ in range(2)] + [rng.uniform(size=200) > 0.05 for _ in range(3)]
    for k, column in enumerate(columns, start=1):
        column[199] = False
        lines = [json.dumps({"id": f"c{i:05d}", "label": int(bool(v))}) for i, v in enumerate(column)]
        path = project.root / f"s{k}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        assert project.cli("run", "--outputs", str(path), "--version", f"s{k}") == 0
    names = ", ".join(f"s{k}: 'version:s{k}'" for k in range(1, 6))
    (project.root / "seeds.yaml").write_text(
        f"recipe: rf\ncheckpoints: {{{names}}}\nrule: {{id: recipe_ok, criterion: correct, min: 0.5}}\n"
    )
    (project.root / "recipe.yaml").write_text(APPROX)
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 4 and "duplicate_seeds" in rule["reasons"]
    assert rule["details"]["identical_outputs"] == [["s1", "s2"]]
    assert (
        "Note: s1 and s2 answered every case identically, and no file recorded for their runs tells them apart "
        "(s1: imported outputs; s2: imported outputs), so they count as one seed; declare each checkpoint by the "
        "command that runs it, with its own weights file on the command line or in artifacts:, to count them as "
        "separate seeds."
    ) in rule["sentence"]


def test_one_checkpoint_run_twice_is_one_seed_even_when_its_runs_differ(project: Project, tmp_path: Path) -> None:
    """The same command on the same files, recorded as two versions: one checkpoint, whatever it answered."""
    stable_recipe(project, {k: distinct(k, 0.05) for k in range(1, 4)}, min_=0.5)
    command = f"{sys.executable} {SEED_SYSTEM} --weights weights/seed_1.json"
    body = (project.root / "seeds.yaml").read_text().replace(
        "rule:", f"  again: {{command: '{command}', version: again}}\nrule:"
    )
    (project.root / "seeds.yaml").write_text(body)
    _, data = seeds(project)
    assert data["rule"]["details"]["k"] == 3 and data["rule"]["details"]["identical_files"] == [["seed_1", "again"]]


def test_a_deterministic_recipe_that_straddles_asks_for_cases_not_seeds(project: Project) -> None:
    stable_recipe(project, {k: distinct(k) for k in range(1, 6)}, n=200, wrong=10, min_=0.92)
    code, data = seeds(project)
    rule = data["rule"]
    assert code == ExitCode.INSUFFICIENT_EVIDENCE and rule["reasons"][0] == "interval_straddles_threshold", rule
    assert "contains min 0.92: more cases narrow it (these checkpoints do not vary, so the cases set its width)." in (
        rule["sentence"]
    )


def test_system_artifacts_covering_every_seed_compare_the_files_each_command_names(project: Project) -> None:
    """Every run's fingerprint holds all the weights (system.artifacts: [weights]): the files each
    command names tell the checkpoints apart, and a copy among them is still one seed."""
    weights = {k: distinct(k) for k in range(1, 5)} | {5: distinct(1)}
    stable_recipe(project, weights)
    release = project.root / "release.yaml"
    release.write_text(release.read_text().replace("  timeout_s: 20\n", "  timeout_s: 20\n  artifacts: [weights]\n"))
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 4 and rule["details"]["identical_files"] == [["seed_1", "seed_5"]], rule
    assert rule["details"]["deterministic"] is True


def test_commands_that_name_no_distinct_file_fall_back_to_outcomes(project: Project) -> None:
    """Checkpoints whose runs record the same files and whose commands name the same files (the seed
    is an argument, not a file): bytes say nothing, so identical outcomes count once, and it says why."""
    stable_recipe(project, {1: distinct(1)})
    lines = "".join(
        f"  s{k}: {{command: '{sys.executable} {SEED_SYSTEM} --weights weights/seed_1.json --tag {k}'}}\n"
        for k in range(1, 4)
    )
    (project.root / "seeds.yaml").write_text(
        f"recipe: rf\ncheckpoints:\n{lines}rule: {{id: recipe_ok, criterion: correct, min: 0.5}}\n"
    )
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 1 and rule["details"]["identical_outputs"] == [["s1", "s2", "s3"]], rule
    assert "no file recorded for their runs tells them apart (s1: every file its run records is shared by the other" in (
        rule["sentence"]
    )


def test_a_symlink_or_hard_link_to_another_checkpoints_weights_is_a_copy(project: Project) -> None:
    weights = {k: distinct(k, 0.05) for k in range(1, 4)}
    stable_recipe(project, weights | {4: "", 5: ""}, min_=0.5)
    folder = project.root / "weights"
    (folder / "seed_4.json").unlink()
    (folder / "seed_4.json").symlink_to("seed_1.json")
    (folder / "seed_5.json").unlink()
    (folder / "seed_5.json").hardlink_to(folder / "seed_2.json")
    _, data = seeds(project)
    rule = data["rule"]
    assert rule["details"]["k"] == 3 and rule["details"]["identical_files"] == [["seed_1", "seed_4"], ["seed_2", "seed_5"]]
