"""Hostile regexes: interrupted under the shared episode budget, on any thread."""

from __future__ import annotations

import asyncio
import threading
import time
import unittest
from typing import Any

from helpers import gold_patterns, reply
from redaction_pressure.budget import CALL_TIMEOUT_S, EPISODE_BUDGET_S
from redaction_pressure.episode import EpisodeResult, score_reply
from redaction_pressure.splits import task_ref

# Exponential backtracking on the corpus' hex runs: each start position tries every way to cut
# the run into pieces of one or two characters before "$" fails.
CATASTROPHIC = r"(?:[0-9a-f]|[0-9a-f]{2})+$"
# Polynomial but slow: about 1-15 ms per record on this machine, so one rule stays under its
# limits and only many together exhaust a budget.
SLOW = r"(?:\w|\w\w){1,14}=$"
# What an episode may take at most, with generous room for a loaded 2-core machine: the budget,
# one call's overshoot past its timeout (measured up to 3.5x), and corpus/identity work.
BOUND_S = EPISODE_BUDGET_S + 1.5
REF = task_ref("dev", 3)


def timed(call: Any) -> tuple[EpisodeResult, float]:
    started = time.monotonic()
    result = call()
    return result, time.monotonic() - started


class HostileTest(unittest.TestCase):
    def assert_ended(self, result: EpisodeResult, elapsed: float, code: str) -> None:
        self.assertEqual([e.code for e in result.errors], [code], result.errors)
        self.assertEqual(result.reward, 0.0)
        self.assertIsNone(result.counts)
        self.assertLess(elapsed, BOUND_S)

    def test_catastrophic_pattern_on_the_main_thread(self) -> None:
        self.assertIs(threading.current_thread(), threading.main_thread())
        result, elapsed = timed(lambda: score_reply(REF, reply(*gold_patterns(REF), CATASTROPHIC)))
        self.assert_ended(result, elapsed, "regex_timeout")
        self.assertEqual(result.errors[0].rule, len(gold_patterns(REF)))
        self.assertIn(f"ran past its time limit ({CALL_TIMEOUT_S:g} s per record)", result.errors[0].message)

    def test_catastrophic_pattern_on_a_worker_thread(self) -> None:
        out: dict[str, Any] = {}

        def work() -> None:
            out["result"] = timed(lambda: score_reply(REF, reply(CATASTROPHIC)))

        thread = threading.Thread(target=work)
        thread.start()
        thread.join(timeout=BOUND_S + 5)
        self.assertFalse(thread.is_alive())
        self.assert_ended(*out["result"], "regex_timeout")

    def test_catastrophic_pattern_under_asyncio_to_thread(self) -> None:
        # How the Verifiers taskset scores: the event loop stays free while the rules run.
        async def main() -> tuple[tuple[EpisodeResult, float], int]:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while True:
                    await asyncio.sleep(0.01)
                    ticks += 1

            task = asyncio.create_task(ticker())
            outcome = await asyncio.to_thread(timed, lambda: score_reply(REF, reply(CATASTROPHIC)))
            task.cancel()
            return outcome, ticks

        (result, elapsed), ticks = asyncio.run(main())
        self.assert_ended(result, elapsed, "regex_timeout")
        self.assertGreater(ticks, 3)  # the loop kept running while the regex backtracked

    def test_concurrent_hostile_episodes_each_end_in_bounded_time(self) -> None:
        results: list[tuple[EpisodeResult, float]] = []
        threads = [threading.Thread(target=lambda: results.append(timed(lambda: score_reply(REF, reply(CATASTROPHIC))))) for _ in range(3)]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=3 * BOUND_S)
        self.assertEqual(len(results), 3)
        for result, elapsed in results:
            self.assert_ended(result, elapsed, "regex_timeout")
        self.assertLess(time.monotonic() - started, 3 * BOUND_S)

    def test_many_slow_rules_exhaust_the_shared_budget(self) -> None:
        rules = reply(*[SLOW] * 24)
        # Alone, each rule is within its own limits: with a budget large enough they all run.
        unbounded = score_reply(REF, rules, budget_s=120.0)
        self.assertEqual(unbounded.errors, ())
        # Under a small shared budget, a later rule finds it spent: no single rule timed out.
        result, elapsed = timed(lambda: score_reply(REF, rules, budget_s=0.05))
        self.assert_ended(result, elapsed, "budget_exhausted")
        self.assertRegex(result.errors[0].message, r"^the episode's 0\.05 s budget ran out at rules\[\d+\]$")
        self.assertLess(elapsed, 0.05 + 1.0)

    def test_the_default_budget_ends_a_reply_of_24_catastrophic_rules(self) -> None:
        variants = [CATASTROPHIC.replace("$", "\\Z" * k or "$") for k in range(1, 25)]
        result, elapsed = timed(lambda: score_reply(REF, reply(*variants)))
        self.assert_ended(result, elapsed, "regex_timeout")
        self.assertEqual(result.errors[0].rule, 0)  # the first one ends the episode

    def test_an_engine_out_of_memory_is_the_rule_s_fault_not_a_crash(self) -> None:
        # The syntax check refuses the recursion that does this ((?R): ~700 MB, then MemoryError);
        # should anything else exhaust the engine, the episode still ends with a recorded error.
        from redaction_pressure import corpus
        from redaction_pressure.budget import Budget
        from redaction_pressure.rules import Rule
        from redaction_pressure.scanner import scan
        from redaction_pressure.splits import public_task_seed

        class Exhausted:
            def finditer(self, text: str, timeout: float) -> Any:
                raise MemoryError

        rule = Rule(index=3, pattern="x", replacement="", compiled=Exhausted())
        result = scan((rule,), corpus.scored(public_task_seed("dev", 0)), Budget())
        assert result.error is not None
        self.assertEqual((result.error.code, result.error.rule, result.error.record), ("pattern_too_complex", 3, 0))

    def test_a_rule_matching_too_often_ends_the_episode(self) -> None:
        result = score_reply(REF, reply("[a-z]"))
        self.assertEqual([(e.code, e.message) for e in result.errors], [("excessive_matches", "rules[0] matched more than 64 times in one record")])
        self.assertEqual(result.reward, 0.0)


if __name__ == "__main__":
    unittest.main()
