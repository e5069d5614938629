"""Issue 16, point 10: no input to any command exits 70.

Property-based fuzz (hypothesis) of the real CLI, in process: every subcommand with arguments
drawn from values a careless user or a script types (tiny and huge numbers, NaN, integers beyond
2**64, empty strings, odd refs, missing, binary and directory paths), and release.yaml with one
key replaced, removed or added. Every run must end in a documented exit code, 0-5, with no
traceback and no "internal error". The subcommands and their options are read from the parser
itself, so a new option is fuzzed without editing this file.

Bounded for CI: a fixed number of examples (derandomized, so a CI run is reproducible; set
OLOPROOF_FUZZ_EXAMPLES=500 OLOPROOF_FUZZ_RANDOM=1 for a longer, random local hunt) and a deadline per
example. Output paths stay
inside a copy of the project: reports to /dev/* are the report-path tests' business.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from oloproof.cli.main import build_parser, main
from tests.conftest import ECHO

EXAMPLES = int(os.environ.get("OLOPROOF_FUZZ_EXAMPLES", "60"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=timedelta(seconds=30),
    derandomize=not os.environ.get("OLOPROOF_FUZZ_RANDOM"),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
    database=None,
)
PER_COMMAND = settings(FUZZ, max_examples=max(1, EXAMPLES // 5))
ALLOWED = {0, 1, 2, 3, 4, 5}

NUMBERS = [
    "1e-200", "5e-324", "0", "-0", "-1", "1", "2", "0.5", "0.05", "0.999999999999", "1e-16", "1e308", "1e400",
    "nan", "inf", "-inf", "18446744073709551617", "-99999999999999999999999", "1_000", "0x10", "abc", "", " 0.1",
    "5pt", "100pt", "-5pt", "1e-150",
]
TEXTS = [
    "", "-", " ", "latest", "latest~1", "latest~0", "latest~-1", "latest~99999999999999999999", "version:",
    "version:v0", "version:nope", "~", "@", "..", ".", "data", "release.yaml", "missing.jsonl", "binary.bin",
    "empty.jsonl", "a\x00b", "é", "\u202e", "::error::x", "x" * 300, "/dev/null", "noise", "n",
]
# Files of the project (and an outputs file holding a big integer and a NaN-free float).
FILES = ["train.jsonl", "data/test.jsonl", "preds.jsonl", "seeds.yaml", "policy.yaml", "evals/holdout.jsonl", "data"]
# Output options: always a file name inside the project copy (or `-`).
OUTPUTS = ["out.json", "-", "data", "release.yaml.out", "sub/dir/out.json", "empty.jsonl"]
# Commands a fuzzed --command may name: nothing that writes or waits.
COMMANDS = ["", "no-such-program-xyz", "true", "false", f"{sys.executable} -c pass"]
OUTPUT_DESTS = {"json", "junit", "markdown", "html", "output"}


def _walk(parser: argparse.ArgumentParser, prefix: list[str]) -> Iterator[tuple[list[str], list[argparse.Action]]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if subs:
        for name, child in subs[0].choices.items():
            yield from _walk(child, [*prefix, name])
        return
    yield prefix, [a for a in parser._actions if not isinstance(a, argparse._HelpAction)]


SUBCOMMANDS = list(_walk(build_parser(), []))


def _values(action: argparse.Action) -> st.SearchStrategy[str]:
    if action.dest in OUTPUT_DESTS:
        return st.sampled_from(["out.json"] * 6 + OUTPUTS)
    if action.dest == "command":
        return st.sampled_from(COMMANDS)
    if action.dest == "config":
        return st.sampled_from(["release.yaml"] * 8 + ["missing.yaml", "data", "empty.jsonl", "binary.bin", "seeds.yaml"])
    if action.dest == "transform":
        return st.sampled_from(["noise"] * 4 + TEXTS[:6])
    if action.dest in {"ref", "ref_a", "ref_b", "baseline", "current"}:
        return st.sampled_from(["latest", "latest~1", "version:v0", "version:v1"] * 2 + TEXTS)
    if action.dest in {"training", "outputs", "labels", "seeds_file", "policy", "image_root", "weights"}:
        return st.sampled_from(FILES * 3 + TEXTS)
    if action.dest == "field":
        return st.sampled_from(["text", "features", "features.x", "answer", *TEXTS[:8]])
    if action.dest == "dir":
        return st.sampled_from(["new", "data", ".", "release.yaml", "x" * 300])
    choices = [str(choice) for choice in action.choices] if action.choices else []
    numeric = getattr(action.type, "__name__", "") in {"int", "float", "parse", "_budget_value"}
    pool = NUMBERS if numeric else [*TEXTS, *NUMBERS[:6]]
    return st.sampled_from(choices) | st.sampled_from(pool) if choices else st.sampled_from(pool)


@st.composite
def invocations(draw: st.DrawFn, command: tuple[str, ...] | None = None) -> list[str]:
    """One command line: ``command`` (e.g. ``("holdout", "size")``) or any subcommand, with each
    optional argument present or not and every value drawn from its pool."""
    chosen = [item for item in SUBCOMMANDS if command is None or tuple(item[0]) == command]
    command_words, actions = draw(st.sampled_from(chosen))
    argv = list(command_words)
    for action in actions:
        if action.dest in {"rerun"}:
            continue  # runs every declared system again: slow, and not an argument a value can break
        if not (action.required or draw(st.booleans())):
            continue
        if action.nargs == 0:
            argv.append(action.option_strings[-1])
            continue
        count = draw(st.integers(1, 2)) if action.nargs in ("+", "*") else 1
        values = [draw(_values(action)) for _ in range(count)]
        argv += [action.option_strings[-1], *values] if action.option_strings else values
    return argv


# --------------------------------------------------------------------------- the project

CASES = 30


def _case(i: int, prefix: str = "c") -> dict[str, Any]:
    return {"id": f"{prefix}{i:03d}", "answer": 1, "text": f"{prefix} case {i}", "features": {"x": i * 1.5}, "expected": {"label": 1}}


def release_document(root: Path) -> dict[str, Any]:
    return {
        "system": {"version": "v1", "command": [sys.executable, str(ECHO)], "timeout_s": 20},
        "testset": {"cases": "data/test.jsonl"},
        "leakage": "optional",
        "evaluators": [
            {"type": "label_match", "field": "label"},
            {"type": "metamorphic_relation", "relation": "same_label", "transform": "noise", "field": "label"},
        ],
        "metamorphic": {
            "transforms": [{"name": "noise", "field": "features", "perturb": {"kind": "numeric_noise", "scale": {"x": 0.5}, "seed": 7}}]
        },
        "policy": {
            "confidence": 0.95,
            "allow_approximate_methods": False,
            "rules": [
                {"id": "accurate", "criterion": "correct", "min": 0.8},
                {"id": "no_drop", "criterion": "correct", "baseline": "version:v0", "max_drop": 0.05},
                {"id": "stable", "criterion": "flips_under_noise", "max": 0.1},
            ],
        },
        "holdout": {"cases": "evals/holdout.jsonl", "budget": 5, "log": "evals/READS.log"},
        "seeds": "seeds.yaml",
    }


def _write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _run(argv: list[str], cwd: Path) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            code = main(argv)
    finally:
        os.chdir(previous)
    return code, err.getvalue()


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with every section, its runs stored (baseline v0, v1, the transform's copies,
    the seed checkpoints), a leakage record and one holdout read, so most commands reuse."""
    root = tmp_path_factory.mktemp("fuzz")
    _write(root / "data" / "test.jsonl", "".join(json.dumps(_case(i)) + "\n" for i in range(CASES)))
    _write(root / "evals" / "holdout.jsonl", "".join(json.dumps(_case(i, "h")) + "\n" for i in range(20)))
    _write(root / "train.jsonl", json.dumps({"answer": 1, "text": "c case 3", "features": {"x": 4.5}}) + "\n")
    _write(root / "empty.jsonl", "")
    _write(root / "policy.yaml", yaml.safe_dump({"rules": [{"id": "r", "criterion": "correct", "min": 0.5}]}))
    _write(root / "preds.jsonl", "".join(f'{{"id": "c{i:03d}", "label": {2**64 + i % 2}}}\n' for i in range(CASES)))
    _write(root / "binary.bin", bytes(range(256)))
    checkpoints = {
        f"s{i}": {"command": f"{sys.executable} {ECHO} --tag {i}" + (f" --drop c{i:03d}" if i else "")} for i in range(3)
    }
    _write(root / "seeds.yaml", yaml.safe_dump({"recipe": "r", "checkpoints": checkpoints, "rule": {"id": "recipe", "criterion": "correct", "min": 0.5}}))
    document = release_document(root)
    baseline = {**document, "system": {**document["system"], "version": "v0"}}
    baseline["policy"] = {**document["policy"], "rules": [document["policy"]["rules"][0]]}
    del baseline["seeds"]
    _write(root / "release.yaml", yaml.safe_dump(baseline, sort_keys=False))
    assert _run(["gate", "-q"], root)[0] in ALLOWED
    _write(root / "release.yaml", yaml.safe_dump(document, sort_keys=False))
    for argv in (
        ["gate", "-q"],
        ["leakage", "check", "--training", "train.jsonl", "--record", "-q"],
        ["holdout", "run", "--reason", "fuzz fixture", "-q"],
    ):
        code, err = _run(argv, root)
        assert code in ALLOWED and "internal error" not in err, (argv, err)
    return root


