"""The safe setup is the default (issue 21, point 3): without any harness option Verifiers runs
this taskset through its own one-turn chat harness, which executes nothing the model sends, and
the program the model talks through never holds the private secret."""

from __future__ import annotations

import os
import unittest
from unittest import mock

from helpers import SECRET
from redaction_pressure.harness import RedactionPressureHarness, RedactionPressureHarnessConfig
from redaction_pressure.splits import SECRET_ENV
from verifiers.v1 import default_agent_harness
from verifiers.v1.utils.loaders import default_harness_id, harness_class, taskset_class


class SafeDefaultTest(unittest.TestCase):
    def test_the_default_harness_is_the_one_turn_chat_harness(self) -> None:
        self.assertEqual(default_harness_id("redaction-pressure"), "redaction-pressure")
        self.assertIs(harness_class("redaction-pressure"), RedactionPressureHarness)
        config = default_agent_harness("redaction-pressure")
        self.assertIsInstance(config, RedactionPressureHarnessConfig)
        self.assertFalse(harness_class(config.id).EXECUTES_CODE)
        self.assertEqual(taskset_class("redaction-pressure").__name__, "RedactionPressureTaskset")

    def test_the_harness_program_never_holds_the_private_secret(self) -> None:
        with mock.patch.dict(os.environ, {SECRET_ENV: SECRET}):
            for config in (
                RedactionPressureHarnessConfig(),
                RedactionPressureHarnessConfig(forward_env=[SECRET_ENV]),
                RedactionPressureHarnessConfig(env={SECRET_ENV: SECRET}),
            ):
                self.assertEqual(config.resolved_env[SECRET_ENV], "")
                self.assertNotIn(SECRET, config.resolved_env.values())


class CodeExecutingHarnessTest(unittest.TestCase):
    def test_a_trace_from_the_bash_harness_errors_instead_of_scoring(self) -> None:
        import asyncio

        import verifiers.v1 as vf
        from helpers import gold
        from test_taskset import load, trace_for

        task = load(num_tasks=1)[0]
        for harness, scores in (("bash", False), ("null", True), ("redaction-pressure", True), (None, True)):
            with self.subTest(harness):
                trace = trace_for(task, gold(task.ref()))
                config = vf.AgentConfig() if harness is None else vf.AgentConfig(harness={"id": harness})
                trace.agent = vf.AgentInfo(config=config)
                if scores:
                    asyncio.run(task.score(trace))
                    self.assertEqual(trace.reward, 1.0)
                    continue
                with self.assertRaises(vf.TaskError) as caught:
                    asyncio.run(task.score(trace))
                self.assertIn("harness 'bash' executes the model's tool calls", str(caught.exception.__cause__ or caught.exception))
                self.assertIsNone(trace.rewards.get("recall"))


if __name__ == "__main__":
    unittest.main()
