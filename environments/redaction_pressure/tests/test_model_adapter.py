"""The OpenAI-compatible chat adapter, against a fake server on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

from helpers import ROOT
from redaction_pressure.model_adapter import ChatCompletionsClient, ModelEndpointError
from redaction_pressure.oracle import oracle_reply
from redaction_pressure.splits import public_task_seed


class FakeChatServer(ThreadingHTTPServer):
    """Answers POST /v1/chat/completions from a script of (status, body) responses."""

    def __init__(self, script: list[tuple[int, Any]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()
        self.thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    server: FakeChatServer
    protocol_version: ClassVar[str] = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        self.server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
        status, payload = self.server.script.pop(0) if len(self.server.script) > 1 else self.server.script[0]
        if callable(payload):  # a reply that depends on the request (the task's prompt)
            payload = payload(body)
        if body.get("stream") and status == 200 and isinstance(payload, dict):
            self._stream(payload)
            return
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, payload: dict[str, Any]) -> None:
        """The same completion as server-sent events (what Verifiers' own clients ask for)."""
        content = payload["choices"][0]["message"]["content"]
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        chunks = [
            {"id": "x", "object": "chat.completion.chunk", "model": "fake",
             "choices": [{"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}]},
            {"id": "x", "object": "chat.completion.chunk", "model": "fake",
             "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": usage},
        ]
        data = b"".join(b"data: " + json.dumps(chunk).encode() + b"\n\n" for chunk in chunks) + b"data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def completion(content: Any) -> dict[str, Any]:
    choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
    return {"id": "x", "object": "chat.completion", "choices": [choice]}


class AdapterTest(unittest.TestCase):
    def test_request_and_reply(self) -> None:
        with FakeChatServer([(200, completion("hello"))]) as server:
            client = ChatCompletionsClient(base_url=server.base_url + "/", model="m-1", api_key="k-123", max_tokens=77)
            self.assertEqual(client.complete("SYS", "USER"), "hello")
        (request,) = server.requests
        self.assertEqual(request["path"], "/v1/chat/completions")
        self.assertEqual(request["headers"]["Authorization"], "Bearer k-123")
        self.assertEqual(request["body"], {
            "model": "m-1", "messages": [{"role": "system", "content": "SYS"}, {"role": "user", "content": "USER"}],
            "temperature": 0.0, "max_tokens": 77,
        })

    def test_no_key_no_authorization_header(self) -> None:
        with FakeChatServer([(200, completion("x"))]) as server:
            ChatCompletionsClient(base_url=server.base_url, model="m").complete("s", "u")
        self.assertNotIn("Authorization", server.requests[0]["headers"])

    def test_server_errors_are_retried_then_succeed(self) -> None:
        with FakeChatServer([(503, {"error": "busy"}), (429, {"error": "slow down"}), (200, completion("ok"))]) as server:
            client = ChatCompletionsClient(base_url=server.base_url, model="m", backoff_s=0.01)
            self.assertEqual(client.complete("s", "u"), "ok")
        self.assertEqual(len(server.requests), 3)

    def test_failures_raise_endpoint_errors(self) -> None:
        cases = [
            ([(400, {"error": "bad model"})], r"answered HTTP 400: \{\"error\": \"bad model\"\}"),
            ([(503, {"error": "down"})], "answered HTTP 503"),
            ([(200, b"<html>not json</html>")], "answered something that is not a chat completion"),
            ([(200, {"choices": []})], "answered something that is not a chat completion"),
        ]
        for script, message in cases:
            with FakeChatServer(script) as server:
                client = ChatCompletionsClient(base_url=server.base_url, model="m", backoff_s=0.01)
                with self.assertRaisesRegex(ModelEndpointError, message):
                    client.complete("s", "u")

    def test_unreachable_endpoint(self) -> None:
        with FakeChatServer([(200, completion("x"))]) as server:
            url = server.base_url
        with self.assertRaisesRegex(ModelEndpointError, "could not be reached"):
            ChatCompletionsClient(base_url=url, model="m", timeout_s=2).complete("s", "u")

    def test_a_reply_without_text_is_an_empty_reply(self) -> None:
        with FakeChatServer([(200, completion(None))]) as server:
            self.assertEqual(ChatCompletionsClient(base_url=server.base_url, model="m").complete("s", "u"), "")

    def test_bad_configuration(self) -> None:
        with self.assertRaisesRegex(ValueError, "base URL must be http"):
            ChatCompletionsClient(base_url="ftp://x", model="m")
        with self.assertRaisesRegex(ValueError, "a model name is required"):
            ChatCompletionsClient(base_url="http://127.0.0.1:1/v1", model="")


class ChatSystemTest(unittest.TestCase):
    """The system command with --writer chat, end to end over loopback."""

    def run_system(self, server: FakeChatServer, n: int) -> subprocess.CompletedProcess[str]:
        stdin = "".join(json.dumps({"id": f"c{i}", "split": "dev", "index": i}) + "\n" for i in range(n))
        env = dict(os.environ, FAKE_KEY="secret-key")
        argv = [sys.executable, "-m", "redaction_pressure.system", "--writer", "chat", "--base-url", server.base_url,
                "--model", "fake", "--api-key-env", "FAKE_KEY"]
        return subprocess.run(argv, input=stdin, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)

    def test_a_model_reply_is_scored(self) -> None:
        fenced = ["```json\n" + oracle_reply(public_task_seed("dev", i)) + "\n```" for i in (0, 1)]
        with FakeChatServer([(200, completion(fenced[0])), (200, completion(fenced[1]))]) as server:
            proc = self.run_system(server, 2)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual([json.loads(line)["reward"] for line in proc.stdout.splitlines()], [1.0, 1.0])
        first = server.requests[0]
        self.assertEqual(first["headers"]["Authorization"], "Bearer secret-key")
        self.assertIn("<samples>", first["body"]["messages"][1]["content"])
        self.assertIn("at most 24 rules", first["body"]["messages"][0]["content"].lower())

    def test_a_failing_endpoint_leaves_the_case_without_output_not_zero(self) -> None:
        with FakeChatServer([(400, {"error": "no such model"})]) as server:
            proc = self.run_system(server, 2)
        self.assertEqual(proc.returncode, 0)
        self.assertEqual(proc.stdout, "")
        self.assertIn("case 'c0': no reply from the model", proc.stderr)
        self.assertIn("2 of 2 case(s) got no reply and have no output", proc.stderr)


if __name__ == "__main__":
    unittest.main()
