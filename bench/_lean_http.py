"""A lean HTTP/1.1 client for the load generator (bench/load.py): one keep-alive connection,
cookies kept by name, no redirects followed. The load generator shares the 2 cores with the
server it measures; httpx spent about 1.3 ms of CPU a request there, http.client a fraction of
that, so less of the machine goes to the instrument. What it checks is unchanged."""

from __future__ import annotations

import http.client
import select
from urllib.parse import urlencode, urlsplit


class Response:
    def __init__(self, status: int, headers: http.client.HTTPMessage, body: bytes):
        self.status_code, self.headers, self.content = status, headers, body

    @property
    def text(self) -> str:
        return self.content.decode()


class LeanClient:
    """`request(method, path, data=..., headers=...)` on one connection to `base`."""

    def __init__(self, base: str, timeout: float):
        parts = urlsplit(base)
        self.host, self.port, self.timeout = parts.hostname, parts.port, timeout
        self.cookies: dict[str, str] = {}
        self.connection: http.client.HTTPConnection | None = None

    def _connection(self) -> http.client.HTTPConnection:
        sock = self.connection.sock if self.connection is not None else None
        if sock is not None and select.select([sock], [], [], 0)[0]:
            self.connection.close()  # the server closed it while idle (keep-alive timeout)
        if self.connection is None or self.connection.sock is None:
            self.connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        return self.connection

    def request(self, method: str, path: str, *, data=None, headers=None) -> Response:
        sent = dict(headers or {})
        body = None
        if data is not None:
            body = urlencode(data).encode()
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection = self._connection()
        reused = connection.sock is not None
        try:
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            if not reused:
                raise
            # The server closed the idle connection as the request went out (its keep-alive
            # timeout), before reading it: sent again on a new one, as browsers do.
            connection.close()
            connection.request(method, path, body=body, headers=sent)
            response = connection.getresponse()
        content = response.read()
        for cookie in response.headers.get_all("Set-Cookie") or ():
            name, _, rest = cookie.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        if response.will_close:
            connection.close()
        return Response(response.status, response.headers, content)

    def get(self, path: str, **kwargs) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs) -> Response:
        return self.request("POST", path, **kwargs)

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
