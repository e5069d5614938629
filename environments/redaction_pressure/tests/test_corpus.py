"""The corpus: a counter-mode hash DRBG, deterministic and unpredictable records."""

from __future__ import annotations

import hashlib
import itertools
import unittest

import helpers  # noqa: F401  (puts the package on sys.path when run from a checkout)
import regex
from redaction_pressure import corpus
from redaction_pressure.drbg import DOMAIN, HashDRBG
from redaction_pressure.framing import frame
from redaction_pressure.splits import public_task_seed

SEED = bytes(range(32))


class DRBGTest(unittest.TestCase):
    def test_stream_is_sha256_of_the_framed_seed_label_and_counter(self) -> None:
        # The reference, computed independently of the class: block i = SHA-256(frame(DOMAIN,
        # seed, label) + frame(i)), the stream is the blocks in order.
        expected = b"".join(hashlib.sha256(frame(DOMAIN, SEED, "x") + frame(i)).digest() for i in range(3))
        self.assertEqual(HashDRBG(SEED, "x").read(96), expected)

    def test_reads_in_any_chunking_give_the_same_stream(self) -> None:
        one = HashDRBG(SEED, "x").read(100)
        rng = HashDRBG(SEED, "x")
        self.assertEqual(rng.read(7) + rng.read(40) + rng.read(53), one)

    def test_labels_and_seeds_separate_streams(self) -> None:
        self.assertNotEqual(HashDRBG(SEED, "a").read(32), HashDRBG(SEED, "b").read(32))
        self.assertNotEqual(HashDRBG(SEED, "a").read(32), HashDRBG(bytes(32), "a").read(32))

    def test_below_is_in_range_and_covers_it(self) -> None:
        rng = HashDRBG(SEED, "below")
        values = [rng.below(7) for _ in range(700)]
        self.assertEqual(set(values), set(range(7)))
        # Each value 100 times in expectation; 40..160 is more than 6 standard deviations.
        for value in range(7):
            self.assertTrue(40 < values.count(value) < 160, values.count(value))
        self.assertEqual({rng.between(3, 5) for _ in range(200)}, {3, 4, 5})

    def test_short_seeds_and_empty_ranges_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "at least 16 bytes"):
            HashDRBG(b"short", "x")
        with self.assertRaisesRegex(ValueError, "n >= 1"):
            HashDRBG(SEED, "x").below(0)

    def test_frame_is_unambiguous(self) -> None:
        self.assertNotEqual(frame("ab", "c"), frame("a", "bc"))
        self.assertNotEqual(frame(1, 23), frame(12, 3))
        with self.assertRaises(TypeError):
            frame(True)


class CorpusTest(unittest.TestCase):
    def test_the_dev_corpus_is_pinned(self) -> None:
        # A change of grammar, DRBG or Python version that alters any record of the 64 dev
        # tasks changes this digest; bump CORPUS_VERSION and re-pin it deliberately.
        digest = hashlib.sha256()
        for index in range(64):
            seed = public_task_seed("dev", index)
            for rec in corpus.samples(seed) + corpus.scored(seed):
                digest.update(frame(rec.text, repr(rec.secrets), repr(rec.decoys)))
        self.assertEqual(digest.hexdigest(), PINNED_DEV_CORPUS)

    def test_records_are_deterministic(self) -> None:
        seed = public_task_seed("train", 5)
        self.assertEqual(corpus.scored(seed), corpus.scored(seed))
        self.assertEqual(corpus.record(seed, 3), corpus.record(seed, 3))

    def test_scored_records_follow_the_samples_in_the_same_stream(self) -> None:
        seed = public_task_seed("dev", 0)
        self.assertEqual(corpus.samples(seed)[0], corpus.record(seed, 0))
        self.assertEqual(corpus.scored(seed)[0], corpus.record(seed, corpus.SAMPLE_RECORDS))

    def test_spans_are_well_formed_and_match_their_type(self) -> None:
        kinds = set()
        for index in range(40):
            seed = public_task_seed("train", index)
            g = corpus.grammar(seed)
            alphabet = regex.escape(corpus.API_ALPHABETS[g.api_alphabet])
            grammar = {
                "api_key": rf"{regex.escape(g.api_prefix)}[{alphabet}]{{{g.api_min},{g.api_max}}}|{regex.escape(g.token_prefix)}[A-Za-z0-9]{{{g.token_length}}}",
                "cloud_access_key": r"(?:AKIA|ASIA)[A-Z2-7]{16}",
                "email": rf"[a-z]+(?:\.[a-z]+|[0-9]+)?@[a-z]+\.(?:{'|'.join(g.tlds)})",
                "password": r"[A-Za-z0-9!#%*+\-./:?@^_~]{10,20}",
                "session_token": rf"[0-9a-f]{{{g.session_length}}}|eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
            }
            for rec in corpus.samples(seed) + corpus.scored(seed):
                spans = sorted(rec.secrets + rec.decoys, key=lambda s: s.start)
                for left, right in itertools.pairwise(spans):
                    self.assertLessEqual(left.end, right.start, rec.text)
                for span in rec.secrets:
                    kinds.add(span.kind)
                    self.assertRegex(rec.span_text(span), f"^(?:{grammar[span.kind]})$")
                    self.assertNotEqual(rec.span_text(span), corpus.AWS_DOC_EXAMPLE)
        self.assertEqual(kinds, set(corpus.SECRET_TYPES))

    def test_every_task_has_a_secret_to_score(self) -> None:
        for index in range(64):
            self.assertTrue(any(rec.secrets for rec in corpus.scored(public_task_seed("dev", index))))

    def test_decoys_look_like_secrets(self) -> None:
        # The decoys are there to punish loose rules: each kind matches a loose pattern that
        # a careless rule-writer would use for some secret type.
        seen = set()
        for index in range(20):
            seed = public_task_seed("dev", index)
            g = corpus.grammar(seed)
            loose = {
                "sk_lookalike": regex.escape(g.api_prefix) + r"\w+", "aws_doc_example": r"AKIA[A-Z0-9]{16}", "masked_key": r"AKIA\S+",
                "package_spec": r"\S+@\S+", "ssh_remote": r"\w+@[\w.]+\.com", "hex_request_id": r"[0-9a-f]{32}",
                "commit_hash": r"[0-9a-f]{32}", "other_password_key": regex.escape(g.password_key) + r"=\S+",
                "session_timeout": regex.escape(g.session_key) + r"\w*=\w+", "password_hint": r"\w+ \w+",
                # another task's secret shapes: a reply memorising every task's grammar removes these
                "public_id": regex.escape(g.foreign_prefix) + r"[A-Za-z0-9]{24,40}",
                "public_value": regex.escape(g.foreign_session_key) + rf"=[0-9a-f]{{{g.session_length}}}",
            }
            for rec in corpus.scored(seed):
                for decoy in rec.decoys:
                    seen.add(decoy.kind)
                    self.assertIsNotNone(regex.search(loose[decoy.kind], rec.span_text(decoy)), decoy)
        self.assertEqual(seen, set(loose))


PINNED_DEV_CORPUS = "6f99f4f2d6486846f11514f44899c3c218a8238ced97f9c9fec5a7f3848f34d4"  # corpus version 3

if __name__ == "__main__":
    unittest.main()