@contextlib.contextmanager
def copy_of(project: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="oloproof-fuzz-") as tmp:
        work = Path(tmp) / "p"
        shutil.copytree(project, work, symlinks=True)
        yield work


def assert_no_crash(argv: list[str], code: int, err: str) -> None:
    assert code in ALLOWED, f"{argv!r} exited {code}:\n{err}"
    assert "internal error" not in err and "Traceback" not in err, f"{argv!r}:\n{err}"


# --------------------------------------------------------------------------- the properties


@pytest.mark.parametrize("command", [tuple(words) for words, _ in SUBCOMMANDS], ids=" ".join)
def test_no_argument_of_any_subcommand_exits_70(project: Path, command: tuple[str, ...]) -> None:
    # Each subcommand gets its own examples, so a rare one (holdout size) is not starved by the rest.
    @PER_COMMAND
    @given(argv=invocations(command))
    def fuzz(argv: list[str]) -> None:
        with copy_of(project) as work:
            code, err = _run(argv, work)
        assert_no_crash(argv, code, err)

    fuzz()


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every key path of a YAML document (into mappings and lists)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in items:
        yield (*prefix, key)
        yield from _paths(value, (*prefix, key))


YAML_VALUES: list[Any] = [
    None, "", "x", "latest~99", "version:", "../outside.jsonl", "/dev/null", "data", "é\u202e", 0, -1, 1, 2, 0.5,
    1e-200, 5e-324, 1e308, float("inf"), float("nan"), 2**70, -(2**70), True, [], {}, [1], {"a": 1}, {"kind": "blur"},
    [{"id": "x"}], "0.8x", "100000000000000000000000000", "policy.yaml", "seeds.yaml", "train.jsonl",
]
PATHS = list(_paths(release_document(Path("."))))
COMMANDS_AFTER_EDIT = [
    ["gate", "-q"],
    ["seeds", "-q"],
    ["runs"],
    ["holdout", "status"],
    ["holdout", "size", "--delta", "0.05"],
    ["metamorphic", "show"],
    ["compare", "version:v0", "version:v1"],
    ["gap", "--baseline", "version:v0"],
    ["leakage", "check", "--training", "train.jsonl"],
]


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, tuple[Any, ...], Any]:
    how = draw(st.sampled_from(["set", "set", "set", "delete", "add"]))
    path = draw(st.sampled_from(PATHS))
    return how, path, draw(st.sampled_from(YAML_VALUES))


