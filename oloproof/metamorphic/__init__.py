"""Metamorphic checks (SPEC §5): predictions under declared change.

Each case gets a transformed copy (``oloproof.transforms``), the system runs on the copies, and
a ``metamorphic_relation`` evaluator compares outputs case by case. Modules:

- ``spec``: the ``metamorphic:`` section of release.yaml, typed;
- ``apply``: a transform applied to a test set (applicable cases, not-applicable reasons);
- ``labels``: human labels that validate image and text transforms;
- ``variants``: the system's stored run on the transformed cases, reused when it exists, handed to
  the evaluators as ``evaluators.base.Variant``.

The offline labelling page is a renderer: ``oloproof.report.labels_page``. Nothing is imported
here: ``config`` imports ``spec`` without pulling in the rest.
"""
