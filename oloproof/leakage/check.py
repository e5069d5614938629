"""What the gate reads from the leakage evidence: the status always; BLOCKED under
``leakage: required`` without a clean check of this test-set digest; leaked cases invalidate
every rule (this is not a FAIL of the model)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.checks import GateCheck, GateContext
from oloproof.files import display_path
from oloproof.identity import checker_identity
from oloproof.leakage.images import PIXELS
from oloproof.leakage.normalise import NORMALISATION
from oloproof.leakage.plan import testset_image_keys
from oloproof.leakage.record import SHOWN_IDS, LeakageResult, StoredRecord, all_records, id_list, records_of, short
from oloproof.result import CheckReport
from oloproof.verdicts import Verdict

if TYPE_CHECKING:
    from oloproof.config import Release
    from oloproof.testset import TestSet


# What a recorded check cannot tell (the guide's "What this cannot tell you"), said once in the gate's
# reports in place of the check's own near-duplicates sentence.
LIMITATION = (
    "Leakage the training file does not show: near-duplicates, resized or re-encoded images, rows used for tuning "
    "that are not in it."
)
NEAR_LIMITATION = (
    "Leakage the training file does not show: near copies edited beyond the declared near-duplicate thresholds, rows "
    "used for tuning that are not in it."
)


class LeakageCheck(GateCheck):
    """``leakage: required`` as a precondition; a leaky record invalidates every rule."""

    name = "leakage"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        return gate_report(ctx.release, ctx.testset, ctx.store.root)


def gate_report(release: Release, testset: TestSet, root: Path) -> CheckReport:
    """The leakage line of the gate: status always; BLOCKED or invalidating when it must. Every
    record of this test set counts (one per training file): one that found leaks invalidates every
    rule whatever the others say."""
    required = release.leakage == "required"
    line = release.document.line("leakage") if release.leakage else None

    def report(status: str, data: dict[str, Any], **more: Any) -> CheckReport:
        base = {"declared": release.leakage, "required": required, "testset_digest": testset.digest}
        return CheckReport(
            name="leakage", title="leakage", status=status, data=base | data, source=release.path, line=line, **more
        )

    found = all_records(root)
    mine = records_of(root, testset.digest, found)
    earlier = _not_rechecked(release, testset, found, mine)
    leaky = [stored for stored in mine if not stored.record.clean]
    if leaky:
        return _leaked(leaky, mine, report)
    lingering = _still_leaked(testset, earlier)
    if lingering:
        return _leaked_before(release, testset, lingering, report)
    near_policy = release.leakage_policy.near
    unchecked = [stored for stored in mine if stored.record.near is None]
    if near_policy is not None and unchecked and required:
        return report(
            "stale: near-duplicates not checked",
            {"status": "stale", "stale_record": _stale_data(unchecked[0])},
            verdict=Verdict.BLOCKED,
            reasons=("leakage_stale",),
            blocks=True,
            sentence=(
                f"leakage: required with near: {near_policy}, and the recorded check ({unchecked[0].path}) did not "
                f"look for near-duplicates: run {_rerun(release, unchecked[0].record)} (it runs with --near when "
                "release.yaml declares near)."
            ),
        )
    near_found = [stored for stored in mine if stored.record.near is not None and stored.record.near.cases]
    if near_policy == "invalidate" and near_found:
        return _near_leaked(near_found, mine, report)
    for stored in mine:
        record = stored.record
        if record.normalisation != NORMALISATION:
            return _outdated(release, stored, report, required=required)
        if record.images != PIXELS and testset_image_keys(testset, record.fields):
            return _outdated(release, stored, report, required=required, images=True)
    if mine:
        data = _record_data(mine[0]) | {"status": "clean", "records": [_record_data(stored) for stored in mine]}
        against = "; ".join(_against(stored.record) for stored in mine)
        changed = ""
        if any(
            stored.record.checker.get("source_digest") != _checker_digest() for stored in mine if stored.record.checker
        ):
            data["checker_changed"] = True
            changed = "; the checker has changed since"
        status = f"clean: {mine[0].record.n_cases} cases checked against {against}{changed}"
        if earlier:
            return _missing(release, earlier, report, required=required, status=status, data=data)
        return report(status, data, limitations=(_limitation(mine),), lines=_near_lines(mine))
    if earlier:
        return _stale(release, testset, earlier, report, required=required)
    rerun = _rerun(release, None)
    if required:
        return report(
            "not checked",
            {"status": "unchecked"},
            verdict=Verdict.BLOCKED,
            reasons=("leakage_unchecked",),
            blocks=True,
            sentence=(
                f"leakage: required, and no leakage check of {testset.path} ({short(testset.digest)}) is recorded: run "
                f"{rerun}."
            ),
        )
    why = (
        "leakage: optional in release.yaml"
        if release.leakage == "optional"
        else "release.yaml does not declare leakage"
    )
    return report(
        f"not checked: nobody has recorded whether these test cases appear in the training data ({why})",
        {"status": "unchecked"},
    )


def _limitation(mine: list[StoredRecord]) -> str:
    return NEAR_LIMITATION if mine and all(stored.record.near is not None for stored in mine) else LIMITATION


def _near_lines(mine: list[StoredRecord]) -> tuple[str, ...]:
    """What the records say of near-duplicates (they decide nothing here)."""
    lines = []
    for stored in mine:
        near = stored.record.near
        if near is None:
            lines.append(f"near-duplicates not checked against {stored.record.training_shown}")
        elif near.cases:
            lines.append(
                f"near copies of rows of {stored.record.training_shown} ({len(near.ids)}, reported only; near: "
                f"invalidate would make them invalidate the evidence; {near.options.text()}): "
                f"{id_list(near.ids, SHOWN_IDS)}"
            )
        else:
            lines.append(f"no near copies in {stored.record.training_shown} ({near.options.text()})")
    return tuple(lines)


def _near_leaked(
    near_found: list[StoredRecord], mine: list[StoredRecord], report: Callable[..., CheckReport]
) -> CheckReport:
    first = near_found[0].record
    assert first.near is not None
    ids = tuple(dict.fromkeys(case for stored in near_found for case in stored.record.near.ids))  # type: ignore[union-attr]
    files = ", ".join(stored.record.training_shown for stored in near_found)
    data = _record_data(near_found[0]) | {
        "status": "near_duplicates",
        "n_near": len(ids),
        "near_ids": list(ids),
        "records": [_record_data(stored) for stored in mine],
    }
    return report(
        f"{len(ids)} of {first.n_cases} cases are near copies of training rows ({first.near.options.text()})",
        data,
        verdict=Verdict.INSUFFICIENT_EVIDENCE,
        reasons=("near_duplicate_cases",),
        invalidates=("near_duplicate_cases",),
        sentence=(
            f"{len(ids)} test case(s) are near copies of rows of the training data ({files}) and release.yaml says "
            "near: invalidate, so every rule's evidence is invalid (this is not a FAIL of the model): remove them from "
            "the test set, or retrain without them, and check again."
        ),
        lines=(f"near-duplicate case ids ({len(ids)}): {id_list(ids, SHOWN_IDS)}",),
        limitations=(_limitation(mine),),
    )


def _own(release: Release, record: LeakageResult) -> bool:
    """A record made by this config (records made before the config was kept: by its test-set path)."""
    return record.testset_path == release.testset_path and record.config in ("", Path(release.path).name)


def _not_rechecked(
    release: Release, testset: TestSet, found: list[StoredRecord], mine: list[StoredRecord]
) -> list[StoredRecord]:
    """This config's newest record of each training file checked on an earlier version of the test
    set and not on this one, newest first."""
    newest: list[StoredRecord] = []
    for stored in found:  # newest first
        record = stored.record
        if record.testset_digest == testset.digest or not _own(release, record):
            continue
        if not any(_same_file(stored, other) for other in [*mine, *newest]):
            newest.append(stored)
    return newest


def _file_key(stored: StoredRecord) -> str | None:
    """The training key in a record's file name (``<digest>.<key>.json``); None for older records."""
    parts = stored.path.rsplit("/", 1)[-1].split(".")
    return parts[1] if len(parts) == 3 else None


