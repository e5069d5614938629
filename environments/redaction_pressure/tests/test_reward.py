"""The reward contract: oracle 1.0, inaction 0.0, the first-character exploit rejected."""

from __future__ import annotations

import json
import unittest

from helpers import gold, gold_patterns, reply
from redaction_pressure import corpus
from redaction_pressure.corpus import Record, Span
from redaction_pressure.episode import score_reply
from redaction_pressure.reward import Counts, count, score
from redaction_pressure.scanner import Match, redact
from redaction_pressure.splits import public_task_seed, task_ref

DEV = [task_ref("dev", index) for index in range(64)]


class OracleAndInactionTest(unittest.TestCase):
    def test_oracle_scores_exactly_one_on_every_dev_task_and_on_train_tasks(self) -> None:
        for ref in DEV + [task_ref("train", index) for index in range(0, 100_000, 1000)]:
            result = score_reply(ref, gold(ref))
            self.assertEqual(result.reward, 1.0, (ref, result.scores, result.errors))
            self.assertTrue(result.clean)
            self.assertEqual(result.errors, ())

    def test_inaction_scores_zero(self) -> None:
        # An empty rule list, and rules that never match: valid replies that remove nothing.
        for text in ('{"rules": []}', reply(r"\bno-such-text-anywhere\b")):
            for ref in DEV[:16]:
                result = score_reply(ref, text)
                self.assertEqual(result.errors, ())
                self.assertEqual(result.scores.validity, 1.0)
                self.assertEqual((result.scores.recall, result.scores.precision, result.scores.clean), (0.0, 0.0, 0.0))
                self.assertEqual(result.reward, 0.0)

    def test_deleting_every_character_is_never_clean_and_stays_below_one_half(self) -> None:
        # The contract rewards bulk deletion with full recall; only precision and the clean gate
        # hold it back. This pins how far (README, "Gating with Oloproof": 0.441 on average).
        rewards = []
        for ref in DEV:
            result = score_reply(ref, reply(r"[\s\S]{1,64}"))
            self.assertEqual((result.scores.recall, result.scores.clean), (1.0, 0.0))
            self.assertEqual(result.reward, 0.35 + 0.35 * result.scores.precision)
            self.assertLess(result.reward, 0.5)
            rewards.append(result.reward)
        self.assertAlmostEqual(sum(rewards) / len(rewards), 0.4409, places=4)


class FirstCharacterExploitTest(unittest.TestCase):
    """The historical exploit: remove only each secret's first character. A check that asks
    whether the secret's text still appears in the output calls that a perfect redaction."""

    @staticmethod
    def exploit(ref: object) -> str:
        return json.dumps({"rules": [{"pattern": f"(?=(?:{p})).", "replacement": ""} for p in gold_patterns(ref)]})

    def test_it_scores_zero_on_all_64_dev_tasks(self) -> None:
        for ref in DEV:
            result = score_reply(ref, self.exploit(ref))
            self.assertEqual(result.errors, (), ref)
            assert result.counts is not None
            self.assertEqual(result.counts.secrets_removed, 0, ref)
            self.assertEqual(result.counts.secrets_damaged, result.counts.secrets, ref)
            self.assertEqual(result.reward, 0.0, ref)

    def test_it_would_fool_a_substring_check(self) -> None:
        # Not vacuous: the exploit really hides every secret's text from a naive checker.
        from redaction_pressure.budget import Budget
        from redaction_pressure.envelope import parse_reply
        from redaction_pressure.rules import compile_rules
        from redaction_pressure.scanner import scan

        for ref in DEV:
            raw, _ = parse_reply(self.exploit(ref))
            rules, _ = compile_rules(raw, Budget())
            records = corpus.scored(public_task_seed("dev", ref.index))
            result = scan(rules, records, Budget())
            for rec, matches in zip(records, result.matches, strict=True):
                after = redact(rec.text, matches)
                for span in rec.secrets:
                    self.assertNotIn(rec.span_text(span), after)


