"""`vf-eval` end to end: the installed taskset, a fake model on 127.0.0.1, `--no-push`.

Verifiers' own runner, the taskset's default harness (harness.py: one chat call, no tools) and subprocess runtime do everything a
real evaluation does; only the model is a loopback server answering the oracle rules. Nothing
leaves the machine: the model URL is loopback and ``--no-push`` keeps the traces local.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from helpers import ROOT
from redaction_pressure.episode import build
from redaction_pressure.oracle import oracle_reply
from redaction_pressure.splits import public_task_seed, task_ref
from test_model_adapter import FakeChatServer, completion

VF_EVAL = Path(sys.executable).with_name("vf-eval")


class VfEvalTest(unittest.TestCase):
    def test_two_dev_tasks_score_one_and_stay_local(self) -> None:
        self.assertTrue(VF_EVAL.exists(), f"{VF_EVAL} is not installed (run through `uv run --project ...`)")
        out = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, out)
        golds = {build(task_ref("dev", i)).user: oracle_reply(public_task_seed("dev", i)) for i in range(2)}

        def answer(body: dict[str, object]) -> dict[str, object]:  # each task's own gold reply
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")  # type: ignore[index,union-attr]
            return completion(golds[user])

        with FakeChatServer([(200, answer)]) as server:
            argv = [
                str(VF_EVAL), "redaction-pressure", "--env.taskset.split", "dev", "-n", "2", "-m", "fake-model",
                "--client.base-url", server.base_url, "--client.api-key-var", "FAKE_MODEL_KEY",
                "--env.agent.runtime.type", "subprocess",  # no harness option: the safe one is the default
                "--no-push", "--no-rich", "-o", str(out),
            ]
            env = dict(os.environ, FAKE_MODEL_KEY="k")
            proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(proc.returncode, 0, proc.stdout[-2000:] + proc.stderr[-2000:])
        self.assertGreaterEqual(len(server.requests), 2)
        (traces_file,) = out.glob("*/traces.jsonl")
        traces = [t for line in traces_file.read_text().splitlines() for t in json.loads(line)["traces"]]
        self.assertEqual(sorted(t["task"]["key"] for t in traces), ["dev-0000", "dev-0001"])
        for trace in traces:
            self.assertTrue(trace["ok"])
            self.assertEqual({k: v["score"] for k, v in trace["rewards"].items()}, {"recall": 1.0, "precision": 1.0, "clean_gate": 1.0})
            self.assertEqual(trace["info"]["redaction_errors"], [])
            self.assertEqual(trace["info"]["environment"], trace["task"]["data"]["environment"])
            self.assertEqual(len(trace["info"]["task_seed"]), 64)
        (config_file,) = out.glob("*/configs/resolved/eval.json")
        resolved = json.loads(config_file.read_text())
        self.assertIs(resolved["push"], False)
        self.assertIsNone(resolved["env"]["agent"]["harness"])  # unpinned: the taskset's default
        self.assertEqual({t["agent"]["config"]["harness"]["id"] for t in traces}, {"redaction-pressure"})


if __name__ == "__main__":
    unittest.main()
