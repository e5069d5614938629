"""Leakage (SPEC §4): which test cases appear, after normalisation, in the training data.

Modules, base first: ``spec`` (the ``leakage:`` key), ``normalise`` (one normaliser for every
value), ``plan`` (key paths and the hashed test set), ``match`` (parsed rows against a plan),
``readers`` (the training formats), ``scan`` (a file streamed through, in one process or
several), ``near_text``, ``near_image`` and ``near`` (near-duplicates, ``--near``), ``record``
(the result and its evidence record) and ``check`` (what the gate reads).
Nothing is imported here: ``config`` imports ``spec`` without pulling in the rest.
"""
