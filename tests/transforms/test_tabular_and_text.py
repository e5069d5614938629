"""Tabular and text transforms on real values: what each kind changes, and per-case seeding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.metamorphic.apply import transform_testset
from oloproof.metamorphic.spec import TransformSpec
from oloproof.testset import Case, CaseId
from oloproof.testset import TestSet as CaseSet
from oloproof.transforms.base import (
    ApplyEnv,
    Changed,
    SpecError,
    Unchanged,
    ValueProblem,
    case_seed,
    params_digest,
    split_path,
)
from oloproof.transforms.registry import REGISTRY

ENV = ApplyEnv(base_dir=Path("."), out_dir=Path("unused"), out_rel="unused")


def build(kind: str, **params: Any) -> Any:
    """Build a transform the way release.yaml does: schema defaults filled in, then build()."""
    spec = REGISTRY[kind]
    values = {key: prop.default for key, prop in spec.schema.props.items()}
    values.update(params)
    return spec.build(values)


def spec_of(kind: str, field: str, **params: Any) -> TransformSpec:
    transform = build(kind, **params)
    return TransformSpec(
        name="t", field=field, path=split_path(field), kind=kind, family=REGISTRY[kind].family, transform=transform,
        labels=None, digest=params_digest(kind, transform.params()), line=None, key_path="metamorphic.transforms[0]",
    )


def make_set(inputs: list[dict[str, Any]]) -> CaseSet:
    cases = tuple(Case(CaseId(f"c{i}"), value, {"label": 1}, None, None, i + 1) for i, value in enumerate(inputs))
    return CaseSet(path="test.jsonl", cases=cases, digest="sha256:x", has_groups=False)


def changed(outcome: Any) -> Any:
    assert isinstance(outcome, Changed), outcome
    return outcome.value


# --------------------------------------------------------------------------- numeric_noise


def test_numeric_noise_adds_scaled_gaussian_noise_per_field() -> None:
    noise = build("numeric_noise", scale={"income": 1000.0, "debt_ratio": 0.0}, seed=7)
    before = {"income": 52000.0, "debt_ratio": 0.31, "region": "north"}
    after = changed(noise.apply(before, case_id="a", env=ENV))
    assert after["debt_ratio"] == 0.31 and after["region"] == "north"  # scale 0 and undeclared keys untouched
    assert after["income"] != 52000.0 and abs(after["income"] - 52000.0) < 6000  # 6 sd
    assert before == {"income": 52000.0, "debt_ratio": 0.31, "region": "north"}  # the case is copied, not edited


def test_numeric_noise_has_the_declared_scale_across_cases() -> None:
    import numpy as np

    noise = build("numeric_noise", scale=2.5, seed=1)
    deltas = np.array([changed(noise.apply(10.0, case_id=f"c{i}", env=ENV)) - 10.0 for i in range(4000)])
    assert abs(deltas.mean()) < 0.15  # 4 standard errors of the mean (2.5 / sqrt(4000) = 0.04)
    assert deltas.std() == pytest.approx(2.5, rel=0.05)


def test_numeric_noise_keeps_integers_and_rounding_back_is_not_applicable() -> None:
    noise = build("numeric_noise", scale={"age": 0.3, "children": 5.0}, seed=3)
    outcomes = [noise.apply({"age": 40, "children": 2}, case_id=f"c{i}", env=ENV) for i in range(200)]
    values = [outcome.value for outcome in outcomes if isinstance(outcome, Changed)]
    assert values and all(isinstance(v["age"], int) and isinstance(v["children"], int) for v in values)
    floats = build("numeric_noise", scale=0.3, seed=3, keep_integers=False)
    assert isinstance(changed(floats.apply(40, case_id="c0", env=ENV)), float)
    # sd 0.3 on an integer rounds back to it about 90% of the time: those cases are not applicable.
    only_age = build("numeric_noise", scale={"age": 0.3}, seed=3)
    results = [only_age.apply({"age": 40}, case_id=f"c{i}", env=ENV) for i in range(300)]
    unchanged = sum(isinstance(result, Unchanged) for result in results)
    assert 200 < unchanged < 300


def test_numeric_noise_on_missing_null_and_wrong_types() -> None:
    noise = build("numeric_noise", scale={"income": 1.0, "address.zip": 1.0}, seed=0)
    assert isinstance(noise.apply({"other": 1}, case_id="a", env=ENV), Unchanged)
    assert isinstance(noise.apply({"income": None}, case_id="a", env=ENV), Unchanged)
    nested = changed(noise.apply({"income": None, "address": {"zip": 12345}}, case_id="a", env=ENV))
    assert nested["income"] is None and nested["address"]["zip"] != 12345
    with pytest.raises(ValueProblem, match="numeric_noise needs a number at 'income', got str"):
        noise.apply({"income": "52k"}, case_id="a", env=ENV)
    with pytest.raises(ValueProblem, match="got bool"):
        noise.apply({"income": True}, case_id="a", env=ENV)


def test_one_missing_number_does_not_shift_the_noise_of_the_others() -> None:
    noise = build("numeric_noise", scale={"a": 1.0, "b": 1.0}, seed=5)
    both = changed(noise.apply({"a": 0.0, "b": 0.0}, case_id="x", env=ENV))
    only_b = changed(noise.apply({"b": 0.0}, case_id="x", env=ENV))
    assert both["b"] == only_b["b"]


def test_numeric_noise_build_errors() -> None:
    with pytest.raises(SpecError, match="every scale is 0"):
        build("numeric_noise", scale={"a": 0.0})
    with pytest.raises(SpecError) as err:
        build("numeric_noise", scale={"a..b": 1.0})
    assert err.value.key == "scale.a..b"


# --------------------------------------------------------------------------- categorical_swap


def test_categorical_swap_on_the_field_and_under_it() -> None:
    flat = build("categorical_swap", mapping={"north": "south", "south": "north"})
    assert changed(flat.apply("north", case_id="a", env=ENV)) == "south"
    assert changed(flat.apply("south", case_id="a", env=ENV)) == "north"
    assert isinstance(flat.apply("east", case_id="a", env=ENV), Unchanged)
    per_key = build("categorical_swap", mapping={"region": {"north": "south"}, "plan.tier": {"gold": "silver"}})
    after = changed(per_key.apply({"region": "west", "plan": {"tier": "gold"}}, case_id="a", env=ENV))
    assert after == {"region": "west", "plan": {"tier": "silver"}}
    with pytest.raises(ValueProblem, match="categorical_swap maps strings; 'region' is int 3"):
        per_key.apply({"region": 3}, case_id="a", env=ENV)
    with pytest.raises(SpecError, match="not both"):
        build("categorical_swap", mapping={"north": "south", "region": {"a": "b"}})


# --------------------------------------------------------------------------- text


def test_typos_edit_the_declared_share_of_letters() -> None:
    typos = build("typos", rate=0.1, seed=2)
    text = "The quick brown fox jumps over the lazy dog near the riverbank"  # 51 letters
    after = changed(typos.apply(text, case_id="a", env=ENV))
    assert after != text and len(text) - 5 <= len(after) <= len(text)  # round(5.1) = 5 edits, deletions shorten
    assert sorted(after.replace(" ", "")) != [] and set(after) <= set(text)
    one = changed(build("typos", rate=0.01, seed=2).apply("good", case_id="a", env=ENV))  # at least one edit
    assert one != "good" and len(one) in (3, 4)
    assert isinstance(typos.apply("12 345 !", case_id="a", env=ENV), Unchanged)  # no letters
    with pytest.raises(ValueProblem, match="typos needs a string, got int"):
        typos.apply(7, case_id="a", env=ENV)


def test_case_whitespace_and_word_swap() -> None:
    assert changed(build("case", to="lower").apply("Good MOVIE", case_id="a", env=ENV)) == "good movie"
    assert changed(build("case", to="upper").apply("good", case_id="a", env=ENV)) == "GOOD"
    assert changed(build("case", to="title").apply("they're a good-looking pair", case_id="a", env=ENV)) == "They're A Good-Looking Pair"
    assert isinstance(build("case", to="lower").apply("already lower", case_id="a", env=ENV), Unchanged)
    assert changed(build("whitespace").apply("a good  film", case_id="a", env=ENV)) == "a  good    film"
    assert changed(build("whitespace", mode="collapse").apply("  a \n good\tfilm ", case_id="a", env=ENV)) == "a good film"
    assert changed(build("whitespace", mode="pad").apply("a", case_id="a", env=ENV)) == " a \n"
    assert isinstance(build("whitespace").apply("single", case_id="a", env=ENV), Unchanged)
    swap = build("word_swap", mapping={"left": "right", "right": "left", "New York": "Boston"})
    assert changed(swap.apply("turn left, then right in New York", case_id="a", env=ENV)) == "turn right, then left in Boston"
    assert isinstance(swap.apply("leftover rights", case_id="a", env=ENV), Unchanged)  # whole words only
    folded = build("word_swap", mapping={"good": "fine"}, ignore_case=True)
    assert changed(folded.apply("Good, GOOD, good", case_id="a", env=ENV)) == "Fine, FINE, fine"
    with pytest.raises(SpecError, match="maps the word to itself"):
        build("word_swap", mapping={"a": "a"})


def test_word_swap_ignoring_case_finds_the_replacement_by_the_matched_word() -> None:
    # Python's IGNORECASE matches "İT" to "it", but "İ".casefold() is "i̇" (two code points): the
    # replacement is looked up by which declared word matched, never by folding the text found.
    swap = build("word_swap", mapping={"it": "that"}, ignore_case=True)
    assert changed(swap.apply("İT is good", case_id="a", env=ENV)) == "THAT is good"
    assert changed(swap.apply("İt is it", case_id="a", env=ENV)) == "That is that"
    both = build("word_swap", mapping={"is": "was", "straße": "road", "K": "kelvin"}, ignore_case=True)
    assert changed(both.apply("İS the STRASSE ſtraße? \u212a", case_id="a", env=ENV)) == "WAS the STRASSE road? Kelvin"


# --------------------------------------------------------------------------- per-case seeding

CASES = st.lists(
    st.tuples(st.text(min_size=1, max_size=8), st.floats(-1e6, 1e6, allow_nan=False), st.text(max_size=30)),
    min_size=1, max_size=25, unique_by=lambda item: item[0],
)


@settings(max_examples=40, deadline=None)
@given(cases=CASES, data=st.data())
def test_shuffling_cases_gives_the_same_transformed_values(cases: list[tuple[str, float, str]], data: st.DataObject) -> None:
    order = data.draw(st.permutations(range(len(cases))))
    for kind, field, params in (
        ("numeric_noise", "x", {"scale": {"v": 3.0}, "seed": 11}),
        ("typos", "text", {"rate": 0.2, "seed": 11}),
    ):
        spec = spec_of(kind, field, **params)

        def run(indices: Any, *, spec: TransformSpec = spec) -> dict[str, Any]:
            made = make_set([{"x": {"v": cases[i][1]}, "text": cases[i][2]} for i in indices])
            made = CaseSet(path="t", digest="sha256:x", has_groups=False,
                           cases=tuple(case._replace(id=CaseId(cases[i][0])) for case, i in zip(made.cases, indices, strict=True)))
            result = transform_testset(spec, made, Path("."))
            return {case.id: case.inputs for case in result.testset.cases} | {k: None for k in result.not_applicable}

        assert run(range(len(cases))) == run(order)
        # A batch of one case gives that case the same value as the whole set does.
        first = run([order[0]])
        assert first.items() <= run(range(len(cases))).items()


def test_case_seed_is_sha256_of_seed_and_id() -> None:
    import hashlib

    assert case_seed(7, "c1") == int.from_bytes(hashlib.sha256(b"7\x00c1").digest()[:16], "big")
    assert case_seed(1, "23") != case_seed(12, "3")  # the separator keeps seed and id apart


def test_not_applicable_cases_are_counted_apart_from_changed_ones() -> None:
    spec = spec_of("categorical_swap", "features.region", mapping={"north": "south"})
    made = make_set([
        {"features": {"region": "north"}}, {"features": {"region": "east"}}, {"other": 1}, {"features": {"region": "north"}},
    ])
    result = transform_testset(spec, made, Path("."))
    assert result.applicable == ("c0", "c3")
    assert result.not_applicable == {"c1": "no value of this case is in the declared mapping", "c2": "no input 'features.region'"}
    assert [case.inputs for case in result.testset.cases] == [{"features": {"region": "south"}}] * 2
    assert [case.expected for case in result.testset.cases] == [{"label": 1}] * 2
