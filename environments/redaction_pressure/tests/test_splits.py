"""Splits: disjoint public ranges, private seeds by HMAC from the secret, commitments."""

from __future__ import annotations

import hashlib
import hmac
import unittest

from helpers import OTHER_SECRET, SECRET, gold
from redaction_pressure import corpus
from redaction_pressure.episode import build, score_reply
from redaction_pressure.framing import frame
from redaction_pressure.splits import (
    PUBLIC_SPLITS,
    PrivateSeedError,
    SplitError,
    private_task_seed,
    public_task_seed,
    secret_commitment,
    split_commitment,
    task_ref,
    task_seed,
)

ENV = {"REDACTION_PRESSURE_PRIVATE_SEED": SECRET}


class PublicSplitsTest(unittest.TestCase):
    def test_public_seeds_are_sha256_of_the_framed_seed_number(self) -> None:
        expected = hashlib.sha256(frame("redaction-pressure/public-task-seed/v1", "dev", 1_000_000 + 7)).digest()
        self.assertEqual(public_task_seed("dev", 7), expected)

    def test_ranges_are_disjoint_and_tasks_distinct(self) -> None:
        train, dev = PUBLIC_SPLITS["train"], PUBLIC_SPLITS["dev"]
        self.assertLessEqual(train.base + train.size, dev.base)
        seeds = {public_task_seed("dev", i) for i in range(dev.size)} | {public_task_seed("train", i) for i in range(200)}
        self.assertEqual(len(seeds), dev.size + 200)
        dev_texts = {rec.text for i in range(dev.size) for rec in corpus.scored(public_task_seed("dev", i))}
        train_texts = {rec.text for i in range(200) for rec in corpus.scored(public_task_seed("train", i))}
        self.assertEqual(dev_texts & train_texts, set())

    def test_unknown_splits_and_indices_outside_a_split(self) -> None:
        with self.assertRaisesRegex(SplitError, "unknown split 'test'; expected one of train, dev, private_eval"):
            task_ref("test", 0)
        with self.assertRaisesRegex(SplitError, r"task index 64 is outside split 'dev' \(0 <= index < 64\)"):
            task_ref("dev", 64)
        with self.assertRaisesRegex(SplitError, "task index must be an integer, got True"):
            task_ref("dev", True)  # type: ignore[arg-type]

    def test_public_tasks_need_no_secret_and_name_none(self) -> None:
        ref = task_ref("dev", 3, environ={})
        self.assertIsNone(ref.secret_commitment)
        prompt = build(ref, environ={})
        self.assertEqual(prompt.environment["split"], "dev")
        self.assertNotIn("secret_commitment", prompt.environment)


class PrivateSplitTest(unittest.TestCase):
    def test_private_seed_is_hmac_of_the_framed_index_under_the_secret(self) -> None:
        expected = hmac.new(SECRET.encode(), frame("redaction-pressure/private-task-seed/v1", "private_eval", 5), hashlib.sha256).digest()
        self.assertEqual(private_task_seed(SECRET, 5), expected)
        self.assertEqual(task_seed(task_ref("private_eval", 5, ENV), ENV), expected)
        self.assertNotEqual(private_task_seed(OTHER_SECRET, 5), expected)

    def test_missing_short_or_padded_secrets_raise_with_a_hint(self) -> None:
        hint = r"generate one with: python -c \"import secrets; print\(secrets.token_urlsafe\(32\)\)\""
        cases = {
            None: "REDACTION_PRESSURE_PRIVATE_SEED is not set; the private_eval split needs it \\(" + hint + "\\)",
            "": "REDACTION_PRESSURE_PRIVATE_SEED is not set",
            "x" * 31: "REDACTION_PRESSURE_PRIVATE_SEED has 31 characters; at least 32 are required \\(" + hint + "\\)",
            " " + SECRET: "begins or ends with whitespace",
        }
        for value, message in cases.items():
            environ = {} if value is None else {"REDACTION_PRESSURE_PRIVATE_SEED": value}
            with self.assertRaisesRegex(PrivateSeedError, message):
                task_ref("private_eval", 0, environ)
        # The secret never appears in a message.
        try:
            task_ref("private_eval", 0, {"REDACTION_PRESSURE_PRIVATE_SEED": "abc" * 10})
        except PrivateSeedError as exc:
            self.assertNotIn("abc" * 10, str(exc))

    def test_the_secret_is_committed_to_and_never_task_data(self) -> None:
        ref = task_ref("private_eval", 2, ENV)
        self.assertEqual(ref.secret_commitment, "sha256:" + hashlib.sha256(frame("redaction-pressure/secret-commitment/v1", SECRET)).hexdigest())
        prompt = build(ref, ENV)
        seed_hex = private_task_seed(SECRET, 2).hex()
        for text in (prompt.system, prompt.user, repr(prompt.environment)):
            self.assertNotIn(SECRET, text)
            self.assertNotIn(seed_hex, text)
        self.assertEqual(prompt.environment["secret_commitment"], secret_commitment(SECRET))

    def test_the_completed_episode_reveals_the_task_seed(self) -> None:
        ref = task_ref("private_eval", 2, ENV)
        result = score_reply(ref, gold(ref, ENV), ENV)
        self.assertEqual(result.reward, 1.0)
        info = result.info()
        self.assertEqual(info["task_seed"], private_task_seed(SECRET, 2).hex())
        self.assertEqual(info["environment"]["split"], "private_eval")

    def test_scoring_without_the_secret_or_with_another_raises_never_zero(self) -> None:
        ref = task_ref("private_eval", 0, ENV)
        with self.assertRaisesRegex(PrivateSeedError, "is not set"):
            score_reply(ref, gold(ref, ENV), {})
        with self.assertRaisesRegex(PrivateSeedError, "does not match the commitment this task was built with"):
            score_reply(ref, gold(ref, ENV), {"REDACTION_PRESSURE_PRIVATE_SEED": OTHER_SECRET})

    def test_private_tasks_differ_from_public_ones_and_by_secret(self) -> None:
        private = corpus.scored(private_task_seed(SECRET, 0))
        self.assertNotEqual(private, corpus.scored(private_task_seed(OTHER_SECRET, 0)))
        self.assertNotEqual(private, corpus.scored(public_task_seed("dev", 0)))

    def test_split_commitments_name_the_population(self) -> None:
        dev = split_commitment("dev")
        self.assertEqual(dev, split_commitment("dev"))
        self.assertNotEqual(dev, split_commitment("train"))
        one = split_commitment("private_eval", commitment=secret_commitment(SECRET))
        self.assertNotEqual(one, split_commitment("private_eval", commitment=secret_commitment(OTHER_SECRET)))
        with self.assertRaises(PrivateSeedError):
            split_commitment("private_eval")


if __name__ == "__main__":
    unittest.main()
