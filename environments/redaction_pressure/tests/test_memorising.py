"""Memorising one reply does not win (issue 21, point 5). With one grammar for every task, the 8
gold regexes scored 1.000 on every task of every split, so a policy could converge to one string.
Each task now draws its secret grammar from its seed (API-key prefix, alphabet and lengths, token
prefix and length, TLDs, credential and session field names, token length) and carries decoys
shaped like other tasks' secrets: the samples are needed to score well."""

from __future__ import annotations

import json
import statistics
import unittest

import regex
from helpers import SECRET, gold
from redaction_pressure import corpus
from redaction_pressure.episode import score_reply
from redaction_pressure.oracle import oracle_patterns
from redaction_pressure.splits import task_ref

DEV = [task_ref("dev", index) for index in range(64)]
ENV = {"REDACTION_PRESSURE_PRIVATE_SEED": SECRET}


class MemorisingTest(unittest.TestCase):
    def test_one_tasks_gold_reply_scores_low_on_the_others(self) -> None:
        for source in (DEV[0], DEV[17], task_ref("train", 5)):
            constant = gold(source)
            rewards = [score_reply(ref, constant).reward for ref in DEV if ref != source]
            with self.subTest(source.id):
                self.assertLess(statistics.mean(rewards), 0.5)
                self.assertLess(max(rewards), 0.75)
                self.assertEqual(sum(r == 1.0 for r in rewards), 0)
        private = [task_ref("private_eval", 500_000 + i, ENV) for i in range(8)]
        self.assertLess(statistics.mean(score_reply(ref, gold(DEV[0]), ENV).reward for ref in private), 0.5)

    def test_the_oracle_still_scores_one_on_each_task(self) -> None:
        for ref in DEV + [task_ref("private_eval", 500_000 + i, ENV) for i in range(8)]:
            self.assertEqual(score_reply(ref, gold(ref, ENV), ENV).reward, 1.0, ref)

    def test_grammars_vary_from_task_to_task(self) -> None:
        grammars = [corpus.grammar(corpus_seed) for corpus_seed in (task_ref_seed(ref) for ref in DEV)]
        for field in ("api_prefix", "api_alphabet", "token_prefix", "tlds", "password_key", "session_key", "cookie_key", "session_length"):
            self.assertGreaterEqual(len({getattr(g, field) for g in grammars}), 4, field)
        self.assertEqual(len({oracle_patterns(g) for g in grammars}), 64)

    def test_a_union_of_every_grammar_is_not_clean(self) -> None:
        # A reply memorising the whole grammar space at once removes the decoys shaped like
        # other tasks' secrets: it is almost never clean and stays far below the oracle.
        e = regex.escape
        api = "|".join(e(p) for p in corpus.API_PREFIXES + corpus.TOKEN_PREFIXES)
        keys = "|".join(e(k) for k in corpus.SESSION_KEYS + corpus.COOKIE_KEYS)
        passwords = "|".join(e(k) for k in corpus.PASSWORD_KEYS)
        tlds = "|".join(sorted(corpus.TLD_POOL, key=len, reverse=True))
        union = [
            rf"(?<![A-Za-z0-9_.-])(?:{api})[A-Za-z0-9]{{20,56}}(?![A-Za-z0-9])",
            r"(?<![A-Z0-9])(?:AKIA|ASIA)(?!IOSFODNN7EXAMPLE)[A-Z2-7]{16}(?![A-Za-z0-9*])",
            rf"(?<![\w.+-])[a-z]+(?:\.[a-z]+|[0-9]+)?@[a-z]+\.(?:{tlds})(?![\w:.-])",
            rf"(?<=(?<![A-Za-z0-9_.])(?:{passwords})=)[^\s\"&;,]+", rf"(?<=\"(?:{passwords})\": \")[^\"]+",
            rf"(?<=(?<![A-Za-z0-9_.])(?:{keys})=)[0-9a-f]{{24,48}}(?![0-9a-f])",
            r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        ]
        text = json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in union]})
        results = [score_reply(ref, text) for ref in DEV]
        self.assertLess(statistics.mean(r.reward for r in results), 0.7)
        self.assertLessEqual(sum(r.clean for r in results), 4)


def task_ref_seed(ref: object) -> bytes:
    from redaction_pressure.splits import task_seed

    return task_seed(ref)  # type: ignore[arg-type]


if __name__ == "__main__":
    unittest.main()
