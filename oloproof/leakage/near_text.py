"""Near copies of test texts in the training texts: the n-gram overlap of LLM contamination studies
(13-grams, as in the GPT-3 paper's contamination analysis) and MinHash + LSH Jaccard similarity.

Both sides are tokenised the same way: the shared normaliser (NFKC, case-folded, format characters
dropped), then runs of word characters (punctuation and whitespace separate tokens, and are not
tokens). A case's **n-gram score** is the fraction of its distinct n-grams found in any training
text at the same key; the test set's n-grams are hashed into memory (the small side) and the
training texts stream past, so memory follows the test set, never the corpus. A text shorter than
n tokens (at least ``SHORT_MIN`` of them) has one n-gram: the whole text, found when a training text
contains it. The **Jaccard** similarity is between word sets; datasketch's MinHash LSH
indexes the cases' sets and proposes, per training text, the cases likely above the threshold;
each proposal is verified with the exact Jaccard of the two sets (the LSH only prunes).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from oloproof.leakage.normalise import normalise_string

SHINGLE = 1  # words per MinHash shingle: a word set, so swapped and inserted words keep most of it
SHORT_MIN = 5  # a text of fewer tokens is too short for containment: only the Jaccard test applies
NUM_PERM = 128
_WORD = re.compile(r"\w+")


def tokens(text: str) -> list[str]:
    return _WORD.findall(normalise_string(text))


def shingles(words: list[str]) -> set[str]:
    if len(words) < SHINGLE:
        return {" ".join(words)} if words else set()
    return {" ".join(words[i : i + SHINGLE]) for i in range(len(words) - SHINGLE + 1)}


def case_grams(words: list[str], ngram: int) -> set[int]:
    """A case text's distinct n-grams, hashed (a text shorter than ``ngram`` words is one n-gram)."""
    k = min(ngram, len(words))
    return {hash(tuple(words[i : i + k])) for i in range(len(words) - k + 1)}


@dataclass(slots=True)
class TextHit:
    grams_found: set[int] = field(default_factory=set)  # indices into the case key's n-grams
    jaccard: float = 0.0
    rows: set[int] = field(default_factory=set)


class TextIndex:
    """The test set's texts, per (case, key): n-grams hashed, word sets in an LSH index."""

    def __init__(self, texts: Iterable[tuple[int, str, str]], *, ngram: int, jaccard_threshold: float) -> None:
        from datasketch import MinHash, MinHashLSH  # lazy: start-up (an optional extra)

        self._minhash = MinHash
        self.ngram = ngram
        self.threshold = jaccard_threshold
        # The LSH proposes below the threshold (recall), the exact Jaccard decides; datasketch cannot band
        # for a threshold near 1, so the proposal threshold stays within [0.1, 0.9].
        self.lsh = MinHashLSH(threshold=min(0.9, max(0.1, jaccard_threshold - 0.1)), num_perm=NUM_PERM)
        template = MinHash(num_perm=NUM_PERM, seed=1)
        self.permutations, self.scheme = template.permutations, template.scheme  # made once, shared by every text
        self.grams: dict[tuple[str, int], dict[int, list[tuple[int, int]]]] = {}  # (key, k) → gram hash → entries
        self.n_grams: dict[tuple[int, str], int] = {}  # (case, key) → its number of distinct n-grams
        self.sets: dict[str, set[str]] = {}  # LSH name → the case key's shingle set
        self.entries: dict[str, tuple[int, str]] = {}  # LSH name → (case, key)
        self.keys: set[str] = set()
        for case, key, text in texts:
            words = tokens(text)
            if not words:
                continue
            self.keys.add(key)
            k = min(ngram, len(words))
            if len(words) >= SHORT_MIN or k == ngram:
                found = case_grams(words, ngram)
                self.n_grams[(case, key)] = len(found)
                table = self.grams.setdefault((key, k), {})
                for position, gram in enumerate(sorted(found)):
                    table.setdefault(gram, []).append((case, position))
            name = f"{case}\0{key}"
            self.sets[name] = shingles(words)
            self.entries[name] = (case, key)
            self.lsh.insert(name, self._signature(self.sets[name]), check_duplication=False)
        self._sorted_sizes: list[int] | None = None
        self._ks: dict[str, tuple[int, ...]] = {}
        for key, k in self.grams:
            self._ks[key] = (*self._ks.get(key, ()), k)

    @property
    def _sizes(self) -> list[int]:
        if self._sorted_sizes is None:
            self._sorted_sizes = sorted(len(items) for items in self.sets.values())
        return self._sorted_sizes

    def _jaccard_possible(self, size: int) -> bool:
        """Whether some case's word set could reach the threshold with a set of ``size`` words:
        |A ∩ B| / |A ∪ B| ≥ t needs t·|A| ≤ |B| ≤ |A|/t. An exact filter: it skips the MinHash of
        texts far shorter or longer than every case, and never loses a match."""
        sizes = self._sizes
        low = bisect.bisect_left(sizes, self.threshold * size - 1e-9)
        return low < len(sizes) and sizes[low] <= size / self.threshold + 1e-9

    def _signature(self, items: set[str]) -> Any:
        signature = self._minhash(num_perm=NUM_PERM, seed=1, permutations=self.permutations, scheme=self.scheme)
        signature.update_batch([item.encode("utf-8") for item in items])
        return signature

    def scan(self, key: str, text: str, row: int, hits: dict[tuple[int, str], TextHit]) -> None:
        """Mark what one training text at ``key`` holds of the cases' n-grams, and their Jaccard."""
        words = tokens(text)
        if not words:
            return
        for k in self._ks.get(key, ()):
            table = self.grams[(key, k)]
            for i in range(len(words) - k + 1):
                entries = table.get(hash(tuple(words[i : i + k])))
                if entries is None:
                    continue
                for case, position in entries:
                    hit = hits.setdefault((case, key), TextHit())
                    hit.grams_found.add(position)
                    hit.rows.add(row)
        mine = shingles(words)
        if not self._jaccard_possible(len(mine)):
            return
        for name in self.lsh.query(self._signature(mine)):
            case, case_key = self.entries[name]
            if case_key != key:
                continue
            theirs = self.sets[name]
            similarity = len(mine & theirs) / len(mine | theirs)
            if similarity >= self.threshold:
                hit = hits.setdefault((case, key), TextHit())
                hit.jaccard = max(hit.jaccard, similarity)
                hit.rows.add(row)

    def score(self, case: int, key: str, hit: TextHit) -> float:
        total = self.n_grams.get((case, key), 0)
        return len(hit.grams_found) / total if total else 0.0
