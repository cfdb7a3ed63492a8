"""A webhook receiver on 127.0.0.1 (port 0) for tests: answers each POST with the next status
of its script (the last one repeats) and records what came (headers, raw body).

While it runs, its `127.0.0.1:port` is in WEBHOOK_ALLOWED_HOSTS, as an operator lists a host.
"""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from django.conf import settings
from django.test import override_settings

from reviews.services.webhooks.hooks import webhook_create


@dataclass
class Received:
    headers: dict[str, str]
    body: bytes

    @property
    def document(self) -> dict:
        return json.loads(self.body)


class Receiver:
    def __init__(self, statuses=(204,), dribble: float = 0.0):
        """`dribble`: send a long reply one byte every so many seconds (a slow receiver)."""
        self.statuses = list(statuses)
        self.received: list[Received] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                outer.received.append(Received(dict(self.headers.items()), body))
                status = outer.statuses[min(len(outer.received), len(outer.statuses)) - 1]
                reply = b'{"ok": false}' if status >= 300 else b"thanks"
                reply = b"." * 2000 if dribble else reply
                self.send_response(status)
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                for start in range(0, len(reply), 1 if dribble else len(reply)):
                    self.wfile.write(reply[start : start + (1 if dribble else len(reply))])
                    self.wfile.flush()
                    time.sleep(dribble)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.host_port = f"127.0.0.1:{self.server.server_address[1]}"
        self.url = f"http://{self.host_port}/hook"

    def __enter__(self):
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.allowed = override_settings(
            WEBHOOK_ALLOWED_HOSTS=[*settings.WEBHOOK_ALLOWED_HOSTS, self.host_port]
        )
        self.allowed.enable()
        return self

    def __exit__(self, *exc):
        self.allowed.disable()
        self.server.shutdown()
        self.server.server_close()

    def hook(self, project, events=None, actor=None):
        """(hook, secret): a hook of `project` to this receiver, as the admin's page adds one."""
        from reviews.models import WebhookEvent

        return webhook_create(
            actor=actor, project=project, url=self.url, events=events or WebhookEvent.values
        )

    def events(self) -> list[str]:
        return [r.document["event"] for r in self.received]
