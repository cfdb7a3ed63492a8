"""A STUB model server for demos and benchmarks: OpenAI-compatible Chat Completions, no model.

`manage.py serve_stub_model` runs it. It answers deterministically from the request alone:
- a criterion verdict: the first label when the data's `output` contains its `reference`
  (case-folded), the last label when it does not, and a label chosen by hashing the instructions
  and the data when there is no reference (so a new prompt version gives different answers);
- a pairwise verdict: `first`, `second` or `tie` by the same hash;
- evidence claims: none (it cannot read images; every field becomes a question).
Every reply says `"model": "stub"`. It is not a model and its labels mean nothing.
"""

import hashlib
import json
import re
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

DATA = re.compile(r"<data>\s*(.*?)\s*</data>", re.S)


def _text(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if isinstance(p, dict))


def _pick(options: list, seed: str):
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    return options[digest[0] % len(options)]


def _criterion(labels: list[str], system: str, data: dict) -> dict:
    output, reference = str(data.get("output") or ""), str(data.get("reference") or "")
    if reference:
        label = labels[0] if reference.casefold() in output.casefold() else labels[-1]
    else:
        label = _pick(labels, system + json.dumps(data, sort_keys=True))
    return {"label": label, "confidence": 0.5, "explanation": "stub: not a model"}


def answer(body: dict) -> str:
    """The reply text for one Chat Completions request body."""
    messages = body.get("messages") or []
    system = _text(messages[0].get("content")) if messages else ""
    user = _text(messages[-1].get("content")) if messages else ""
    match = DATA.search(user)
    try:
        data = json.loads(match.group(1)) if match else {}
    except ValueError:
        data = {}
    spec = (body.get("response_format") or {}).get("json_schema") or {}
    properties = (spec.get("schema") or {}).get("properties") or {}
    if "label" in properties:
        reply = _criterion(properties["label"].get("enum") or ["pass", "fail"], system, data)
    elif "winner" in properties:
        reply = {"winner": _pick(["first", "second", "tie"], system + user), "confidence": 0.5}
    else:
        reply = {"claims": []}
    return json.dumps(reply)


def make_server(host: str = "127.0.0.1", port: int = 0, delay: float = 0.0):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self.send_error(404, "the stub answers POST /v1/chat/completions only")
                return
            length = int(self.headers.get("content-length", 0))
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                self.send_error(400, "the body is not JSON")
                return
            if delay:
                time.sleep(delay)
            text = answer(body)
            data = json.dumps(
                {
                    "model": "stub",
                    "choices": [{"message": {"role": "assistant", "content": text}}],
                    "usage": {"prompt_tokens": length // 4, "completion_tokens": len(text) // 4},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
