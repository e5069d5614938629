"""Precision and recall of ``oloproof leakage check --near`` at its default thresholds, on planted edits.

    python benchmarks/near_duplicates.py                  # seed 20, 300 cases per edit, 20,000 training texts
    python benchmarks/near_duplicates.py --per-edit 100 --rows 5000 --seed 3

Needs ``pip install 'oloproof[near]'``. Builds, from a seeded Zipf-distributed vocabulary (so that
unrelated texts share common words, as natural text does), a test set of 40-word prompts and a
training JSONL of unrelated texts of 20-120 words. For each edit kind, ``--per-edit`` cases get one
edited copy planted in the training file (the others have none):

  case/punct      upper case, commas and extra spaces, trailing "?!"
  truncate 75%    the first 30 of 40 words
  truncate 50%    the first 20 of 40 words
  swap 1/6        adjacent words swapped every 6 words
  insert 1/8      a word inserted every 8 words
  delete 1/8      every 8th word deleted
  replace 1/4     every 4th word replaced by another word (a heavy paraphrase)
  embedded        the whole prompt inside a 120-word document

and ``--per-edit`` cases get a *hard negative*: a training text sharing the case's topic words (the
first 10 of its 40 words) and nothing else. ``--templated`` cases are *templated negatives*: each is
a fixed 25-word instruction followed by 15 words of its own, and the training file holds as many
texts of the same instruction with other words (prompts of one form that are not copies, as
instruction-tuned test sets are). It runs the check through the library's ``run_check``
with the default thresholds and prints, per edit kind, how many planted copies were found
(recall), and over all findings how many were planted (precision). Seeded: the same seed gives the
same table.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from oloproof.config import load_release
from oloproof.leakage.record import run_check
from oloproof.leakage.spec import NearOptions
from oloproof.testset import load_testset

WORDS = 40


def vocabulary(rng: random.Random, size: int = 20_000) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]  # Zipf: "the", "of" ... are shared by everything
    return words, weights


def edits(rng: random.Random, draw: object) -> dict[str, object]:
    def case_punct(t: str) -> str:
        return "  " + t.upper().replace(" ", " ,  ", 8) + " ?!"

    def truncate(keep: int):  # type: ignore[no-untyped-def]
        return lambda t: " ".join(t.split()[:keep])

    def swap(t: str) -> str:
        w = t.split()
        for i in range(0, len(w) - 1, 6):
            w[i], w[i + 1] = w[i + 1], w[i]
        return " ".join(w)

    def insert(t: str) -> str:
        out = []
        for i, word in enumerate(t.split()):
            out.append(word)
            if i % 8 == 7:
                out.extend(draw(1))  # type: ignore[operator]
        return " ".join(out)

    def delete(t: str) -> str:
        return " ".join(word for i, word in enumerate(t.split()) if i % 8 != 7)

    def replace(t: str) -> str:
        return " ".join(draw(1)[0] if i % 4 == 3 else word for i, word in enumerate(t.split()))  # type: ignore[operator]

    def embedded(t: str) -> str:
        return " ".join(draw(40)) + " " + t + " " + " ".join(draw(40))  # type: ignore[operator]

    return {
        "case/punct": case_punct,
        "truncate 75%": truncate(30),
        "truncate 50%": truncate(20),
        "swap 1/6": swap,
        "insert 1/8": insert,
        "delete 1/8": delete,
        "replace 1/4": replace,
        "embedded": embedded,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=20)
    parser.add_argument("--per-edit", type=int, default=300)
    parser.add_argument("--rows", type=int, default=20_000, help="unrelated training texts")
    parser.add_argument("--templated", type=int, default=300, help="templated negatives (and template rows)")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words, weights = vocabulary(rng)

    def draw(n: int) -> list[str]:
        return rng.choices(words, weights, k=n)

    kinds = edits(rng, draw)
    n_cases = args.per_edit * (len(kinds) + 2)  # + hard negatives + untouched
    prompts = [" ".join(draw(WORDS)) for _ in range(n_cases)]
    rows = [" ".join(draw(rng.randint(20, 120))) for _ in range(args.rows)]
    planted: dict[str, str] = {}  # case id -> edit kind
    for k, (kind, edit) in enumerate(kinds.items()):
        for i in range(k * args.per_edit, (k + 1) * args.per_edit):
            rows.append(edit(prompts[i]))  # type: ignore[operator]
            planted[f"c{i:05d}"] = kind
    start = len(kinds) * args.per_edit
    for i in range(start, start + args.per_edit):  # hard negatives: the topic words, then other words
        rows.append(" ".join(prompts[i].split()[:10] + draw(30)))
    template = draw(25)
    first_templated = len(prompts)
    prompts += [" ".join(template + draw(15)) for _ in range(args.templated)]
    rows += [" ".join(template + draw(15)) for _ in range(args.templated)]
    templated = {f"c{i:05d}" for i in range(first_templated, len(prompts))}
    n_cases = len(prompts)
    rng.shuffle(rows)
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "data").mkdir()
        (root / "data" / "test.jsonl").write_text(
            "".join(
                json.dumps({"id": f"c{i:05d}", "prompt": p, "expected": {"label": 1}}) + "\n"
                for i, p in enumerate(prompts)
            )
        )
        (root / "training.jsonl").write_text("".join(json.dumps({"prompt": r}) + "\n" for r in rows))
        (root / "release.yaml").write_text(
            'system:\n  version: v1\n  command: ["true"]\ntestset:\n  cases: data/test.jsonl\n'
            "evaluators:\n  - {type: label_match, field: label}\n"
            "policy:\n  confidence: 0.95\n  rules:\n  - {id: r, criterion: correct, min: 0.8}\n"
        )
        release = load_release(str(root / "release.yaml"))
        testset = load_testset(release.resolve(release.testset_path), display=release.testset_path)
        options = NearOptions()
        started = time.perf_counter()
        result = run_check(release, testset, str(root / "training.jsonl"), near=options)
        seconds = time.perf_counter() - started
    assert result.near is not None
    found = set(result.near.ids) | set(result.leaked_ids)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"seed {args.seed}; {n_cases} cases of {WORDS} words; {len(rows):,} training texts; check (exact + near) "
        f"{seconds:.1f} s; peak memory of this process {peak:.0f} MB (it also holds the generated texts)"
    )
    print(f"thresholds: {options.text()}\n")
    print("| planted edit | planted | found | recall |")
    print("|---|---|---|---|")
    for kind in kinds:
        ids = [case for case, what in planted.items() if what == kind]
        hits = sum(case in found for case in ids)
        print(f"| {kind} | {len(ids)} | {hits} | {hits / len(ids):.3f} |")
    hard = {f"c{i:05d}" for i in range(start, start + args.per_edit)}
    true_found = len(found & set(planted))
    false_found = len(found - set(planted))
    print(f"| **all planted** | {len(planted)} | {true_found} | {true_found / len(planted):.3f} |")
    print()
    print(f"found: {len(found)}, of which planted: {true_found}; precision {true_found / max(len(found), 1):.3f}")
    others = false_found - len(found & hard) - len(found & templated)
    print(
        f"false findings: {false_found} ({len(found & hard)} of {len(hard)} hard negatives, "
        f"{len(found & templated)} of {len(templated)} templated negatives (25 shared words of 40), "
        f"{others} of {n_cases - len(planted) - len(hard) - len(templated)} untouched cases)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
