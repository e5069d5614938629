"""Identity is checked, not only recorded (issue 21, point 6), in the environment: the identity
names the regex engine and Python, the secret's entropy is checked, ``cases --check`` checks the
interpreter the gate will use, and ``{1000,}`` is accepted as the documented limit says."""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import stat
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

import regex
from helpers import SECRET
from redaction_pressure import cases
from redaction_pressure.budget import Budget
from redaction_pressure.envelope import RawRule
from redaction_pressure.identity import identity
from redaction_pressure.rules import compile_rules
from redaction_pressure.splits import SECRET_ENV, PrivateSeedError, read_secret, task_ref


class IdentityNamesTheEngineTest(unittest.TestCase):
    def test_identity_records_the_regex_and_python_versions(self) -> None:
        ident = identity(task_ref("dev", 0))
        self.assertEqual(ident["regex_version"], regex.__version__)
        self.assertEqual(ident["python"], f"{platform.python_implementation()} {platform.python_version()}")


class SecretEntropyTest(unittest.TestCase):
    def test_a_predictable_secret_is_refused(self) -> None:
        for weak in ("a" * 32, "ab" * 16, "abcd" * 10, "0123456789" * 4, "aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbbccccccccc"):
            with self.subTest(weak), self.assertRaisesRegex(PrivateSeedError, "is too predictable"):
                read_secret({SECRET_ENV: weak})
        with self.assertRaisesRegex(PrivateSeedError, r"\(1 distinct characters, about 0 bits estimated; at least 16 and 128 are required\)"):
            read_secret({SECRET_ENV: "a" * 32})

    def test_generated_secrets_pass(self) -> None:
        for _ in range(2000):
            secret = secrets.token_urlsafe(32)
            self.assertEqual(read_secret({SECRET_ENV: secret}), secret)
        self.assertEqual(read_secret({SECRET_ENV: SECRET}), SECRET)

    def test_the_message_never_echoes_the_secret(self) -> None:
        weak = "Zz" * 20
        with self.assertRaises(PrivateSeedError) as caught:
            read_secret({SECRET_ENV: weak})
        self.assertNotIn(weak, str(caught.exception))


class OpenCountTest(unittest.TestCase):
    def test_an_open_count_of_1000_is_accepted_1001_is_not(self) -> None:
        rules, errors = compile_rules((RawRule(0, "a{1000,}", ""), RawRule(1, "b{2,1000}", "")), Budget())
        self.assertEqual(errors, ())
        self.assertEqual(len(rules), 2)
        _, errors = compile_rules((RawRule(0, "a{1001,}", ""),), Budget())
        self.assertEqual([(e.code, e.message) for e in errors], [("pattern_too_complex", "rules[0]: repeat count 1001 at position 1 exceeds 1000")])


class CheckTheGatesInterpreterTest(unittest.TestCase):
    def run_check(self, python: str | None) -> tuple[int, str]:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            shutil.copytree(cases.ROOT / "redaction_pressure", root / "redaction_pressure", ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(cases.ROOT / "release.yaml", root / "release.yaml")
            target = root / "evals" / "holdout" / "private_eval.jsonl"
            target.parent.mkdir(parents=True)
            target.write_text(cases.private_cases(SECRET), encoding="utf-8")
            bindir = root / "bin"
            bindir.mkdir()
            if python is not None:
                (bindir / "python").write_text(python)
                (bindir / "python").chmod(stat.S_IRWXU)
            err = tempfile.TemporaryFile("w+")
            self.addCleanup(err.close)
            env = {SECRET_ENV: SECRET, "PATH": str(bindir)}
            with mock.patch.object(cases, "PRIVATE_FILE", target), mock.patch.object(cases, "ROOT", root), \
                    mock.patch.dict(os.environ, env), mock.patch.object(sys, "stderr", err):
                status = cases.main(["--check"])
            err.seek(0)
            return status, err.read()

    def test_an_interpreter_without_regex_fails_the_check(self) -> None:
        # What happened: a `python` without `regex` spent a holdout read after --check passed.
        status, err = self.run_check(f"#!{sys.executable} -I\nimport sys; sys.modules['regex'] = None\nexec(sys.argv[2])\n")
        self.assertEqual(status, 2, err)
        self.assertIn("cannot run the system (ModuleNotFoundError: import of regex halted; None in sys.modules)", err)
        self.assertIn("a read now would fail and still count", err)

    def test_no_python_on_path_fails_the_check(self) -> None:
        status, err = self.run_check(None)
        self.assertEqual(status, 2, err)
        self.assertIn("`python` (release.yaml's system.command) is not on PATH", err)

    def test_the_interpreter_that_can_run_the_system_passes(self) -> None:
        status, err = self.run_check(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
        self.assertEqual(status, 0, err)
        self.assertIn("and runs the system", err)


if __name__ == "__main__":
    unittest.main()
