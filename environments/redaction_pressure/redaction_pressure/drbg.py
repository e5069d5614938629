"""A counter-mode SHA-256 deterministic random bit generator.

``block(i) = SHA-256(frame(DOMAIN, seed, label, i))``; the stream is the blocks in order. It
is used instead of ``random.Random`` for two reasons: Mersenne Twister outputs predict its later
outputs (sample records shown to the model would predict the scored ones), and ``random``'s
``choice``/``randrange``/``shuffle`` are not guaranteed stable across Python versions. Every
helper below is defined here by rejection sampling on the byte stream, so the corpus is a pure
function of the seed on every Python.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

from redaction_pressure.framing import frame

DOMAIN = b"redaction-pressure/drbg/v1"
T = TypeVar("T")


class HashDRBG:
    def __init__(self, seed: bytes, label: str) -> None:
        if len(seed) < 16:
            raise ValueError("a DRBG seed needs at least 16 bytes")
        self._prefix = frame(DOMAIN, seed, label)
        self._counter = 0
        self._buffer = b""

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha256(self._prefix + frame(self._counter)).digest()
            self._counter += 1
            self._buffer += block
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def below(self, n: int) -> int:
        """A uniform integer in [0, n), by rejection on 64-bit draws (no modulo bias)."""
        if n <= 0:
            raise ValueError("below() needs n >= 1")
        limit = (1 << 64) - ((1 << 64) % n)
        while True:
            value = int.from_bytes(self.read(8), "big")
            if value < limit:
                return value % n

    def between(self, low: int, high: int) -> int:
        """A uniform integer in [low, high], both ends included."""
        return low + self.below(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def chance(self, numerator: int, denominator: int) -> bool:
        return self.below(denominator) < numerator

    def text(self, alphabet: str, length: int) -> str:
        return "".join(alphabet[self.below(len(alphabet))] for _ in range(length))
