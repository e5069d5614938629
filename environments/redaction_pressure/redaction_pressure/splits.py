"""Splits and task seeds.

- ``train`` and ``dev`` use separate, public, deterministic seed ranges: task ``index`` of a
  public split has seed number ``BASE + index``, and its 32-byte task seed is
  ``SHA-256(frame(PUBLIC_DOMAIN, split, seed number))``. The ranges do not overlap.
- ``private_eval`` task seeds are ``HMAC-SHA256(key=secret, msg=frame(PRIVATE_DOMAIN,
  "private_eval", index))`` where the secret is ``REDACTION_PRESSURE_PRIVATE_SEED`` (at least
  32 characters, no surrounding whitespace). The secret is never task data: tasks and traces
  carry only its commitment ``SHA-256(frame(COMMITMENT_DOMAIN, secret))``. A missing, short or
  wrong secret raises :class:`PrivateSeedError`; it never scores a silent 0.0.

Generate a secret with ``python -c "import secrets; print(secrets.token_urlsafe(32))"``: the
length rule is only a proxy for entropy (``"a" * 32`` passes it), and a commitment hides only
a high-entropy secret.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from redaction_pressure.framing import frame, sha256_hex

SECRET_ENV = "REDACTION_PRESSURE_PRIVATE_SEED"
MIN_SECRET_CHARS = 32
MIN_SECRET_BITS = 128  # estimated from the secret's own characters (see secret_bits)
MIN_SECRET_DISTINCT = 16
PUBLIC_DOMAIN = "redaction-pressure/public-task-seed/v1"
PRIVATE_DOMAIN = "redaction-pressure/private-task-seed/v1"
COMMITMENT_DOMAIN = "redaction-pressure/secret-commitment/v1"
SPLIT_DOMAIN = "redaction-pressure/split-commitment/v1"
GENERATE_HINT = "generate one with: python -c \"import secrets; print(secrets.token_urlsafe(32))\""


@dataclass(frozen=True, slots=True)
class PublicRange:
    base: int  # seed number of index 0
    size: int  # how many tasks the split holds


PUBLIC_SPLITS: dict[str, PublicRange] = {
    "train": PublicRange(base=0, size=100_000),
    "dev": PublicRange(base=1_000_000, size=64),
}
PRIVATE_SPLIT = "private_eval"
PRIVATE_SIZE = 1_000_000  # indices a private task may take; the holdout file lists the ones read
# private_eval indices from here on are Oloproof's holdout (cases.py writes them; every read is
# metered in READS.log). Verifiers' private_eval split serves only indices below it and refuses
# any at or above it, so the holdout is never read unmetered through vf-eval.
HOLDOUT_START = 500_000
SPLITS = (*PUBLIC_SPLITS, PRIVATE_SPLIT)


class SplitError(ValueError):
    """An unknown split or an index outside it."""


class PrivateSeedError(RuntimeError):
    """The private split was asked for without a usable secret (an infrastructure error)."""


def check_task(split: str, index: object) -> int:
    if split not in SPLITS:
        raise SplitError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    if isinstance(index, bool) or not isinstance(index, int):
        raise SplitError(f"task index must be an integer, got {index!r}")
    size = PUBLIC_SPLITS[split].size if split in PUBLIC_SPLITS else PRIVATE_SIZE
    if not 0 <= index < size:
        raise SplitError(f"task index {index} is outside split {split!r} (0 <= index < {size})")
    return index


def holdout_index(index: int) -> bool:
    """Whether a private_eval index belongs to Oloproof's holdout range."""
    return HOLDOUT_START <= index < PRIVATE_SIZE


