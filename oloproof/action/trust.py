"""In a pull request, trust comes from the protected branch.

A pull request can put anything under ``.oloproof/``: a run imported under the declared version,
a failed run edited to "ok", a baseline that never existed, a shortened READS.log. Seals catch
hand edits, but anyone can compute a seal. So in a pull request the action trusts only what the
pull request's *base* commit already holds, byte for byte:

- refs and reuse count the base commit's runs only, each read as the base commit holds it: a run
  the pull request deletes, edits or replaces is read from the base commit (so deleting the newest
  run of a baseline's version changes nothing), and the runs a pull request adds are never used;
- whatever the base commit holds about a holdout (every log, the register, the outcome records;
  taken from the base commit's files, not from the pull request's release.yaml) must still be
  there as a regular file extending its base version (``oloproof.action.evidence``): removed,
  renamed, symlinked, shortened or rewritten evidence is BLOCKED;
- a leakage record the pull request adds or changes is an attestation by its author (the training
  data is not in CI to check it again); it is said so in the summary and an annotation.

The base commit is fetched when the checkout does not hold it (``actions/checkout`` fetches one
commit by default). When it cannot be had, nothing stored is trusted and a holdout log cannot be
verified: BLOCKED, saying how to fix the checkout.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from oloproof.action.config_diff import changed_settings
from oloproof.action.evidence import current_bytes, evidence_problems, from_top, repository_top, unverifiable_problems
from oloproof.action.github import ActionEnv
from oloproof.action.store_diff import store_changes
from oloproof.config import Release
from oloproof.errors import StoreError
from oloproof.files import read_evidence
from oloproof.holdout.log import printable
from oloproof.holdout.verify import verify
from oloproof.leakage.record import LeakageResult
from oloproof.result import CheckReport
from oloproof.runstore import PinnedRuns
from oloproof.store import MAX_LOG_BYTES, MAX_RECORD_BYTES, leakage_dir, store_dir, store_name
from oloproof.store import shown as store_shown
from oloproof.vcs import git_bytes, git_output
from oloproof.verdicts import Verdict

FETCH_TIMEOUT_S = 60.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BaseTrust:
    """What the pull request's base commit holds, for the gate to trust."""

    base_sha: str
    available: bool  # the base commit could be read
    checkout: bool = True  # the project is inside a git checkout (a .git above it), as on a runner
    # run id -> file name (run.json, outputs.jsonl) -> git blob id of it at the base
    run_files: dict[str, dict[str, str]] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    object_format: str = "sha1"  # the repository's hash for object ids (sha1, or sha256)

    def base_bytes(self, path: Path) -> bytes | None:
        """A file as the base commit holds it (None when it does not, or cannot be read)."""
        if not self.available:
            return None
        top = repository_top(path.parent if path.parent.exists() else Path.cwd())
        relative = from_top(top, path.absolute())
        return None if relative is None else git_bytes(top, "show", f"{self.base_sha}:{relative}")

    def pinned_runs(self, root: Path) -> PinnedRuns:
        """The base commit's runs, for a ``RunStore`` in a pull request: refs resolve over them
        alone, each read as the base holds it (a run the pull request deletes or edits is read
        from the base commit), and a run the pull request adds is never used."""
        return PinnedRuns(
            where=f"the base branch ({self.base_sha[:12]})",
            files=self.run_files,
            content_id=lambda data: _blob_id(data, self.object_format),
            read=lambda blob: git_bytes(root, "cat-file", "blob", blob, timeout_s=FETCH_TIMEOUT_S),
            added="added by this pull request (only runs on the base branch are trusted in a pull request)",
            unavailable=None
            if self.available
            else f"the pull request's base commit {self.base_sha[:12]} cannot be read, so no stored run is trusted",
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigChange:
    """A gate input the pull request adds or changes, and (for a YAML config) every setting it changed."""

    file: str  # from the repository's top, printable
    change: str  # added | changed
    headline: str  # the sentence for the reviewer
    settings: tuple[str, ...] = ()  # ``key: old -> new``, every one (``config_diff``)

    def line(self) -> str:
        """One line (the terminal's, the JSON report's ``lines``), every setting on it."""
        return self.headline + (f"; settings changed: {'; '.join(self.settings)}" if self.settings else "")

    def to_json(self, *, line: int) -> dict[str, Any]:
        """For the JSON report's ``data.config``; ``line`` is its index in the check's ``lines``."""
        return {
            "file": self.file,
            "change": self.change,
            "headline": self.headline,
            "settings": list(self.settings),
            "line": line,
        }


def pull_request_base(env: ActionEnv) -> str | None:
    """The base commit of the pull request this run is for, or None when it is not for one."""
    pr = env.pull_request
    if pr is None:
        return None
    base = pr.get("base")
    sha = base.get("sha") if isinstance(base, dict) else None
    return sha if isinstance(sha, str) and sha else ""


def base_trust(release: Release, base_sha: str) -> BaseTrust:
    """Read (fetching it if needed) what the base commit holds of this project's evidence."""
    root = release.base_dir
    if not base_sha or not _has_commit(root, base_sha):
        return BaseTrust(
            base_sha=base_sha,
            available=False,
            checkout=any((folder / ".git").exists() for folder in (root.resolve(), *root.resolve().parents)),
            problems=(
                f"the pull request's base commit {base_sha[:12] or '(not named by the event)'} is not in the checkout "
                "and could not be fetched: use actions/checkout with fetch-depth: 0 (or give the job contents: read)",
            ),
        )
    # The runs' place in the base commit's tree, named without following a symlink the pull
    # request may have put at .oloproof/ or .oloproof/runs (the base's runs are where the base has them).
    project = _repo_path(root, root)
    prefix = store_shown("runs") if project == "." else f"{project}/{store_shown('runs')}"
    listing = git_bytes(root, "ls-tree", "-r", "-z", "--full-tree", base_sha, "--", prefix + "/") or b""
    run_files: dict[str, dict[str, str]] = {}
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        parts = meta.split()
        path = name.decode("utf-8", "replace")
        if not path.startswith(prefix + "/"):
            continue
        run_id, _, file = path[len(prefix) + 1 :].partition("/")
        if len(parts) == 3 and parts[1] == b"blob" and file in ("run.json", "outputs.jsonl"):
            run_files.setdefault(run_id, {})[file] = parts[2].decode()
    run_files = {run_id: files for run_id, files in run_files.items() if "run.json" in files}
    object_format = git_output(root, "rev-parse", "--show-object-format") or "sha1"
    return BaseTrust(base_sha=base_sha, available=True, run_files=run_files, object_format=object_format)


def trust_report(release: Release, trust: BaseTrust) -> CheckReport:
    """The gate's row for the pull request's evidence: BLOCKED when holdout evidence was removed,
    replaced or rewritten, or a leakage record that found leaks was removed."""
    added = _holdout_changes(release, trust)
    if not trust.available and trust.checkout:
        # Nothing the base branch holds can be shown to be kept: a pull request that deleted a
        # holdout log, its register and records, or a leakage record that found leaks, would look
        # like a project that never had them. So in a checkout (a runner's, where the base commit
        # should be there or fetchable: a repository the pull request plants inside the project
        # makes git look in the wrong place) an unreadable base blocks, whatever is present.
        return CheckReport(
            name="pull-request",
            title="Pull request evidence",
            status="the base commit cannot be read, so no evidence the base branch holds can be shown to be kept",
            verdict=Verdict.BLOCKED,
            reasons=("pull_request_base_unreadable",),
            blocks=True,
            sentence="; ".join([*trust.problems, *unverifiable_problems(release, "the base commit cannot be read")])
            + ".",
            lines=tuple(trust.problems),
            source=release.path,
        )
    if trust.available:
        problems = evidence_problems(release, trust.base_sha)
    else:  # not a git checkout at all: what evidence is present cannot be verified
        problems = unverifiable_problems(release, trust.problems[0])
    leakage = _changed_leakage_records(release, trust)
    leaky_removed, removed = _removed_leakage_records(release, trust)
    config = _changed_config(release, trust)
    lines = [*trust.problems, *(change.line() for change in config), *leakage, *removed, *added]
    # Where each config file's line is, for the renderers that list its settings one by one.
    data: dict[str, Any] = {
        "config": [change.to_json(line=len(trust.problems) + index) for index, change in enumerate(config)]
    }
    store = _store_files(release, trust)
    if store is not None:
        data["store"] = {**store, "line": len(lines)}
        lines.append(store["headline"] + (": " + "; ".join(store["files"]) if store["files"] else ""))
    status = f"runs and holdout logs as on the base branch {trust.base_sha[:12]}"
    if problems or leaky_removed:
        reasons = (
            *(("holdout_log_tampered",) if problems else ()),
            *(("leakage_record_removed",) if leaky_removed else ()),
        )
        what = " and ".join(
            [
                *(["holdout evidence"] if problems else []),
                *(["a leakage record that found leaks"] if leaky_removed else []),
            ]
        )
        return CheckReport(
            name="pull-request",
            title="Pull request evidence",
            status=f"{what} the base branch holds was removed, replaced or rewritten",
            verdict=Verdict.BLOCKED,
            reasons=reasons,
            blocks=True,
            sentence="; ".join([*problems, *leaky_removed]) + ".",
            lines=tuple(lines),
            data=data,
            source=release.path,
        )
    return CheckReport(name="pull-request", title="Pull request evidence", status=status, lines=tuple(lines), data=data)


def _changed_config(release: Release, trust: BaseTrust) -> list[ConfigChange]:
    """The gate's own inputs that this pull request adds or changes: release.yaml, the policy, the
    seeds file, the test set, the judges' human labels and code, and the transforms' labels; for
    release.yaml and the policy, every setting that changed (``action/config_diff.py``). Lowering a
    threshold, pointing a baseline at a weaker run or swapping the test set turns FAIL into PASS
    with no evidence forged; the gate cannot judge such a decision, so it names it for the reviewer.
    One ``ConfigChange`` per file."""
    if not trust.available:
        return []
    top = repository_top(release.base_dir)
    files = [release.file, release.policy_file, release.seeds_file, release.resolve(release.testset_path)]
    # A judge's human labels and its own code, and a transform's labels, are evidence its rules now
    # rest on (issue 17; the red team flipped verdicts by rewriting each): rewriting them is named too.
    for evaluator in release.evaluators:
        labels, command = getattr(evaluator, "labels", None), getattr(evaluator, "command", None)
        if isinstance(labels, str):
            files.append(release.resolve(labels))
        if isinstance(command, (str, tuple)):
            files += list(release.system.files(release.base_dir, command))
    if release.metamorphic is not None:
        files += [release.resolve(spec.labels) for spec in release.metamorphic.transforms if spec.labels is not None]
    yaml_files = {release.file, release.policy_file, release.seeds_file}  # the recipe rule's keys too
    out: list[ConfigChange] = []
    for path in dict.fromkeys(file for file in files if file is not None):
        relative = from_top(top, Path(path))
        if relative is None:
            continue
        old = git_bytes(top, "show", f"{trust.base_sha}:{relative}")
        try:
            current = Path(path).read_bytes()
        except OSError:
            current = None
        if old == current:
            continue
        what = "added" if old is None else "changed"
        settings = changed_settings(old, current, relative) if path in yaml_files else []
        headline = (
            f"{printable(relative)} is {what} by this pull request: the gate's rules, baselines, test set, labels and "
            "judges are decisions it cannot judge (a lowered threshold or a swapped baseline passes without forged "
            "evidence); review the change"
        )
        out.append(ConfigChange(file=printable(relative), change=what, headline=headline, settings=tuple(settings)))
    return out


def _store_files(release: Release, trust: BaseTrust) -> dict[str, Any] | None:
    """Every file under the evidence directories (the project's, and the repository root's, which
    holds the register) that differs from the base commit, for the reviewer; None when none does."""
    if not trust.available:
        return None
    top = repository_top(release.base_dir)
    folders = [
        folder
        for folder in dict.fromkeys([from_top(top, store_dir(release.base_dir)), from_top(top, store_dir(top))])
        if folder is not None
    ]
    found = store_changes(top, trust.base_sha, folders)
    where = ", ".join(f"{printable(folder)}/" for folder in folders) or f"{store_name()}/"
    if found is None:
        return {
            "headline": f"the files under {where} cannot be compared with the base branch (git failed)",
            "files": [],
        }
    if not found:
        return None
    return {
        "headline": f"{len(found)} file(s) under {where} differ from the base branch {trust.base_sha[:12]} (only what "
        "it holds is trusted: review them as you review code)",
        "files": [f"{printable(path)} ({change})" for path, change in found],
    }


def _removed_leakage_records(release: Release, trust: BaseTrust) -> tuple[list[str], list[str]]:
    """Leakage records the base commit holds that this pull request removes, rewrites, or replaces
    by something that is not a regular file. Dropping or rewriting one that found leaks would turn
    a leaked test set clean: BLOCKED (the fix is to take the leaked cases out of the test set, which
    changes its digest). Removing a clean one is named for the reviewer."""
    if not trust.available:
        return [], []
    top = repository_top(release.base_dir)
    folder = from_top(top, leakage_dir(release.base_dir))
    if folder is None:
        return [], []
    listing = git_bytes(top, "ls-tree", "-z", "--full-tree", trust.base_sha, "--", folder + "/") or b""
    blocked: list[str] = []
    named: list[str] = []
    for item in listing.split(b"\0"):
        meta, _, name = item.partition(b"\t")
        parts = meta.split()
        path = name.decode("utf-8", "replace")
        if len(parts) != 3 or parts[1] != b"blob" or not path.endswith(".json"):
            continue
        shown = path.rsplit("/", 1)[-1]
        old = git_bytes(top, "cat-file", "blob", parts[2].decode()) or b""
        try:
            current = current_bytes(top, path, expected="a leakage record", cap=MAX_RECORD_BYTES)
        except StoreError:
            current = None  # a link, a FIFO, a device, oversized: not a record the gate reads
        if current == old:
            continue
        try:
            record = LeakageResult.from_json(orjson.loads(old))
            leaked = len(record.leaked_ids)
            near = len(record.near.ids) if record.near is not None else 0
            training = record.training_name
        except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError):
            leaked, near, training = 0, 0, "?"
        where = f"{store_shown('leakage')}/{printable(shown)}"
        if leaked or near:
            # Near copies decide under `near: invalidate` (issue 20): emptying them is the same forgery.
            found = " and ".join(
                [*([f"{leaked} leaked case(s)"] if leaked else []), *([f"{near} near copy(ies)"] if near else [])]
            )
            blocked.append(
                f"the leakage record {where}, which found {found} in {printable(training)}, is "
                f"{'rewritten' if current is not None else 'removed or replaced'} by this pull request: leakage "
                "evidence that found leaks is never dropped or rewritten in a pull request (take the leaked cases out "
                "of the test set instead: its digest changes, and a new check records it)"
            )
        elif current is None:
            named.append(f"the leakage record {where} (clean, {printable(training)}) is removed by this pull request")
    return blocked, named


