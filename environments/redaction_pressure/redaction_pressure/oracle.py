"""The gold rules: written from the task's grammar, they score exactly 1.0 on that task.

Each task draws its own grammar from its seed (``corpus.grammar``: prefixes, alphabets, lengths,
TLDs, field names), so the gold rules differ from task to task and one task's gold reply scores
low on others: a memorised reply does not win. Used by the tests, by ``Task.validate``
(``vf-validate``'s gold check) and as a reference writer for the gate (``--writer oracle``).
They are not shown to any model.
"""

from __future__ import annotations

import json

import regex

from redaction_pressure.corpus import API_ALPHABETS, Grammar, grammar

_CLASSES = {"base62": "A-Za-z0-9", "lower_digits": "a-z0-9", "hex": "0-9a-f", "upper_digits": "A-Z0-9"}
assert set(_CLASSES) == set(API_ALPHABETS)


def oracle_patterns(g: Grammar) -> tuple[str, ...]:
    api = regex.escape(g.api_prefix)
    tok = regex.escape(g.token_prefix)
    tlds = "|".join(sorted(g.tlds, key=len, reverse=True))
    session_keys = "|".join(regex.escape(key) for key in (g.session_key, g.cookie_key))
    password_key = regex.escape(g.password_key)
    return (
        rf"(?<![A-Za-z0-9_.-]){api}[{_CLASSES[g.api_alphabet]}]{{{g.api_min},{g.api_max}}}(?![A-Za-z0-9])",
        rf"(?<![A-Za-z0-9_.-]){tok}[A-Za-z0-9]{{{g.token_length}}}(?![A-Za-z0-9])",
        r"(?<![A-Z0-9])(?:AKIA|ASIA)(?!IOSFODNN7EXAMPLE)[A-Z2-7]{16}(?![A-Za-z0-9*])",
        rf"(?<![\w.+-])[a-z]+(?:\.[a-z]+|[0-9]+)?@[a-z]+\.(?:{tlds})(?![\w:.-])",
        rf"(?<=(?<![A-Za-z0-9_.]){password_key}=)[^\s\"&;,]+",
        rf"(?<=\"{password_key}\": \")[^\"]+",
        rf"(?<=(?<![A-Za-z0-9_.])(?:{session_keys})=)[0-9a-f]{{{g.session_length}}}(?![0-9a-f])",
        r"eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
    )


def oracle_reply(task_seed: bytes) -> str:
    """The gold reply of the task with this seed."""
    return json.dumps({"rules": [{"pattern": p, "replacement": "[REDACTED]"} for p in oracle_patterns(grammar(task_seed))]})
