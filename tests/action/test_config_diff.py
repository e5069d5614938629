"""What a pull request changed in a YAML config, key by key (``oloproof.action.config_diff``).

The red team of the PR evidence (RT-H1) hid a lowered threshold: list items were labelled by the
first of id/criterion/name/type in key order, so two rules sharing a criterion (or an id) became one
set of leaves, the second written over the first, and an edit of the first was never compared.
"""

from __future__ import annotations

import pytest

from oloproof.action.config_diff import changed_settings, leaves


def changes(base: str, head: str) -> list[str]:
    return changed_settings(base.encode(), head.encode(), "release.yaml")


def rules(*items: str) -> str:
    return "policy:\n  rules:\n" + "".join(f"    - {item}\n" for item in items)


def test_an_item_is_named_by_its_id_whatever_the_order_of_its_keys() -> None:
    base = rules("{criterion: correct, id: a, min: 0.9}", "{criterion: correct, id: b, min: 0.8}")
    head = base.replace("min: 0.9", "min: 0.1")
    assert changes(base, head) == ["policy.rules[id=a].min: 0.9 -> 0.1"]


@pytest.mark.parametrize(
    ("base", "edited", "listed"),
    [
        # two rules of one criterion and no id: the first one's threshold lowered
        (
            rules("{criterion: correct, min: 0.9}", "{criterion: correct, min: 0.5}"),
            ("min: 0.9}", "min: 0.1}"),
            "policy.rules[criterion=correct].min: 0.9 -> 0.1",
        ),
        # the same, the second one's
        (
            rules("{criterion: correct, min: 0.9}", "{criterion: correct, min: 0.5}"),
            ("min: 0.5}", "min: 0.1}"),
            "policy.rules[criterion=correct#2].min: 0.5 -> 0.1",
        ),
        # a duplicated id (the config refuses it, but the diff must still show both)
        (
            rules("{id: a, criterion: correct, min: 0.9}", "{id: a, criterion: correct, min: 0.5}"),
            ("min: 0.9}", "min: 0.1}"),
            "policy.rules[id=a].min: 0.9 -> 0.1",
        ),
        (
            rules("{id: a, criterion: correct, min: 0.9}", "{id: a, criterion: correct, min: 0.5}"),
            ("min: 0.5}", "min: 0.1}"),
            "policy.rules[id=a#2].min: 0.5 -> 0.1",
        ),
        # an id that looks like a disambiguated one is not taken for it
        (
            rules("{id: a, min: 0.9}", "{id: a, min: 0.8}", "{id: 'a#2', min: 0.7}"),
            ("min: 0.7}", "min: 0.1}"),
            "policy.rules[id=a#2#2].min: 0.7 -> 0.1",
        ),
        # items with nothing to name them: by position
        (
            rules("{min: 0.9}", "{min: 0.5}"),
            ("min: 0.9}", "min: 0.1}"),
            "policy.rules[0].min: 0.9 -> 0.1",
        ),
        # a list inside a list item: two steps of one type
        (
            "metamorphic:\n  transforms:\n    - name: t\n      steps:\n"
            "        - {type: noise, scale: 0.5}\n        - {type: noise, scale: 0.1}\n",
            ("scale: 0.5}", "scale: 9.0}"),
            "metamorphic.transforms[name=t].steps[type=noise].scale: 0.5 -> 9.0",
        ),
        # a dotted key and the same path written nested: two leaves, both compared
        (
            rules("{id: a, min: 0.9, where: {expected.label: 1, expected: {label: 2}}}"),
            ("label: 1,", "label: 0,"),
            "policy.rules[id=a].where.expected.label: 1 -> 0",
        ),
    ],
)
def test_no_edit_hides_behind_an_item_of_the_same_name(base: str, edited: tuple[str, str], listed: str) -> None:
    head = base.replace(*edited, 1)
    assert head != base
    assert listed in changes(base, head)


def test_every_scalar_is_a_leaf_of_its_own() -> None:
    text = rules(
        "{criterion: correct, min: 0.9}",
        "{criterion: correct, min: 0.5}",
        "{min: 0.4}",
        "{id: x, where: {expected.label: 1, expected: {label: 2}}}",
        "{id: x, where: {stratum: [easy, easy]}}",
    )
    found = leaves(text, "release.yaml")
    assert found is not None
    assert len(found) == 11, found  # every scalar of the file, none written over another
    assert found["policy.rules[criterion=correct#2].min"] .text == "0.5"
    assert found["policy.rules[id=x].where.expected.label#2"] .text == "2"
    assert found["policy.rules[id=x#2].where.stratum[1]"] .text == "easy"


def test_reordering_items_of_one_name_is_listed_not_hidden() -> None:
    # Two rules of one criterion swap places: with labels in file order, both thresholds move.
    base = rules("{criterion: correct, min: 0.9}", "{criterion: correct, min: 0.5}")
    head = rules("{criterion: correct, min: 0.5}", "{criterion: correct, min: 0.9}")
    assert changes(base, head) == [
        "policy.rules[criterion=correct].min: 0.9 -> 0.5",
        "policy.rules[criterion=correct#2].min: 0.5 -> 0.9",
    ]


@pytest.mark.parametrize(
    ("old", "new", "listed"),
    [
        ("min: 0.9", 'min: "0.9"', "policy.rules[id=a].min: 0.9 (float) -> 0.9 (str)"),
        ("advisory: true", 'advisory: "true"', "policy.rules[id=a].advisory: true (bool) -> true (str)"),
        ("advisory: true", "advisory: 'yes'", "policy.rules[id=a].advisory: true (bool) -> yes (str)"),
        ("min: 1", "min: 1.0", "policy.rules[id=a].min: 1 (int) -> 1.0 (float)"),
        ("where: {k: null}", 'where: {k: ""}', 'policy.rules[id=a].where.k: null (null) -> "" (str)'),
        ("where: {k: []}", "where: {k: '[]'}", "policy.rules[id=a].where.k: [] (list) -> [] (str)"),
        ("where: {k: {}}", "where: {k: '{}'}", "policy.rules[id=a].where.k: {} (mapping) -> {} (str)"),
        ("min: 0.9", "min: !odd 0.9", "policy.rules[id=a].min: 0.9 (float) -> 0.9 (!odd)"),
    ],
)
def test_a_value_that_changes_only_in_type_is_listed_with_both_types(old: str, new: str, listed: str) -> None:
    base = rules(f"{{id: a, criterion: correct, {old}}}")
    assert changes(base, base.replace(old, new)) == [listed]


@pytest.mark.parametrize(("old", "new"), [("min: 0.9", "min: 0.90"), ("advisory: true", "advisory: yes"), ("min: 1", "min: 0x1")])
def test_the_same_value_written_another_way_is_not_a_change(old: str, new: str) -> None:
    # As the config reads it (YAML 1.1, as the gate's loader): 0.90 is 0.9, yes is true.
    base = rules(f"{{id: a, criterion: correct, {old}}}")
    assert changes(base, base.replace(old, new)) == []


def test_two_long_values_that_differ_past_the_cut_are_shown_from_where_they_differ() -> None:
    base = rules("{id: a, criterion: correct, min: 0.9, description: '" + "x" * 80 + "a'}")
    [line] = changes(base, base.replace("xa'", "xb'"))
    old, new = line.split(": ", 1)[1].split(" -> ")
    assert old != new and old.endswith("xa") and new.endswith("xb"), line