def _holdout_changes(release: Release, trust: BaseTrust) -> list[str]:
    """Reads a pull request adds to the holdout log (reads happen on release or default-branch
    pushes, and the action refuses them here, so these came from elsewhere: for a reviewer, not for
    ``oloproof gap`` to take on trust). What it removes or rewrites is ``evidence_problems``."""
    if release.holdout is None or not trust.available:
        return []
    top = repository_top(release.base_dir)
    relative = from_top(top, release.resolve(release.holdout.log))
    if relative is None:
        return []
    old = git_bytes(top, "show", f"{trust.base_sha}:{relative}")
    try:
        data = current_bytes(top, relative, expected="a holdout reads log", cap=MAX_LOG_BYTES)
    except StoreError:
        return []  # said by evidence_problems when the base holds the log; else the holdout check refuses it
    now = verify(data, shown=release.holdout.log)
    then = verify(old, shown=release.holdout.log) if old is not None else None
    before = 0 if then is None else len(then.reads)
    added = [entry for entry in now.reads if entry.seq > before]
    out: list[str] = []
    if added:
        out.append(
            f"{release.holdout.log} gains {len(added)} read(s) in this pull request (read "
            f"{', '.join(str(entry.seq) for entry in added)}): holdout reads are made on releases and default-branch "
            "pushes, never in a pull request; review where they came from before trusting them"
        )
    for entry in now.budgets[0 if then is None else len(then.budgets) :]:
        budget = "no budget" if entry.budget is None else f"a budget of {entry.budget} read(s)"
        out.append(
            f"{release.holdout.log} gains a budget entry in this pull request ({budget}, by {printable(entry.who)}: "
            f"{printable(entry.reason)}): raising a holdout's budget spends independence its reads may no longer "
            "leave; review it as a decision"
        )
    return out


