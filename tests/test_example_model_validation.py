"""The model-validation example end to end, as a user types it: `oloproof init` into a fresh
directory, then every command of the example README's "Run it" section, each through the console
entry point in its own process (`python -m oloproof`), checked against the verdicts, exit codes and
figures the README, the guide and docs/examples/model-validation.md print. The commands are read
from the README itself, so the page and this test cannot drift apart."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "examples" / "model-validation" / "README.md"


@dataclass(frozen=True)
class Done:
    command: str
    code: int
    raw: str

    @property
    def out(self) -> str:
        """What it printed, with the terminal's line wrapping (140 columns) undone."""
        return re.sub(r" ?\n(?![┃│┏┡└]|  )", " ", self.raw)


def readme_commands() -> list[str]:
    """The shell lines of the README's "Run it" section (comments cut), in order."""
    section = README.read_text().split("## Run it", 1)[1].split("\n### ", 1)[0]
    lines: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", section, flags=re.DOTALL):
        for line in block.splitlines():
            line = line.split(" #", 1)[0].strip()
            if line:
                lines.append(line)
    return lines


def run_line(line: str, cwd: Path) -> tuple[list[Done], Path]:
    """Run one `a && b && cd c && d` line as a shell would (stopping at the first failure), each
    `oloproof …` in its own process; returns what each printed and the directory it ends in."""
    env = {**os.environ, "CI": "1", "COLUMNS": "140", "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done: list[Done] = []
    for part in line.split("&&"):
        argv = shlex.split(part)
        if argv[0] == "cd":
            cwd = cwd / argv[1]
            continue
        assert argv[0] == "oloproof", f"the README runs only oloproof and cd here, not {argv[0]!r}"
        proc = subprocess.run([sys.executable, "-m", "oloproof", *argv[1:]], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=600)
        done.append(Done(part.strip(), proc.returncode, proc.stdout + proc.stderr))
        if proc.returncode != 0:
            break
    return done, cwd


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> list[Done]:
    """Every README command, run in order from a fresh directory."""
    cwd = tmp_path_factory.mktemp("fresh")
    results: list[Done] = []
    for line in readme_commands():
        done, cwd = run_line(line, cwd)
        results += done
    return results


def ran(transcript: list[Done], command: str, *, occurrence: int = 0) -> Done:
    """The ``occurrence``-th run of exactly ``command``."""
    return [done for done in transcript if done.command == command][occurrence]


def test_the_readme_runs_these_commands_in_this_order() -> None:
    assert readme_commands() == [
        "oloproof init --example model-validation demo && cd demo && oloproof leakage check --training "
        "data/training.jsonl --record && oloproof gate",
        "oloproof seeds seeds.yaml --policy recipe.yaml --html seeds.html",
        "oloproof seeds seeds.yaml --policy recipe-strict.yaml",
        "cd image && oloproof gate",
        "oloproof leakage check --training data/training.jsonl",
    ]
    # The repository's README starts with the same main job, after installing.
    first = (REPO / "README.md").read_text().split("```bash\n", 1)[1].splitlines()[0]
    assert first == "pip install . && " + readme_commands()[0]


def test_the_first_line_checks_leakage_and_gates_the_model_and_its_recipe(transcript: list[Done]) -> None:
    init = transcript[0]
    assert init.command == "oloproof init --example model-validation demo"
    assert init.code == 0 and "next: cd demo && oloproof leakage check --training data/training.jsonl --record" in init.out
    leakage = ran(transcript, "oloproof leakage check --training data/training.jsonl --record")
    assert leakage.code == 0
    assert "cases checked: 350; found in the training data: 0" in leakage.out
    assert "recorded: .oloproof/evidence/leakage/bccd6d14660f" in leakage.out
    gate = ran(transcript, "oloproof gate")
    assert gate.code == 4, gate.out
    out = gate.out
    assert "│ accurate           │ correct           │ 0.903    │ [0.867, 0.932]  │ >= 0.85   │ PASS " in out
    assert ("│ stable_under_noise │ flips_under_noise │ 0.020    │ [0.008, 0.041]  │ <= 0.05   │ INSUFFICIENT_EVIDENCE │ "
            "transform_declared │") in out
    assert "│ recipe_accurate    │ correct           │ 0.882    │ [0.832, 0.919]* │ >= 0.8    │ PASS " in out
    assert "leakage: clean: 350 cases checked against 5,000 rows of data/training.jsonl" in out
    assert "noise (numeric_noise on features; flips_under_noise): flip rate 0.020 (7/350 changed cases; 0 not applicable), declared" in out
    assert "Recipe across seeds: recipe loan-model: 5 checkpoint(s) (seed_1, seed_2, seed_3, seed_4, seed_5): 5 run now" in out
    assert len(re.findall(r"  seed_\d: run \S+ made now \(ok, 350/350 outputs\)", out)) == 5
    assert out.count("what this cannot tell:") == 1
    cannot = out.split("what this cannot tell:", 1)[1]
    for start in ("Perturbations nobody declared: only noise was tried", "Certified robustness",
                  "Leakage the training file does not show", "How the checkpoints were trained",
                  "Failures rarer than about once in 5 seeds"):
        assert f"  - {start}" in cannot
    assert "verdict: INSUFFICIENT_EVIDENCE  (exit 4; confidence 0.95)" in out


def test_the_seeds_command_reuses_the_gates_checkpoint_runs(transcript: list[Done]) -> None:
    seeds = ran(transcript, "oloproof seeds seeds.yaml --policy recipe.yaml --html seeds.html")
    assert seeds.code == 0, seeds.out
    assert re.findall(r"│ (seed_\d) +│ \S+ │ reused │ seed_\d +│ ok +│ (\d+\.\d%)", seeds.out) == [
        ("seed_1", "89.4%"), ("seed_2", "86.0%"), ("seed_3", "85.7%"), ("seed_4", "89.7%"), ("seed_5", "90.3%"),
    ]
    assert ("recipe_accurate: PASS  recipe loan-model across 5 seed(s) (89.4%, 86.0%, 85.7%, 89.7%, 90.3%): correct is "
            "0.882, 95% interval [0.832, 0.919]") in seeds.out
    assert "81 case(s) change verdict with the seed" in seeds.out
    assert "Leakage in the seed runs" in seeds.out
    strict = ran(transcript, "oloproof seeds seeds.yaml --policy recipe-strict.yaml")
    assert strict.code == 5 and "recipe_accurate: MANUAL_REVIEW" in strict.out and "[0.832, 0.919]" in strict.out


def test_the_image_project_fails_the_blur_and_finds_the_copied_image(transcript: list[Done]) -> None:
    gate = ran(transcript, "oloproof gate", occurrence=1)  # the second gate: in image/
    assert gate.code == 1, gate.out
    assert "│ stable_under_blur      │ flips_under_blur      │ 0.210    │ [0.156, 0.273] │ <= 0.05   │ FAIL " in gate.out
    assert "│ stable_under_occlusion │ flips_under_occlusion │ 0.205    │ [0.151, 0.268] │ <= 0.05   │ INSUFFICIENT_EVIDENCE" in gate.out
    assert "only blur and occlusion were tried" in gate.out
    leakage = ran(transcript, "oloproof leakage check --training data/training.jsonl")
    assert leakage.code == 4
    assert "images compared by their decoded pixels (mode, size, pixels), not their paths: image" in leakage.out
    assert "cases checked: 200; found in the training data: 1\n  img-042\n" in leakage.raw


def test_seeds_right_after_init_runs_the_checkpoints_itself(tmp_path: Path) -> None:
    done, cwd = run_line("oloproof init --example model-validation demo && cd demo && oloproof seeds seeds.yaml "
                         "--policy recipe.yaml", tmp_path)
    seeds = done[-1]
    assert seeds.code == 0, seeds.out
    assert len(re.findall(r"│ seed_\d +│ \S+ │ now  │", seeds.out)) == 5
    assert "correct is 0.882, 95% interval [0.832, 0.919] (crossed-anova-logit-t, approximate): it clears min 0.8." in seeds.out
    done, _ = run_line("oloproof seeds seeds.yaml --policy recipe-strict.yaml", cwd)
    assert done[-1].code == 5 and len(re.findall(r"│ reused │", done[-1].out)) == 5
