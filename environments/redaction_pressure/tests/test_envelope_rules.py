"""The reply's envelope and rule validation: every refusal, with its message."""

from __future__ import annotations

import json
import time
import unittest

from helpers import reply
from redaction_pressure.budget import Budget
from redaction_pressure.envelope import MAX_REPLY_CHARS, RawRule, parse_reply
from redaction_pressure.episode import score_reply
from redaction_pressure.rules import MAX_RULES, compile_rules, unrolled_size
from redaction_pressure.splits import task_ref

RULE = {"pattern": "sk-[A-Za-z0-9]+", "replacement": "[REDACTED]"}


def errors_of(text: str) -> list[tuple[str, str]]:
    result = score_reply(task_ref("dev", 0), text)
    if result.errors:
        assert result.reward == 0.0 and result.scores.validity == 0.0
    return [(error.code, error.message) for error in result.errors]


class EnvelopeTest(unittest.TestCase):
    def test_plain_and_fenced_objects_are_accepted(self) -> None:
        body = json.dumps({"rules": [RULE]})
        for text in (body, f"  {body}\n", f"```json\n{body}\n```", f"```\n{body}\n```\n"):
            rules, errors = parse_reply(text)
            self.assertEqual(errors, ())
            self.assertEqual(rules, (RawRule(0, RULE["pattern"], RULE["replacement"]),))

    def test_malformed_replies(self) -> None:
        cases = {
            "": "the reply is not one JSON object (the reply is empty): Expecting value: line 1 column 1 (char 0)",
            'Here are my rules: {"rules": []}': "the reply is not one JSON object: Expecting value: line 1 column 1 (char 0)",
            '{"rules": []} thanks!': "the reply is not one JSON object: Extra data: line 1 column 15 (char 14)",
            '{"rules": [], "rules": []}': "the reply is not one JSON object: duplicate key 'rules'",
            '{"rules": [{"pattern": "a", "replacement": NaN}]}': "the reply is not one JSON object: NaN is not JSON",
            '```json\n{"rules": []}\n``` and more': "the reply is not one JSON object: Expecting value: line 1 column 1 (char 0)",
        }
        for text, message in cases.items():
            self.assertEqual(errors_of(text), [("malformed_json", message)], text)

    def test_bad_envelopes(self) -> None:
        cases = {
            "[]": "the reply must be a JSON object, got list",
            "{}": "the object must have exactly the key 'rules' (no 'rules' key)",
            '{"rules": [], "notes": "x"}': "the object must have exactly the key 'rules' (unknown keys ['notes'])",
            '{"rules": {"pattern": "a"}}': "'rules' must be a list, got dict",
        }
        for text, message in cases.items():
            self.assertEqual(errors_of(text), [("bad_envelope", message)], text)

    def test_bad_entries_are_all_reported(self) -> None:
        text = json.dumps({"rules": [
            "sk-.*", {"pattern": "a"}, {"pattern": "a", "replacement": "", "flags": "i"}, {"pattern": "", "replacement": ""},
            {"pattern": 5, "replacement": ""}, {"pattern": "a", "replacement": None}, RULE,
        ]})
        self.assertEqual(errors_of(text), [
            ("bad_entry", "rules[0]: each rule must be an object, got str"),
            ("bad_entry", "rules[1]: each rule has exactly 'pattern' and 'replacement' (missing ['replacement'])"),
            ("bad_entry", "rules[2]: each rule has exactly 'pattern' and 'replacement' (unknown ['flags'])"),
            ("bad_entry", "rules[3]: 'pattern' must be a non-empty string"),
            ("bad_entry", "rules[4]: 'pattern' must be a non-empty string"),
            ("bad_entry", "rules[5]: 'replacement' must be a string"),
        ])

    def test_a_huge_reply_is_refused_unread(self) -> None:
        text = json.dumps({"rules": [RULE]}) + " " * MAX_REPLY_CHARS
        self.assertEqual(errors_of(text), [("reply_too_large", f"the reply has {len(text)} characters; at most 65536 are read")])


