"""Metamorphic checks (SPEC §5): predictions under declared change.

Each case gets a transformed copy (``oloproof.transforms``), the system runs on the copies, and
a ``metamorphic_relation`` evaluator compares outputs case by case. Modules:

- ``spec``: the ``metamorphic:`` section of release.yaml, typed;
- ``apply``: a transform applied to a test set (applicable cases, not-applicable reasons);
- ``labels``: human labels that validate image and text transforms;
- ``variants``: the system's stored run on the transformed cases, reused when it exists;
- ``page``: the offline labelling page.
"""

from __future__ import annotations

from oloproof.metamorphic.spec import METAMORPHIC, MetamorphicSpec, TransformSpec, build_metamorphic

# What a flip rate cannot tell (SPEC §5, the guide's "What this cannot tell you"): added to the
# gate's limitations whenever metamorphic transforms are declared.
LIMITATIONS = (
    "Metamorphic checks try only the declared transforms, at the declared size: a low flip rate says nothing about "
    "perturbations nobody declared, or about larger changes.",
    "A flip rate over the test set's cases is not an attacker's search: a worst-case input near any case may still flip.",
    "No robustness is certified: no bound is proven for any input; the flip rate is only a rate over these cases.",
)

__all__ = ["LIMITATIONS", "METAMORPHIC", "MetamorphicSpec", "TransformSpec", "build_metamorphic"]
