"""The offline pages a person opens after the job: the seeds page (``seeds:`` declared) and one
labelling page per validated (image or text) transform, written under ``oloproof-pages/`` in the
working directory so a later ``actions/upload-artifact`` step can keep them, and named in the summary.

Each page is what ``oloproof seeds --html`` and ``oloproof metamorphic label`` write. The seeds page
shows the gate's own verdict of the recipe rule (the checkpoints' runs are the ones the gate stored;
one with no stored run is run again, as ``oloproof seeds`` would). A page that cannot be made is
left out with its reason; it never changes the verdict.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from oloproof.action.session import Session
from oloproof.errors import OloproofError
from oloproof.files import check_report_paths
from oloproof.metamorphic.variants import read_labels, transformed_cases
from oloproof.report import labels_page, seeds_page
from oloproof.report.markdown import code, esc
from oloproof.result import GateResult
from oloproof.runstore import RunStore
from oloproof.seeds.check import decide_recipe, gather_checkpoints

PAGES_DIR = "oloproof-pages"


def write_pages(session: Session, result: GateResult, workdir_path: str) -> tuple[list[str], list[str]]:
    """Write the pages; returns their paths (relative to the repository) and the pages left out, with why."""
    release, testset = result.release, result.testset
    folder = Path(workdir_path) / PAGES_DIR
    written: list[str] = []
    skipped: list[str] = []
    protected = release.input_files(session.environ)

    def put(name: str, make: object) -> None:
        target = folder / name
        try:
            check_report_paths([target], inputs=protected, within=session.env.workspace)
            text = make() if callable(make) else str(make)
            target.parent.mkdir(parents=True, exist_ok=True)
            session.write(target, text)
        except (OloproofError, OSError) as exc:
            skipped.append(f"{name}: {exc}")
            return
        written.append(session.repo_path(target) or str(target))

    spec = release.seeds
    if spec is not None:
        gate_rule = next((rule for rule in result.rules if rule.rule_id == spec.rule.id), None)

        def seeds() -> str:
            store = RunStore(release.base_dir)
            checkpoints = gather_checkpoints(spec, release, testset, store)
            decided = decide_recipe(spec, release, release.policy, testset, store, checkpoints)
            if gate_rule is not None:  # the gate's verdict (leakage may have invalidated it), never another
                decided = replace(decided, rule=gate_rule)
            return seeds_page.render(decided)

        put("seeds.html", seeds)
    for transform in release.metamorphic.transforms if release.metamorphic is not None else ():
        if not transform.validated:
            continue

        def label(name: str = transform.name) -> str:
            variant = transformed_cases(release, testset, name)
            labels = read_labels(release, variant.spec)[1] if variant.spec.labels is not None else None
            return labels_page.render_page(variant, labels, labels_path=variant.spec.labels)

        put(f"labels-{re.sub(r'[^A-Za-z0-9._-]', '_', transform.name)[:80]}.html", label)
    return written, skipped


def pages_markdown(written: list[str], skipped: list[str]) -> str:
    """A few lines for the end of the job summary: the pages to upload as an artifact."""
    if not written and not skipped:
        return ""
    lines = ["", "**Pages for people** (upload `" + PAGES_DIR + "/` with actions/upload-artifact):", ""]
    lines += [f"- {code(path)}" for path in written]
    lines += [f"- not written: {esc(why)}" for why in skipped]
    return "\n".join(lines) + "\n"
