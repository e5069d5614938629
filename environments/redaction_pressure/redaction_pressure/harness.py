"""The taskset's own harness: one chat call, no tools, no code execution (issue 21, point 3).

Verifiers runs a taskset with the harness its package exports in ``__all__``, else with the
built-in ``bash`` agent, which executes the model's tool calls on the runtime's host. With
``bash`` a tool call in the model's only turn could write files (a ``.pth`` that rewrote the
scorer on later runs) and read ``REDACTION_PRESSURE_PRIVATE_SEED`` from its environment. So the
package exports this harness and Verifiers uses it by default: the chat program of Verifiers'
``null`` harness (a plain chat completion), with the private secret blanked in the environment
of the program it launches. Choosing another harness (``--env.agent.harness.id bash``) is an
explicit decision this environment does not support.
"""

from __future__ import annotations

from verifiers.v1.harness import Harness
from verifiers.v1.harnesses.null import NullHarness, NullHarnessConfig

from redaction_pressure.splits import SECRET_ENV


class RedactionPressureHarnessConfig(NullHarnessConfig):
    @property
    def resolved_env(self) -> dict[str, str]:
        # The runtime starts from the host's environment and lets this win: the program the
        # model talks through never holds the private secret, whatever the harness config says.
        return {**super().resolved_env, SECRET_ENV: ""}


class RedactionPressureHarness(NullHarness, Harness[RedactionPressureHarnessConfig]):
    """One turn of chat; executes nothing the model sends."""

    EXECUTES_CODE = False
