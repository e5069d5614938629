"""The environment as an Oloproof system: cases in on stdin, scored episodes out on stdout.

    python -m redaction_pressure.system [--writer baseline|oracle|chat] [chat options]

Each stdin line is a case ``{"id": str, "split": "train"|"dev"|"private_eval", "index": int}``;
a ``private_eval`` case also carries ``"commitment"``, the secret's commitment it was written
for (``python -m redaction_pressure.cases --private``). Other keys are ignored. For each case the writer answers the task's prompt, the environment
scores the reply, and one line goes to stdout::

    {"id", "reward": float in [0, 1], "clean": bool, "recall", "precision", "validity",
     "errors": [codes], "num_rules", "split", "index", "environment": {...identity...},
     "task_seed": hex (public splits only)}

Failures, by kind:

- a malformed case, or ``private_eval`` cases without a usable
  ``REDACTION_PRESSURE_PRIVATE_SEED`` or with one whose commitment is not the cases': nothing
  is scored, a message goes to stderr and the exit status is 2, so Oloproof records a failed
  run (never a 0.0);
- a model endpoint that fails on one case (``--writer chat``): that case gets no output line
  and a message on stderr; Oloproof counts it missing (a failure for the lower bound, a pass
  for the upper), never 0.0. Everything the reply itself does wrong is a validity failure:
  reward 0.0 with its codes in ``errors``.

The private task seed never leaves the process: holdout outputs carry only the commitment.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TextIO

from redaction_pressure.baseline import baseline_reply
from redaction_pressure.episode import build, score_reply
from redaction_pressure.oracle import oracle_reply
from redaction_pressure.splits import PRIVATE_SPLIT, SECRET_ENV, PrivateSeedError, SplitError, TaskRef, task_ref, task_seed

Writer = Callable[[str, str, bytes], str]  # (system prompt, user prompt, task seed) -> reply; only the oracle reads the seed


class CaseError(ValueError):
    pass


Case = tuple[str, str, int, str | None]  # id, split, index, commitment


def parse_cases(lines: Iterable[str]) -> list[Case]:
    cases: list[Case] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CaseError(f"stdin:{number}: not valid JSON ({exc})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            raise CaseError(f"stdin:{number}: expected an object with a string 'id'")
        split, index = obj.get("split"), obj.get("index")
        if not isinstance(split, str) or isinstance(index, bool) or not isinstance(index, int):
            raise CaseError(f"stdin:{number}: case {obj['id']!r} needs a string 'split' and an integer 'index'")
        if obj["id"] in seen:
            raise CaseError(f"stdin:{number}: duplicate case id {obj['id']!r}")
        seen.add(obj["id"])
        commitment = obj.get("commitment")
        if split == PRIVATE_SPLIT and not isinstance(commitment, str):
            raise CaseError(
                f"stdin:{number}: private_eval case {obj['id']!r} needs the secret's 'commitment' "
                "(write the cases with: python -m redaction_pressure.cases --private)"
            )
        cases.append((obj["id"], split, index, commitment if split == PRIVATE_SPLIT else None))
    return cases


def resolve(cases: list[Case], environ: Mapping[str, str]) -> list[tuple[str, TaskRef]]:
    """Every case's task, checked before anything is scored: one bad case fails the batch."""
    out = []
    for case_id, split, index, commitment in cases:
        try:
            ref = task_ref(split, index, environ)
        except SplitError as exc:
            raise CaseError(f"case {case_id!r}: {exc}") from None
        if commitment is not None and ref.secret_commitment != commitment:
            raise PrivateSeedError(
                f"{SECRET_ENV} is not the secret these cases were written for (its commitment is {ref.secret_commitment}, "
                f"the cases name {commitment}); use that secret, or write a new holdout set for this one"
            )
        out.append((case_id, ref))
    return out


def output(case_id: str, ref: TaskRef, reply: str, environ: Mapping[str, str]) -> dict[str, Any]:
    result = score_reply(ref, reply, environ)
    out: dict[str, Any] = {
        "id": case_id, "reward": result.reward, "clean": result.clean,
        "recall": result.scores.recall, "precision": result.scores.precision, "validity": result.scores.validity,
        "errors": [error.code for error in result.errors], "num_rules": result.num_rules,
        "split": ref.split, "index": ref.index, "environment": result.environment,
    }
    if not ref.is_private:
        out["task_seed"] = result.task_seed
    return out


def run(writer: Writer, stdin: TextIO, stdout: TextIO, stderr: TextIO, environ: Mapping[str, str]) -> int:
    from redaction_pressure.model_adapter import ModelEndpointError

    try:
        tasks = resolve(parse_cases(stdin), environ)
    except (CaseError, PrivateSeedError) as exc:
        print(f"redaction_pressure.system: {exc}", file=stderr)
        return 2
    failed = 0
    for case_id, ref in tasks:
        prompt = build(ref, environ)
        try:
            reply = writer(prompt.system, prompt.user, task_seed(ref, environ))
        except ModelEndpointError as exc:
            failed += 1
            print(f"redaction_pressure.system: case {case_id!r}: no reply from the model ({exc}); no output for it", file=stderr)
            continue
        except Exception as exc:  # noqa: BLE001 - one writer failure never takes the other cases down
            failed += 1
            print(f"redaction_pressure.system: case {case_id!r}: the writer failed ({type(exc).__name__}: {exc}); no output for it", file=stderr)
            continue
        # score_reply turns every reply into a score (0.0 with its codes when malformed); it
        # raises only for infrastructure faults, which end the batch (exit 2, a failed run).
        stdout.write(json.dumps(output(case_id, ref, reply, environ)) + "\n")
        stdout.flush()
    if failed:
        print(f"redaction_pressure.system: {failed} of {len(tasks)} case(s) got no reply and have no output", file=stderr)
    return 0


def make_writer(args: argparse.Namespace, environ: Mapping[str, str]) -> Writer:
    if args.writer == "baseline":
        return lambda system, user, seed: baseline_reply(user)
    if args.writer == "oracle":
        return lambda system, user, seed: oracle_reply(seed)
    from redaction_pressure.model_adapter import ChatCompletionsClient

    api_key = environ.get(args.api_key_env) if args.api_key_env else None
    client = ChatCompletionsClient(
        base_url=args.base_url, model=args.model, api_key=api_key, timeout_s=args.timeout_s,
        max_tokens=args.max_tokens, temperature=args.temperature,
    )
    return lambda system, user, seed: client.complete(system, user)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m redaction_pressure.system", description=__doc__.split("\n\n")[0])
    parser.add_argument("--writer", choices=("baseline", "oracle", "chat"), default="baseline", help="who writes the rules")
    parser.add_argument("--base-url", default="http://127.0.0.1:8000/v1", help="chat: OpenAI-compatible base URL (…/v1)")
    parser.add_argument("--model", default="", help="chat: model name sent to the endpoint")
    parser.add_argument("--api-key-env", default="", help="chat: environment variable holding the API key (sent as a bearer token)")
    parser.add_argument("--timeout-s", type=float, default=120.0, help="chat: seconds per request")
    parser.add_argument("--max-tokens", type=int, default=2048, help="chat: max_tokens of each request")
    parser.add_argument("--temperature", type=float, default=0.0, help="chat: sampling temperature")
    args = parser.parse_args(argv)
    if args.writer == "chat" and not args.model:
        parser.error("--writer chat needs --model")
    environ = dict(os.environ)
    return run(make_writer(args, environ), sys.stdin, sys.stdout, sys.stderr, environ)


if __name__ == "__main__":
    sys.exit(main())
