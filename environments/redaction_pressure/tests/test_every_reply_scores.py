"""Every reply the model can send ends in a score (issue 21, point 2): 0.0 with a validity code
for anything malformed, never an exception in the scorer. Deep JSON nesting used to raise
RecursionError and a 4,301-digit integer ValueError in the envelope parser; in Verifiers that
errored the trace (and vf-eval's mean leaves errored traces out), in the gate it killed the batch.
"""

from __future__ import annotations

import asyncio
import io
import json
import unittest

from helpers import reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redaction_pressure import system
from redaction_pressure.envelope import MAX_REPLY_CHARS, parse_reply
from redaction_pressure.episode import score_reply
from redaction_pressure.errors import CODES
from redaction_pressure.oracle import oracle_reply
from redaction_pressure.splits import task_ref

REF = task_ref("dev", 0)
HOSTILE = {
    "deep_array": "[" * 2000 + "]" * 2000,
    "deep_object": '{"rules": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}",
    "deep_rules": '{"rules": [' + "[" * 30000 + "]" * 30000 + "]}",
    "deep_at_limit": "[" * (MAX_REPLY_CHARS // 2) + "]" * (MAX_REPLY_CHARS // 2),
    "long_int": "1" * 4301,
    "long_int_in_envelope": '{"rules": [], "n": ' + "9" * 5000 + "}",
    "long_int_in_entry": '{"rules": [{"pattern": "a", "replacement": "", "x": ' + "7" * 20000 + "}]}",
    "negative_long_int": "-" + "1" * 4400,
    "huge_float": "1" * 5000 + ".5",
    "huge_exponent": "1e99999999999",
    "lone_surrogate_pattern": '{"rules": [{"pattern": "\\ud800+", "replacement": ""}]}',
    "nul_pattern": '{"rules": [{"pattern": "\\u0000", "replacement": ""}]}',
    "fenced_deep": "```json\n" + "[" * 3000 + "]" * 3000 + "\n```",
    "unclosed": "[" * 60000,
    "only_closers": "]" * 60000,
    "strings_with_brackets": json.dumps({"rules": [{"pattern": "[\\[{]{1,3}", "replacement": ""}]}),
}


def check_scored(test: unittest.TestCase, text: object) -> None:
    result = score_reply(REF, text)
    test.assertTrue(0.0 <= result.reward <= 1.0)
    if result.errors:
        test.assertEqual(result.reward, 0.0)
        for error in result.errors:
            test.assertIn(error.code, CODES)


JSON_LEAF = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
JSON_VALUE = st.recursive(
    JSON_LEAF, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=10), inner, max_size=6), max_leaves=40
)
ENTRY = st.fixed_dictionaries(
    {"pattern": st.text(alphabet="ab\\[](){}|*+?.^$-,0123456789dswDSW:=<>!#P", min_size=0, max_size=40), "replacement": st.sampled_from(["[REDACTED]", "", "x", "\\1"])}
)
ENVELOPE = st.fixed_dictionaries({"rules": st.lists(ENTRY | JSON_VALUE, max_size=5)})