def apply_edit(document: dict[str, Any], how: str, path: tuple[Any, ...], value: Any) -> None:
    parent: Any = document
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[f"{last}_extra"] = value
    else:
        parent[last] = value


@FUZZ
@given(edit=edits(), argv=st.sampled_from(COMMANDS_AFTER_EDIT))
def test_no_config_key_exits_70(project: Path, edit: tuple[str, tuple[Any, ...], Any], argv: list[str]) -> None:
    document = release_document(project)
    apply_edit(document, *edit)
    with copy_of(project) as work:
        _write(work / "release.yaml", yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        code, err = _run(argv, work)
    assert_no_crash([*argv, f"(release.yaml: {edit!r})"], code, err)


SEEDS_PATHS = [("recipe",), ("checkpoints",), ("checkpoints", "s1"), ("checkpoints", "s1", "command"), ("rule",), ("rule", "min"), ("rule", "criterion")]


@FUZZ
@given(path=st.sampled_from(SEEDS_PATHS), value=st.sampled_from(YAML_VALUES), how=st.sampled_from(["set", "delete", "add"]))
def test_no_seeds_file_key_exits_70(project: Path, path: tuple[Any, ...], value: Any, how: str) -> None:
    with copy_of(project) as work:
        document = yaml.safe_load((work / "seeds.yaml").read_text())
        apply_edit(document, how, path, value)
        _write(work / "seeds.yaml", yaml.safe_dump(document, allow_unicode=True))
        code, err = _run(["seeds", "-q"], work)
    assert_no_crash(["seeds", f"(seeds.yaml: {how} {path!r} = {value!r})"], code, err)


# The exit-70s this fuzz found, pinned as plain examples (each failed before issue 16).
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["holdout", "size", "--delta", "1e-200"], "--delta 1e-200 is too small to size"),
        (["holdout", "size", "--delta", "5e-324"], "is too small to size"),
    ],
)
def test_found_by_the_fuzz(project: Path, argv: list[str], message: str) -> None:
    with copy_of(project) as work:
        code, err = _run(argv, work)
    assert code == 2 and message in err, err


