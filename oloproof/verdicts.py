"""Verdicts and reason codes (one rule's result is ``oloproof.result.RuleResult``).

The gate's verdict is the worst of its rules' verdicts, in the order of ``Verdict`` below.
Reason codes are stable strings (documented in docs/verdicts.md; a test keeps the two in
step): scripts may match on them.
"""

from __future__ import annotations

import enum

from oloproof.errors import ExitCode


class Verdict(str, enum.Enum):
    BLOCKED = "BLOCKED"
    FAIL = "FAIL"
    INSUFFICIENT_EVIDENCE = "INSUFFICIENT_EVIDENCE"
    MANUAL_REVIEW = "MANUAL_REVIEW"
    PASS = "PASS"

    @property
    def severity(self) -> int:
        """Higher is worse."""
        return _SEVERITY[self]

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode[self.value]


# Invalid or missing evidence outranks an approximate method (issue 16): a person asked for a
# "manual review" must never be reviewing contaminated or incomplete evidence.
_SEVERITY = {
    Verdict.PASS: 0,
    Verdict.MANUAL_REVIEW: 1,
    Verdict.INSUFFICIENT_EVIDENCE: 2,
    Verdict.FAIL: 3,
    Verdict.BLOCKED: 4,
}


def worst(verdicts: list[Verdict] | tuple[Verdict, ...]) -> Verdict:
    return max(verdicts, key=lambda verdict: verdict.severity, default=Verdict.PASS)


# Every reason code the gate can emit, with what a person should understand by it.
REASONS: dict[str, str] = {
    "interval_clears_threshold": "the whole interval lies on the right side of the threshold",
    "interval_misses_threshold": "the whole interval lies on the wrong side of the threshold",
    "interval_straddles_threshold": "the interval contains the threshold: the data cannot tell",
    "set_too_small": "even a perfect result on this many cases could not clear the threshold",
    "one_class": "an AUC rule's cases hold only one class of expected.label: there is no AUC to estimate",
    "bound_exceeded": (
        "an mae/rmse rule declares a bound (the largest absolute error possible) that an observed error exceeds: "
        "the bound is wrong, so its exact interval does not hold and the rule is not decided"
    ),
    "approximate_method": "only an approximate interval exists and the policy does not allow approximate methods",
    "few_clusters": "fewer than 30 groups: the clustered interval's large-sample approximation is not trustworthy",
    "missing_outputs": (
        "some cases have no usable output; they count as failures for the lower bound and passes for the upper"
    ),
    "run_failed": "the system crashed or timed out; the cases it did not answer count as missing",
    "regex_timeout": "a pattern exceeded its time budget on some cases; those cases count as missing",
    "judge_untrusted": "the judge's agreement with human labels does not meet the policy's judges thresholds",
    "judge_failed": "the judge command crashed or timed out",
    "judge_graded": (
        "a paired comparison (regression guard, compare, gap) or a recipe's seeds read only the judge's verdicts: the "
        "judge's errors shrink differences between versions and do not reach the interval, so it never PASSes or FAILs"
    ),
    "labels_not_representative": (
        "the judge passes the labelled cases at a different rate from the others (Fisher exact p < 0.001): the labels "
        "are not a random sample of the test cases, or the judge can tell which cases are labelled"
    ),
    "stale_labels": (
        "some human labels graded another output than this run's for their case: their grades are not used, and "
        "those cases count as people's failures for the lower bound and passes for the upper"
    ),
    "unbound_labels": (
        "some human labels do not say which output they graded and were assumed to grade this run's outputs "
        "(policy.judges.unbound_labels: allow)"
    ),
    "leaked_cases": "test cases were found in the training data: the evidence is invalid",
    "near_duplicate_cases": (
        "test cases are near copies of training rows (leakage check --near) and release.yaml says near: invalidate: "
        "the evidence is invalid"
    ),
    "leakage_unchecked": "leakage: required, and no clean leakage check is recorded for this test-set digest",
    "leakage_stale": "the recorded leakage check was made on a different test-set digest",
    "baseline_is_gated_version": (
        "the regression guard's baseline is the version being gated, so there is nothing to compare"
    ),
    "baseline_mismatch": "the baseline run was made on a different test set, so the paired comparison is impossible",
    "precondition_unmet": "a precondition of the gate is not met, so this rule was not decided",
    "too_few_seeds": "fewer than three seeds: the recipe's interval cannot be trusted (about five are needed)",
    "duplicate_seeds": (
        "checkpoints whose files are byte-identical count as one seed (a copy is no second seed); so do checkpoints "
        "that answered every case identically when no recorded file tells them apart"
    ),
    "deterministic_seeds": (
        "every checkpoint answered every case identically and their files differ: the training is deterministic "
        "under these seeds, so the recipe is its model (decide it with the plain rule on one checkpoint)"
    ),
    "seed_runs_missing": "a checkpoint named in the seeds file has no run",
    "seed_failed": (
        "a checkpoint's run failed (non-zero exit, crash, timeout): a failed seed, every case of it counted as a "
        "failure for the lower bound and a pass for the upper"
    ),
    "holdout_budget_spent": "the holdout's read budget is spent",
    "holdout_log_tampered": "the holdout read log fails its hash-chain check",
    "pull_request_base_unreadable": (
        "in a pull request, the base commit cannot be read: nothing it holds (holdout logs, leakage records, runs) can "
        "be shown to be kept"
    ),
    "leakage_record_removed": (
        "a pull request removes or replaces a leakage record that found leaks on the base branch: dropping it would "
        "turn a leaked test set clean"
    ),
    "holdout_log_moved": (
        "outcome records show reads of this holdout set under another log path: moving the log does not reset the "
        "budget"
    ),
    "holdout_budget_unlogged": (
        "holdout.budget was raised or removed in release.yaml without a logged `oloproof holdout budget` entry"
    ),
    "transform_declared": (
        "a declared (numeric or categorical) transform: no person can confirm it keeps meaning, so its rate never "
        "decides"
    ),
    "transform_unlabelled": (
        "some cases the image or text transform changed have no current human label saying the change kept their "
        "meaning"
    ),
    "transform_changes_meaning": (
        "people labelled some transformed cases as changing meaning, so the flip rate does not measure robustness"
    ),
    "transform_accepted": (
        "a declared transform a person accepted (accepted: {by, reason}): its rate decides, and who accepted it and "
        "why is shown beside the verdict"
    ),
    "no_applicable_cases": "the transform changed no case of the test set, so there is no rate to decide on",
    "no_selected_cases": "the rule's where: (or a per: row) selects no case, so there is no evidence either way",
    "latency_unconfirmed": (
        "the system reports its own latency_ms and clears the threshold, but oloproof's measured wall time per case "
        "does not: a self-reported figure a person must check"
    ),
    "latency_reported_accepted": (
        "the system's self-reported latency_ms decides although oloproof's measured wall time does not bear it out, "
        "because a person accepted it (accepted: {by, reason} on the rule, shown beside the verdict)"
    ),
    "where_value_unmatched": (
        "a value of the rule's where: list matches no case of this set (a typo or a missing class), so the rule would "
        "silently read fewer classes than it names"
    ),
}
