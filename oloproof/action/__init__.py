"""The GitHub Action (SPEC §8), the only package that reads ``GITHUB_*``.

``main`` runs it (inputs in, the gate in-process, every report out); ``inputs`` validates the
``INPUT_*`` values; ``session`` is one run's output discipline (inert lines, capped annotations,
masked token, chowned files); ``publish`` writes the summary, annotations, check run and
outputs; ``github`` talks to the runner's environment and the Checks API.
"""