class RuleValidationTest(unittest.TestCase):
    def test_more_than_24_rules(self) -> None:
        self.assertEqual(errors_of(reply(*["abc"] * (MAX_RULES + 1))), [("too_many_rules", "the reply has 25 rules; at most 24 are allowed")])
        self.assertEqual(errors_of(reply(*["abc"] * MAX_RULES)), [])

    def test_unsafe_replacements(self) -> None:
        for replacement in ("\\1", "\\g<0>", "***", "[redacted]", " "):
            self.assertEqual(errors_of(reply("sk-\\w+", replacement=replacement)), [(
                "unsafe_replacement", f"rules[0]: replacement must be \"[REDACTED]\" or \"\", got {replacement!r}",
            )])

    def test_refused_syntax(self) -> None:
        cases = {
            "a" * 513: ("pattern_too_long", "rules[0]: the pattern has 513 characters; at most 512"),
            "a{e<=1}": ("unsupported_syntax", "rules[0]: '{' at position 1 is not a counted quantifier; write a literal brace as \\{"),
            "x{}": ("unsupported_syntax", "rules[0]: '{' at position 1 is not a counted quantifier; write a literal brace as \\{"),
            "(?x) a b": ("unsupported_syntax", "rules[0]: inline flag 'x' at position 0 is not allowed"),
            "(?V1)[[a]]": ("unsupported_syntax", "rules[0]: inline flag 'V' at position 0 is not allowed"),
            "(?b:abc)": ("unsupported_syntax", "rules[0]: inline flag 'b' at position 0 is not allowed"),
            "(?R)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 0 is not allowed"),
            "((?R)|a)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 1 is not allowed"),
            "(a)(?1)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 3 is not allowed"),
            "(a)(?-1)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 3 is not allowed"),
            "(?<n>a)(?&n)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 7 is not allowed"),
            "(?P<n>a)(?P>n)": ("unsupported_syntax", "rules[0]: recursion or a subroutine call at position 8 is not allowed"),
            "a{1001}": ("pattern_too_complex", "rules[0]: repeat count 1001 at position 1 exceeds 1000"),
            "(?:(?:a{256}){256}){256}": (
                "pattern_too_complex", "rules[0]: nested counted repeats unroll to 16777216 atoms; at most 10000 are allowed",
            ),
            "(": ("invalid_regex", "rules[0]: missing ')'"),
            "a)": ("invalid_regex", "rules[0]: unbalanced ')' at position 1"),
            "[a-": ("invalid_regex", "rules[0]: unterminated character set at position 0"),
            "(?<=a+)b(?P<x": ("invalid_regex", "rules[0]: missing ')'"),
            "a**": ("invalid_regex", "rules[0]: multiple repeat at position 2"),
            "a*": ("zero_width_match", "rules[0]: the pattern matches the empty string"),
            # Zero-width only where the text allows it: caught while scanning (record 0 of dev-0000).
            "(?=x)": ("zero_width_match", "rules[0] matched the empty string at offset 94"),
            "(?<=user=)": ("zero_width_match", "rules[0] matched the empty string at offset 46"),
        }
        for pattern, expected in cases.items():
            self.assertEqual(errors_of(reply(pattern)), [expected], pattern)

    def test_accepted_syntax(self) -> None:
        # Lookbehind (variable width too), inline flags, literal braces, sets with brackets,
        # comments, named groups, counted repeats within bounds.
        for pattern in (
            r"(?<=password=)\S+", r"(?<=(?:pass|key)=)\w+", r"(?i)sk-[a-z0-9]{32,48}", r"\{[a-z]+\}", r"[]{}[]+x",
            r"(?#a comment with { braces })abc", r"(?P<key>sk)-\w+", r"(?-i:Ab)c", r"(a)\1",
            r"(?:[a-z]{2,8}\.){1,3}com", r"[[:alpha:]]{3}", r"\p{L}{2,}@",
        ):
            self.assertEqual(errors_of(reply(pattern)), [], pattern)

    def test_unrolled_size_counts_nesting_and_alternation(self) -> None:
        self.assertEqual(unrolled_size("abc"), 3)
        self.assertEqual(unrolled_size("a{10}"), 10)
        self.assertEqual(unrolled_size("(?:ab){10}"), 20)
        self.assertEqual(unrolled_size("(?:a|bc){10}"), 30)
        self.assertEqual(unrolled_size("(?:a{10}){10}x*"), 101)
        self.assertEqual(unrolled_size("(?i)[a-z]{2,8}"), 8)
        self.assertEqual(unrolled_size("a{3,}"), 4)

    def test_compiling_an_accepted_pattern_is_cheap(self) -> None:
        # The size limit exists because the engine unrolls counted repeats when compiling: the
        # largest accepted nesting must compile in milliseconds, 24 times over.
        worst = "(?:(?:a{21}|b{21}){21}){10}"
        self.assertLessEqual(unrolled_size(worst), 10_000)
        started = time.monotonic()
        rules, errors = compile_rules(tuple(RawRule(i, worst, "") for i in range(MAX_RULES)), Budget())
        self.assertEqual((len(rules), errors), (MAX_RULES, ()))
        self.assertLess(time.monotonic() - started, 1.0)


if __name__ == "__main__":
    unittest.main()
