"""Version strings recorded on every task and trace (see README "Trace identity").

Bump ``CORPUS_VERSION`` whenever the same task seed would yield different records, and
``REWARD_SCHEMA_VERSION`` whenever the same rules on the same records would score differently.
"""

from __future__ import annotations

ENVIRONMENT = "redaction-pressure"
ENVIRONMENT_VERSION = "0.2.0"
CORPUS_VERSION = "3"  # 3: a secret grammar per task (corpus.grammar)
REWARD_SCHEMA_VERSION = "1"
