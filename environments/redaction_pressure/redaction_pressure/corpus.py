"""The deterministic corpus: records with labelled secret spans and look-alike decoys.

A task's stream is record 0, 1, 2, ... where record ``k`` is drawn from
``HashDRBG(task_seed, "record/<k>")``. The prompt shows records ``0 .. SAMPLE_RECORDS-1`` with
their labels; the rules are scored on records ``SAMPLE_RECORDS .. SAMPLE_RECORDS+SCORED_RECORDS-1``
of the same stream. Since every record comes from its own hash-derived stream, the samples
carry no information about the scored records beyond the grammar they share.

Secret types (the span is what must disappear):

- ``api_key``: ``sk-`` + 32..48 base62 characters, or ``ghp_`` + 36 base62 characters;
- ``cloud_access_key``: ``AKIA``/``ASIA`` + 16 characters of ``[A-Z2-7]``;
- ``email``: a personal address (``name[.surname|digits]@domain.tld``);
- ``password``: the value after ``password=`` or in ``"password": "..."`` (context-only);
- ``session_token``: 32 lowercase hex after ``session=``/``sessionid=``, or a JWT.

Decoys (non-secret look-alikes that must survive): words ending in ``sk`` before a hyphen
(``disk-usage``), AWS's documented example key ``AKIAIOSFODNN7EXAMPLE``, masked keys
(``AKIA****************``), ``package@version`` specs, SSH remotes (``git@github.com:o/r.git``),
other ``*_password`` keys, request ids and commit hashes in hex, ``session_timeout``.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass

from redaction_pressure.drbg import HashDRBG

SAMPLE_RECORDS = 8
SCORED_RECORDS = 16

SECRET_TYPES = ("api_key", "cloud_access_key", "email", "password", "session_token")
BASE62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
BASE32_UPPER = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"
B64URL = string.ascii_letters + string.digits + "-_"
PASSWORD_ALPHABET = string.ascii_letters + string.digits + "!#%*+-./:?@^_~"
AWS_DOC_EXAMPLE = "AKIAIOSFODNN7EXAMPLE"

FIRST = ("ada", "bram", "chen", "dana", "elif", "farid", "greta", "hugo", "ines", "jonas", "kemal", "lena", "mira", "nils", "omar", "priya")
LAST = ("berg", "costa", "diaz", "eriksen", "fischer", "garcia", "haddad", "ito", "jensen", "kowal", "lopez", "moreau")
WORDS = (
    "alpha", "basin", "cobalt", "delta", "ember", "fjord", "granite", "harbor", "iris", "juniper", "kelp", "lumen", "maple", "nimbus",
    "onyx", "pixel",
)
DOMAINS = ("acme", "globex", "initech", "umbrella", "hooli", "vandelay", "stark", "wayne")
TLDS = ("com", "io", "net", "org", "dev")
PACKAGES = ("lodash", "react", "express", "left-pad", "chalk", "axios", "zod", "vite")
SK_WORDS = ("disk", "task", "risk", "desk", "mask", "flask")
SK_TAILS = ("usage", "runner", "score", "queue", "config", "cache")
SERVICES = ("auth", "billing", "gateway", "search", "worker", "ledger")
LEVELS = ("INFO", "WARN", "DEBUG")


@dataclass(frozen=True, slots=True)
class Span:
    kind: str  # a secret type, or a decoy kind
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Record:
    text: str
    secrets: tuple[Span, ...]
    decoys: tuple[Span, ...]

    def span_text(self, span: Span) -> str:
        return self.text[span.start:span.end]


class _Builder:
    """Appends text pieces and remembers where labelled ones landed."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.secrets: list[Span] = []
        self.decoys: list[Span] = []

    def put(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def secret(self, kind: str, text: str) -> None:
        self.secrets.append(Span(kind, self.length, self.length + len(text)))
        self.put(text)

    def decoy(self, kind: str, text: str) -> None:
        self.decoys.append(Span(kind, self.length, self.length + len(text)))
        self.put(text)

    def record(self) -> Record:
        return Record(text="".join(self.parts), secrets=tuple(self.secrets), decoys=tuple(self.decoys))


# ------------------------------------------------------------------------- values


def sk_key(r: HashDRBG) -> str:
    return "sk-" + r.text(BASE62, r.between(32, 48))


def api_key(r: HashDRBG) -> str:
    return sk_key(r) if r.chance(2, 3) else "ghp_" + r.text(BASE62, 36)


def cloud_key(r: HashDRBG) -> str:
    while True:
        key = r.choice(("AKIA", "ASIA")) + r.text(BASE32_UPPER, 16)
        if key != AWS_DOC_EXAMPLE:
            return key


def email(r: HashDRBG) -> str:
    local = r.choice(FIRST)
    shape = r.below(3)
    if shape == 1:
        local += "." + r.choice(LAST)
    elif shape == 2:
        local += str(r.between(1, 99))
    return f"{local}@{r.choice(DOMAINS)}.{r.choice(TLDS)}"


def password(r: HashDRBG) -> str:
    while True:
        value = r.text(PASSWORD_ALPHABET, r.between(10, 20))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def hex_token(r: HashDRBG, n: int = 32) -> str:
    return r.text(HEX, n)


def jwt(r: HashDRBG) -> str:
    return "eyJ" + r.text(B64URL, r.between(16, 30)) + ".eyJ" + r.text(B64URL, r.between(20, 40)) + "." + r.text(B64URL, r.between(27, 43))


def timestamp(r: HashDRBG) -> str:
    return f"2024-{r.between(1, 12):02d}-{r.between(1, 28):02d}T{r.between(0, 23):02d}:{r.between(0, 59):02d}:{r.between(0, 59):02d}Z"


def sk_lookalike(r: HashDRBG) -> str:
    return f"{r.choice(SK_WORDS)}-{r.choice(SK_TAILS)}"


def version(r: HashDRBG) -> str:
    return f"{r.between(0, 19)}.{r.between(0, 30)}.{r.between(0, 40)}"


# ------------------------------------------------------------------------- templates


def _log_login(r: HashDRBG, b: _Builder) -> None:
    b.put(f"{timestamp(r)} {r.choice(LEVELS)} {r.choice(SERVICES)}: login user=")
    b.secret("email", email(r))
    b.put(" session=")
    b.secret("session_token", hex_token(r))
    b.put(" request_id=")
    b.decoy("hex_request_id", hex_token(r))
    b.put(f" ip=10.{r.between(0, 255)}.{r.between(0, 255)}.{r.between(1, 254)}")


def _env_file(r: HashDRBG, b: _Builder) -> None:
    b.put("OPENAI_API_KEY=")
    b.secret("api_key", sk_key(r))
    b.put(f"\nLOG_LEVEL={r.choice(LEVELS).lower()}\nQUEUE=")
    b.decoy("sk_lookalike", sk_lookalike(r))
    if r.chance(1, 2):
        b.put("\nAWS_ACCESS_KEY_ID=")
        b.secret("cloud_access_key", cloud_key(r))
    b.put("\n# example from the docs: AWS_ACCESS_KEY_ID=")
    b.decoy("aws_doc_example", AWS_DOC_EXAMPLE)


def _json_config(r: HashDRBG, b: _Builder) -> None:
    b.put('{"user": "')
    b.secret("email", email(r))
    b.put('", "password": "')
    b.secret("password", password(r))
    b.put('", "password_hint": "')
    b.decoy("password_hint", f"{r.choice(WORDS)} {r.choice(WORDS)}")
    b.put(f'", "retries": {r.between(1, 9)}}}')


def _curl(r: HashDRBG, b: _Builder) -> None:
    b.put('curl -s -H "Authorization: Bearer ')
    if r.chance(1, 2):
        b.secret("api_key", "ghp_" + r.text(BASE62, 36))
    else:
        b.secret("session_token", jwt(r))
    b.put(f'" https://api.{r.choice(DOMAINS)}.dev/v1/{r.choice(WORDS)}?page={r.between(1, 50)}')


def _ci_notes(r: HashDRBG, b: _Builder) -> None:
    b.put("deps: ")
    b.decoy("package_spec", f"{r.choice(PACKAGES)}@{version(r)}")
    b.put(", ")
    b.decoy("package_spec", f"{r.choice(PACKAGES)}@{version(r)}")
    b.put("; remote ")
    b.decoy("ssh_remote", f"git@github.com:{r.choice(WORDS)}/{r.choice(WORDS)}.git")
    b.put("; step ")
    b.decoy("sk_lookalike", sk_lookalike(r))
    b.put(f" took {r.between(2, 600)}s")


def _db_log(r: HashDRBG, b: _Builder) -> None:
    b.put(f"{timestamp(r)} WARN db: connect host=db{r.between(1, 9)}.internal user={r.choice(WORDS)} password=")
    b.secret("password", password(r))
    b.put(" ")
    b.decoy("other_password_key", f"reset_password={r.choice(('true', 'false'))}")
    b.put(f" timeout={r.between(1, 60)}")


def _cookie(r: HashDRBG, b: _Builder) -> None:
    b.put("Cookie: theme=dark; sessionid=")
    b.secret("session_token", hex_token(r))
    b.put("; ")
    b.decoy("session_timeout", f"session_timeout={r.between(300, 7200)}")
    b.put("\nX-Request-Id: ")
    b.decoy("hex_request_id", hex_token(r))


def _git_log(r: HashDRBG, b: _Builder) -> None:
    b.put("commit ")
    b.decoy("commit_hash", hex_token(r, 40))
    name = r.choice(FIRST)
    b.put(f"\nAuthor: {name.title()} <")
    b.secret("email", email(r))
    b.put(">\n\n    rotate ")
    b.decoy("sk_lookalike", sk_lookalike(r))
    b.put(" keys; old id ")
    b.decoy("masked_key", "AKIA" + "*" * 16)


def _ops_chat(r: HashDRBG, b: _Builder) -> None:
    b.put(f"[{r.choice(SERVICES)}] new deploy key ")
    b.secret("cloud_access_key", cloud_key(r))
    b.put(", token ")
    b.secret("api_key", api_key(r))
    b.put(", ping ")
    b.secret("email", email(r))
    b.put(" (not ")
    b.decoy("aws_doc_example", AWS_DOC_EXAMPLE)
    b.put(")")


# (template, weight). _ci_notes holds decoys only: inaction and over-eager rules both cost.
TEMPLATES: tuple[tuple[Callable[[HashDRBG, _Builder], None], int], ...] = (
    (_log_login, 3), (_env_file, 3), (_json_config, 3), (_curl, 2), (_ci_notes, 2),
    (_db_log, 3), (_cookie, 2), (_git_log, 2), (_ops_chat, 2),
)
_TOTAL_WEIGHT = sum(weight for _, weight in TEMPLATES)


def record(task_seed: bytes, k: int) -> Record:
    """Record ``k`` of the task's stream."""
    r = HashDRBG(task_seed, f"record/{k}")
    pick = r.below(_TOTAL_WEIGHT)
    chosen = TEMPLATES[-1][0]
    for template, weight in TEMPLATES:
        if pick < weight:
            chosen = template
            break
        pick -= weight
    builder = _Builder()
    chosen(r, builder)
    return builder.record()


def samples(task_seed: bytes) -> tuple[Record, ...]:
    return tuple(record(task_seed, k) for k in range(SAMPLE_RECORDS))


def scored(task_seed: bytes) -> tuple[Record, ...]:
    """The records the rules are scored on. At least one holds a secret: if the draw gave none
    (possible but rare), later records of the stream are appended until one does."""
    records = [record(task_seed, SAMPLE_RECORDS + j) for j in range(SCORED_RECORDS)]
    k = SAMPLE_RECORDS + SCORED_RECORDS
    while not any(rec.secrets for rec in records):
        records.append(record(task_seed, k))
        k += 1
    return tuple(records)
