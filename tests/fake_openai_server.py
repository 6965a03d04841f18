"""A scripted OpenAI-compatible HTTP server for tests (stdlib only, 127.0.0.1, ephemeral port).

    with FakeOpenAIServer(['{"a": 1}', Reply(finish_reason="length")]) as base_url:
        ...  # OpenAI(base_url=base_url, api_key="k") gets the scripted replies in order

Serves POST /v1/chat/completions and GET /v1/models. Every chat request body and its
Authorization header are recorded; a request without an Authorization header gets HTTP 401
and is not recorded. An exhausted list answers HTTP 500.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted step: a completion with `content` and `finish_reason`, or an HTTP error when
    `status` is not 200 (`content` is then the error message)."""

    content: str = ""
    finish_reason: str = "stop"
    status: int = 200


Script = Sequence[str | Reply] | Callable[[dict[str, Any]], str | Reply]


class FakeOpenAIServer:
    """Replies to chat completions from a list (in order) or a callable(request_json)."""

    def __init__(self, replies: Script, model: str = "fake-model") -> None:
        self._script = replies if callable(replies) else list(replies)
        self.model = model
        self.requests: list[dict[str, Any]] = []  # chat request bodies, in order
        self.authorizations: list[str | None] = []  # Authorization header of each chat request
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("server not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> str:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self.base_url

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- replies -------------------------------------------------------------------------------

    def _next_reply(self, body: dict[str, Any], authorization: str | None) -> Reply:
        with self._lock:
            self.requests.append(body)
            self.authorizations.append(authorization)
            if callable(self._script):
                step = self._script(body)
            elif self._script:
                step = self._script.pop(0)
            else:
                step = Reply("fake server: no scripted reply left", status=500)
        return step if isinstance(step, Reply) else Reply(step)

    def _completion(self, body: dict[str, Any], reply: Reply) -> dict[str, Any]:
        n = len(self.requests)
        prompt_chars = sum(len(str(m.get("content", ""))) for m in body.get("messages", []))
        return {
            "id": f"chatcmpl-fake-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt_chars // 4,
                "completion_tokens": len(reply.content) // 4,
                "total_tokens": prompt_chars // 4 + len(reply.content) // 4,
            },
        }


def _error_body(message: str, status: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_error", "param": None, "code": status}}


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                model = {"id": server.model, "object": "model", "created": 0, "owned_by": "fake"}
                self._send(200, {"object": "list", "data": [model]})
            else:
                self._send(404, _error_body(f"no route {self.path}", 404))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(404, _error_body(f"no route {self.path}", 404))
                return
            authorization = self.headers.get("Authorization")
            if not authorization:
                self._send(401, _error_body("missing Authorization header", 401))
                return
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                self._send(400, _error_body("request body is not JSON", 400))
                return
            reply = server._next_reply(body, authorization)
            if reply.status != 200:
                self._send(
                    reply.status, _error_body(reply.content or "scripted error", reply.status)
                )
            else:
                self._send(200, server._completion(body, reply))

    return Handler
