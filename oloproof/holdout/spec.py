"""The ``holdout:`` section of release.yaml: where the reserved set and its read log live."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from oloproof.schema import Obj, Prop, Scalar

HOLDOUT = Obj(
    {
        "cases": Prop(
            Scalar("str", nonempty=True),
            required=True,
            doc="JSONL holdout set. May name an environment variable as ${VAR} (e.g. a CI secret path).",
        ),
        "budget": Prop(
            Scalar("int", minimum=1), doc="How many reads the set may serve; `oloproof holdout status` suggests one."
        ),
        "log": Prop(
            Scalar("str", nonempty=True), default="evals/holdout/READS.log", doc="Append-only log of every read."
        ),
        "criterion": Prop(
            Scalar("str", nonempty=True),
            doc="Criterion the holdout score reads (default: the criterion of the policy's first rule).",
        ),
    },
    doc="The reserved holdout set, read only with a reason, against a budget.",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class HoldoutSpec:
    cases: str  # as written, possibly with ${VAR}
    budget: int | None
    log: str
    criterion: str
    line: int | None


def build_holdout(values: dict[str, Any], *, default_criterion: str, line: int | None) -> HoldoutSpec:
    return HoldoutSpec(
        cases=values["cases"],
        budget=values["budget"],
        log=values["log"],
        criterion=values["criterion"] or default_criterion,
        line=line,
    )


VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expanded(cases: str, environ: Mapping[str, str]) -> str | None:
    """``holdout.cases`` with every ``${VAR}`` taken from ``environ``; None when one is unset or empty."""
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        found = environ.get(match[1], "")
        missing = missing or not found
        return found

    text = VARIABLE.sub(value, cases)
    return None if missing else text
