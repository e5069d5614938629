"""A reused run is about this model, or the user is told (issue 16, point 2), through the CLI.

A model the command loads by default is invisible to a fingerprint made of the command line, so
every reused run says which files its fingerprint covered, and one that covers only code says
"declare the model in `system.artifacts`". Symlinks (how DVC, git-annex and the Hugging Face cache
store models) are followed: the target's content and the link text are both in the fingerprint.
``system.artifacts`` takes directories and globs.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import Project, labelled_cases, report

PREDICT = """\
import json, sys
from pathlib import Path
path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("model/current.joblib")  # loaded by default
weights = json.loads(path.read_text())
for line in sys.stdin:
    case = json.loads(line)
    print(json.dumps({"id": case["id"], "label": weights["answer"] if weights["answer"] is not None else case["answer"]}))
"""


def weights(answer: int | None) -> str:
    return json.dumps({"answer": answer})


def default_model_project(project: Project, *, artifacts: str | None = None, args: str = "") -> Project:
    """`python predict.py`: the model file is read by default, never named on the command line."""
    (project.root / "predict.py").write_text(PREDICT)
    (project.root / "model").mkdir(exist_ok=True)
    (project.root / "model" / "current.joblib").write_text(weights(None))  # echoes the answer: 95 of 100
    project.write(
        cases=labelled_cases(100, 95),
        rules="  - {id: accurate, criterion: correct, min: 0.8}",
        command=f"{sys.executable} predict.py{args}",
    )
    if artifacts is not None:
        set_artifacts(project, artifacts)
    return project


def set_artifacts(project: Project, artifacts: str) -> None:
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(text.replace("  timeout_s:", f"  artifacts: {artifacts}\n  timeout_s:", 1))


def markdown(project: Project, *extra: str) -> str:
    out = project.root / "summary.md"
    project.cli("gate", "--quiet", "--markdown", str(out), *extra)
    return out.read_text()


# --------------------------------------------------------------------------- the reproduction


def test_a_model_loaded_by_default_is_called_out_on_every_report_of_a_reused_run(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    default_model_project(project)
    code, first = report(project)
    assert code == 0 and first["run"]["reused"] is False
    (project.root / "model" / "current.joblib").write_text(weights(0))  # swapped: the new model answers 0
    capsys.readouterr()
    code, second = report(project)
    # The fingerprint cannot see the swap (the file is named nowhere): the run is reused, and said to be blind.
    assert second["run"]["reused"] is True and second["run"]["run_id"] == first["run"]["run_id"]
    covers = second["run"]["fingerprint_covers"]
    assert covers["count"] == 2 and covers["code_only"] is True
    assert covers["shown"][0] == "predict.py" and covers["shown"][1].endswith(Path(sys.executable).name)
    warning = next(note for note in second["run_notes"] if "covers only code" in note)
    assert warning.startswith(f"run {first['run']['run_id']} was reused: its fingerprint covers only code (2 files: predict.py, ")
    assert warning.endswith(
        "a model or data file the system reads without naming it (a default path, a download) is not in it and may "
        "have changed since that run: declare the model in `system.artifacts` (or run again with `--rerun`)"
    )
    out = capsys.readouterr().out
    assert "covers only code" in out and "declare the model in `system.artifacts`" in out
    assert "declare the model in &#96;system.artifacts&#96;" in markdown(project)


def test_declaring_the_model_directory_makes_the_swap_run_again(project: Project) -> None:
    default_model_project(project, artifacts="[model/]")
    _, first = report(project)
    assert "model/current.joblib" in first["run"]["fingerprint"]["files"]
    _, again = report(project)
    assert again["run"]["reused"] is True
    assert again["run"]["fingerprint_covers"]["code_only"] is False
    covered = next(note for note in again["run_notes"] if "fingerprint covers" in note)
    assert covered == (
        f"run {first['run']['run_id']} was reused: its fingerprint covers 3 files: model/current.joblib, predict.py, "
        + again["run"]["fingerprint_covers"]["shown"][2]
    )
    assert not any("only code" in note for note in again["run_notes"])
    (project.root / "model" / "current.joblib").write_text(weights(0))
    code, swapped = report(project)
    assert swapped["run"]["reused"] is False and code == 1 and swapped["rules"][0]["estimate"] == 0.0


def test_a_new_run_says_nothing_about_reuse(project: Project) -> None:
    default_model_project(project)
    _, first = report(project)
    assert not any("fingerprint covers" in note for note in first["run_notes"])
    assert first["run"]["fingerprint_covers"]["count"] == 2
    assert any("are not in the run's fingerprint" in item for item in first["limitations"])


# --------------------------------------------------------------------------- symlinks


def linked_model(project: Project) -> Path:
    """A DVC / git-annex / Hugging Face cache layout: the artifact directory holds a link into a store."""
    default_model_project(project, args=" model/current.joblib", artifacts="[model/]")
    store = project.root / "store"
    store.mkdir()
    (store / "blob-a").write_text(weights(None))
    (store / "blob-b").write_text(weights(0))
    (store / "blob-c").write_text(weights(None))  # the same content as blob-a
    link = project.root / "model" / "current.joblib"
    link.unlink()
    link.symlink_to("../store/blob-a")
    return link


def retarget(link: Path, target: str) -> None:
    link.unlink()
    link.symlink_to(target)


def test_retargeting_a_link_inside_an_artifact_directory_runs_again(project: Project) -> None:
    link = linked_model(project)
    _, first = report(project)
    assert first["run"]["fingerprint"]["links"]["model/current.joblib"] == "../store/blob-a"
    _, again = report(project)
    assert again["run"]["reused"] is True
    retarget(link, "../store/blob-b")
    code, swapped = report(project)
    assert swapped["run"]["reused"] is False and code == 1
    assert any("model/current.joblib changed since" in note for note in swapped["run_notes"])


def test_a_link_retargeted_to_identical_content_still_runs_again(project: Project) -> None:
    link = linked_model(project)
    report(project)
    retarget(link, "../store/blob-c")  # same bytes, another file: the link text is part of the fingerprint
    _, after = report(project)
    assert after["run"]["reused"] is False


def test_a_link_target_edited_in_place_runs_again(project: Project) -> None:
    linked_model(project)
    report(project)
    (project.root / "store" / "blob-a").write_text(weights(0))
    code, after = report(project)
    assert after["run"]["reused"] is False and code == 1


def test_a_linked_directory_inside_an_artifact_directory_is_followed(project: Project) -> None:
    """The Hugging Face layout: snapshots/<rev>/ links into blobs."""
    default_model_project(project, args=" model/snapshot/weights.json", artifacts="[model/]")
    for rev, answer in (("rev1", None), ("rev2", 0)):
        (project.root / "blobs" / rev).mkdir(parents=True)
        (project.root / "blobs" / rev / "weights.json").write_text(weights(answer))
    (project.root / "model" / "snapshot").symlink_to("../blobs/rev1", target_is_directory=True)
    _, first = report(project)
    assert "model/snapshot/weights.json" in first["run"]["fingerprint"]["files"]
    retarget(project.root / "model" / "snapshot", "../blobs/rev2")
    code, after = report(project)
    assert after["run"]["reused"] is False and code == 1


@pytest.mark.parametrize("kind", ["dangling", "self-loop", "cycle", "fifo", "kernel"])
def test_a_broken_or_special_entry_in_an_artifact_directory_is_recorded_not_a_crash(project: Project, kind: str) -> None:
    default_model_project(project, artifacts="[model/]")
    entry = project.root / "model" / "odd"
    if kind == "dangling":
        entry.symlink_to("nowhere.bin")
    elif kind == "self-loop":
        entry.symlink_to("odd")
    elif kind == "cycle":
        entry.symlink_to("..", target_is_directory=True)  # model/odd -> the project: a walk would never end
    elif kind == "kernel":
        entry.symlink_to("/proc/self/status")  # a "regular file" of the kernel (/proc/kcore would never end)
    else:
        os.mkfifo(entry)  # opening it to hash it would wait forever
    code, data = report(project)
    assert code == 0
    fact = data["run"]["fingerprint"]["files"]["model/odd"]
    assert fact == {
        "dangling": "not hashed: a link to a path that does not exist",
        "self-loop": "not hashed: a link that loops",
        "cycle": "not hashed: a link to a directory that holds it (a cycle)",
        "fifo": "not hashed: not a regular file",
        "kernel": "not hashed: a file of the kernel (/proc, /sys, /dev)",
    }[kind]
    _, again = report(project)
    assert again["run"]["reused"] is True  # a recorded fact is stable


def test_a_declared_artifact_that_is_a_dangling_link_or_a_fifo_is_a_config_error(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    default_model_project(project)
    (project.root / "gone.bin").symlink_to("nowhere.bin")
    set_artifacts(project, "[gone.bin]")
    assert project.cli("gate") == 2
    assert "release.yaml:4: system.artifacts[0]: gone.bin: a link to 'nowhere.bin', which does not exist" in capsys.readouterr().err
    os.mkfifo(project.root / "pipe")
    default_model_project(project, artifacts="[pipe]")
    assert project.cli("gate") == 2
    assert "release.yaml:4: system.artifacts[0]: pipe: not a regular file or a directory" in capsys.readouterr().err


def test_links_that_fan_out_are_bounded(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    """Each level links twice to the next: 2^40 paths. The walk stops with an error, it does not hang."""
    default_model_project(project, artifacts="[model/]")
    levels = project.root / "model" / "levels"
    for depth in range(40):
        (levels / f"d{depth}").mkdir(parents=True)
        (levels / f"d{depth}" / "w.txt").write_text(str(depth))
    for depth in range(39):
        for name in ("a", "b"):
            (levels / f"d{depth}" / name).symlink_to(f"../d{depth + 1}", target_is_directory=True)
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "the system's files: more than 20000 files" in err and "system.artifacts" in err


# --------------------------------------------------------------------------- directories and globs


def rl_project(project: Project, artifacts: str) -> Project:
    """An RL environment package whose reward module the policy is scored with."""
    env = project.root / "envs" / "gridworld"
    env.mkdir(parents=True)
    (env / "__init__.py").write_text("")
    (env / "reward.py").write_text("SCALE = 1\n")
    (env / "notes.md").write_text("notes\n")
    default_model_project(project, artifacts=artifacts)
    return project


@pytest.mark.parametrize("artifacts", ["[envs/]", "['envs/**/*.py', model/]", "['envs/*/reward.py']", "['envs/grid*']"])
def test_an_environment_package_whose_sources_changed_is_run_again(project: Project, artifacts: str) -> None:
    rl_project(project, artifacts)
    _, first = report(project)
    assert "envs/gridworld/reward.py" in first["run"]["fingerprint"]["files"]
    _, again = report(project)
    assert again["run"]["reused"] is True
    (project.root / "envs" / "gridworld" / "reward.py").write_text("SCALE = 2\n")
    _, after = report(project)
    assert after["run"]["reused"] is False
    assert any("envs/gridworld/reward.py changed since" in note for note in after["run_notes"])


def test_a_glob_only_takes_what_it_matches(project: Project) -> None:
    rl_project(project, "['envs/**/*.py']")
    _, first = report(project)
    assert "envs/gridworld/notes.md" not in first["run"]["fingerprint"]["files"]
    (project.root / "envs" / "gridworld" / "extra.py").write_text("")  # a new source file matches
    _, after = report(project)
    assert after["run"]["reused"] is False
    assert any("envs/gridworld/extra.py added" in note for note in after["run_notes"])


@pytest.mark.parametrize("pattern", ["envs/**/*.pyx", "nothing/*", "[a-"])
def test_a_glob_that_matches_nothing_is_a_config_error(
    project: Project, capsys: pytest.CaptureFixture[str], pattern: str
) -> None:
    rl_project(project, f"['model/', '{pattern}']")
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert f"release.yaml:4: system.artifacts[1]: {pattern}: the pattern matches no file (relative to " in err
    assert not (project.root / ".oloproof" / "runs").exists()


def test_a_seed_checkpoint_glob_that_matches_nothing_is_a_config_error(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    default_model_project(project)
    text = (project.root / "release.yaml").read_text()
    (project.root / "release.yaml").write_text(
        text + "seeds:\n  recipe: r\n  checkpoints:\n"
        f"    s1: {{command: '{sys.executable} predict.py', version: s1, artifacts: ['ckpt/*.bin']}}\n"
        "  rule: {id: recipe, criterion: correct, min: 0.5}\n"
    )
    assert project.cli("gate") == 2
    err = capsys.readouterr().err
    assert "seeds.checkpoints.s1.artifacts[0]: ckpt/*.bin: the pattern matches no file" in err


def covers(data: dict[str, Any]) -> dict[str, Any]:
    return data["run"]["fingerprint_covers"]  # type: ignore[no-any-return]


def test_many_covered_files_are_shown_by_directory(project: Project) -> None:
    default_model_project(project, artifacts="[model/]")
    for index in range(30):
        (project.root / "model" / f"shard-{index:03d}.bin").write_text(str(index))
    report(project)
    _, again = report(project)
    shown = covers(again)
    assert shown["count"] == 33
    assert shown["shown"][0] == "model/ (31 files)" and shown["shown"][1] == "predict.py"
    note = next(note for note in again["run_notes"] if "fingerprint covers" in note)
    assert "covers 33 files: model/ (31 files), predict.py, " in note


def test_names_that_are_not_utf8_are_recorded_escaped_not_a_crash(project: Project) -> None:
    default_model_project(project, artifacts="[model/]")
    (project.root / "model" / os.fsdecode(b"shard\xff.bin")).write_text("1")
    (project.root / "model" / "shard\\xff.bin").write_text("2")  # the escaped spelling, as a real name
    (project.root / "model" / "link").symlink_to(os.fsdecode(b"shard\xff.bin"))
    code, first = report(project)
    assert code == 0
    files, links = first["run"]["fingerprint"]["files"], first["run"]["fingerprint"]["links"]
    assert {"model/shard\\xff.bin", "model/shard\\\\xff.bin"} <= set(files)  # two files, two names
    assert links["model/link"] == "shard\\xff.bin"
    (project.root / "model" / os.fsdecode(b"shard\xff.bin")).write_text("3")
    _, after = report(project)
    assert after["run"]["reused"] is False


def test_a_reused_seed_checkpoint_says_what_its_fingerprint_covered(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    default_model_project(project)
    text = (project.root / "release.yaml").read_text()
    checkpoints = "".join(
        f"    s{i}: {{command: '{sys.executable} predict.py', version: seed_{i}}}\n" for i in range(1, 4)
    )
    (project.root / "release.yaml").write_text(
        text + f"seeds:\n  recipe: r\n  checkpoints:\n{checkpoints}  rule: {{id: recipe, criterion: correct, min: 0.5}}\n"
    )
    assert project.cli("seeds", "--quiet") in (0, 4, 5)
    capsys.readouterr()
    assert project.cli("seeds") in (0, 4, 5)
    out = capsys.readouterr().out
    assert out.count("was reused: its fingerprint covers only code (2 files: predict.py, ") == 3
    assert "declare the model in `system.artifacts`" in out
