"""redaction-pressure v0.2: a one-turn Verifiers v1 environment (see README.md).

The core (corpus, envelope, rules, scanner, reward, splits, identity, episode) imports without
Verifiers. Verifiers' loader imports this package and reads the one ``Taskset`` subclass named
in ``__all__``; it is imported lazily, on first access, so ``import redaction_pressure.corpus``
never pulls in Verifiers.
"""

from __future__ import annotations

from typing import Any

# The one Taskset, and the one Harness Verifiers then uses by default instead of its
# code-executing `bash` agent (harness.py).
__all__ = ["RedactionPressureTaskset", "RedactionPressureHarness"]


def __getattr__(name: str) -> Any:
    if name == "RedactionPressureTaskset":
        from redaction_pressure.taskset import RedactionPressureTaskset

        return RedactionPressureTaskset
    if name == "RedactionPressureHarness":
        from redaction_pressure.harness import RedactionPressureHarness

        return RedactionPressureHarness
    raise AttributeError(f"module 'redaction_pressure' has no attribute {name!r}")
