"""The recipe across seeds (SPEC §6): ``spec`` is the ``seeds:`` section (or a seeds file),
``check`` decides the recipe rule for ``oloproof seeds`` and the gate. Nothing is imported here."""
