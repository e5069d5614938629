"""The Verifiers v1 wrapper: a thin Taskset over the core in episode.py.

``TaskData`` is copied onto every trace, so it holds only public facts: the split, the index,
the prompt (sample records), the identity and, for ``private_eval``, the secret's commitment —
never a private seed. Scoring re-derives the task seed (from the secret, checked against that
commitment, for ``private_eval``), runs the rules in a worker thread so the event loop keeps
serving other rollouts, and records under ``trace.info``: ``environment`` (the identity,
recomputed at scoring), ``redaction_errors``, ``redaction`` (scores and counts) and
``task_seed`` (revealed only here, in the completed trace).

A missing or wrong private secret, or sources that changed between load and scoring, raise:
the trace errors and carries no reward, instead of a silent 0.0.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, Literal

import verifiers.v1 as vf

from redaction_pressure.episode import EpisodeResult, build, score_reply
from redaction_pressure.identity import identity
from redaction_pressure.oracle import oracle_reply
from redaction_pressure.reward import WEIGHTS
from redaction_pressure.splits import HOLDOUT_START, PRIVATE_SPLIT, PUBLIC_SPLITS, TaskRef, task_ref, task_seed

DEFAULT_TASKS = {"train": 1000, "dev": PUBLIC_SPLITS["dev"].size, "private_eval": 64}


class RedactionData(vf.TaskData):
    split: str
    index: int
    secret_commitment: str | None = None
    environment: dict[str, Any]


class RedactionConfig(vf.TasksetConfig):
    split: Literal["train", "dev", "private_eval"] = "dev"
    """Which split to load (``--env.taskset.split``)."""
    start: int = 0
    """First task index."""
    num_tasks: int | None = None
    """How many tasks; default: all 64 of dev, 1000 of train, 64 of private_eval (indices below
    500,000 only: from there on private_eval is the Oloproof holdout, refused here)."""


class RedactionTask(vf.Task[RedactionData]):
    @property
    def key(self) -> str:
        return f"{self.data.split}-{self.data.index:04d}"

    def ref(self) -> TaskRef:
        return TaskRef(split=self.data.split, index=self.data.index, secret_commitment=self.data.secret_commitment)

    @vf.stop
    async def one_turn(self, trace: vf.Trace) -> bool:
        return trace.num_turns >= 1

    async def validate(self, runtime: Any = None) -> bool | None:
        """The gold check (``vf-validate``): the oracle rules score exactly 1.0."""
        result = await asyncio.to_thread(score_reply, self.ref(), oracle_reply(task_seed(self.ref())))
        return result.reward == 1.0

    @vf.metric(priority=10)
    async def redaction(self, trace: vf.Trace) -> dict[str, float]:
        _refuse_code_executing_harness(trace)
        result = await asyncio.to_thread(score_reply, self.ref(), trace.last_reply)
        self._check_identity(result)
        trace.info.update(result.info())
        counts = result.counts
        metrics = {"validity": result.scores.validity, "num_rules": float(result.num_rules), "errors": float(len(result.errors))}
        if counts is not None:
            metrics.update(
                secrets=float(counts.secrets), secrets_removed=float(counts.secrets_removed),
                collateral_chars=float(counts.collateral_chars), decoys_damaged=float(counts.decoys_damaged),
            )
        return metrics

    def _check_identity(self, result: EpisodeResult) -> None:
        if result.environment != self.data.environment:
            changed = sorted(k for k in result.environment if result.environment.get(k) != self.data.environment.get(k))
            raise RuntimeError(f"the environment changed between load and scoring ({', '.join(changed)}); reload the taskset")

    # Priorities fix the order Verifiers sums the weighted rewards in: 0.35 + 0.35 + 0.30 is
    # exactly 1.0 in binary floating point, 0.30 + 0.35 + 0.35 is 0.9999999999999999.
    @vf.reward(weight=WEIGHTS["recall"], priority=3)
    async def recall(self, trace: vf.Trace) -> float:
        return float(_scores(trace)["recall"])

    @vf.reward(weight=WEIGHTS["precision"], priority=2)
    async def precision(self, trace: vf.Trace) -> float:
        return float(_scores(trace)["precision"])

    @vf.reward(weight=WEIGHTS["clean"], priority=1)
    async def clean_gate(self, trace: vf.Trace) -> float:
        return float(_scores(trace)["clean"])


def _refuse_code_executing_harness(trace: vf.Trace) -> None:
    """A rollout through a harness that executes the model's tool calls (``bash``) is not scored:
    the model could have read the private secret or rewritten the scorer. The trace errors (no
    reward) instead. Unpinned (the default) is this package's one-turn chat harness."""
    harness = trace.agent.config.harness if trace.agent is not None else None
    if harness is None or harness.id in ("redaction-pressure", "null"):
        return
    from verifiers.v1.utils.loaders import harness_class

    try:
        executes = harness_class(harness.id).EXECUTES_CODE
    except Exception:  # noqa: BLE001 - an unknown harness is refused like a code-executing one
        executes = True
    if executes:
        raise RuntimeError(
            f"harness {harness.id!r} executes the model's tool calls; redaction-pressure scores only one-turn chat "
            "(leave --env.agent.harness.id unset: the taskset's own harness is the default)"
        )


def _scores(trace: vf.Trace) -> dict[str, Any]:
    redaction = trace.info.get("redaction")
    if not isinstance(redaction, dict):
        raise RuntimeError("the redaction metric did not run before the rewards")
    scores: dict[str, Any] = redaction["scores"]
    return scores


def make_task(ref: TaskRef, config: vf.TaskConfig | None = None) -> RedactionTask:
    prompt = build(ref)
    data = RedactionData(
        id=ref.id, name=ref.id, prompt=prompt.user, system_prompt=prompt.system,
        split=ref.split, index=ref.index, secret_commitment=ref.secret_commitment, environment=identity(ref),
    )
    return RedactionTask(data, config)


class RedactionPressureTaskset(vf.Taskset[RedactionTask, RedactionConfig]):
    def load(self) -> Iterator[RedactionTask]:
        split = self.config.split
        count = self.config.num_tasks if self.config.num_tasks is not None else DEFAULT_TASKS[split]
        if split == PRIVATE_SPLIT and self.config.start + count > HOLDOUT_START:
            raise ValueError(
                f"private_eval indices from {HOLDOUT_START} on are the Oloproof holdout; Verifiers serves only "
                f"0..{HOLDOUT_START - 1} (asked for {self.config.start}..{self.config.start + count - 1}). "
                "Read the holdout with `oloproof holdout run`, which meters every read in READS.log"
            )
        for index in range(self.config.start, self.config.start + count):
            yield make_task(task_ref(split, index), self.config.task)
