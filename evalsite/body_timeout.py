"""Under gunicorn, a request body that stops arriving is given up on after REQUEST_BODY_TIMEOUT
seconds without a byte, instead of holding a server thread until the client gives up.

gunicorn reads request bodies from a blocking socket with no timeout (its `timeout` setting only
restarts a sync worker that stopped beating; a gthread worker's threads wait for ever). This WSGI
wrapper puts a read timeout on the request's socket (`environ["gunicorn.socket"]`) while the
application reads the body, and takes it off again before the response is written (Python bounds
a whole `sendall` by a socket timeout, which would cut long downloads). A read that times out
raises `RequestBodyTimeout` (a `BadRequest`, so Django answers 400 rather than logging a server
error) and the response goes out as 408. What the application left unread (a refused or 404
POST) is read under the same timeout when the response starts, as gunicorn would read it
(without one) before the connection's next request; past 1 MiB, or after a timeout, the
socket's read side is shut, so gunicorn finds no next request and closes the connection.

Other servers (`runserver`, tests' clients) pass through unchanged: the environ has no socket.
"""

from __future__ import annotations

import contextlib
import socket

from django.core.exceptions import BadRequest

_CHUNK = 64 * 1024
_DRAIN_LIMIT = 1024 * 1024  # more left unread: close the connection instead


class RequestBodyTimeout(BadRequest):
    """No byte of the request body for the configured number of seconds."""


class _TimedBody:
    """gunicorn's `wsgi.input` with a read timeout on its socket."""

    def __init__(self, body, sock: socket.socket, seconds: float):
        self._body, self._sock, self._seconds = body, sock, seconds
        self.timed_out = self._armed = False

    def _read(self, method: str, *args):
        if self.timed_out:
            raise RequestBodyTimeout("request body: the client stopped sending it")
        if not self._armed:  # once, not per line: a streamed import reads 100k of them
            self._sock.settimeout(self._seconds)
            self._armed = True
        try:
            return getattr(self._body, method)(*args)
        except TimeoutError:
            self._give_up()
            raise RequestBodyTimeout(
                f"request body: no data for {self._seconds:g} s (REQUEST_BODY_TIMEOUT)"
            ) from None

    def read(self, size=None):
        return self._read("read", size)

    def readline(self, size=None):
        return self._read("readline", size)

    def readlines(self, hint=None):
        return self._read("readlines", hint)

    def __iter__(self):
        while line := self.readline():
            yield line

    def finish(self) -> None:
        """Read what the application left unread (up to `_DRAIN_LIMIT`), under the timeout,
        then take the timeout off before the response is written."""
        try:
            for _ in range(_DRAIN_LIMIT // _CHUNK):
                if not self.read(_CHUNK):
                    break
            else:
                self._give_up()
        except (RequestBodyTimeout, OSError):
            self._give_up()
        finally:
            with contextlib.suppress(OSError):
                self._sock.settimeout(None)

    def _give_up(self) -> None:
        self.timed_out = True
        with contextlib.suppress(OSError):  # already gone
            self._sock.shutdown(socket.SHUT_RD)


def with_body_timeout(app, seconds: float):
    """Wrap a WSGI `app`; `seconds` <= 0 turns the timeout off."""
    if seconds <= 0:
        return app

    def application(environ, start_response):
        sock = environ.get("gunicorn.socket")
        if sock is None:
            return app(environ, start_response)
        body = environ["wsgi.input"] = _TimedBody(environ["wsgi.input"], sock, seconds)

        def start(status, headers, exc_info=None):
            body.finish()
            if body.timed_out:
                status = "408 Request Timeout"
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return application