def test_holdout_size_json_holds_a_count_beyond_2_64(project: Path) -> None:
    with copy_of(project) as work:
        code, err = _run(["holdout", "size", "--delta", "1e-150", "--json", "size.json"], work)
        assert code == 0, err
        assert json.loads((work / "size.json").read_text())["cases"] > 2**64


@pytest.mark.parametrize("target", ["x" * 300, "/proc/no-such-dir/x"])
def test_init_into_a_place_it_cannot_write_is_a_usage_error(tmp_path: Path, target: str) -> None:
    code, err = _run(["init", "--example", "prompt-holdout", target], tmp_path)
    assert code == 2 and "cannot copy the example there (" in err, err


def test_init_onto_a_file_says_it_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "release.yaml").write_text("mine")
    code, err = _run(["init", "--example", "prompt-holdout", "release.yaml"], tmp_path)
    assert code == 2 and "release.yaml: already exists and is a file; choose another DIR" in err
    assert (tmp_path / "release.yaml").read_text() == "mine"


def test_a_nul_byte_in_an_argument_is_a_usage_error(tmp_path: Path) -> None:
    code, err = _run(["gap", "--baseline", "latest", "--weights", "a\x00b"], tmp_path)
    assert code == 2 and "weights: an argument cannot contain a NUL byte" in err


def test_a_file_name_too_long_is_a_usage_error(project: Path) -> None:
    with copy_of(project) as work:
        code, err = _run(["leakage", "check", "--training", "train.jsonl", "--image-root", "x" * 300], work)
    assert code == 2 and "file name too long (300 characters in its last part)" in err, err


# --------------------------------------------------------------------------- data files

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
RAW_LINES = st.sampled_from(
    [b"", b"{}", b"[]", b"null", b"{\"id\": 1}", b"\xff\xfe", b"{\"id\": \"x\", \"expected\": NaN}", b"{" * 2000, b"1e400"]
)


@settings(FUZZ, max_examples=max(1, EXAMPLES // 3))
@given(
    case=st.dictionaries(st.sampled_from(["id", "expected", "answer", "group", "stratum", "text", "features"]), JSON_VALUES),
    raw=st.none() | RAW_LINES,
)
def test_no_test_set_content_exits_70(project: Path, case: dict[str, Any], raw: bytes | None) -> None:
    with copy_of(project) as work:
        path = work / "data" / "test.jsonl"
        line = raw if raw is not None else json.dumps(case).encode()
        path.write_bytes(path.read_bytes() + line + b"\n")
        code, err = _run(["gate", "-q"], work)
    assert_no_crash(["gate", f"(test.jsonl + {line[:200]!r})"], code, err)


@settings(FUZZ, max_examples=max(1, EXAMPLES // 3))
@given(output=st.dictionaries(st.sampled_from(["id", "label", "score", "text"]), JSON_VALUES), raw=st.none() | RAW_LINES)
def test_no_imported_output_exits_70(project: Path, output: dict[str, Any], raw: bytes | None) -> None:
    with copy_of(project) as work:
        line = raw if raw is not None else json.dumps({"id": "c000", **output}).encode()
        (work / "fuzz-preds.jsonl").write_bytes(line + b"\n" + (work / "preds.jsonl").read_bytes())
        code, err = _run(["run", "--outputs", "fuzz-preds.jsonl", "--version", "v9", "-q"], work)
        assert_no_crash(["run --outputs", repr(line[:200])], code, err)
        code, err = _run(["gate", "-q", "--run", "version:v9"], work)
    assert_no_crash(["gate --run version:v9", repr(line[:200])], code, err)
