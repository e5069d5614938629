"""The holdout is read only through Oloproof (issue 21, point 4). Verifiers' private_eval split
served exactly the 64 tasks Oloproof held as the holdout, and every completed trace reveals its
task seed: an unmetered read. Now Oloproof's holdout takes private indices from 500,000 on, the
Verifiers split serves only indices below that by default, and refuses any at or above it."""

from __future__ import annotations

import json
import os
import unittest
from unittest import mock

from helpers import SECRET
from redaction_pressure import cases
from redaction_pressure.splits import HOLDOUT_START, SECRET_ENV
from test_taskset import load


class HoldoutMeteredTest(unittest.TestCase):
    def test_the_default_private_eval_split_is_disjoint_from_the_holdout(self) -> None:
        holdout = {json.loads(line)["index"] for line in cases.private_cases(SECRET).splitlines()}
        self.assertEqual(len(holdout), 64)
        self.assertTrue(all(index >= HOLDOUT_START for index in holdout))
        with mock.patch.dict(os.environ, {SECRET_ENV: SECRET}):
            served = {task.data.index for task in load(split="private_eval")}
        self.assertEqual(len(served), 64)
        self.assertFalse(served & holdout)

    def test_verifiers_refuses_the_holdout_indices(self) -> None:
        message = "private_eval indices from 500000 on are the Oloproof holdout; Verifiers serves only 0..499999"
        with mock.patch.dict(os.environ, {SECRET_ENV: SECRET}):
            for config in ({"start": HOLDOUT_START}, {"start": HOLDOUT_START - 1, "num_tasks": 2}, {"start": 0, "num_tasks": HOLDOUT_START + 1}):
                with self.subTest(config), self.assertRaises(ValueError) as caught:
                    load(split="private_eval", **config)
                self.assertIn(message, str(caught.exception))
                self.assertIn("oloproof holdout run", str(caught.exception))
            self.assertEqual(len(load(split="private_eval", start=HOLDOUT_START - 2, num_tasks=2)), 2)


if __name__ == "__main__":
    unittest.main()
