"""The ``seeds:`` section of release.yaml, or a seeds file: the recipe, its checkpoints, its rule.

A checkpoint is declared either by a **ref** to a stored run (``seed_1: version:seed_1``,
``latest~4``, a run id), or by the **command** that runs it::

    seed_1: {command: python model/predict.py --weights model/seeds/seed_1.npz}

A declared command is run like ``oloproof run --version seed_1 --command "..."`` when no stored
run of that version can stand in for it (the gate's own reuse rules), and its run is stored.

A seeds file holds the block flat (``recipe:``, ``checkpoints:``, ``rule:``) or as the guide
prints it, under one top-level ``seeds:`` key.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import yaml

from oloproof.errors import ConfigError
from oloproof.files import read_text
from oloproof.policy import RULE, Rule, build_rule
from oloproof.schema import AnyOf, Document, MapOf, Obj, Prop, Scalar, Seq, compose, validate_text
from oloproof.system import check_command

CHECKPOINT = Obj(
    {
        "command": Prop(
            Scalar("str", nonempty=True),
            required=True,
            doc="Command that runs this checkpoint on the test set (JSONL in, JSONL out, like system.command), "
            "from the directory of release.yaml. Run when no stored run of its version can stand in for it.",
        ),
        "version": Prop(
            Scalar("str", nonempty=True),
            doc="System version its run is recorded as (default: the checkpoint's name).",
        ),
        "timeout_s": Prop(
            Scalar("number", exclusive_minimum=0.0),
            doc="Time allowed for one batch (default: system.timeout_s).",
        ),
        "artifacts": Prop(
            Seq(Scalar("str", nonempty=True)),
            doc="Files the checkpoint runs with that its command line does not name; with system.artifacts and "
            "the files the command names, they make its run's fingerprint.",
        ),
    },
    doc="A checkpoint declared by the command that runs it.",
)

SEEDS = Obj(
    {
        "recipe": Prop(Scalar("str", nonempty=True), required=True, doc="Name of the training recipe."),
        "checkpoints": Prop(
            MapOf(AnyOf((Scalar("str", nonempty=True), CHECKPOINT)), min_items=1),
            required=True,
            doc="Checkpoint name -> a run ref (latest~N, version:NAME, a run id) or {command, version, timeout_s, "
            "artifacts}, one per seed.",
        ),
        "rule": Prop(RULE, required=True, doc="The recipe's rule: a min or max on one pass/fail criterion."),
    },
    title="oloproof seeds",
    doc="The recipe check across seeds.",
)

WRAPPED = Obj({"seeds": Prop(SEEDS, required=True, doc="The seeds block, as the guide prints it.")})


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointSpec:
    """One checkpoint as declared: a ref to a stored run, or a command (with the version its run
    is recorded as)."""

    name: str
    ref: str | None  # a stored run's ref; None for a command checkpoint
    command: str | None
    version: str | None  # a command checkpoint's version (default: its name)
    timeout_s: float | None  # None: system.timeout_s
    artifacts: tuple[str, ...]
    source: str  # the file it is declared in
    line: int | None
    key_path: str

    @property
    def declared(self) -> str:
        """How it is shown: the ref, or the command."""
        return self.ref if self.ref is not None else f"{self.command}"


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedsSpec:
    recipe: str
    checkpoints: tuple[CheckpointSpec, ...]  # in the order written
    rule: Rule
    source: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(checkpoint.name for checkpoint in self.checkpoints)

    def digest_source(self) -> list[Any]:
        """What the config digest commits to, per checkpoint."""
        return [
            [cp.name, cp.ref] if cp.ref is not None else [cp.name, cp.command, cp.version, cp.timeout_s, cp.artifacts]
            for cp in self.checkpoints
        ]


def parse_seeds(doc: Document, prefix: str = "") -> SeedsSpec:
    data = doc.data if not prefix else doc.data[prefix]
    dot = f"{prefix}." if prefix else ""
    rule = build_rule(doc, data["rule"], f"{dot}rule")
    if rule.kind == "regression":
        raise doc.error(f"{dot}rule", "the recipe rule takes min or max, not a baseline")
    if rule.where or rule.per is not None:  # the crossed interval is over every case
        which = "where" if rule.where else "per"
        raise doc.error(f"{dot}rule.{which}", f"{which}: is not supported on the recipe rule; write it in the policy")
    checkpoints: list[CheckpointSpec] = []
    versions: dict[str, str] = {}
    for name, value in data["checkpoints"].items():
        key_path = f"{dot}checkpoints.{name}"
        if isinstance(value, str):
            checkpoints.append(
                CheckpointSpec(
                    name=name,
                    ref=value,
                    command=None,
                    version=None,
                    timeout_s=None,
                    artifacts=(),
                    source=doc.path,
                    line=doc.line(key_path),
                    key_path=key_path,
                )
            )
            continue
        check_command(value["command"], partial(doc.error, f"{key_path}.command"))
        version = value["version"] or name
        if version in versions:
            raise doc.error(
                f"{key_path}.version" if value["version"] else key_path,
                f"checkpoints {versions[version]} and {name} are both version '{version}': each checkpoint must map "
                "to its own system version",
            )
        versions[version] = name
        checkpoints.append(
            CheckpointSpec(
                name=name,
                ref=None,
                command=value["command"],
                version=version,
                timeout_s=None if value["timeout_s"] is None else float(value["timeout_s"]),
                artifacts=tuple(value["artifacts"] or ()),
                source=doc.path,
                line=doc.line(key_path),
                key_path=key_path,
            )
        )
    return SeedsSpec(recipe=data["recipe"], checkpoints=tuple(checkpoints), rule=rule, source=doc.path)


def _is_wrapped(text: str, shown: str) -> bool:
    """Whether the file holds the block under a top-level ``seeds:`` key (as the guide prints it)."""
    node = compose(text, shown)
    return isinstance(node, yaml.MappingNode) and any(
        isinstance(key, yaml.ScalarNode) and key.value == "seeds" for key, _ in node.value
    )


def load_seeds_file(path: Path, shown: str) -> SeedsSpec:
    text = read_text(path, shown)
    wrapped = _is_wrapped(text, shown)
    doc = validate_text(text, WRAPPED if wrapped else SEEDS, path=shown, empty_message="the seeds file is empty")
    return parse_seeds(doc, "seeds" if wrapped else "")


def check_against_system(spec: SeedsSpec, *, system_version: str, system_command: str | None) -> None:
    """A command checkpoint recorded as the gated system's own version, but run by another command,
    would make the gate and the checkpoint replace each other's runs: refused, at its line."""
    for cp in spec.checkpoints:
        if cp.command is not None and cp.version == system_version and cp.command != system_command:
            raise ConfigError(
                cp.source,
                cp.line,
                cp.key_path,
                f"version '{cp.version}' is system.version in release.yaml, run by another command; give the "
                "checkpoint a version of its own",
            )


