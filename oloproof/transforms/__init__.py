"""Transforms: one per ``perturb: {kind: ...}`` in release.yaml. The interface is ``base``, the list
of kinds ``registry``. Nothing is imported here."""
