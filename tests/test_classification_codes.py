"""The classification report's class coding (issue 20's hot path: each distinct label keyed once)
gives exactly what keying every case gives, for labels of any JSON type and mixture."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.classification import _ABSENT, _codes, _codes_general

SCALAR = st.one_of(
    st.integers(-2, 2),
    st.sampled_from([1.0, 0.0, -0.0, 2.5]),
    st.booleans(),
    st.sampled_from(["1", "a", "b"]),
    st.none(),
)
LABEL = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(st.sampled_from(["k"]), SCALAR, max_size=1))


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.tuples(st.one_of(SCALAR, st.just(_ABSENT)), st.one_of(SCALAR, st.just(_ABSENT))), max_size=30),
    st.lists(st.tuples(LABEL, st.one_of(LABEL, st.just(_ABSENT))), max_size=5),
)
def test_codes_equal_the_case_by_case_keying(scalars: list[tuple[Any, Any]], others: list[tuple[Any, Any]]) -> None:
    for pairs in (scalars, scalars + others):
        truth = [t for t, _ in pairs]
        predicted = [p for _, p in pairs]
        assert _codes(truth, predicted) == _codes_general(truth, predicted)


def test_one_type_and_mixed_types_keep_json_equality() -> None:
    # 1 and 1.0 are one class; "1" and true are others (as label_match compares).
    ordered, truth, predicted = _codes([1, 1.0, 2], [1.0, 2, 1])  # type: ignore[misc]
    assert len(ordered) == 2 and truth == [0, 0, 1] and predicted == [0, 1, 0]
    ordered, truth, predicted = _codes([1, "1", True], ["1", _ABSENT, 1])  # type: ignore[misc]
    assert len(ordered) == 3
    assert predicted[1] == -1 and truth[0] == predicted[2] and truth[1] == predicted[0]
