"""What the gate reads from the leakage evidence: the status always; BLOCKED under
``leakage: required`` without a clean check of this test-set digest; leaked cases invalidate
every rule (this is not a FAIL of the model)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from oloproof.checks import GateCheck, GateContext
from oloproof.identity import checker_identity
from oloproof.leakage.images import PIXELS
from oloproof.leakage.normalise import NORMALISATION
from oloproof.leakage.plan import testset_image_keys
from oloproof.leakage.record import SHOWN_IDS, LeakageResult, id_list, other_records, read_record, record_path, short
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


class LeakageCheck(GateCheck):
    """``leakage: required`` as a precondition; a leaky record invalidates every rule."""

    name = "leakage"

    def precheck(self, ctx: GateContext) -> CheckReport | None:
        return gate_report(ctx.release, ctx.testset, ctx.store.root)


def gate_report(release: Release, testset: TestSet, root: Path) -> CheckReport:
    """The leakage line of the gate: status always; BLOCKED or invalidating when it must."""
    required = release.leakage == "required"
    line = release.document.line("leakage") if release.leakage else None

    def report(status: str, data: dict[str, Any], **more: Any) -> CheckReport:
        base = {"declared": release.leakage, "required": required, "testset_digest": testset.digest}
        return CheckReport(
            name="leakage", title="leakage", status=status, data=base | data, source=release.path, line=line, **more
        )

    record = read_record(root, testset.digest)
    if record is not None and record.normalisation != NORMALISATION:
        return _outdated(record, report, required=required)
    if record is not None and record.images != PIXELS and testset_image_keys(testset, record.fields):
        return _outdated(record, report, required=required, images=True)
    if record is not None:
        data = _record_data(record, root)
        against = (
            f"{record.rows_scanned:,} rows of {record.training_name} ({record.options_text()}), {record.created_at}"
        )
        changed = ""
        if record.checker and record.checker.get("source_digest") != _checker_digest():
            data["checker_changed"] = True
            changed = "; the checker has changed since"
        if record.clean:
            return report(
                f"clean: {record.n_cases} cases checked against {against}{changed}",
                data | {"status": "clean"},
                limitations=(LIMITATION,),
            )
        ids = record.leaked_ids
        return report(
            f"{len(ids)} of {record.n_cases} cases found in the training data: checked against {against}{changed}",
            data | {"status": "leaked"},
            verdict=Verdict.INSUFFICIENT_EVIDENCE,
            reasons=("leaked_cases",),
            invalidates=("leaked_cases",),
            sentence=(
                f"{len(ids)} test case(s) appear in the training data ({record.training_name}), so every rule's "
                f"evidence is invalid "
                "(this is not a FAIL of the model): remove them from the test set, or retrain without them, and check "
                "again."
            ),
            lines=(f"leaked case ids ({len(ids)}): {id_list(ids, SHOWN_IDS)}",),
            limitations=(LIMITATION,),
        )
    stale = other_records(root, testset.digest)
    rerun = f"`oloproof leakage check --training {stale[0].training_name if stale else 'FILE'} --record`"
    if stale:
        last = stale[0]
        data = {
            "status": "stale",
            "stale_record": {
                "testset_digest": last.testset_digest,
                "created_at": last.created_at,
                "training": last.training_name,
                "clean": last.clean,
                "record": str(record_path(root, last.testset_digest).relative_to(root)),
            },
        }
        what = (
            f"the last recorded check ({last.created_at}, against {last.training_name}) was made on test set "
            f"{short(last.testset_digest)}, but {testset.path} is now {short(testset.digest)}"
        )
        if required:
            return report(
                "stale: no check of this version of the test set is recorded",
                data,
                verdict=Verdict.BLOCKED,
                reasons=("leakage_stale",),
                blocks=True,
                sentence=f"leakage: required, and {what}: run {rerun}.",
            )
        return report(f"not checked for this version of the test set: {what}", data)
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


def _outdated(
    record: LeakageResult, report: Callable[..., CheckReport], *, required: bool, images: bool = False
) -> CheckReport:
    """A record of this test set made with another string normalisation, or comparing image paths
    as text: stale, like an edit."""
    stale: dict[str, Any] = {
        "testset_digest": record.testset_digest,
        "created_at": record.created_at,
        "training": record.training_name,
        "clean": record.clean,
        "normalisation": record.normalisation or None,
        "expected_normalisation": NORMALISATION,
    }
    data = {"status": "stale", "stale_record": stale}
    what = (
        f"the recorded check ({record.created_at}, against {record.training_name}) compared strings with "
        f"{'an older normalisation' if not record.normalisation else 'normalisation ' + record.normalisation}, "
        f"not {NORMALISATION} (which also meets NFC/NFD, fullwidth, case-folded and zero-width variants)"
    )
    if images:
        stale["images"] = record.images or None
        what = (
            f"the recorded check ({record.created_at}, against {record.training_name}) compared the test set's image "
            "paths as text, not the pictures they name"
        )
    rerun = f"`oloproof leakage check --training {record.training_name} --record`"
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


def _record_data(record: LeakageResult, root: Path) -> dict[str, Any]:
    return {
        "record": str(record_path(root, record.testset_digest).relative_to(root)),
        "checked_at": record.created_at,
        "cases_checked": record.n_cases,
        "n_leaked": len(record.leaked_ids),
        "leaked_ids": list(record.leaked_ids),
        "rows_scanned": record.rows_scanned,
        "options": {"fields": None if record.fields is None else list(record.fields), "round": record.digits},
        "training": {
            "name": record.training_name,
            "format": record.training_format,
            "size_bytes": record.training_size,
            "sha256": record.training_sha256,
        },
        "checker": dict(record.checker),
        "near_duplicates_checked": False,
    }


def _checker_digest() -> str:
    return checker_identity().source_digest
