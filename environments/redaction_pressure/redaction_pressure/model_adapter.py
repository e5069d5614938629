"""An OpenAI-compatible chat-completions client on the standard library (no SDK).

``POST {base_url}/chat/completions`` with ``{"model", "messages": [system, user],
"temperature", "max_tokens"}`` and, when an API key is given, ``Authorization: Bearer <key>``;
the reply is ``choices[0].message.content``. Any server that speaks this protocol works (vLLM,
llama.cpp's server, Ollama's ``/v1``, a hosted API). Rate limits and server errors (429, 5xx)
are retried twice with a short backoff; anything else that goes wrong raises
:class:`ModelEndpointError`, an infrastructure error: the episode has no reply, which is never
scored as 0.0.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class ModelEndpointError(RuntimeError):
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatCompletionsClient:
    base_url: str
    model: str
    api_key: str | None = None
    timeout_s: float = 120.0
    max_tokens: int = 2048
    temperature: float = 0.0
    retries: int = 2
    backoff_s: float = 1.0

    def __post_init__(self) -> None:
        scheme = urllib.parse.urlsplit(self.base_url).scheme
        if scheme not in ("http", "https"):
            raise ValueError(f"base URL must be http(s)://..., got {self.base_url!r}")
        if not self.model:
            raise ValueError("a model name is required")

    @property
    def url(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    def request_body(self, system: str, user: str) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }

    def complete(self, system: str, user: str) -> str:
        data = json.dumps(self.request_body(system, user)).encode("utf-8")
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        attempt = 0
        while True:
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    body = response.read()
                break
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:200].decode("utf-8", "replace")
                if exc.code in RETRY_STATUSES and attempt < self.retries:
                    attempt += 1
                    time.sleep(self.backoff_s * attempt)
                    continue
                raise ModelEndpointError(f"{self.url} answered HTTP {exc.code}: {detail}") from None
            except (urllib.error.URLError, TimeoutError, OSError) as exc:
                reason = getattr(exc, "reason", exc)
                raise ModelEndpointError(f"{self.url} could not be reached: {reason}") from None
        return _content(body, self.url)


def _content(body: bytes, url: str) -> str:
    try:
        payload = json.loads(body)
        content = payload["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError):
        raise ModelEndpointError(f"{url} answered something that is not a chat completion: {body[:200]!r}") from None
    if not isinstance(content, str):
        # A refusal or a tool call has no text: the model produced no rules (not an endpoint fault).
        return ""
    return content
