"""The Verifiers v1 taskset: loading, offline scoring of hand-written replies, the gold check."""

from __future__ import annotations

import asyncio
import os
import unittest
from unittest import mock

import verifiers.v1 as vf
from helpers import OTHER_SECRET, SECRET, gold, reply
from redaction_pressure import RedactionPressureTaskset
from redaction_pressure.identity import identity
from redaction_pressure.splits import PrivateSeedError, private_task_seed, public_task_seed, task_ref
from redaction_pressure.taskset import RedactionConfig, RedactionTask
from verifiers.v1.graph import MessageNode
from verifiers.v1.trace import TraceTask
from verifiers.v1.utils.loaders import taskset_class

PRIVATE_ENV = {"REDACTION_PRESSURE_PRIVATE_SEED": SECRET}


def trace_for(task: RedactionTask, text: str | None) -> vf.Trace:
    """A one-turn trace as a rollout would leave it (the pattern of Verifiers' own scoring tests)."""
    trace = vf.Trace(
        task=TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        agent=vf.AgentInfo(config=vf.AgentConfig()),
    )
    trace.nodes.append(MessageNode(message=vf.UserMessage(content=task.data.prompt_text)))
    if text is not None:
        trace.nodes.append(MessageNode(parent=0, message=vf.AssistantMessage(content=text), sampled=True))
    return trace


def scored(task: RedactionTask, text: str | None) -> vf.Trace:
    trace = trace_for(task, text)
    asyncio.run(task.score(trace))
    return trace


def load(**config: object) -> list[RedactionTask]:
    return list(RedactionPressureTaskset(RedactionConfig(**config)))  # type: ignore[arg-type]


class TasksetTest(unittest.TestCase):
    def test_the_loader_finds_exactly_one_taskset(self) -> None:
        self.assertIs(taskset_class("redaction-pressure"), RedactionPressureTaskset)

    def test_dev_has_64_public_tasks_with_stable_keys(self) -> None:
        tasks = load()
        self.assertEqual(len(tasks), 64)
        self.assertEqual([t.key for t in tasks[:2]], ["dev-0000", "dev-0001"])
        self.assertEqual([t.data.idx for t in tasks[:2]], [0, 1])
        self.assertEqual(tasks[0].data.environment, identity(task_ref("dev", 0)))
        self.assertIn("<samples>", tasks[0].data.prompt_text)
        self.assertIn("at most 24 rules", tasks[0].data.system_prompt.lower())

    def test_one_turn(self) -> None:
        task = load(num_tasks=1)[0]
        self.assertTrue(asyncio.run(task.one_turn(trace_for(task, "x"))))
        self.assertFalse(asyncio.run(task.one_turn(trace_for(task, None))))

    def test_oracle_reply_scores_exactly_one_with_the_identity_repeated(self) -> None:
        task = load(start=5, num_tasks=1)[0]
        trace = scored(task, gold(task.ref()))
        self.assertEqual(trace.reward, 1.0)
        self.assertEqual({k: (r.score, r.weight) for k, r in trace.rewards.items() if r},
                         {"recall": (1.0, 0.35), "precision": (1.0, 0.35), "clean_gate": (1.0, 0.30)})
        self.assertEqual(trace.info["environment"], task.data.environment)
        self.assertEqual(trace.info["redaction_errors"], [])
        self.assertEqual(trace.info["task_seed"], public_task_seed("dev", 5).hex())
        self.assertEqual(trace.metrics["validity"], 1.0)

    def test_inaction_and_invalid_replies_score_zero_with_recorded_errors(self) -> None:
        task = load(num_tasks=1)[0]
        empty = scored(task, '{"rules": []}')
        self.assertEqual(empty.reward, 0.0)
        self.assertEqual(empty.info["redaction_errors"], [])
        for text, code in (("", "malformed_json"), (reply("a", replacement="\\1"), "unsafe_replacement"),
                           (reply(r"(?:[0-9a-f]|[0-9a-f]{2})+$"), "regex_timeout")):
            trace = scored(task, text)
            self.assertEqual(trace.reward, 0.0)
            self.assertEqual([e["code"] for e in trace.info["redaction_errors"]], [code])
            self.assertEqual(trace.metrics["validity"], 0.0)

    def test_gold_check(self) -> None:
        task = load(num_tasks=1)[0]
        self.assertTrue(asyncio.run(task.validate(None)))

    def test_task_data_is_public(self) -> None:
        with mock.patch.dict(os.environ, PRIVATE_ENV):
            task = load(split="private_eval", num_tasks=2)[1]
            dumped = task.data.model_dump_json()
            self.assertNotIn(SECRET, dumped)
            self.assertNotIn(private_task_seed(SECRET, 1).hex(), dumped)
            self.assertEqual(task.key, "private_eval-0001")
            trace = scored(task, gold(task.ref()))
        self.assertEqual(trace.reward, 1.0)
        self.assertEqual(trace.info["task_seed"], private_task_seed(SECRET, 1).hex())  # revealed at completion
        self.assertEqual(trace.info["environment"]["split"], "private_eval")

    def test_private_split_without_a_secret_fails_to_load(self) -> None:
        with mock.patch.dict(os.environ, {}, clear=False):
            os.environ.pop("REDACTION_PRESSURE_PRIVATE_SEED", None)
            with self.assertRaisesRegex(PrivateSeedError, "REDACTION_PRESSURE_PRIVATE_SEED is not set"):
                load(split="private_eval", num_tasks=1)

    def test_scoring_with_a_wrong_secret_errors_the_trace_instead_of_scoring_zero(self) -> None:
        with mock.patch.dict(os.environ, PRIVATE_ENV):
            task = load(split="private_eval", num_tasks=1)[0]
        with mock.patch.dict(os.environ, {"REDACTION_PRESSURE_PRIVATE_SEED": OTHER_SECRET}):
            trace = trace_for(task, gold(task.ref(), PRIVATE_ENV))
            with self.assertRaises(vf.TaskError) as caught:
                asyncio.run(task.score(trace))
        self.assertIn("does not match the commitment", str(caught.exception.__cause__ or caught.exception))
        self.assertIsNone(trace.rewards.get("recall"))
        self.assertNotIn("task_seed", trace.info)


if __name__ == "__main__":
    unittest.main()
