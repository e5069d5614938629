"""The reserved holdout set (SPEC §7): read only with a reason, against a budget, every read logged.

Modules, base first: ``spec`` (the ``holdout:`` section), ``log``, ``parse`` and ``verify``
(the pure READS.log format: entries and rendering, parsing a line, the hash-chain check), ``logfile`` (the log on
disk: lock and append), ``records`` (per-read outcome records), ``cases`` (the set itself and
refusing it as a dev set), ``budget``, ``read`` (one read), ``status`` (status, repair, budget
entries) and ``check`` (the gate's view). Nothing is imported here: ``config`` imports ``spec``
without pulling in the rest.
"""
