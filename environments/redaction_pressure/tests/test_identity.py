"""Trace identity: versions, split commitment, and a digest of the installed sources."""

from __future__ import annotations

import hashlib
import platform
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import regex
from helpers import ROOT, SECRET
from redaction_pressure import versions
from redaction_pressure.framing import frame
from redaction_pressure.identity import PACKAGE_DIR, identity, source_digest, source_files
from redaction_pressure.splits import secret_commitment, split_commitment, task_ref


class SourceDigestTest(unittest.TestCase):
    def setUp(self) -> None:
        self.tmp = Path(tempfile.mkdtemp())
        self.copy = self.tmp / "redaction_pressure"
        shutil.copytree(PACKAGE_DIR, self.copy, ignore=shutil.ignore_patterns("__pycache__"))

    def tearDown(self) -> None:
        shutil.rmtree(self.tmp)

    def test_digest_is_the_framed_sorted_sources(self) -> None:
        digest = hashlib.sha256(frame("redaction-pressure/source-digest/v1"))
        for path in sorted(self.copy.rglob("*.py"), key=lambda p: p.relative_to(self.copy).as_posix()):
            digest.update(frame(path.relative_to(self.copy).as_posix(), path.read_bytes()))
        self.assertEqual(source_digest(self.copy), "sha256:" + digest.hexdigest())
        self.assertEqual(source_digest(self.copy), source_digest(PACKAGE_DIR))

    def test_crlf_checkouts_hash_the_same(self) -> None:
        before = source_digest(self.copy)
        for path in self.copy.rglob("*.py"):
            path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
        self.assertEqual(source_digest(self.copy), before)

    def test_any_behaviour_change_or_rename_changes_it(self) -> None:
        before = source_digest(self.copy)
        reward = self.copy / "reward.py"
        reward.write_text(reward.read_text().replace('"recall": 0.35', '"recall": 0.36'))
        changed = source_digest(self.copy)
        self.assertNotEqual(changed, before)
        (self.copy / "reward.py").rename(self.copy / "reward2.py")
        self.assertNotEqual(source_digest(self.copy), changed)

    def test_caches_are_not_sources(self) -> None:
        before = source_digest(self.copy)
        (self.copy / "__pycache__").mkdir()
        (self.copy / "__pycache__" / "x.py").write_text("junk")
        self.assertEqual(source_digest(self.copy), before)
        self.assertIn(PACKAGE_DIR / "taskset.py", source_files())


class IdentityTest(unittest.TestCase):
    def test_identity_names_versions_split_and_sources(self) -> None:
        ident = identity(task_ref("dev", 0))
        self.assertEqual(ident, {
            "environment": "redaction-pressure", "environment_version": versions.ENVIRONMENT_VERSION,
            "corpus_version": versions.CORPUS_VERSION, "reward_schema_version": versions.REWARD_SCHEMA_VERSION,
            "split": "dev", "split_commitment": split_commitment("dev"), "source_sha256": source_digest(),
            "regex_version": regex.__version__, "python": f"{platform.python_implementation()} {platform.python_version()}",
        })

    def test_private_identity_carries_the_commitment(self) -> None:
        env = {"REDACTION_PRESSURE_PRIVATE_SEED": SECRET}
        ident = identity(task_ref("private_eval", 0, env))
        self.assertEqual(ident["secret_commitment"], secret_commitment(SECRET))
        self.assertEqual(ident["split_commitment"], split_commitment("private_eval", commitment=secret_commitment(SECRET)))


class CoreWithoutVerifiersTest(unittest.TestCase):
    def test_the_core_imports_and_scores_with_verifiers_unimportable(self) -> None:
        code = (
            "import sys; sys.modules['verifiers'] = None\n"
            "from redaction_pressure import corpus, drbg, envelope, rules, scanner, reward, splits, identity, episode, baseline, system\n"
            "from redaction_pressure.oracle import oracle_reply\n"
            "r = episode.score_reply(splits.task_ref('dev', 1), oracle_reply(splits.task_seed(splits.task_ref('dev', 1))))\n"
            "assert r.reward == 1.0, r\n"
            "import redaction_pressure\n"
            "try:\n    redaction_pressure.RedactionPressureTaskset\nexcept ImportError:\n    print('lazy ok')\n"
        )
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(proc.stdout.strip(), "lazy ok")


if __name__ == "__main__":
    unittest.main()
