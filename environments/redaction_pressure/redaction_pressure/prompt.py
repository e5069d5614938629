"""The one-turn prompt: the contract, the limits, and labelled sample records.

Sample records sit between ``<samples>`` and ``</samples>``, one JSON object per line:
``{"record": k, "text": ..., "secrets": [{"type", "start", "end", "text"}], "decoys": [{"kind",
"start", "end", "text"}]}`` with offsets in characters of ``text`` (end exclusive).
"""

from __future__ import annotations

import json
from typing import Any

from redaction_pressure.budget import CALL_TIMEOUT_S, EPISODE_BUDGET_S, RULE_BUDGET_S
from redaction_pressure.corpus import SCORED_RECORDS, Record
from redaction_pressure.rules import MAX_PATTERN_CHARS, MAX_REPEAT, MAX_RULES
from redaction_pressure.scanner import MAX_MATCHES_PER_RECORD

SYSTEM_PROMPT = f"""You write regular-expression redaction rules for a secret scanner.

You will see sample records from a stream of logs, config files, headers and notes, with every
secret span labelled, and with labelled decoys: look-alike text that is NOT secret. Your rules
will be run on {SCORED_RECORDS} later records of the same stream, which you do not see.

Secret types: api_key (API keys and access tokens: a literal prefix, then random characters),
cloud_access_key (AKIA.../ASIA... access key ids), email (personal addresses), password (the
value of a credential field, not its key), session_token (session id values and JWTs).
Every stream has its own formats (prefixes, alphabets, lengths, domains, field names), and its
decoys include look-alikes of other streams' secrets: learn the formats from these samples.

Reply with exactly one JSON object and nothing else (a single ```json fenced block is accepted):
{{"rules": [{{"pattern": "<regex>", "replacement": "[REDACTED]"}}, ...]}}

How rules are scored:
- Every rule runs on the original record text; a character is removed when any rule's match
  covers it (rules do not see each other's output, and their order does not matter).
- A secret counts as removed only when every character of its span is removed.
- Reward = 0.35 * recall (secrets fully removed / secrets)
         + 0.35 * precision (characters of fully removed secrets / all removed characters;
           0 when nothing is removed)
         + 0.30 * clean (1 only when every secret is fully removed and nothing else is touched).
- Any rule-validity problem below sets the whole reward to 0.

Rules and limits:
- Dialect: Python `re` syntax as implemented by the `regex` package (VERSION0); lookbehind,
  including variable-width lookbehind, is allowed. Inline flags such as (?i) are allowed, but
  not x (verbose), V0/V1, b, e or p. A literal brace must be escaped as \\{{.
- At most {MAX_RULES} rules; each pattern at most {MAX_PATTERN_CHARS} characters; counted repeats at most
  {MAX_REPEAT}, and nested counted repeats must not unroll to more than 10000 atoms.
- "replacement" must be exactly "[REDACTED]" or "" (nothing else: no group references).
- A pattern must never match the empty string (no zero-width matches).
- At most {MAX_MATCHES_PER_RECORD} matches per rule per record.
- Time: {CALL_TIMEOUT_S:g} s per rule per record, {RULE_BUDGET_S:g} s per rule, {EPISODE_BUDGET_S:g} s for all rules together. A rule
  that backtracks catastrophically ends the episode with reward 0.
- An empty list {{"rules": []}} is valid and removes nothing (reward 0)."""


def sample_line(k: int, rec: Record) -> str:
    return json.dumps({
        "record": k,
        "text": rec.text,
        "secrets": [{"type": s.kind, "start": s.start, "end": s.end, "text": rec.span_text(s)} for s in rec.secrets],
        "decoys": [{"kind": d.kind, "start": d.start, "end": d.end, "text": rec.span_text(d)} for d in rec.decoys],
    }, ensure_ascii=False)


def user_prompt(sample_records: tuple[Record, ...]) -> str:
    lines = "\n".join(sample_line(k, rec) for k, rec in enumerate(sample_records))
    return (
        f"Here are {len(sample_records)} labelled sample records (JSON lines; offsets are character positions in "
        "\"text\", end exclusive):\n<samples>\n"
        f"{lines}\n</samples>\n"
        "Write the rules now. Reply with the JSON object only."
    )


def parse_samples(prompt: str) -> list[dict[str, Any]]:
    """The labelled samples of a user prompt, as the model sees them (used by the baseline)."""
    try:
        body = prompt.split("<samples>\n", 1)[1].split("\n</samples>", 1)[0]
    except IndexError:
        raise ValueError("the prompt has no <samples> block") from None
    return [json.loads(line) for line in body.splitlines() if line.strip()]
