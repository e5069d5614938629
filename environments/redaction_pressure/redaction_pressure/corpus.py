"""The deterministic corpus: records with labelled secret spans and look-alike decoys.

A task's stream is record 0, 1, 2, ... where record ``k`` is drawn from
``HashDRBG(task_seed, "record/<k>")``. The prompt shows records ``0 .. SAMPLE_RECORDS-1`` with
their labels; the rules are scored on records ``SAMPLE_RECORDS .. SAMPLE_RECORDS+SCORED_RECORDS-1``
of the same stream. Since every record comes from its own hash-derived stream, the samples
carry no information about the scored records beyond the grammar they share.

Secret types (the span is what must disappear); each task's grammar (``grammar()``, drawn from
its seed) fixes the parts in angle brackets:

- ``api_key``: <api prefix> (``sk-``, ``rk-``, ``tok_`` ...) + <min>..<max> characters of <alphabet>
  (base62, lowercase+digits, hex, uppercase+digits), or <token prefix> (``ghp_``, ``glpat-`` ...)
  + <length> base62 characters;
- ``cloud_access_key``: ``AKIA``/``ASIA`` + 16 characters of ``[A-Z2-7]``;
- ``email``: a personal address (``name[.surname|digits]@domain.<tld>``, three TLDs per task);
- ``password``: the value after ``<key>=`` or in ``"<key>": "..."`` (context-only; <key> is
  ``password``, ``pwd``, ``secret`` ...);
- ``session_token``: <length> lowercase hex after ``<session key>=``/``<cookie key>=``, or a JWT.

Decoys (non-secret look-alikes that must survive): words running into the API prefix
(``disk-usage`` for ``sk-``), AWS's documented example key ``AKIAIOSFODNN7EXAMPLE``, masked keys
(``AKIA****************``), ``package@version`` specs, SSH remotes (``git@github.com:o/r.git``),
``reset_<key>``/``<key>_hint`` fields, request ids and commit hashes in hex, ``<session key>_timeout``.
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


# ------------------------------------------------------------------------- the task's grammar
#
# Each task draws its own secret grammar from its seed (``HashDRBG(task_seed, "grammar")``): the
# API-key prefix, alphabet and lengths, the token prefix and length, the e-mail domains' TLDs, the
# credential field name, the session field names and token length. One memorised reply (one
# task's gold rules) therefore misses most secrets of other tasks: the samples are needed.

API_PREFIXES = ("sk-", "sk_live_", "rk-", "key-", "tok_", "pk_", "api-", "sec_")
API_ALPHABETS = {"base62": BASE62, "lower_digits": string.ascii_lowercase + string.digits, "hex": HEX, "upper_digits": string.ascii_uppercase + string.digits}
TOKEN_PREFIXES = ("ghp_", "gho_", "glpat-", "xoxb-", "npm_", "hf_", "dop_v1_", "ya29.")
TLD_POOL = ("com", "io", "net", "org", "dev", "ai", "app", "co", "eu", "xyz", "cloud", "tech")
PASSWORD_KEYS = ("password", "passwd", "pwd", "pass", "secret", "db_password")
SESSION_KEYS = ("session", "sid", "sess", "auth_session", "ssid")
COOKIE_KEYS = ("sessionid", "session_id", "SID", "connect.sid", "PHPSESSID")
SK_HEADS = ("di", "ta", "ri", "de", "ma", "fla")


@dataclass(frozen=True, slots=True)
class Grammar:
    api_prefix: str
    api_alphabet: str  # a key of API_ALPHABETS
    api_min: int
    api_max: int
    token_prefix: str
    token_length: int
    tlds: tuple[str, ...]
    password_key: str
    session_key: str
    cookie_key: str
    session_length: int
    foreign_prefix: str  # another task's secret prefix: here a public id that must survive
    foreign_session_key: str  # another task's session field: here a public value that must survive


def grammar(task_seed: bytes) -> Grammar:
    """The task's secret grammar, a pure function of its seed."""
    r = HashDRBG(task_seed, "grammar")
    api_min = r.between(20, 40)
    tlds = sorted({r.choice(TLD_POOL) for _ in range(3)})
    api_prefix, token_prefix = r.choice(API_PREFIXES), r.choice(TOKEN_PREFIXES)
    session_key, cookie_key = r.choice(SESSION_KEYS), r.choice(COOKIE_KEYS)
    # Decoys shaped exactly like another task's secrets, so a reply covering every task's grammar
    # at once (a memorised union) removes them: only this task's samples say which is which.
    foreign_prefix = r.choice(tuple(p for p in (*API_PREFIXES, *TOKEN_PREFIXES) if p not in (api_prefix, token_prefix)))
    foreign_session_key = r.choice(tuple(k for k in (*SESSION_KEYS, *COOKIE_KEYS) if k not in (session_key, cookie_key)))
    return Grammar(
        api_prefix=api_prefix, api_alphabet=r.choice(tuple(API_ALPHABETS)), api_min=api_min,
        api_max=api_min + r.between(0, 16), token_prefix=token_prefix, token_length=r.between(24, 40),
        tlds=tuple(tlds), password_key=r.choice(PASSWORD_KEYS), session_key=session_key,
        cookie_key=cookie_key, session_length=2 * r.between(12, 24),
        foreign_prefix=foreign_prefix, foreign_session_key=foreign_session_key,
    )


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


