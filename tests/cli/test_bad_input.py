"""Every user error exits 2 with file:line: key.path: message — pinned here, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from oloproof.cli.main import main
from oloproof.errors import ExitCode
from tests.conftest import Project, labelled_cases

BASE = """\
system:
  version: v1
  command: python predict.py
testset:
  cases: data/test.jsonl
evaluators:
  - {type: label_match, field: label}
policy:
  rules:
    - {id: accurate, criterion: correct, min: 0.8}
"""


@pytest.fixture(autouse=True)
def in_project(project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project.root)


def gate_error(project: Project, release: str, capsys: pytest.CaptureFixture[str]) -> str:
    (project.root / "release.yaml").write_text(release, encoding="utf-8")
    code = main(["gate"])
    err = capsys.readouterr().err
    assert code == ExitCode.USAGE, err
    assert "Traceback" not in err
    assert err.startswith("oloproof: error: ")
    return err.removeprefix("oloproof: error: ").strip()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "testset:",
            "leakag: required\ntestset:",
            "release.yaml:4: leakag: unknown key (did you mean 'leakage'?); allowed keys: evaluators, holdout, leakage, metamorphic, policy, seeds, system, testset",
        ),
        (
            "min: 0.8",
            "min: 1.5",
            "release.yaml:10: policy.rules[0].min: expected a number in (0, 1), got 1.5: min: 0 could never fail, and no finite set's lower bound reaches 1, so min: 1 could never pass",
        ),
        # Thresholds that could never fail would let a gate with no evidence PASS.
        (
            "min: 0.8",
            "min: 0",
            "release.yaml:10: policy.rules[0].min: expected a number in (0, 1), got 0: min: 0 could never fail, and no finite set's lower bound reaches 1, so min: 1 could never pass",
        ),
        (
            "min: 0.8",
            "max: 1",
            "release.yaml:10: policy.rules[0].max: expected a number in (0, 1), got 1: max: 1 could never fail, and no finite set's upper bound reaches 0, so max: 0 could never pass",
        ),
        (
            "min: 0.8",
            "baseline: latest, max_drop: 1",
            "release.yaml:10: policy.rules[0].max_drop: expected a number in (0, 1), got 1: max_drop: 1 could never fail, and the paired interval's lower bound is below 0 even for two identical versions, so max_drop: 0 could never pass",
        ),
        (
            "policy:\n",
            "policy:\n  confidence: 0.05\n",
            "release.yaml:9: policy.confidence: expected a number in [0.8, 1), got 0.05",
        ),
        (
            "policy:\n",
            "policy:\n  judges: {min_agreement: 0}\n",
            "release.yaml:9: policy.judges.min_agreement: expected a number in (0, 1), got 0: no finite number of labels gives an agreement lower bound of 1, so a judge could never be trusted",
        ),
        (
            "min: 0.8",
            "min: 0.8, method: bca",
            "release.yaml:10: policy.rules[0].method: method bca applies to score criteria; 'correct' (label_match) is pass/fail and always uses the exact Clopper-Pearson interval",
        ),
        (
            "python predict.py",
            "python 'predict.py",
            "release.yaml:3: system.command: cannot split the command: No closing quotation",
        ),
        (
            "min: 0.8",
            "min: 1",
            "release.yaml:10: policy.rules[0].min: expected a number in (0, 1), got 1: min: 0 could never fail, and no finite set's lower bound reaches 1, so min: 1 could never pass",
        ),
        (
            "min: 0.8",
            "max: 0",
            "release.yaml:10: policy.rules[0].max: expected a number in (0, 1), got 0: max: 1 could never fail, and no finite set's upper bound reaches 0, so max: 0 could never pass",
        ),
        (
            "min: 0.8",
            "baseline: latest, max_drop: 0",
            "release.yaml:10: policy.rules[0].max_drop: expected a number in (0, 1), got 0: max_drop: 1 could never fail, and the paired interval's lower bound is below 0 even for two identical versions, so max_drop: 0 could never pass",
        ),
        (
            "policy:\n",
            "policy:\n  judges: {min_agreement: 1}\n",
            "release.yaml:9: policy.judges.min_agreement: expected a number in (0, 1), got 1: no finite number of labels gives an agreement lower bound of 1, so a judge could never be trusted",
        ),
        (
            "command: python predict.py",
            "command: python predict.py\n  batch_size: 1180591620717411303424",
            "release.yaml:4: system.batch_size: expected an integer of at most 63 bits, got 1180591620717411303424",
        ),
        (
            "command: python predict.py",
            "command: python predict.py\n  timeout_s: 1" + "0" * 400,
            "release.yaml:4: system.timeout_s: expected a finite number, got 100000000000000000000000… (401 characters) (too large)",
        ),
        (
            "policy:\n",
            "x: " + "[" * 20000 + "]" * 20000 + "\npolicy:\n",
            "release.yaml:8: nested more than 64 levels deep; no key of an oloproof file needs more than a few",
        ),
        (
            "min: 0.8",
            "min: -0.1",
            "release.yaml:10: policy.rules[0].min: expected a number in (0, 1), got -0.1: min: 0 could never fail, and no finite set's lower bound reaches 1, so min: 1 could never pass",
        ),
        ("min: 0.8", "min: 0.8x", "release.yaml:10: policy.rules[0].min: expected a number, got '0.8x'"),
        ("min: 0.8", "min: .nan", "release.yaml:10: policy.rules[0].min: expected a finite number, got nan"),
        (
            "min: 0.8",
            "mn: 0.8",
            "release.yaml:10: policy.rules[0].mn: unknown key (did you mean 'min'?); allowed keys: accepted, advisory, approximate, baseline, bound, criterion, description, field, fwer, id, max, max_drop, measure, method, min, per, positive, quantile, score, where",
        ),
        (
            "min: 0.8",
            "min: 0.8, max: 0.9",
            "release.yaml:10: policy.rules[0]: a rule needs exactly one of min, max, or baseline with max_drop; got min, max",
        ),
        (
            "criterion: correct",
            "criterion: corect",
            "release.yaml:10: policy.rules[0].criterion: no evaluator provides criterion 'corect' (did you mean 'correct'?); available: correct",
        ),
        (
            "label_match",
            "label_mtch",
            "release.yaml:7: evaluators[0].type: unknown type 'label_mtch'; expected one of: label_match, within_tolerance, regex, contains, judge, metamorphic_relation, score (did you mean 'label_match'?)",
        ),
        (
            "  rules:\n    - {id: accurate, criterion: correct, min: 0.8}\n",
            "  rules: []\n",
            "release.yaml:9: policy.rules: a policy must hold at least one rule",
        ),
        (
            "  rules:\n    - {id: accurate, criterion: correct, min: 0.8}\n",
            "  confidence: 0.95\n",
            "release.yaml:9: policy: missing required key 'rules'",
        ),
        (
            "policy:\n",
            "policy:\n  confidence: 1.0\n",
            "release.yaml:9: policy.confidence: expected a number in [0.8, 1), got 1",
        ),
        ("version: v1", "version: [v1]", "release.yaml:2: system.version: expected a string, got a list"),
        ("version: v1", "version: ''", "release.yaml:2: system.version: must not be empty"),
        (
            "  version: v1\n",
            "  version: v1\n  version: v2\n",
            "release.yaml:3: system.version: duplicate key (first given on line 2)",
        ),
        ("testset:\n  cases: data/test.jsonl\n", "", "release.yaml:1: missing required key 'testset'"),
        (
            "  command: python predict.py",
            "  command: python predict.py\n  timeout_s: yes",
            "release.yaml:4: system.timeout_s: expected a number, got True",
        ),
        (
            "evaluators:",
            "metamorphic: {transforms: []}\nevaluators:",
            "release.yaml:6: metamorphic.transforms: declare at least one transform",
        ),
        (
            "    - {id: accurate, criterion: correct, min: 0.8}\n",
            "    - {id: accurate, criterion: correct, min: 0.8}\n    - {id: accurate, criterion: correct, min: 0.7}\n",
            "release.yaml:11: policy.rules[1].id: duplicate rule id 'accurate' (first at policy.rules[0])",
        ),
        ("system:", "system: [\n", "release.yaml:4: invalid YAML: expected ',' or ']', but got ':'"),
        ("version: v1", "version: !foo v1", "release.yaml:2: unsupported YAML tag !foo"),
        (
            "version: v1",
            "version: !!python/object:os.system v1",
            "release.yaml:2: unsupported YAML tag tag:yaml.org,2002:python/object:os.system",
        ),
        (
            "    - {id: accurate, criterion: correct, min: 0.8}\n",
            "    - &r {id: accurate, criterion: correct, min: 0.8}\n    - {<<: *r, id: b}\n",
            "release.yaml:11: policy.rules[1]: YAML merge keys (<<) are not supported; write the keys out",
        ),
        (
            "policy:\n  rules:\n    - {id: accurate, criterion: correct, min: 0.8}\n",
            "policy: nope.yaml\n",
            "release.yaml:8: policy: policy file not found: nope.yaml",
        ),
    ],
)
def test_config_errors_are_pinned(
    project: Project, capsys: pytest.CaptureFixture[str], old: str, new: str, message: str
) -> None:
    assert old in BASE
    assert gate_error(project, BASE.replace(old, new, 1), capsys) == message


RULE_ID_RULE = (
    "is not a valid rule id: 1 to 100 characters, letters, digits, '_', '.', ':' or '-', starting with a letter or a "
    "digit (a rule id is quoted in step outputs, workflow commands, Markdown and HTML)"
)


@pytest.mark.parametrize(
    ("rule_id", "shown"),
    [
        # Red team RT-H5: a rule id flows into step outputs, workflow commands, Markdown and HTML.
        ('"x\\n::set-output name=verdict::PASS"', "x\\x0a::set-output name=verdict::PASS"),
        ("'x%0A::error::pwned'", "x%0A::error::pwned"),
        ("'`rm -rf`'", "`rm -rf`"),
        ("'acc<script>'", "acc<script>"),
        ("'ping @octo-org/team'", "ping @octo-org/team"),
        ("'acc[/x]'", "acc[/x]"),
        ("'::add-mask::x'", "\\x3a:add-mask::x"),
        ("'_private'", "_private"),
        ("'a\u200bb'", "a\\u200bb"),
        ("x" * 101, "x" * 60 + "… (101 characters)"),
    ],
)
def test_a_rule_id_outside_the_pattern_is_a_config_error(
    project: Project, capsys: pytest.CaptureFixture[str], rule_id: str, shown: str
) -> None:
    release = BASE + f"    - {{id: {rule_id}, criterion: correct, min: 0.8}}\n"
    assert gate_error(project, release, capsys) == f"release.yaml:11: policy.rules[1].id: '{shown}' {RULE_ID_RULE}"


def test_rule_ids_at_the_patterns_edges_are_accepted(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    from oloproof.policy import RULE_ID_PATTERN

    assert RULE_ID_PATTERN == r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}"
    # The same pattern, anchored, in `oloproof schema` (for editors) and in the publish mode's report schema.
    from oloproof.action.report_check import REPORT_SCHEMA
    from oloproof.cli.schema import json_schema

    for which in ("policy", "release"):
        assert json_schema(which).count(json.dumps(f"^{RULE_ID_PATTERN}$")) == (1 if which == "policy" else 2)
    assert REPORT_SCHEMA["properties"]["rules"]["items"]["properties"]["id"]["pattern"] == f"^{RULE_ID_PATTERN}$"
    ids = ["a", "9", "acc_v2.1:slice-b", "A" + "z" * 99]
    project.write(cases=labelled_cases(40, 40), rules="".join(f"  - {{id: '{i}', criterion: correct, min: 0.5}}\n" for i in ids))
    assert main(["gate"]) == ExitCode.PASS, capsys.readouterr().err


def test_a_rule_id_in_a_policy_file_or_a_seeds_recipe_names_its_file(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.root / "policy.yaml").write_text("rules:\n  - {id: 'bad id', criterion: correct, min: 0.8}\n")
    release = BASE.replace(
        "policy:\n  rules:\n    - {id: accurate, criterion: correct, min: 0.8}\n", "policy: policy.yaml\n"
    )
    assert gate_error(project, release, capsys) == f"policy.yaml:2: rules[0].id: 'bad id' {RULE_ID_RULE}"
    (project.root / "seeds.yaml").write_text(
        "recipe: r\ncheckpoints:\n  s1: {command: python p.py}\n  s2: {command: python p.py}\n"
        "rule: {id: 'recipe <b>', criterion: correct, min: 0.8}\n"
    )
    assert gate_error(project, BASE + "seeds: seeds.yaml\n", capsys) == f"seeds.yaml:5: rule.id: 'recipe <b>' {RULE_ID_RULE}"


def test_errors_in_a_policy_file_name_that_file(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (project.root / "policy.yaml").write_text(
        "confidence: 0.95\nrules:\n  - {id: a, criterion: correct, min: 0.8, maxx: 1}\n"
    )
    release = BASE.replace(
        "policy:\n  rules:\n    - {id: accurate, criterion: correct, min: 0.8}\n", "policy: policy.yaml\n"
    )
    message = gate_error(project, release, capsys)
    assert (
        message
        == "policy.yaml:3: rules[0].maxx: unknown key (did you mean 'max'?); allowed keys: accepted, advisory, approximate, baseline, bound, criterion, description, field, fwer, id, max, max_drop, measure, method, min, per, positive, quantile, score, where"
    )


def test_missing_and_empty_and_non_utf8_config(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gate"]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip().endswith(
        "release.yaml: file not found; start a project with `oloproof init --kind classifier|prompt|regression DIR` "
        "(or copy one with `oloproof init --example NAME`), or name the config with -c FILE"
    )
    assert (
        gate_error(project, "", capsys)
        == "release.yaml: the file is empty; it needs system, testset, evaluators and policy"
    )
    (project.root / "release.yaml").write_bytes(b"system:\n  version: \xff\n")
    assert main(["gate"]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip().endswith("release.yaml:2: not valid UTF-8")


def write_raw(project: Project, raw: bytes) -> None:
    (project.root / "data").mkdir(exist_ok=True)
    (project.root / "data" / "test.jsonl").write_bytes(raw)
    (project.root / "release.yaml").write_text(BASE)


GOOD = b'{"id": "a", "expected": {"label": 1}, "x": 1}\n'
EMPTY_SET = (
    "data/test.jsonl: the test set is empty: it needs at least one case; fill in your test set, one JSON object per "
    'line: {"id": ..., your input keys, "expected": {...}}'
)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (GOOD + GOOD, "data/test.jsonl:2: duplicate case id 'a' (first on line 1)"),
        (b"", EMPTY_SET),
        (b"\n\n", EMPTY_SET),
        (
            GOOD + b'{"id": "b", "expected": {"label": NaN}}\n',
            "data/test.jsonl:2: NaN and Infinity are not valid JSON numbers",
        ),
        (
            GOOD + b'{"id": "b", "expected": {"label": Infinity}}\n',
            "data/test.jsonl:2: NaN and Infinity are not valid JSON numbers",
        ),
        (GOOD + b'{"id": "b\xff", "expected": {}}\n', "data/test.jsonl:2: not valid UTF-8 (byte 10 of the line)"),
        (b"[1, 2]\n", "data/test.jsonl:1: expected a JSON object, got an array"),
        (
            b'\xef\xbb\xbf{"id": "a"}\n',
            "data/test.jsonl:1: case 'a': 'expected' must be an object, got none",
        ),  # a BOM is skipped
        (b'"text"\n', "data/test.jsonl:1: expected a JSON object, got a str"),
        (b'{"id": "a", "expected": {}\n', "data/test.jsonl:1: not valid JSON (Expecting ',' delimiter at column 27)"),
        # A word containing "nan" is not a NaN.
        (
            b'{"id": "banana", "expected": {"label": 1}\n',
            "data/test.jsonl:1: not valid JSON (Expecting ',' delimiter at column 42)",
        ),
        (b'{"expected": {"label": 1}}\n', "data/test.jsonl:1: each case needs a non-empty string 'id', got no 'id'"),
        (
            b'{"id": 7, "expected": {"label": 1}}\n',
            "data/test.jsonl:1: each case needs a non-empty string 'id', got id 7",
        ),
        (b'{"id": "a", "label": 1}\n', "data/test.jsonl:1: case 'a': 'expected' must be an object, got none"),
        (
            b'{"id": "a", "expected": {"label": 1}, "group": [1]}\n',
            "data/test.jsonl:1: 'group' must be a string or an integer, got list",
        ),
        (
            b'{"id": "a", "expected": {"score": 1}}\n',
            "data/test.jsonl:1: case 'a': expected has no 'label' (needed by evaluators[0] (label_match))",
        ),
    ],
)
def test_malformed_test_sets_name_file_and_line(
    project: Project, capsys: pytest.CaptureFixture[str], raw: bytes, message: str
) -> None:
    write_raw(project, raw)
    (project.root / "predict.py").write_text("import sys\nfor l in sys.stdin: pass\n")
    assert main(["gate"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip() == f"oloproof: error: {message}"


def test_missing_test_set_file(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    (project.root / "release.yaml").write_text(BASE)
    assert main(["gate"]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip() == "oloproof: error: data/test.jsonl: file not found"


def test_unknown_subcommand_and_option_exit_2(run_cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    assert run_cli("frobnicate") == ExitCode.USAGE
    assert run_cli("gate", "--frob") == ExitCode.USAGE
    assert run_cli("--version") == 0
    assert "oloproof 0.1.0" in capsys.readouterr().out


def test_internal_errors_exit_70_with_a_short_report(
    project: Project, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project.write(cases=labelled_cases(3, 3))

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr("oloproof.gate.decide_rule", broken)
    assert project.cli("gate") == ExitCode.INTERNAL
    err = capsys.readouterr().err
    assert "internal error (a bug in oloproof, not in your files): RuntimeError: boom" in err
    assert "OLOPROOF_DEBUG=1" in err and "Traceback" not in err
    assert "  at test_bad_input.py:" in err  # the innermost frame (traceback is imported only here)


def test_json_written_only_on_success(project: Project) -> None:
    project.write(cases=labelled_cases(3, 3), rules="  - {id: a, criterion: nope, min: 0.5}")
    out = project.root / "r.json"
    assert project.cli("gate", "--json", str(out)) == ExitCode.USAGE
    assert not out.exists()
    assert json.loads("{}") == {}
    assert not list(Path(project.root).glob(".r.json*"))


def test_report_paths_are_checked_before_any_work(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    (project.root / "outdir").mkdir()
    assert main(["gate", "--json", "outdir"]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip() == "oloproof: error: outdir: is a directory; give a file name for the report"
    assert not (project.root / ".oloproof").exists()  # the system never ran


def test_unreadable_files_are_usage_errors(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    assert main(["run", "--outputs", "data", "--version", "v9"]) == ExitCode.USAGE
    assert capsys.readouterr().err.strip() == "oloproof: error: data: is a directory, expected a JSONL file of outputs"
    assert main(["run", "--command", "python 'x", "--version", "v9"]) == ExitCode.USAGE
    assert (
        capsys.readouterr().err.strip() == "oloproof: error: --command: cannot split the command: No closing quotation"
    )


def test_rerun_and_run_together_are_refused(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    project.write(cases=labelled_cases(3, 3))
    assert main(["gate", "--run", "latest", "--rerun"]) == ExitCode.USAGE
    assert "--rerun runs the system again; it cannot be combined with --run REF" in capsys.readouterr().err


def test_versions_are_never_read_as_markup(project: Project, capsys: pytest.CaptureFixture[str]) -> None:
    # Rule ids can hold no markup at all (RULE_ID_PATTERN, test_a_rule_id_outside_the_pattern_is_a_config_error).
    project.write(cases=labelled_cases(40, 40), rules="  - {id: accurate, criterion: correct, min: 0.5}")
    assert main(["gate"]) == ExitCode.PASS
    capsys.readouterr()
    (project.root / "o.jsonl").write_text(
        "".join(json.dumps({"id": f"c{i:05d}", "label": 1}) + "\n" for i in range(40))
    )
    assert main(["run", "--outputs", "o.jsonl", "--version", "model[/x]"]) == 0
    assert main(["runs"]) == 0
    assert "model[/x]" in capsys.readouterr().out


def test_a_huge_id_quoted_in_a_data_error_is_cut_in_the_middle(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    # The red team of issue 17: a 100,000-character id made a 100 KB error line.
    huge = "x" * 100_000
    project.write(cases=[{"id": huge, "answer": 1, "expected": {"label": 1}}] * 2)
    assert project.cli("gate", "-q") == ExitCode.USAGE
    err = capsys.readouterr().err
    assert len(err) < 1_500 and "characters left out" in err and "(first on line 1)" in err
