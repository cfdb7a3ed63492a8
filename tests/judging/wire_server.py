"""A scripted model server on 127.0.0.1 (port 0) that speaks each provider's wire format.

    with WireServer("anthropic", [Say('{"label": "pass"}'), Status(429, retry_after="2")]) as srv:
        provider = make_provider("anthropic", model="m", base_url=srv.url)

Each request takes the next step of the script (the last one repeats); every request is recorded
(path, headers, JSON body) so tests count calls and read what was sent. While it runs, its
`127.0.0.1:port` is in JUDGE_ALLOWED_HOSTS, as an operator lists a model server.
"""

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from django.test import override_settings


@dataclass
class Say:
    """A well-formed API envelope around `text` (the model's reply)."""

    text: str
    tokens: tuple[int, int] = (11, 7)


@dataclass
class Raw:
    """These exact bytes as a 200 body (broken envelopes, huge replies)."""

    body: bytes


@dataclass
class Status:
    code: int
    retry_after: str | None = None


@dataclass
class Hang:
    seconds: float


def envelope(wire: str, text: str, tokens: tuple[int, int]) -> dict:
    tokens_in, tokens_out = tokens
    if wire == "openai":
        return {
            "output": [
                {"type": "reasoning", "summary": []},
                {"type": "message", "content": [{"type": "output_text", "text": text}]},
            ],
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    if wire == "anthropic":
        try:
            block = {"type": "tool_use", "name": "reply", "input": json.loads(text)}
        except ValueError:
            block = {"type": "text", "text": text}
        return {
            "content": [block],
            "usage": {"input_tokens": tokens_in, "output_tokens": tokens_out},
        }
    return {
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": tokens_in, "completion_tokens": tokens_out},
    }


class WireServer:
    def __init__(self, wire: str, script: list | None = None, answer=None):
        """`answer(body) -> step` computes a step per request instead of a script."""
        self.wire = wire
        self.script = list(script or [])
        self.answer = answer
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(0.02,), daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://{self.host_port}" + ("" if self.wire == "anthropic" else "/v1")

    @property
    def host_port(self) -> str:
        host, port = self._server.server_address[:2]
        return f"{host}:{port}"

    def __enter__(self):
        self._thread.start()
        self._allowed = override_settings(
            JUDGE_ALLOWED_HOSTS=[*settings.JUDGE_ALLOWED_HOSTS, self.host_port]
        )
        self._allowed.enable()
        return self

    def __exit__(self, *exc):
        self._allowed.disable()
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict):
        with self._lock:
            self.requests.append(body)
            if self.answer is not None:
                return self.answer(body)
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def _handler(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("content-length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                step = server._next(
                    {"path": self.path, "headers": dict(self.headers), "json": body}
                )
                if isinstance(step, Hang):
                    time.sleep(step.seconds)
                    step = Say('{"label": "late"}')
                if isinstance(step, Status):
                    self.send_response(step.code)
                    if step.retry_after:
                        self.send_header("Retry-After", step.retry_after)
                    self._finish(b'{"error": {"message": "scripted"}}')
                    return
                data = (
                    step.body
                    if isinstance(step, Raw)
                    else json.dumps(envelope(server.wire, step.text, step.tokens)).encode()
                )
                self.send_response(200)
                self._finish(data)

            def _finish(self, data: bytes):
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                # the client may stop reading (reply cap, timeout)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        return Handler