def sk_key(r: HashDRBG, g: Grammar) -> str:
    return g.api_prefix + r.text(API_ALPHABETS[g.api_alphabet], r.between(g.api_min, g.api_max))


def token(r: HashDRBG, g: Grammar) -> str:
    return g.token_prefix + r.text(BASE62, g.token_length)


def api_key(r: HashDRBG, g: Grammar) -> str:
    return sk_key(r, g) if r.chance(2, 3) else token(r, g)


def cloud_key(r: HashDRBG) -> str:
    while True:
        key = r.choice(("AKIA", "ASIA")) + r.text(BASE32_UPPER, 16)
        if key != AWS_DOC_EXAMPLE:
            return key


def email(r: HashDRBG, g: Grammar) -> str:
    local = r.choice(FIRST)
    shape = r.below(3)
    if shape == 1:
        local += "." + r.choice(LAST)
    elif shape == 2:
        local += str(r.between(1, 99))
    return f"{local}@{r.choice(DOMAINS)}.{r.choice(g.tlds)}"


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


def sk_lookalike(r: HashDRBG, g: Grammar) -> str:
    """A word that runs into the API-key prefix (``disk-usage`` for ``sk-``): not a key."""
    return f"{r.choice(SK_HEADS)}{g.api_prefix}{r.choice(SK_TAILS)}"


def version(r: HashDRBG) -> str:
    return f"{r.between(0, 19)}.{r.between(0, 30)}.{r.between(0, 40)}"


# ------------------------------------------------------------------------- templates