def _record() -> Record:
    #                 0         1         2
    #                 0123456789012345678901234567
    return Record(text="key=SECRETAB pw=hunter22 ok", secrets=(Span("api_key", 4, 12), Span("password", 16, 24)),
                  decoys=(Span("word", 25, 27),))


class ContractTest(unittest.TestCase):
    def test_partial_removal_earns_no_recall_and_stays_in_the_denominator(self) -> None:
        rec = _record()
        counts = count((rec,), ((Match(4, 12, ""), Match(16, 20, "")),))  # all of SECRETAB, half of hunter22
        self.assertEqual((counts.secrets_removed, counts.secrets_damaged), (1, 1))
        self.assertEqual((counts.removed_chars, counts.secret_chars_removed, counts.collateral_chars), (12, 8, 0))
        scores = score(counts, valid=True)
        self.assertEqual(scores.recall, 0.5)
        self.assertEqual(scores.precision, 8 / 12)
        self.assertEqual(scores.clean, 0.0)
        self.assertAlmostEqual(scores.reward, 0.35 * 0.5 + 0.35 * 8 / 12, places=15)

    def test_collateral_damage_costs_precision_and_the_clean_gate(self) -> None:
        rec = _record()
        counts = count((rec,), ((Match(0, 12, "[REDACTED]"), Match(16, 24, ""), Match(25, 27, "")),))
        self.assertEqual((counts.secrets_removed, counts.collateral_chars, counts.decoys_damaged), (2, 6, 1))
        scores = score(counts, valid=True)
        self.assertEqual((scores.recall, scores.precision, scores.clean), (1.0, 16 / 22, 0.0))

    def test_overlapping_matches_count_each_character_once(self) -> None:
        rec = _record()
        counts = count((rec,), ((Match(4, 10, ""), Match(6, 12, ""), Match(16, 24, ""), Match(16, 24, "")),))
        self.assertEqual((counts.removed_chars, counts.secret_chars_removed), (16, 16))
        self.assertEqual(score(counts, valid=True).reward, 1.0)

    def test_validity_failure_zeroes_every_reward(self) -> None:
        rec = _record()
        counts = count((rec,), ((Match(4, 12, ""), Match(16, 24, "")),))
        invalid = score(counts, valid=False)
        self.assertEqual((invalid.recall, invalid.precision, invalid.clean, invalid.validity, invalid.reward), (0.0, 0.0, 0.0, 0.0, 0.0))

    def test_precision_is_zero_when_nothing_was_removed(self) -> None:
        counts = count((_record(),), ((),))
        self.assertEqual(score(counts, valid=True).precision, 0.0)

    def test_a_task_without_secrets_cannot_be_scored(self) -> None:
        counts = Counts(secrets=0, secrets_removed=0, secrets_damaged=0, removed_chars=0, secret_chars_removed=0,
                        collateral_chars=0, decoys=0, decoys_damaged=0)
        with self.assertRaisesRegex(ValueError, "without secrets"):
            score(counts, valid=True)

    def test_rendering_uses_the_marker_when_any_covering_rule_asks_for_it(self) -> None:
        text = _record().text
        self.assertEqual(redact(text, (Match(4, 12, ""),)), "key= pw=hunter22 ok")
        self.assertEqual(redact(text, (Match(4, 8, ""), Match(6, 12, "[REDACTED]"))), "key=[REDACTED] pw=hunter22 ok")
        self.assertEqual(redact(text, (Match(4, 12, "[REDACTED]"), Match(16, 24, "[REDACTED]"))), "key=[REDACTED] pw=[REDACTED] ok")

    def test_rules_see_the_source_not_each_other(self) -> None:
        # Rule 2 would match the marker rule 1 leaves behind if rules ran in sequence.
        result = score_reply(DEV[0], reply(*gold_patterns(DEV[0]), r"\[REDACTED\]"))
        self.assertEqual(result.reward, 1.0)
        swapped = score_reply(DEV[0], reply(r"\[REDACTED\]", *reversed(gold_patterns(DEV[0]))))
        self.assertEqual(swapped.reward, 1.0)


if __name__ == "__main__":
    unittest.main()
