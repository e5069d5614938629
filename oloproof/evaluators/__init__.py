"""Evaluators: one per ``type:`` in release.yaml. The interface is ``base``, the list of kinds
``registry``. Nothing is imported here."""