def _same_file(one: StoredRecord, other: StoredRecord) -> bool:
    """Whether two records are of one training file: by key, or by name where a record has no key."""
    keys = _file_key(one), _file_key(other)
    if keys[0] is not None and keys[1] is not None:
        return keys[0] == keys[1]
    return one.record.training_name == other.record.training_name


def _rerun(release: Release, record: LeakageResult | None) -> str:
    """A command that re-records the check, as typed from the current directory."""
    config = display_path(Path(release.path))
    where = "" if config == "release.yaml" else f" -c {shlex.quote(config)}"
    if record is None:
        training = "FILE"
    elif record.training_path:
        given = Path(record.training_path)
        training = shlex.quote(display_path(given if given.is_absolute() else release.base_dir / given))
    else:  # outside the project (or a record made before paths were kept): the record has its name alone
        training = f"PATH/TO/{shlex.quote(record.training_name)}"
    return f"`oloproof leakage check{where} --training {training} --record`"


def _against(record: LeakageResult) -> str:
    return f"{record.rows_scanned:,} rows of {record.training_shown} ({record.options_text()}), {record.created_at}"


def _leaked(leaky: list[StoredRecord], mine: list[StoredRecord], report: Callable[..., CheckReport]) -> CheckReport:
    first = leaky[0].record
    ids = tuple(dict.fromkeys(case for stored in leaky for case in stored.record.leaked_ids))
    against = "; ".join(_against(stored.record) for stored in mine)
    changed = ""
    data = _record_data(leaky[0]) | {
        "status": "leaked",
        "n_leaked": len(ids),
        "leaked_ids": list(ids),
        "records": [_record_data(stored) for stored in mine],
    }
    if first.checker and first.checker.get("source_digest") != _checker_digest():
        data["checker_changed"] = True
        changed = "; the checker has changed since"
    files = ", ".join(stored.record.training_shown for stored in leaky)
    lines = [f"leaked case ids ({len(ids)}): {id_list(ids, SHOWN_IDS)}"]
    if len(mine) > 1:
        lines.extend(
            f"{stored.path}: {len(stored.record.leaked_ids)} leaked case(s) in {stored.record.training_shown}"
            for stored in mine
        )
    return report(
        f"{len(ids)} of {first.n_cases} cases found in the training data: checked against {against}{changed}",
        data,
        verdict=Verdict.INSUFFICIENT_EVIDENCE,
        reasons=("leaked_cases",),
        invalidates=("leaked_cases",),
        sentence=(
            f"{len(ids)} test case(s) appear in the training data ({files}), so every rule's evidence is invalid "
            "(this is not a FAIL of the model): remove them from the test set, or retrain without them, and check "
            "again."
        ),
        lines=tuple(lines),
        limitations=(LIMITATION,),
    )


