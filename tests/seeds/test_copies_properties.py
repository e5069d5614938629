"""Properties of how checkpoints count as seeds (oloproof.seeds.copies), on synthetic runs: the number
counted never depends on the order the checkpoints are declared in; a checkpoint whose own files
differ is never dropped; adding a byte-identical copy never adds a seed."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from oloproof.fingerprint import Fingerprint
from oloproof.runstore import RunRecord
from oloproof.seeds.copies import count_seeds


def record(index: int, weights: int | None, outcome: int) -> RunRecord:
    """A run of checkpoint ``index``: its weights file holds contents number ``weights`` (None: an
    imported run, no fingerprint); the predict script is shared by every run."""
    fingerprint = (
        None
        if weights is None
        else Fingerprint(
            digest=f"sha256:{index}-{weights}",
            files={"predict.py": "sha256:script", f"seeds/seed_{index}.npz": f"sha256:{weights:064x}"},
        )
    )
    return RunRecord(
        run_id=f"r{index}",
        version=f"s{index}",
        testset_digest="t",
        testset_path="t",
        config_digest="c",
        command=None if weights is None else f"python predict.py --weights seeds/seed_{index}.npz",
        imported_from="x.jsonl" if weights is None else None,
        started_at="",
        ended_at="",
        created_ns=index,
        duration_s=0.0,
        status="ok",
        failure=None,
        exit_statuses=(),
        n_cases=4,
        n_outputs=4,
        fingerprint=fingerprint,
    )


OUTCOMES = [np.array([1, 1, 1, 0]), np.array([1, 0, 1, 1]), np.array([1, 1, 1, 1])]
CHECKPOINTS = st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.integers(0, 2)), min_size=1, max_size=7)


def counted(spec: list[tuple[int | None, int]]) -> int:
    names = [f"s{i}" for i in range(len(spec))]
    records = [record(i, weights, outcome) for i, (weights, outcome) in enumerate(spec)]
    matrix = np.column_stack([OUTCOMES[outcome] for _, outcome in spec]).astype(float)
    return len(count_seeds(names, records, matrix).kept)


@settings(max_examples=300, deadline=None)
@given(CHECKPOINTS, st.randoms(use_true_random=False))
def test_the_count_does_not_depend_on_the_order(spec: list[tuple[int | None, int]], rnd: object) -> None:
    shuffled = list(spec)
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    assert counted(shuffled) == counted(spec)


@settings(max_examples=300, deadline=None)
@given(CHECKPOINTS)
def test_checkpoints_with_distinct_files_are_all_counted(spec: list[tuple[int | None, int]]) -> None:
    contents = {weights for weights, _ in spec if weights is not None}
    assert counted(spec) >= len(contents)


@settings(max_examples=300, deadline=None)
@given(CHECKPOINTS, st.data())
def test_a_byte_identical_copy_never_adds_a_seed(spec: list[tuple[int | None, int]], data: st.DataObject) -> None:
    identified = [item for item in spec if item[0] is not None]
    if not identified:
        return
    copy = data.draw(st.sampled_from(identified))
    assert counted([*spec, copy]) == counted(spec)
