"""The ``leakage:`` key of release.yaml: whether a clean leakage check is a precondition."""

from __future__ import annotations

from oloproof.schema import Prop, Scalar

LEAKAGE = Prop(
    Scalar("str", enum=("required", "optional")),
    doc="required: the gate is BLOCKED until a clean leakage check of this test set is recorded.",
)
