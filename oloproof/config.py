"""release.yaml: parsed once into typed objects; nothing downstream sees a raw dict.

Every error names the file, the line and the key path, and exits 2. Paths in the file are
relative to the directory that holds it.
"""

from __future__ import annotations

import hashlib
import os
import shlex
from collections.abc import Callable
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
        return resolve_path(self.base_dir, relative)

    def criteria(self) -> dict[str, Evaluator]:
        return {evaluator.criterion: evaluator for evaluator in self.evaluators}



def read_text(file: Path, shown: str) -> str:
    try:
        raw = file.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{shown}: file not found") from None
    except IsADirectoryError:
        raise UsageError(f"{shown}: is a directory, expected a YAML file") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read it ({exc.strerror or exc})") from None
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
        policy_file = resolve_path(base_dir, policy_value)
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
    by_criterion = {evaluator.criterion: evaluator for evaluator in evaluators}
    for rule in policy.rules:
        evaluator = require_criterion(by_criterion, rule.criterion, rule.source, rule.line, f"{rule.key_path}.criterion")
        if rule.method != "exact" and evaluator.type in PASS_FAIL_TYPES:
            raise ConfigError(
                rule.source, rule.line, f"{rule.key_path}.method",
                f"method {rule.method} applies to score criteria; '{rule.criterion}' ({evaluator.type}) is pass/fail "
                "and always uses the exact Clopper-Pearson interval",
            )

    system = data["system"]
    command = system["command"]
    if isinstance(command, str):
        check_command(command, lambda message: doc.error("system.command", message))
    holdout = data["holdout"]
    if holdout is not None and holdout["criterion"] is not None:
        require_criterion(by_criterion, holdout["criterion"], doc.path, doc.line("holdout.criterion"), "holdout.criterion", single_run=True)
    seeds = _load_seeds(doc, base_dir)
    if seeds is not None:
        rule = seeds.rule
        require_criterion(by_criterion, rule.criterion, seeds.source, rule.line, f"{rule.key_path}.criterion", single_run=True)
        if rule.id in {policy_rule.id for policy_rule in policy.rules}:
            raise ConfigError(seeds.source, rule.line, f"{rule.key_path}.id", f"rule id '{rule.id}' is also a policy rule")
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


# Evaluator types whose outcomes are always pass/fail (a judge may grade with scores).
PASS_FAIL_TYPES = frozenset({"label_match", "within_tolerance", "regex", "contains", "metamorphic_relation"})


def resolve_path(base_dir: Path, value: str) -> Path:
    """A path from a config file: ``~`` expanded, relative to the file's directory."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base_dir / path


def check_command(command: str, error: Callable[[str], Exception]) -> None:
    """Split a command string now, so a quoting mistake is a config error, not a crash later."""
    try:
        if not shlex.split(command):
            raise error("the command is empty")
    except ValueError as exc:
        raise error(f"cannot split the command: {exc}") from None


def require_criterion(
    by_criterion: dict[str, Evaluator], criterion: str, source: str, line: int | None, key_path: str, *, single_run: bool = False
) -> Evaluator:
    """The evaluator producing ``criterion``, or a config error at ``key_path``.

    ``single_run``: the reader scores one run on its own (a holdout read, a seed checkpoint), so a
    criterion that compares a run with its transformed copies cannot serve it.
    """
    evaluator = by_criterion.get(criterion)
    if evaluator is None:
        raise ConfigError(
            source, line, key_path,
            f"no evaluator provides criterion '{criterion}'{did_you_mean(criterion, by_criterion)}; "
            f"available: {', '.join(sorted(by_criterion))}",
        )
    if single_run and evaluator.type == "metamorphic_relation":
        raise ConfigError(
            source, line, key_path,
            f"criterion '{criterion}' compares outputs on transformed copies, so it cannot score a single run here",
        )
    return evaluator


def _load_seeds(doc: Document, base_dir: Path) -> SeedsSpec | None:
    value = doc.data["seeds"]
    if value is None:
        return None
    if isinstance(value, dict):
        return parse_seeds(doc, "seeds")
    path = resolve_path(base_dir, value)
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