@st.composite
def nested(draw: st.DrawFn) -> str:
    depth = draw(st.integers(min_value=0, max_value=MAX_REPLY_CHARS // 2))
    opener = draw(st.sampled_from(["[", '{"a":', '{"rules":', "[{\"rules\":"]))
    closer = {"[": "]", '{"a":': "}", '{"rules":': "}", "[{\"rules\":": "}]"}[opener]
    middle = draw(st.sampled_from(["", "1", "[]", "9" * draw(st.integers(0, 6000)), '"x"']))
    text = opener * depth + middle + closer * draw(st.integers(min_value=0, max_value=depth))
    return text[: draw(st.integers(min_value=0, max_value=MAX_REPLY_CHARS + 10))]


REPLIES = (
    st.text(max_size=2000)
    | JSON_VALUE.map(json.dumps)
    | ENVELOPE.map(json.dumps)
    | ENVELOPE.map(lambda obj: "```json\n" + json.dumps(obj) + "\n```")
    | nested()
    | st.integers(min_value=0, max_value=MAX_REPLY_CHARS).map(lambda n: "7" * n)
    | st.binary(max_size=200).map(lambda b: b.decode("latin-1"))
)


class EveryReplyScoresTest(unittest.TestCase):
    def test_hostile_replies_score_zero_with_a_code(self) -> None:
        for name, text in HOSTILE.items():
            with self.subTest(name):
                self.assertLessEqual(len(text), MAX_REPLY_CHARS, name)
                result = score_reply(REF, text)
                self.assertEqual(result.reward, 0.0)
                if name not in ("strings_with_brackets", "lone_surrogate_pattern", "nul_pattern"):  # valid, remove nothing
                    self.assertTrue(result.errors, name)
                for error in result.errors:
                    self.assertIn(error.code, CODES)

    def test_the_two_reported_crashes_are_malformed_json(self) -> None:
        for text in ("[" * 1000 + "]" * 1000, "1" * 4301, '{"rules": [], "n": ' + "1" * 4301 + "}"):
            rules, errors = parse_reply(text)
            self.assertEqual(rules, ())
            self.assertEqual([e.code for e in errors], ["malformed_json"])
        _, errors = parse_reply("[" * 1000 + "]" * 1000)
        self.assertIn("nests 1000 levels deep; at most 32 are read", errors[0].message)
        _, errors = parse_reply("1" * 4301)
        self.assertIn("an integer of 4301 digits (at most 64)", errors[0].message)

    def test_brackets_inside_strings_do_not_count_as_nesting(self) -> None:
        text = reply("\\[" * 100 + "x", "sk-[A-Za-z0-9]{32,48}")
        rules, errors = parse_reply(text)
        self.assertEqual(errors, ())
        self.assertEqual(len(rules), 2)

    def test_a_reply_without_text_is_malformed_not_a_crash(self) -> None:
        for text in (None, b"{}", 42, ["rules"]):
            with self.subTest(repr(text)):
                result = score_reply(REF, text)
                self.assertEqual(result.reward, 0.0)
                self.assertEqual([e.code for e in result.errors], ["malformed_json"])

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True, database=None)
    @given(REPLIES)
    def test_property_every_reply_ends_in_a_score(self, text: str) -> None:
        check_scored(self, text)

    def test_the_system_answers_every_case_when_one_reply_is_hostile(self) -> None:
        cases = "".join(json.dumps({"id": f"c{i}", "split": "dev", "index": i}) + "\n" for i in range(len(HOSTILE) + 1))
        replies = [*HOSTILE.values(), None]  # None: the task's gold reply
        calls = iter(replies)
        stdout, stderr = io.StringIO(), io.StringIO()
        status = system.run(lambda s, u, seed: next(calls) or oracle_reply(seed), io.StringIO(cases), stdout, stderr, {})
        self.assertEqual(status, 0, stderr.getvalue())
        outputs = [json.loads(line) for line in stdout.getvalue().splitlines()]
        self.assertEqual([o["id"] for o in outputs], [f"c{i}" for i in range(len(replies))])
        self.assertEqual([o["reward"] for o in outputs[:-1]], [0.0] * len(HOSTILE))
        self.assertEqual(outputs[-1]["reward"], 1.0)
        self.assertIn("malformed_json", outputs[0]["errors"])

    def test_the_taskset_scores_hostile_replies_instead_of_erroring(self) -> None:
        try:
            import verifiers.v1  # noqa: F401
        except ImportError:  # pragma: no cover - the sub-project always has it
            self.skipTest("verifiers is not installed")
        from test_taskset import load, scored

        task = load(num_tasks=1)[0]
        for name in ("deep_array", "long_int", "deep_rules"):
            with self.subTest(name):
                trace = scored(task, HOSTILE[name])
                self.assertEqual(trace.reward, 0.0)
                self.assertEqual([e["code"] for e in trace.info["redaction_errors"]], ["malformed_json"])
        self.assertEqual(asyncio.run(task.validate()), True)


if __name__ == "__main__":
    unittest.main()
