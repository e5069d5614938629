"""The caveat texts name the nominal error of the policy's own confidence (issue 17 audit)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from oloproof.stats.caveats import clustered_caveat, clustered_paired_caveat, nominal, ppi_caveat


@pytest.mark.parametrize(("confidence", "expected"), [(0.95, "2.5%"), (0.99, "0.5%"), (0.9, "5%"), (0.8, "10%")])
def test_the_nominal_one_sided_error(confidence: float, expected: str) -> None:
    assert nominal(confidence) == expected


@pytest.mark.parametrize("caveat", [clustered_caveat, clustered_paired_caveat, ppi_caveat])
def test_a_caveat_at_another_confidence_does_not_claim_the_measured_nominal(caveat: Callable[[float], str]) -> None:
    assert "against a nominal 2.5%" in caveat(0.95) and "0.5%" not in caveat(0.95)
    at_99 = caveat(0.99)
    assert "at 95% intervals, against a nominal 2.5%; this policy's 99% intervals have a nominal 0.5% a side" in at_99


def test_the_ppi_caveat_agrees_with_the_measured_table() -> None:
    # docs/statistics.md, "Coverage by regime": the worst one-sided error per label count is 30.7% (50 labels),
    # 18.9% (100) and 10.0% (300), each the lenient judge at a pass rate of 0.95.
    assert "measured up to 31% with 50 labels, 19% with 100 and 10% with 300" in ppi_caveat(0.95)
    assert "3-31%" not in ppi_caveat(0.95)