def version_named(ref: str) -> str | None:
    """The version a ``version:NAME`` or ``version:NAME~N`` ref names, else None."""
    text = ref.strip()
    if not text.startswith("version:"):
        return None
    name = text[len("version:") :]
    head, tilde, back = name.rpartition("~")
    return head if tilde and back.isdigit() and head else name


def baseline_label(rule: Rule) -> str:
    where = f"{rule.source}:{rule.line}" if rule.line is not None else rule.source
    return f"the baseline of rule {rule.id} ({where}: {rule.key_path}.baseline: {rule.baseline})"


def check_against_baselines(spec: SeedsSpec, rules: tuple[Rule, ...]) -> None:
    """A checkpoint may not be the version a regression rule's ``baseline: version:NAME`` names: a
    command checkpoint's run would become the baseline (and the baseline run a seed). Refused at the
    checkpoint's line; a baseline named otherwise (a run id, ``latest~N``) is checked once resolved."""
    for rule in rules:
        name = version_named(rule.baseline) if rule.baseline is not None else None
        if name is None:
            continue
        for cp in spec.checkpoints:
            version = cp.version if cp.ref is None else version_named(cp.ref)
            if version == name:
                raise ConfigError(cp.source, cp.line, cp.key_path, baseline_clash(version, rule))


def baseline_clash(version: str, rule: Rule) -> str:
    return (
        f"version '{version}' is {baseline_label(rule)}: a seed checkpoint may not be the regression baseline's "
        "version (a seed's run would stand in for the baseline, or the baseline for a seed); give the checkpoint "
        "a version of its own"
    )
