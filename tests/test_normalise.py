"""The shared normaliser (oloproof/normalise.py): the near-copy form the holdout guard compares is
idempotent, absorbs edits at a value's edges, and keeps apart values that differ inside."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.normalise import fold_edges, near_copy_fields, normalise_string

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)
WORDS = st.from_regex(r"[a-z]([a-z0-9 ,;:'-]{0,30}[a-z0-9])?", fullmatch=True)  # not numbers: 0 == 00 by design


@settings(deadline=None)  # the first call builds the table of format characters
@given(TEXT)
def test_folding_is_idempotent(text: str) -> None:
    once = fold_edges(normalise_string(text))
    assert fold_edges(normalise_string(once)) == once


@given(WORDS, st.sampled_from(["", " ", "  ", "!", "?", ".", "!!", " ?!", "…", "\u3002"]), st.sampled_from(["", '"', "'"]))
def test_edits_at_the_edges_are_absorbed(words: str, tail: str, quote: str) -> None:
    edited = f"{quote}{words.upper()}{tail}{quote}"
    assert near_copy_fields({"text": edited}) == near_copy_fields({"text": words})


@given(WORDS, WORDS)
def test_values_that_differ_inside_stay_apart(one: str, other: str) -> None:
    if " ".join(one.split()) != " ".join(other.split()):
        assert near_copy_fields({"text": one}) != near_copy_fields({"text": other})
