"""release.yaml: parsed once into typed objects; nothing downstream sees a raw dict.

Every error names the file, the line and the key path, and exits 2. Paths in the file are
relative to the directory that holds it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import orjson

from oloproof.errors import ConfigError, UsageError
from oloproof.evaluators import REGISTRY, Evaluator, SpecError
from oloproof.evaluators.base import Where
from oloproof.metamorphic import METAMORPHIC, MetamorphicSpec, build_metamorphic
from oloproof.policy import POLICY, Policy, build_policy
from oloproof.schema import AnyOf, Document, Obj, Prop, Scalar, Seq, Tagged, did_you_mean, validate_text
from oloproof.seeds import SEEDS, SeedsSpec, load_seeds_file, parse_seeds

SYSTEM = Obj(
    {
        "version": Prop(Scalar("str", nonempty=True), required=True, doc="Name recorded with every run of this system."),
        "command": Prop(
            AnyOf((Scalar("str", nonempty=True), Seq(Scalar("str"), min_items=1))),
            doc="Command that reads cases as JSONL on stdin and writes outputs as JSONL on stdout. "
            "Split like a shell would, but never run through one. Omit it to gate imported outputs only.",
        ),
        "timeout_s": Prop(Scalar("number", exclusive_minimum=0.0), default=600.0, doc="Time allowed for one batch."),
        "batch_size": Prop(Scalar("int", minimum=1), default=1000, doc="Cases per call of the command."),
    },
    doc="The system under test.",
)

TESTSET = Obj({"cases": Prop(Scalar("str", nonempty=True), required=True, doc="JSONL test set (the dev set).")})

HOLDOUT = Obj(
    {
        "cases": Prop(
            Scalar("str", nonempty=True), required=True,
            doc="JSONL holdout set. May name an environment variable as ${VAR} (e.g. a CI secret path).",
        ),
        "budget": Prop(Scalar("int", minimum=1), doc="How many reads the set may serve; `oloproof holdout status` suggests one."),
        "log": Prop(Scalar("str", nonempty=True), default="evals/holdout/READS.log", doc="Append-only log of every read."),
        "criterion": Prop(
            Scalar("str", nonempty=True),
            doc="Criterion the holdout score reads (default: the criterion of the policy's first rule).",
        ),
    },
    doc="The reserved holdout set, read only with a reason, against a budget.",
)

RELEASE = Obj(
    {
        "system": Prop(SYSTEM, required=True, doc="The system under test."),
        "testset": Prop(TESTSET, required=True, doc="The test set the gate decides on."),
        "leakage": Prop(
            Scalar("str", enum=("required", "optional")),
            doc="required: the gate is BLOCKED until a clean leakage check of this test set is recorded.",
        ),
        "evaluators": Prop(
            Seq(Tagged("type", {name: kind.schema for name, kind in REGISTRY.items()}), min_items=1,
                min_message="declare at least one evaluator"),
            required=True, doc="How outputs become per-case outcomes, each under a criterion.",
        ),
        "policy": Prop(AnyOf((Scalar("str", nonempty=True), POLICY)), required=True, doc="A path to a policy file, or the policy inline."),
        "holdout": Prop(HOLDOUT, doc="The reserved holdout set."),
        "metamorphic": Prop(METAMORPHIC, doc="Declared transforms: each case gets a transformed copy and relations compare outputs."),
        "seeds": Prop(
            AnyOf((Scalar("str", nonempty=True), SEEDS)),
            doc="The recipe check across seeds: a path to a seeds file, or the mapping inline. Its rule joins the gate.",
        ),
    },
    title="oloproof release.yaml",
    doc="What to gate, on which evidence, by which policy.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemSpec:
    version: str
    command: str | tuple[str, ...] | None
    timeout_s: float
    batch_size: int
    line: int | None

    @property
    def command_text(self) -> str | None:
        if self.command is None or isinstance(self.command, str):
            return self.command
        return " ".join(self.command)


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutSpec:
    cases: str  # as written, possibly with ${VAR}
    budget: int | None
    log: str
    criterion: str
    line: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Release:
    path: str  # as shown to people
    file: Path
    base_dir: Path
    system: SystemSpec
    testset_path: str
    leakage: Literal["required", "optional"] | None
    evaluators: tuple[Evaluator, ...]
    policy: Policy
    holdout: HoldoutSpec | None
    seeds: SeedsSpec | None
    document: Document
    metamorphic: MetamorphicSpec | None = None  # declared transforms (SPEC §5)
    digest: str  # "sha256:..." of the canonical release and policy content

    def resolve(self, relative: str) -> Path:
        path = Path(os.path.expanduser(relative))
        return path if path.is_absolute() else self.base_dir / path

    def criteria(self) -> dict[str, Evaluator]:
        return {evaluator.criterion: evaluator for evaluator in self.evaluators}

    def rule_line(self, rule_id: str) -> tuple[str, int | None]:
        """File and line where a rule is declared (for annotations)."""
        for rule in self.policy.rules:
            if rule.id == rule_id:
                return rule.source, rule.line
        return self.path, None


def read_text(file: Path, shown: str) -> str:
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{shown}: is a directory, expected a YAML file") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(shown, line, "", "not valid UTF-8") from None


def display_path(file: Path) -> str:
    """How a file is named to people: relative to the working directory when that is shorter."""
    try:
        relative = os.path.relpath(file)
    except ValueError:  # pragma: no cover - different drive on Windows
        return str(file)
    return relative if not relative.startswith("../../") else str(file)


def load_release(path: str | os.PathLike[str]) -> Release:
    file = Path(path).resolve()
    shown = display_path(Path(path)) if not Path(path).is_absolute() else str(path)
    text = read_text(file, shown)
    doc = validate_text(text, RELEASE, path=shown, empty_message="the file is empty; it needs system, testset, evaluators and policy")
    data = doc.data
    base_dir = file.parent

    policy_value = data["policy"]
    if isinstance(policy_value, str):
        policy_file = Path(os.path.expanduser(policy_value))
        policy_file = policy_file if policy_file.is_absolute() else base_dir / policy_file
        policy_shown = display_path(policy_file)
        if not policy_file.is_file():
            raise doc.error("policy", f"policy file not found: {policy_value}")
        policy_doc = validate_text(
            read_text(policy_file, policy_shown), POLICY, path=policy_shown,
            empty_message="the policy file is empty; it needs at least one rule",
        )
        policy = build_policy(policy_doc)
        policy_data: Any = policy_doc.data
    else:
        policy = build_policy(doc, prefix="policy")
        policy_data = policy_value

    evaluators = _build_evaluators(doc)
    metamorphic = build_metamorphic(doc, evaluators, policy)  # before rules: a mistyped transform is named first
    criteria = {evaluator.criterion for evaluator in evaluators}
    for rule in policy.rules:
        if rule.criterion not in criteria:
            raise ConfigError(
                rule.source, rule.line, f"{rule.key_path}.criterion",
                f"no evaluator provides criterion '{rule.criterion}'{did_you_mean(rule.criterion, criteria)}; "
                f"available: {', '.join(sorted(criteria))}",
            )

    system = data["system"]
    command = system["command"]
    holdout = data["holdout"]
    if holdout is not None and holdout["criterion"] is not None and holdout["criterion"] not in criteria:
        raise doc.error(
            "holdout.criterion",
            f"no evaluator provides criterion '{holdout['criterion']}'{did_you_mean(holdout['criterion'], criteria)}; "
            f"available: {', '.join(sorted(criteria))}",
        )
    seeds = _load_seeds(doc, base_dir)
    if seeds is not None:
        if seeds.rule.criterion not in criteria:
            raise ConfigError(
                seeds.source, seeds.rule.line, f"{seeds.rule.key_path}.criterion",
                f"no evaluator provides criterion '{seeds.rule.criterion}'{did_you_mean(seeds.rule.criterion, criteria)}; "
                f"available: {', '.join(sorted(criteria))}",
            )
        if seeds.rule.id in {rule.id for rule in policy.rules}:
            raise ConfigError(seeds.source, seeds.rule.line, f"{seeds.rule.key_path}.id", f"rule id '{seeds.rule.id}' is also a policy rule")
    digest_source: dict[str, Any] = {"release": data, "policy": policy_data}
    if seeds is not None:
        rule = seeds.rule
        digest_source["seeds"] = {
            "recipe": seeds.recipe, "checkpoints": list(seeds.checkpoints),
            "rule": [rule.id, rule.criterion, rule.kind, rule.threshold],
        }
    digest = "sha256:" + hashlib.sha256(orjson.dumps(digest_source, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return Release(
        path=shown, file=file, base_dir=base_dir,
        system=SystemSpec(
            version=system["version"], command=command if command is None or isinstance(command, str) else tuple(command),
            timeout_s=float(system["timeout_s"]), batch_size=int(system["batch_size"]), line=doc.line("system.command"),
        ),
        testset_path=data["testset"]["cases"],
        leakage=data["leakage"],
        evaluators=evaluators,
        policy=policy,
        seeds=seeds,
        metamorphic=metamorphic,
        holdout=None if holdout is None else HoldoutSpec(
            cases=holdout["cases"], budget=holdout["budget"], log=holdout["log"],
            criterion=holdout["criterion"] or policy.rules[0].criterion, line=doc.line("holdout"),
        ),
        document=doc,
        digest=digest,
    )


def _load_seeds(doc: Document, base_dir: Path) -> SeedsSpec | None:
    value = doc.data["seeds"]
    if value is None:
        return None
    if isinstance(value, dict):
        return parse_seeds(doc, "seeds")
    path = Path(os.path.expanduser(value))
    path = path if path.is_absolute() else base_dir / path
    if not path.is_file():
        raise doc.error("seeds", f"seeds file not found: {value}")
    return load_seeds_file(path, display_path(path))


def _build_evaluators(doc: Document) -> tuple[Evaluator, ...]:
    built: list[Evaluator] = []
    seen: dict[str, str] = {}
    for index, values in enumerate(doc.data["evaluators"]):
        key_path = f"evaluators[{index}]"
        kind = REGISTRY[values["type"]]
        where = Where(file=doc.path, line=doc.line(key_path), key_path=key_path, type=values["type"])
        try:
            evaluator = kind.build(values, where)
        except SpecError as err:
            raise doc.error(f"{key_path}.{err.key}", err.message) from None
        if evaluator.criterion in seen:
            raise doc.error(
                f"{key_path}.criterion",
                f"criterion '{evaluator.criterion}' is already produced by {seen[evaluator.criterion]}; give this evaluator its own criterion",
            )
        seen[evaluator.criterion] = key_path
        built.append(evaluator)
    return tuple(built)