def _log_login(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put(f"{timestamp(r)} {r.choice(LEVELS)} {r.choice(SERVICES)}: login user=")
    b.secret("email", email(r, g))
    b.put(f" {g.session_key}=")
    b.secret("session_token", hex_token(r, g.session_length))
    b.put(" request_id=")
    b.decoy("hex_request_id", hex_token(r))
    if r.chance(1, 2):
        b.put(" trace=")
        b.decoy("public_id", g.foreign_prefix + r.text(BASE62, r.between(24, 40)))
    b.put(f" ip=10.{r.between(0, 255)}.{r.between(0, 255)}.{r.between(1, 254)}")


def _env_file(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put("OPENAI_API_KEY=")
    b.secret("api_key", sk_key(r, g))
    b.put(f"\nLOG_LEVEL={r.choice(LEVELS).lower()}\nQUEUE=")
    b.decoy("sk_lookalike", sk_lookalike(r, g))
    if r.chance(1, 2):
        b.put("\nAWS_ACCESS_KEY_ID=")
        b.secret("cloud_access_key", cloud_key(r))
    b.put("\n# example from the docs: AWS_ACCESS_KEY_ID=")
    b.decoy("aws_doc_example", AWS_DOC_EXAMPLE)


def _json_config(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put('{"user": "')
    b.secret("email", email(r, g))
    b.put(f'", "{g.password_key}": "')
    b.secret("password", password(r))
    b.put(f'", "{g.password_key}_hint": "')
    b.decoy("password_hint", f"{r.choice(WORDS)} {r.choice(WORDS)}")
    b.put(f'", "retries": {r.between(1, 9)}}}')


def _curl(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put('curl -s -H "Authorization: Bearer ')
    if r.chance(1, 2):
        b.secret("api_key", token(r, g))
    else:
        b.secret("session_token", jwt(r))
    b.put(f'" https://api.{r.choice(DOMAINS)}.dev/v1/{r.choice(WORDS)}?page={r.between(1, 50)}')


def _ci_notes(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put("deps: ")
    b.decoy("package_spec", f"{r.choice(PACKAGES)}@{version(r)}")
    b.put(", ")
    b.decoy("package_spec", f"{r.choice(PACKAGES)}@{version(r)}")
    b.put("; remote ")
    b.decoy("ssh_remote", f"git@github.com:{r.choice(WORDS)}/{r.choice(WORDS)}.git")
    b.put("; build ")
    b.decoy("public_id", g.foreign_prefix + r.text(BASE62, r.between(24, 40)))
    b.put("; step ")
    b.decoy("sk_lookalike", sk_lookalike(r, g))
    b.put(f" took {r.between(2, 600)}s")


def _db_log(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put(f"{timestamp(r)} WARN db: connect host=db{r.between(1, 9)}.internal user={r.choice(WORDS)} {g.password_key}=")
    b.secret("password", password(r))
    b.put(" ")
    b.decoy("other_password_key", f"reset_{g.password_key}={r.choice(('true', 'false'))}")
    b.put(f" timeout={r.between(1, 60)}")


def _cookie(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put(f"Cookie: theme=dark; {g.cookie_key}=")
    b.secret("session_token", hex_token(r, g.session_length))
    b.put("; ")
    b.decoy("session_timeout", f"{g.session_key}_timeout={r.between(300, 7200)}")
    b.put("; ")
    b.decoy("public_value", f"{g.foreign_session_key}={hex_token(r, g.session_length)}")
    b.put("\nX-Request-Id: ")
    b.decoy("hex_request_id", hex_token(r))


def _git_log(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put("commit ")
    b.decoy("commit_hash", hex_token(r, 40))
    name = r.choice(FIRST)
    b.put(f"\nAuthor: {name.title()} <")
    b.secret("email", email(r, g))
    b.put(">\n\n    rotate ")
    b.decoy("sk_lookalike", sk_lookalike(r, g))
    b.put(" keys; old id ")
    b.decoy("masked_key", "AKIA" + "*" * 16)


def _ops_chat(r: HashDRBG, b: _Builder, g: Grammar) -> None:
    b.put(f"[{r.choice(SERVICES)}] new deploy key ")
    b.secret("cloud_access_key", cloud_key(r))
    b.put(", token ")
    b.secret("api_key", api_key(r, g))
    b.put(", ping ")
    b.secret("email", email(r, g))
    b.put(" (not ")
    b.decoy("aws_doc_example", AWS_DOC_EXAMPLE)
    b.put(")")


# (template, weight). _ci_notes holds decoys only: inaction and over-eager rules both cost.
TEMPLATES: tuple[tuple[Callable[[HashDRBG, _Builder, Grammar], None], int], ...] = (
    (_log_login, 3), (_env_file, 3), (_json_config, 3), (_curl, 2), (_ci_notes, 2),
    (_db_log, 3), (_cookie, 2), (_git_log, 2), (_ops_chat, 2),
)
_TOTAL_WEIGHT = sum(weight for _, weight in TEMPLATES)


def record(task_seed: bytes, k: int, g: Grammar | None = None) -> Record:
    """Record ``k`` of the task's stream."""
    g = grammar(task_seed) if g is None else g
    r = HashDRBG(task_seed, f"record/{k}")
    pick = r.below(_TOTAL_WEIGHT)
    chosen = TEMPLATES[-1][0]
    for template, weight in TEMPLATES:
        if pick < weight:
            chosen = template
            break
        pick -= weight
    builder = _Builder()
    chosen(r, builder, g)
    return builder.record()


def samples(task_seed: bytes) -> tuple[Record, ...]:
    g = grammar(task_seed)
    return tuple(record(task_seed, k, g) for k in range(SAMPLE_RECORDS))


def scored(task_seed: bytes) -> tuple[Record, ...]:
    """The records the rules are scored on. At least one holds a secret: if the draw gave none
    (possible but rare), later records of the stream are appended until one does."""
    g = grammar(task_seed)
    records = [record(task_seed, SAMPLE_RECORDS + j, g) for j in range(SCORED_RECORDS)]
    k = SAMPLE_RECORDS + SCORED_RECORDS
    while not any(rec.secrets for rec in records):
        records.append(record(task_seed, k, g))
        k += 1
    return tuple(records)
