"""``oloproof.pairs``: one pairing for the regression guard, ``compare`` and ``gap``."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.pairs import pair
from oloproof.stats.paired import paired_difference

outcome = st.sampled_from([True, False, None])


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=40))
def test_without_missing_outputs_it_is_the_melded_and_tango_interval(cases: list[tuple[bool, bool]]) -> None:
    old, new = [o for o, _ in cases], [w for _, w in cases]
    paired = pair(old, new, confidence=0.95)
    b = sum(1 for o, w in cases if w and not o)
    c = sum(1 for o, w in cases if o and not w)
    exact = paired_difference(b, c, len(cases), confidence=0.95, method="melded")
    tango = paired_difference(b, c, len(cases), confidence=0.95, method="tango")
    assert (paired.b, paired.c) == (b, c)
    assert (paired.exact.low, paired.exact.high) == (exact.low, exact.high)
    assert (paired.tango.low, paired.tango.high) == (tango.low, tango.high)
    assert len(paired.regressed) == c and len(paired.improved) == b and not paired.missing


@settings(max_examples=15, deadline=None)
@given(st.lists(st.tuples(outcome, outcome), min_size=1, max_size=12))
def test_missing_outputs_widen_the_interval_to_cover_every_way_they_could_have_gone(
    cases: list[tuple[bool | None, bool | None]],
) -> None:
    old, new = [o for o, _ in cases], [w for _, w in cases]
    paired = pair(old, new, confidence=0.95)
    holes = [(i, side) for i, (o, w) in enumerate(cases) for side, v in (("old", o), ("new", w)) if v is None]
    for filling in itertools.islice(itertools.product([True, False], repeat=len(holes)), 16):
        o2, n2 = list(old), list(new)
        for (i, side), value in zip(holes, filling, strict=True):
            (o2 if side == "old" else n2)[i] = value
        full = pair(o2, n2, confidence=0.95)
        assert paired.exact.low <= full.exact.low + 1e-12 and full.exact.high <= paired.exact.high + 1e-12
