"""The Oloproof system command and the committed case files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unittest

from helpers import OTHER_SECRET, ROOT, SECRET
from redaction_pressure import cases
from redaction_pressure.splits import secret_commitment

SYSTEM = [sys.executable, "-m", "redaction_pressure.system"]


def run_system(stdin: str, *args: str, secret: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "REDACTION_PRESSURE_PRIVATE_SEED"}
    if secret is not None:
        env["REDACTION_PRESSURE_PRIVATE_SEED"] = secret
    return subprocess.run([*SYSTEM, *args], input=stdin, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def dev_cases(n: int) -> str:
    return "".join(json.dumps({"id": f"c{i}", "split": "dev", "index": i}) + "\n" for i in range(n))


def private_cases(n: int, commitment: str) -> str:
    return "".join(json.dumps({"id": f"p{i}", "split": "private_eval", "index": i, "commitment": commitment}) + "\n" for i in range(n))


class SystemTest(unittest.TestCase):
    def test_baseline_scores_each_dev_case(self) -> None:
        proc = run_system(dev_cases(3))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        outputs = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual([o["id"] for o in outputs], ["c0", "c1", "c2"])
        for out in outputs:
            self.assertTrue(0.0 <= out["reward"] <= 1.0)
            self.assertIsInstance(out["clean"], bool)
            self.assertEqual(out["split"], "dev")
            self.assertEqual(len(out["task_seed"]), 64)
            self.assertEqual(out["environment"]["split"], "dev")

    def test_oracle_writer_scores_one(self) -> None:
        proc = run_system(dev_cases(2), "--writer", "oracle")
        self.assertEqual([json.loads(line)["reward"] for line in proc.stdout.splitlines()], [1.0, 1.0])

    def test_private_cases_without_the_secret_fail_the_run_and_score_nothing(self) -> None:
        proc = run_system(dev_cases(2) + private_cases(2, secret_commitment(SECRET)))
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stdout, "")
        self.assertIn("REDACTION_PRESSURE_PRIVATE_SEED is not set; the private_eval split needs it", proc.stderr)

    def test_private_cases_with_another_secret_fail_the_run(self) -> None:
        proc = run_system(private_cases(1, secret_commitment(SECRET)), secret=OTHER_SECRET)
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stdout, "")
        self.assertIn("is not the secret these cases were written for", proc.stderr)
        self.assertNotIn(OTHER_SECRET, proc.stderr)

    def test_private_cases_with_the_secret_are_scored_without_revealing_seeds(self) -> None:
        proc = run_system(private_cases(2, secret_commitment(SECRET)), "--writer", "oracle", secret=SECRET)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        outputs = [json.loads(line) for line in proc.stdout.splitlines()]
        self.assertEqual([o["reward"] for o in outputs], [1.0, 1.0])
        for out in outputs:
            self.assertNotIn("task_seed", out)
            self.assertEqual(out["environment"]["secret_commitment"], secret_commitment(SECRET))
        self.assertNotIn(SECRET, proc.stdout + proc.stderr)

    def test_private_cases_need_their_commitment(self) -> None:
        proc = run_system(json.dumps({"id": "p", "split": "private_eval", "index": 0}) + "\n", secret=SECRET)
        self.assertEqual(proc.returncode, 2)
        self.assertIn("stdin:1: private_eval case 'p' needs the secret's 'commitment'", proc.stderr)

    def test_malformed_cases_fail_the_batch(self) -> None:
        cases_and_messages = {
            "not json\n": "stdin:1: not valid JSON",
            '{"split": "dev", "index": 0}\n': "stdin:1: expected an object with a string 'id'",
            '{"id": "a", "split": "dev"}\n': "stdin:1: case 'a' needs a string 'split' and an integer 'index'",
            '{"id": "a", "split": "dev", "index": 99}\n': "case 'a': task index 99 is outside split 'dev'",
            dev_cases(1) + dev_cases(1): "stdin:2: duplicate case id 'c0'",
        }
        for stdin, message in cases_and_messages.items():
            proc = run_system(stdin)
            self.assertEqual(proc.returncode, 2, stdin)
            self.assertEqual(proc.stdout, "")
            self.assertIn(message, proc.stderr)


class CaseFilesTest(unittest.TestCase):
    def test_the_committed_dev_set_is_the_dev_split(self) -> None:
        self.assertEqual(cases.DEV_FILE.read_text(encoding="utf-8"), cases.dev_cases())
        lines = cases.dev_cases().splitlines()
        self.assertEqual(len(lines), 64)
        self.assertEqual(json.loads(lines[5]), {"id": "dev-0005", "split": "dev", "index": 5, "expected": {"clean": True}})

    def test_private_cases_are_bound_to_the_secret(self) -> None:
        one, other = cases.private_cases(SECRET), cases.private_cases(OTHER_SECRET)
        self.assertNotEqual(one, other)
        first = json.loads(one.splitlines()[0])
        self.assertEqual(first, {"id": "private_eval-500000", "split": "private_eval", "index": 500_000,
                                 "commitment": secret_commitment(SECRET), "expected": {"clean": True}})
        self.assertNotIn(SECRET, one)

    def test_writing_and_checking_the_private_file(self) -> None:
        import tempfile
        from pathlib import Path
        from unittest import mock

        with tempfile.TemporaryDirectory() as tmp:
            target = Path(tmp) / "evals" / "holdout" / "private_eval.jsonl"
            # The gate's interpreter is checked by test_identity_checked; here only the files are.
            with mock.patch.object(cases, "PRIVATE_FILE", target), mock.patch.object(cases, "ROOT", Path(tmp)), \
                    mock.patch.object(cases, "interpreter_problem", lambda: None):
                with mock.patch.dict(os.environ, {"REDACTION_PRESSURE_PRIVATE_SEED": SECRET}):
                    self.assertEqual(cases.main(["--check"]), 2)  # no file yet
                    self.assertEqual(cases.main(["--private"]), 0)
                    self.assertEqual(target.read_text(encoding="utf-8"), cases.private_cases(SECRET))
                    self.assertEqual(cases.main(["--check"]), 0)
                    self.assertEqual(cases.main(["--private"]), 0)  # same secret: same file, allowed
                with mock.patch.dict(os.environ, {"REDACTION_PRESSURE_PRIVATE_SEED": OTHER_SECRET}):
                    self.assertEqual(cases.main(["--check"]), 2)
                    self.assertEqual(cases.main(["--private"]), 2)  # never overwritten for another secret
                    self.assertEqual(target.read_text(encoding="utf-8"), cases.private_cases(SECRET))
                with mock.patch.dict(os.environ, {}, clear=True):
                    self.assertEqual(cases.main(["--check"]), 2)
                self.assertEqual(cases.main(["--bogus"]), 2)


if __name__ == "__main__":
    unittest.main()
