"""release.yaml: parsed once into typed objects; nothing downstream sees a raw dict.

Every error names the file, the line and the key path, and exits 2. Paths in the file are
relative to the directory that holds it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from oloproof.errors import ConfigError
from oloproof.evaluators.base import Evaluator, SpecError, Where
from oloproof.evaluators.registry import REGISTRY, kind_of
from oloproof.files import display_path, read_text
from oloproof.fingerprint import artifact_paths, artifact_problem
from oloproof.holdout.spec import HOLDOUT, HoldoutSpec, build_holdout, expanded
from oloproof.jsonl import canonical
from oloproof.leakage.spec import LEAKAGE, LeakagePolicy, leakage_policy
from oloproof.measures.spec import check_output_rules, reads_outputs
from oloproof.metamorphic.spec import METAMORPHIC, MetamorphicSpec, build_metamorphic
from oloproof.policy import POLICY, Policy, Rule, build_policy
from oloproof.schema import AnyOf, Document, Obj, Prop, Scalar, Seq, Tagged, did_you_mean, validate_text
from oloproof.seeds.spec import (
    SEEDS,
    SeedsSpec,
    check_against_baselines,
    check_against_system,
    load_seeds_file,
    parse_seeds,
)
from oloproof.system import SYSTEM, SystemSpec, build_system
from oloproof.testset import TESTSET

RELEASE = Obj(
    {
        "system": Prop(SYSTEM, required=True, doc="The system under test."),
        "testset": Prop(TESTSET, required=True, doc="The test set the gate decides on."),
        "leakage": LEAKAGE,
        "evaluators": Prop(
            Seq(
                Tagged("type", {name: kind.schema for name, kind in REGISTRY.items()}),
                min_items=1,
                min_message="declare at least one evaluator",
            ),
            required=True,
            doc="How outputs become per-case outcomes, each under a criterion.",
        ),
        "policy": Prop(
            AnyOf((Scalar("str", nonempty=True), POLICY)),
            required=True,
            doc="A path to a policy file, or the policy inline.",
        ),
        "holdout": Prop(HOLDOUT, doc="The reserved holdout set."),
        "metamorphic": Prop(
            METAMORPHIC, doc="Declared transforms: each case gets a transformed copy and relations compare outputs."
        ),
        "seeds": Prop(
            AnyOf((Scalar("str", nonempty=True), SEEDS)),
            doc="The recipe check across seeds: a path to a seeds file, or the mapping inline. "
            "Its rule joins the gate.",
        ),
    },
    title="oloproof release.yaml",
    doc="What to gate, on which evidence, by which policy.",
)


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
    policy_file: Path | None = None  # when the policy is a file of its own
    seeds_file: Path | None = None  # when seeds: names a file
    leakage_policy: LeakagePolicy = field(default_factory=lambda: LeakagePolicy(mode=None))  # near-duplicates too

    def input_files(self, environ: Mapping[str, str] | None = None) -> list[Path]:
        """Every file this configuration reads: release.yaml, the policy and seeds files, the test
        set, the holdout (when its path can be known here), labels files, and the system's files.
        No report may be written over any of them."""
        files = [self.file, self.resolve(self.testset_path)]
        files += [path for path in (self.policy_file, self.seeds_file) if path is not None]
        if self.holdout is not None:
            files.append(self.resolve(self.holdout.log))
            cases = expanded(self.holdout.cases, os.environ if environ is None else environ)
            if cases is not None:
                files.append(self.resolve(cases))
        for evaluator in self.evaluators:
            labels = getattr(evaluator, "labels", None)
            if isinstance(labels, str):
                files.append(self.resolve(labels))
            command = getattr(evaluator, "command", None)  # a judge's script is an input too
            if isinstance(command, (str, tuple)):
                files += list(self.system.files(self.base_dir, command))
        if self.metamorphic is not None:
            files += [self.resolve(spec.labels) for spec in self.metamorphic.transforms if spec.labels is not None]
        files += list(self.system.files(self.base_dir))
        if self.seeds is not None:
            files += checkpoint_files(self.seeds, self.system, self.base_dir)
        return files

    def resolve(self, relative: str) -> Path:
        return resolve_path(self.base_dir, relative)

    def criteria(self) -> dict[str, Evaluator]:
        return {evaluator.criterion: evaluator for evaluator in self.evaluators}


def load_release(path: str | os.PathLike[str]) -> Release:
    file = Path(path).resolve()
    shown = display_path(Path(path)) if not Path(path).is_absolute() else str(path)
    text = read_text(file, shown)
    doc = validate_text(
        text, RELEASE, path=shown, empty_message="the file is empty; it needs system, testset, evaluators and policy"
    )
    data = doc.data
    base_dir = file.parent

    policy, policy_data, policy_file = _load_policy(doc, base_dir)
    evaluators = _build_evaluators(doc)
    metamorphic = build_metamorphic(doc, evaluators, policy)  # before rules: a mistyped transform is named first
    by_criterion = {evaluator.criterion: evaluator for evaluator in evaluators}
    check_output_rules(policy.rules, by_criterion)
    for rule in policy.rules:
        if reads_outputs(rule):
            continue  # a built-in measure over the outputs (oloproof.measures.spec), checked above
        evaluator = require_criterion(
            by_criterion, rule.criterion, rule.source, rule.line, f"{rule.key_path}.criterion"
        )
        judged = kind_of(evaluator).judged
        if not judged and (rule.method == "ppi" or rule.measure is not None):
            key, value = ("method", "ppi") if rule.method == "ppi" else ("measure", rule.measure)
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.{key}",
                f"{key} {value} applies to judge criteria only; '{rule.criterion}' ({evaluator.type}) has no judge",
            )
        if judged and rule.method in ("t", "bca"):
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.method",
                f"method {rule.method} does not carry a judge's errors; a rule on '{rule.criterion}' (judge) takes "
                "method exact (double sampling) or ppi (prediction-powered, approximate)",
            )
        if rule.method != "exact" and kind_of(evaluator).pass_fail:
            raise ConfigError(
                rule.source,
                rule.line,
                f"{rule.key_path}.method",
                f"method {rule.method} applies to score criteria; '{rule.criterion}' ({evaluator.type}) is pass/fail "
                "and always uses the exact Clopper-Pearson interval",
            )

    system = build_system(
        data["system"], line=doc.line("system.command"), error=lambda message: doc.error("system.command", message)
    )
    for index, artifact in enumerate(system.artifacts):
        if (problem := artifact_problem(base_dir, artifact)) is not None:
            raise doc.error(f"system.artifacts[{index}]", f"{artifact}: {problem} (relative to {doc.path})")
    holdout = data["holdout"]
    for key in ("cases", "log") if holdout is not None else ():
        if "\0" in holdout[key]:  # no file can have that name: refused here, not by the OS later
            raise doc.error(f"holdout.{key}", "a path cannot contain a NUL byte")
    if holdout is not None and holdout["criterion"] is not None:
        require_criterion(
            by_criterion,
            holdout["criterion"],
            doc.path,
            doc.line("holdout.criterion"),
            "holdout.criterion",
            single_run=True,
        )
    seeds = _load_seeds(doc, base_dir)
    if seeds is not None:
        check_seeds(seeds, by_criterion=by_criterion, system=system, base_dir=base_dir, rules=policy.rules)
        rule = seeds.rule
        if rule.id in {policy_rule.id for policy_rule in policy.rules}:
            raise ConfigError(
                seeds.source, rule.line, f"{rule.key_path}.id", f"rule id '{rule.id}' is also a policy rule"
            )
    digest_source: dict[str, Any] = {"release": data, "policy": policy_data}
    if seeds is not None:
        rule = seeds.rule
        digest_source["seeds"] = {
            "recipe": seeds.recipe,
            "checkpoints": seeds.digest_source(),
            "rule": [rule.id, rule.criterion, rule.kind, rule.threshold],
        }
    digest = "sha256:" + hashlib.sha256(canonical(digest_source)).hexdigest()
    return Release(
        path=shown,
        file=file,
        base_dir=base_dir,
        system=system,
        testset_path=data["testset"]["cases"],
        leakage=leakage_policy(data["leakage"]).mode,
        leakage_policy=leakage_policy(data["leakage"]),
        evaluators=evaluators,
        policy=policy,
        seeds=seeds,
        metamorphic=metamorphic,
        holdout=None
        if holdout is None
        else build_holdout(holdout, default_criterion=_holdout_default(doc, policy, holdout), line=doc.line("holdout")),
        document=doc,
        digest=digest,
        policy_file=policy_file,
        seeds_file=None if not isinstance(data["seeds"], str) else resolve_path(base_dir, data["seeds"]),
    )


def _holdout_default(doc: Document, policy: Policy, holdout: dict[str, Any]) -> str:
    """The holdout's criterion when none is given: the first rule's that an evaluator produces (a
    built-in measure such as auc or a quantile is not a holdout score)."""
    found = next((rule.criterion for rule in policy.rules if not reads_outputs(rule)), None)
    if holdout["criterion"] is None and found is None:
        raise doc.error(
            "holdout",
            "holdout needs criterion: every rule reads a built-in measure (auc, mae, rmse, a quantile), and the "
            "holdout score reads an evaluator's criterion",
        )
    return found or ""


def check_seeds(
    seeds: SeedsSpec,
    *,
    by_criterion: dict[str, Evaluator],
    system: SystemSpec,
    base_dir: Path,
    rules: tuple[Rule, ...] = (),
) -> None:
    """What a seeds block can only be checked against release.yaml for, before any checkpoint runs:
    its rule's criterion exists and scores one run, a command checkpoint's version is not the gated
    system's (run by another command) nor a regression rule's baseline version (``rules``), its
    artifacts exist."""
    rule = seeds.rule
    require_criterion(
        by_criterion, rule.criterion, seeds.source, rule.line, f"{rule.key_path}.criterion", single_run=True
    )
    check_against_system(seeds, system_version=system.version, system_command=system.command_text)
    check_against_baselines(seeds, rules)
    for cp in seeds.checkpoints:
        for index, artifact in enumerate(cp.artifacts):
            if (problem := artifact_problem(base_dir, artifact)) is not None:
                raise ConfigError(
                    cp.source,
                    cp.line,
                    f"{cp.key_path}.artifacts[{index}]",
                    f"{artifact}: {problem} (relative to the directory of release.yaml)",
                )


def checkpoint_files(seeds: SeedsSpec, system: SystemSpec, base_dir: Path) -> list[Path]:
    """The files the command checkpoints run with: what their commands name, and their artifacts."""
    files: list[Path] = []
    for cp in seeds.checkpoints:
        if cp.command is not None:
            files += system.files(base_dir, cp.command)
        files += [path for artifact in cp.artifacts for path in artifact_paths(base_dir, artifact)]
    return files


def resolve_path(base_dir: Path, value: str) -> Path:
    """A path from a config file: ``~`` expanded, relative to the file's directory."""
    path = Path(os.path.expanduser(value))
    return path if path.is_absolute() else base_dir / path