def _still_leaked(testset: TestSet, earlier: list[StoredRecord]) -> list[tuple[StoredRecord, tuple[str, ...]]]:
    """Records of earlier versions of this test set (not re-checked since) that found leaked cases
    whose ids are still in it: changing the test set (one case added) must not make leaked cases
    that stayed look unchecked, or clean."""
    ids = {case.id for case in testset.cases}
    found = []
    for stored in earlier:
        kept = tuple(case for case in stored.record.leaked_ids if case in ids)
        if kept:
            found.append((stored, kept))
    return found


def _leaked_before(
    release: Release,
    testset: TestSet,
    lingering: list[tuple[StoredRecord, tuple[str, ...]]],
    report: Callable[..., CheckReport],
) -> CheckReport:
    ids = tuple(dict.fromkeys(case for _, kept in lingering for case in kept))
    files = ", ".join(stored.record.training_shown for stored, _ in lingering)
    rerun = " and ".join(_rerun(release, stored.record) for stored, _ in lingering)
    return report(
        f"{len(ids)} case(s) found in the training data by an earlier check are still in this test set",
        {"status": "leaked", "n_leaked": len(ids), "leaked_ids": list(ids)},
        verdict=Verdict.INSUFFICIENT_EVIDENCE,
        reasons=("leaked_cases",),
        invalidates=("leaked_cases",),
        sentence=(
            f"{len(ids)} test case(s) that the last check of {files} found in the training data (on an earlier version "
            f"of the test set) are still in it, under the same ids: the test set changed but they did not leave, so "
            f"every rule's evidence is invalid (this is not a FAIL of the model); remove them, or run {rerun}."
        ),
        lines=(f"leaked case ids still present ({len(ids)}): {id_list(ids, SHOWN_IDS)}",),
        limitations=(LIMITATION,),
    )


def _stale(
    release: Release,
    testset: TestSet,
    earlier: list[StoredRecord],
    report: Callable[..., CheckReport],
    *,
    required: bool,
) -> CheckReport:
    last = earlier[0]
    data = {"status": "stale", "stale_record": _stale_data(last), "stale_records": [_stale_data(s) for s in earlier]}
    what = (
        f"this config's last recorded check ({last.path}, {last.record.created_at}, against "
        f"{last.record.training_shown}) was made on test set {short(last.record.testset_digest)}, but {testset.path} "
        f"is now {short(testset.digest)}"
    )
    rerun = " and ".join(_rerun(release, stored.record) for stored in earlier)
    if required:
        return report(
            "stale: no check of this version of the test set is recorded",
            data,
            verdict=Verdict.BLOCKED,
            reasons=("leakage_stale",),
            blocks=True,
            sentence=f"leakage: required, and {what}: run {rerun}.",
        )
    return report(f"not checked for this version of the test set: {what}; run {rerun}", data)