def read_secret(environ: Mapping[str, str] | None = None) -> str:
    """The private secret from the environment, validated; never echoed in messages."""
    env = os.environ if environ is None else environ
    secret = env.get(SECRET_ENV)
    if secret is None or secret == "":
        raise PrivateSeedError(f"{SECRET_ENV} is not set; the private_eval split needs it ({GENERATE_HINT})")
    if secret != secret.strip():
        raise PrivateSeedError(f"{SECRET_ENV} begins or ends with whitespace (a copy-paste slip would change every task)")
    if len(secret) < MIN_SECRET_CHARS:
        raise PrivateSeedError(f"{SECRET_ENV} has {len(secret)} characters; at least {MIN_SECRET_CHARS} are required ({GENERATE_HINT})")
    distinct, bits = len(set(secret)), secret_bits(secret)
    if distinct < MIN_SECRET_DISTINCT or bits < MIN_SECRET_BITS:
        raise PrivateSeedError(
            f"{SECRET_ENV} is too predictable ({distinct} distinct characters, about {bits:.0f} bits estimated; at least "
            f"{MIN_SECRET_DISTINCT} and {MIN_SECRET_BITS} are required): its public commitment would give it away ({GENERATE_HINT})"
        )
    return secret


def secret_bits(secret: str) -> float:
    """An upper estimate of the secret's entropy: its length times the Shannon entropy of its
    own character frequencies. It refuses repetitive secrets (``"a" * 32`` is 0 bits,
    ``"ab" * 16`` 32 bits); it cannot tell a random secret from a long, varied, guessable one
    (a sentence), which is why the secret should come from ``secrets.token_urlsafe(32)``
    (about 43 characters, about 230 bits by this estimate)."""
    counts = Counter(secret)
    return abs(-sum(n * math.log2(n / len(secret)) for n in counts.values()))  # abs: never "-0"


def secret_commitment(secret: str) -> str:
    return "sha256:" + sha256_hex(COMMITMENT_DOMAIN, secret)


def public_task_seed(split: str, index: int) -> bytes:
    check_task(split, index)
    if split not in PUBLIC_SPLITS:
        raise SplitError(f"split {split!r} is not public")
    return hashlib.sha256(frame(PUBLIC_DOMAIN, split, PUBLIC_SPLITS[split].base + index)).digest()


def private_task_seed(secret: str, index: int) -> bytes:
    check_task(PRIVATE_SPLIT, index)
    return hmac.new(secret.encode("utf-8"), frame(PRIVATE_DOMAIN, PRIVATE_SPLIT, index), hashlib.sha256).digest()


def split_commitment(split: str, *, commitment: str | None = None) -> str:
    """What names a split's task population: the public range, or the secret's commitment."""
    if split in PUBLIC_SPLITS:
        rng = PUBLIC_SPLITS[split]
        return "sha256:" + sha256_hex(SPLIT_DOMAIN, split, rng.base, rng.size)
    if split == PRIVATE_SPLIT:
        if commitment is None:
            raise PrivateSeedError("the private split's commitment needs the secret's commitment")
        return "sha256:" + sha256_hex(SPLIT_DOMAIN, split, commitment)
    raise SplitError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskRef:
    """Which task: public everywhere (it names no seed)."""

    split: str
    index: int
    secret_commitment: str | None = None  # private tasks only

    @property
    def is_private(self) -> bool:
        return self.split == PRIVATE_SPLIT

    @property
    def id(self) -> str:
        return f"{self.split}-{self.index:04d}"


def task_ref(split: str, index: int, environ: Mapping[str, str] | None = None) -> TaskRef:
    check_task(split, index)
    if split == PRIVATE_SPLIT:
        return TaskRef(split=split, index=index, secret_commitment=secret_commitment(read_secret(environ)))
    return TaskRef(split=split, index=index)


def task_seed(ref: TaskRef, environ: Mapping[str, str] | None = None) -> bytes:
    """The task's seed. A private task re-reads the secret and checks it against the commitment
    the task was built with, so a wrong secret at scoring raises instead of scoring other tasks."""
    if not ref.is_private:
        return public_task_seed(ref.split, ref.index)
    secret = read_secret(environ)
    if secret_commitment(secret) != ref.secret_commitment:
        raise PrivateSeedError(
            f"{SECRET_ENV} does not match the commitment this task was built with ({ref.secret_commitment}); "
            "score with the secret that built the task"
        )
    return private_task_seed(secret, ref.index)