def require_criterion(
    by_criterion: dict[str, Evaluator],
    criterion: str,
    source: str,
    line: int | None,
    key_path: str,
    *,
    single_run: bool = False,
) -> Evaluator:
    """The evaluator producing ``criterion``, or a config error at ``key_path``.

    ``single_run``: the reader scores one run on its own (a holdout read, a seed checkpoint), so a
    criterion that compares a run with its transformed copies cannot serve it.
    """
    evaluator = by_criterion.get(criterion)
    if evaluator is None:
        raise ConfigError(
            source,
            line,
            key_path,
            f"no evaluator provides criterion '{criterion}'{did_you_mean(criterion, by_criterion)}; "
            f"available: {', '.join(sorted(by_criterion))}",
        )
    if single_run and kind_of(evaluator).needs_variants:
        raise ConfigError(
            source,
            line,
            key_path,
            f"criterion '{criterion}' compares outputs on transformed copies, so it cannot score a single run here",
        )
    return evaluator


def _load_policy(doc: Document, base_dir: Path) -> tuple[Policy, Any, Path | None]:
    """The policy, from its own file or inline, its raw data (for the config digest), its file."""
    value = doc.data["policy"]
    if not isinstance(value, str):
        return build_policy(doc, prefix="policy"), value, None
    policy_file = resolve_path(base_dir, value)
    policy_shown = display_path(policy_file)
    if not policy_file.is_file():
        raise doc.error("policy", f"policy file not found: {value}")
    policy_doc = validate_text(
        read_text(policy_file, policy_shown),
        POLICY,
        path=policy_shown,
        empty_message="the policy file is empty; it needs at least one rule",
    )
    return build_policy(policy_doc), policy_doc.data, policy_file


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
                f"criterion '{evaluator.criterion}' is already produced by {seen[evaluator.criterion]}; give this "
                f"evaluator its own criterion",
            )
        seen[evaluator.criterion] = key_path
        built.append(evaluator)
    return tuple(built)
