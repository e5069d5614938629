"""The dev test set as every command loads it: read, then refused if it holds holdout cases, then
checked against the keys the declared transforms name.

A composition module beside the gate (the only other one that knows capabilities): ``run``,
``runs``, ``seeds``, ``compare``, ``gap``, ``metamorphic`` and the action need the dev set with its
guards but not the gate's orchestration, so they import this instead of ``oloproof.gate``.
"""

from __future__ import annotations

from oloproof.config import Release
from oloproof.files import display_path
from oloproof.holdout.cases import refuse_holdout_as_dev_set
from oloproof.metamorphic.variants import check_declared_paths
from oloproof.slices.select import check_rule_keys
from oloproof.testset import TestSet, load_testset


def load_dev_testset(release: Release) -> TestSet:
    path = release.resolve(release.testset_path)
    testset = load_testset(path, display=display_path(path))
    refuse_holdout_as_dev_set(release, testset, path)  # the holdout is read only by `holdout run`, against its budget
    check_rule_keys(release, testset)  # where:/per: keys exist before the system runs (oloproof.slices)
    for spec in release.metamorphic.transforms if release.metamorphic is not None else ():
        check_declared_paths(release, spec, testset)  # every declared transform, whether a rule reads it or not
    return testset