def _missing(
    release: Release,
    earlier: list[StoredRecord],
    report: Callable[..., CheckReport],
    *,
    required: bool,
    status: str,
    data: dict[str, Any],
) -> CheckReport:
    """Clean records of this test set, but a training file an earlier version was checked against
    has no check of this one: its evidence does not carry over."""
    files = ", ".join(f"{stored.record.training_shown} ({stored.path})" for stored in earlier)
    what = f"not re-checked since the test set changed against {files}"
    rerun = " and ".join(_rerun(release, stored.record) for stored in earlier)
    data = data | {"status": "stale", "stale_records": [_stale_data(stored) for stored in earlier]}
    if required:
        return report(
            f"stale: {what}",
            data,
            verdict=Verdict.BLOCKED,
            reasons=("leakage_stale",),
            blocks=True,
            sentence=(
                f"leakage: required, and this test set was {what}: run {rerun} (or, for a file that is no longer "
                f"training data, delete every record of it: {_all_of(earlier)})."
            ),
        )
    return report(f"{status}; {what}: run {rerun}", data, limitations=(LIMITATION,))


def _all_of(earlier: list[StoredRecord]) -> str:
    """Where every record of these training files lies, on any version of the test set."""
    shown = []
    for stored in earlier:
        key = _file_key(stored)
        folder = stored.path.rsplit("/", 1)[0]
        shown.append(f"{folder}/*.{key}.json" if key else stored.path)
    return ", ".join(shown)


def _stale_data(stored: StoredRecord) -> dict[str, Any]:
    record = stored.record
    return {
        "testset_digest": record.testset_digest,
        "created_at": record.created_at,
        "training": record.training_shown,
        "clean": record.clean,
        "record": stored.path,
    }


def _outdated(
    release: Release,
    stored: StoredRecord,
    report: Callable[..., CheckReport],
    *,
    required: bool,
    images: bool = False,
) -> CheckReport:
    """A record of this test set made with another string normalisation, or comparing image paths
    as text: stale, like an edit."""
    record = stored.record
    stale: dict[str, Any] = _stale_data(stored) | {
        "normalisation": record.normalisation or None,
        "expected_normalisation": NORMALISATION,
    }
    data = {"status": "stale", "stale_record": stale}
    what = (
        f"the recorded check ({record.created_at}, against {record.training_shown}) compared strings with "
        f"{'an older normalisation' if not record.normalisation else 'normalisation ' + record.normalisation}, "
        f"not {NORMALISATION} (which also meets NFC/NFD, fullwidth, case-folded and zero-width variants)"
    )
    if images:
        stale["images"] = record.images or None
        what = (
            f"the recorded check ({record.created_at}, against {record.training_shown}) compared the test set's image "
            "paths as text, not the pictures they name"
        )
    rerun = _rerun(release, record)
    if required:
        return report(
            "stale: the recorded check compared image paths as text"
            if images
            else "stale: the recorded check used another string normalisation",
            data,
            verdict=Verdict.BLOCKED,
            reasons=("leakage_stale",),
            blocks=True,
            sentence=f"leakage: required, and {what}: run {rerun}.",
        )
    return report(f"not checked with the current {'image comparison' if images else 'normalisation'}: {what}", data)


def _record_data(stored: StoredRecord) -> dict[str, Any]:
    record = stored.record
    return {
        "record": stored.path,
        "checked_at": record.created_at,
        "cases_checked": record.n_cases,
        "n_leaked": len(record.leaked_ids),
        "leaked_ids": list(record.leaked_ids),
        "rows_scanned": record.rows_scanned,
        "options": {"fields": None if record.fields is None else list(record.fields), "round": record.digits},
        "training": {
            "path": record.training_path or None,
            "name": record.training_name,
            "format": record.training_format,
            "size_bytes": record.training_size,
            "sha256": record.training_sha256,
        },
        "checker": dict(record.checker),
        "near_duplicates_checked": record.near is not None,
        **({} if record.near is None else {"near": record.near.to_json()}),
    }


def _checker_digest() -> str:
    return checker_identity().source_digest
