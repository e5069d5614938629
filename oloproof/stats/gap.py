"""The dev-to-holdout gap (STATISTICS.md §5).

The fit bought by tuning against the dev set is F = Δ_dev − Δ_hold, where each Δ is a paired
difference (current version minus the week-0 baseline, on the same cases) measured on its own
set. The two sets are independent, so their variances add; :func:`mover_difference` combines the
two (asymmetric) paired intervals without forcing symmetry.

When the sets differ in composition, compare them only after post-stratification onto one shared
set of weights fixed before looking at scores (``oloproof.stats.reweight``). Never average the two
sets' scores: they estimate different quantities.

All rates and differences are fractions (multiply by 100 for points).

References
----------
Zou GY, Donner A (2008). Construction of confidence limits about effect measures: a general
approach. Statistics in Medicine 27:1693–1702. (MOVER: method of variance estimates recovery.)
Newcombe RG (1998). Interval estimation for the difference between independent proportions.
Statistics in Medicine 17:873–890. (The same square-and-add construction for two rates.)
Cochran WG (1977). Sampling Techniques, 3rd ed., §5A.9 (post-stratification).
"""

from __future__ import annotations

import math

from oloproof.stats._validate import check_confidence
from oloproof.stats.interval import Interval

__all__ = ["mover_difference"]


def mover_difference(d_dev: Interval, d_hold: Interval, *, confidence: float) -> Interval:
    """Interval for F = Δ_dev − Δ_hold from two intervals on independent sets (MOVER).

    ``d_dev`` and ``d_hold`` are intervals (at level ``confidence``) for quantities estimated on
    independent data — normally the paired current-minus-baseline differences (Tango intervals)
    on the dev and the holdout set. The estimate F is in the same unit (fractions). Limits by
    Zou & Donner (2008), eqs. 7–8, keeping each input's asymmetry:

        lower = F − √((Δd − ℓd)² + (uh − Δh)²),   upper = F + √((ud − Δd)² + (Δh − ℓh)²).

    With symmetric (Wald) inputs this is F ± z·√(SE_dev² + SE_hold²). The result is always
    approximate. Raises ``ValueError`` if an input interval is not at level ``confidence``.
    """
    level = check_confidence(confidence)
    for name, interval in (("d_dev", d_dev), ("d_hold", d_hold)):
        if not math.isclose(interval.level, level, rel_tol=0.0, abs_tol=1e-12):
            raise ValueError(f"{name}.level must equal confidence ({level}) for MOVER, got {interval.level}")
        if not (interval.low <= interval.estimate <= interval.high):
            raise ValueError(
                f"{name} must satisfy low <= estimate <= high, got "
                f"[{interval.low}, {interval.high}] around {interval.estimate}"
            )
    fit = d_dev.estimate - d_hold.estimate
    low = fit - math.hypot(d_dev.estimate - d_dev.low, d_hold.high - d_hold.estimate)
    high = fit + math.hypot(d_dev.high - d_dev.estimate, d_hold.estimate - d_hold.low)
    # No clipping needed: √(a² + b²) ≤ a + b, so the limits stay within [ℓd − uh, ud − ℓh].
    return Interval(
        estimate=fit,
        low=low,
        high=high,
        level=level,
        method="mover",
        approximate=True,
    )