def _changed_leakage_records(release: Release, trust: BaseTrust) -> list[str]:
    folder = leakage_dir(release.base_dir)
    if not folder.is_dir() or not trust.available:
        return []
    out: list[str] = []
    for path in sorted(folder.glob("*.json")):
        shown = path.relative_to(release.base_dir).as_posix()
        old = git_bytes(release.base_dir, "show", f"{trust.base_sha}:{_repo_path(release.base_dir, path)}")
        try:
            current = read_evidence(path, shown, expected="a leakage record", max_bytes=MAX_RECORD_BYTES)
        except StoreError:
            current = None  # a link, a FIFO, a device: not read (and never a record the gate uses)
        if old is None or old != current:
            out.append(
                f"the leakage record {shown} is "
                f"{'added' if old is None else 'changed'} by this pull request: it attests a check of training data "
                "CI cannot see, on its author's word (review it as you would code)"
            )
    return out


def _has_commit(cwd: Path, sha: str) -> bool:
    if _exists(cwd, sha):
        return True
    git_output(cwd, "fetch", "--no-tags", "--depth=1", "origin", sha, timeout_s=FETCH_TIMEOUT_S)
    return _exists(cwd, sha)


def _exists(cwd: Path, sha: str) -> bool:
    return git_output(cwd, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}") is not None


def _repo_path(cwd: Path, path: Path) -> str:
    top = git_output(cwd, "rev-parse", "--show-toplevel")
    base = Path(top).resolve() if top else cwd.resolve()
    try:
        return Path(os.path.realpath(path)).relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def _blob_id(data: bytes, object_format: str = "sha1") -> str:
    """git's id of a blob holding ``data`` (what ``git ls-tree`` lists), without running git."""
    header = b"blob %d\0" % len(data)
    if object_format == "sha256":
        return hashlib.sha256(header + data).hexdigest()
    return hashlib.sha1(header + data, usedforsecurity=False).hexdigest()
