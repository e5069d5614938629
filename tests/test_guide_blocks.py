"""The guide's YAML works as printed (tests/fixtures/guide_blocks/: each block of the guide page,
copied byte for byte). Each is fed to the parser that reads it — release.yaml, a seeds file, a
policy — and then run through the CLI on the model-validation example, where the page says what
it does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oloproof.cli.main import main as cli
from oloproof.config import load_release
from oloproof.errors import ExitCode
from oloproof.policy import POLICY, build_policy
from oloproof.schema import validate_text
from oloproof.seeds.spec import load_seeds_file

BLOCKS = Path(__file__).parent / "fixtures" / "guide_blocks"

# The smallest release.yaml around a fragment: the example's system and test set, and a policy.
WRAPPER = """\
system:
  version: loan-model-v3
  command: python model/predict.py --weights model/weights.npz
testset:
  cases: data/test.jsonl
policy:
  rules:
    - {RULE}
"""


def block(name: str) -> str:
    return (BLOCKS / name).read_text(encoding="utf-8")


@pytest.fixture()
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    target = tmp_path / "demo"
    assert cli(["init", "--example", "model-validation", str(target)]) == 0
    monkeypatch.chdir(target)
    return target


def rules(path: Path) -> dict[str, dict[str, Any]]:
    return {rule["id"]: rule for rule in json.loads(path.read_text())["rules"]}


def test_every_block_is_a_fixture_with_its_source_named() -> None:
    names = sorted(path.name for path in BLOCKS.glob("*.yaml"))
    assert names == [
        "leakage_required.yaml",
        "policy_allows_approximate.yaml",
        "predictions_under_noise.yaml",
        "recipe_across_seeds.yaml",
    ]
    for name in names:
        assert block(name).startswith("# From the guide page") or block(name).startswith("# The policy the guide page")
        assert "000_05930c149c6205b9" in block(name)


def test_the_noise_block_and_leakage_required_are_a_release_yaml_that_gates_as_the_page_says(
    demo: Path, tmp_path: Path
) -> None:
    rule = "{id: stable_under_noise, criterion: flips_under_noise, max: 0.05}"
    text = WRAPPER.replace("{RULE}", rule) + block("leakage_required.yaml") + block("predictions_under_noise.yaml")
    (demo / "release.yaml").write_text(text)
    release = load_release("release.yaml")
    assert release.leakage == "required"
    assert release.metamorphic is not None and [t.name for t in release.metamorphic.transforms] == ["noise"]
    assert [e.criterion for e in release.evaluators] == ["flips_under_noise"]
    # "the gate is blocked (exit 3) until a clean check of this test set has been recorded"
    assert cli(["gate", "--json", str(tmp_path / "blocked.json")]) == ExitCode.BLOCKED
    assert cli(["leakage", "check", "--training", "data/training.jsonl", "--record", "-q"]) == ExitCode.PASS
    # "a rule based on it comes out INSUFFICIENT_EVIDENCE with transform_declared"
    assert cli(["gate", "--json", str(tmp_path / "gate.json")]) == ExitCode.INSUFFICIENT_EVIDENCE
    noise = rules(tmp_path / "gate.json")["stable_under_noise"]
    assert noise["verdict"] == "INSUFFICIENT_EVIDENCE" and noise["reasons"] == ["transform_declared"]


def test_the_seeds_block_is_a_seeds_file_as_printed(demo: Path, tmp_path: Path) -> None:
    spec = load_seeds_file(BLOCKS / "recipe_across_seeds.yaml", "recipe_across_seeds.yaml")
    assert spec.recipe == "loan-model" and spec.names == ("seed_1", "seed_2", "seed_3", "seed_4", "seed_5")
    assert [cp.ref for cp in spec.checkpoints] == ["latest~4", "latest~3", "latest~2", "latest~1", "latest"]
    assert spec.rule.id == "recipe_accurate" and spec.rule.threshold == 0.8
    # "Train k checkpoints with k seeds, run each on the same test set, and name those runs"
    for k in range(1, 6):
        command = f"python model/predict.py --weights model/seeds/seed_{k}.npz"
        assert cli(["run", "--version", f"seed_{k}", "--command", command, "-q"]) == 0
    (demo / "guide-seeds.yaml").write_text(block("recipe_across_seeds.yaml"))
    (demo / "guide-policy.yaml").write_text(block("policy_allows_approximate.yaml"))
    out = tmp_path / "seeds.json"
    assert cli(["seeds", "guide-seeds.yaml", "--policy", "guide-policy.yaml", "--json", str(out)]) == ExitCode.PASS
    data = json.loads(out.read_text())
    assert [cp["version"] for cp in data["checkpoints"]] == ["seed_1", "seed_2", "seed_3", "seed_4", "seed_5"]
    interval = data["rule"]["interval"]
    assert [round(100 * interval[key], 1) for key in ("estimate", "low", "high")] == [88.2, 83.2, 91.9]


def test_the_seeds_block_pasted_into_release_yaml_is_its_seeds_section(demo: Path) -> None:
    text = WRAPPER.replace("{RULE}", "{id: accurate, criterion: correct, min: 0.85}")
    text += "evaluators:\n  - {type: label_match, field: label}\n" + block("recipe_across_seeds.yaml")
    (demo / "release.yaml").write_text(text)
    release = load_release("release.yaml")
    assert release.seeds is not None and release.seeds.names[0] == "seed_1"
    assert release.seeds.source == "release.yaml" and release.seeds.rule.line == text.splitlines().index(
        "  rule: {id: recipe_accurate, criterion: correct, min: 0.8}"
    ) + 1


def test_the_policy_the_page_describes_parses() -> None:
    policy = build_policy(
        validate_text(block("policy_allows_approximate.yaml"), POLICY, path="policy.yaml", empty_message="empty")
    )
    assert policy.allow_approximate_methods is True and [rule.id for rule in policy.rules] == ["recipe_accurate"]


def test_a_wrapped_seeds_file_with_a_typo_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "seeds.yaml"
    path.write_text(block("recipe_across_seeds.yaml").replace("  rule:", "  rules:"))
    from oloproof.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        load_seeds_file(path, "seeds.yaml")
    assert str(caught.value) == (
        "seeds.yaml:5: seeds.rules: unknown key (did you mean 'rule'?); allowed keys: checkpoints, recipe, rule"
    )
