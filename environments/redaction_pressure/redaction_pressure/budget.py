"""One shared time budget per episode, for compiling and running every rule.

The budget is wall-clock time on a monotonic clock, started when the episode's rules start to
compile. Each regex call (one rule on one record) gets ``timeout = min(CALL_TIMEOUT_S, what
its rule has left, what the episode has left)``. The ``regex`` engine honours a timeout on any
thread (no signals) but notices it late: on this project's 2-core machines, under load, calls
ran up to 3.5 times their timeout (0.35 s for 0.1 s). Small per-call timeouts keep that
overshoot small, and every call's real duration is charged, so an episode ends within
``EPISODE_BUDGET_S`` plus one call's overshoot however hostile its patterns are. Records are a
few hundred characters: an honest rule needs microseconds per record.
"""

from __future__ import annotations

import time
from collections.abc import Callable

EPISODE_BUDGET_S = 2.0  # all rules, all scored records
RULE_BUDGET_S = 0.5  # one rule over all scored records
CALL_TIMEOUT_S = 0.1  # one rule on one record


class Budget:
    def __init__(self, total_s: float = EPISODE_BUDGET_S, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.total_s = total_s
        self._clock = clock
        self._start = clock()

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining(self) -> float:
        return self.total_s - self.elapsed()
