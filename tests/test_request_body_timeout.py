"""A client that sends a request's headers and then stalls its body is given up on: a real
gunicorn started as `make serve` starts it (gunicorn.conf.py), REQUEST_BODY_TIMEOUT at 2 s and
fewer threads than stalled clients. Each stalled request is answered 408 within the timeout (a
thread's wait at most), the server keeps answering others, and a body that keeps arriving
slowly is never cut."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 2  # REQUEST_BODY_TIMEOUT for this server
THREADS = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    var = tmp_path_factory.mktemp("body-timeout")
    env = {
        **os.environ,
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{var / 'db.sqlite3'}",
        "EVALSITE_VAR_DIR": str(var),
        "REQUEST_BODY_TIMEOUT": str(TIMEOUT),
        "WEB_THREADS": str(THREADS),
    }
    gunicorn = str(Path(sys.executable).with_name("gunicorn"))
    process = subprocess.Popen(
        [
            gunicorn,
            "evalsite.wsgi",
            "--config",
            "gunicorn.conf.py",
            "--bind",
            "127.0.0.1:0",
            "--workers",
            "1",
        ],  # fmt: skip
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield _listening(process)
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def csrf_cookie(server) -> str:
    """With one, the login form's CSRF check reads the body (without, it refuses unread)."""
    page = httpx.get(f"http://{server[0]}:{server[1]}/accounts/login/", timeout=30)
    return f"csrftoken={page.cookies['csrftoken']}"


def _listening(process) -> tuple[str, int]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if match := re.search(r"Listening at: http://(127\.0\.0\.1):(\d+)", line):
            threading.Thread(target=process.stderr.read, daemon=True).start()  # drain its log
            address = (match.group(1), int(match.group(2)))
            httpx.get(f"http://{address[0]}:{address[1]}/accounts/login/", timeout=120)
            return address
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"gunicorn did not start (exit {process.poll()})")


def _post_head(path: str, length: int, cookie: str = "") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        "Content-Type: application/x-www-form-urlencoded\r\n"
        f"Cookie: {cookie}\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def _stall(address, path: str = "/accounts/login/", cookie: str = "") -> socket.socket:
    """Headers and the start of a 1,000-byte body, then nothing."""
    sock = socket.create_connection(address)
    sock.sendall(_post_head(path, 1000, cookie) + b"username=a")
    return sock


def _status(sock: socket.socket, seconds: float) -> str:
    sock.settimeout(seconds)
    try:
        head = sock.recv(64).decode("latin-1")
    except TimeoutError:
        return "no answer"
    return head.split("\r\n", 1)[0]


def test_stalled_bodies_are_given_up_and_others_still_served(server, csrf_cookie):
    started = time.monotonic()
    stalled = [_stall(server, cookie=csrf_cookie) for _ in range(THREADS + 1)]
    # Others are served meanwhile: at worst after one timeout frees a thread.
    answer = httpx.get(f"http://{server[0]}:{server[1]}/accounts/login/", timeout=TIMEOUT * 3)
    assert answer.status_code == 200
    # Every stalled request is answered 408, within a timeout of waiting for a free thread.
    statuses = [_status(sock, TIMEOUT * 3) for sock in stalled]
    assert statuses == ["HTTP/1.1 408 Request Timeout"] * len(stalled)
    assert time.monotonic() - started < TIMEOUT * 2 + 3
    for sock in stalled:
        sock.settimeout(TIMEOUT * 3)
        while sock.recv(65536):  # then the server closes the connection
            pass
        sock.close()


def test_a_body_the_view_never_reads_cannot_hold_the_connection(server):
    """A refused POST (no CSRF cookie) or a 404 does not read the body; gunicorn would wait for
    the rest, with no timeout, before the connection's next request."""
    for path in ("/accounts/login/", "/no-such-page/"):
        sock = _stall(server, path)
        assert _status(sock, TIMEOUT * 3) == "HTTP/1.1 408 Request Timeout"
        sock.close()


def test_a_slow_body_that_keeps_coming_is_not_cut(server, csrf_cookie):
    """The timeout is on silence, not on the whole body: three pauses of most of it pass."""
    body = b"username=a&password=b&x=" + b"y" * 30
    sock = socket.create_connection(server)
    sock.sendall(_post_head("/accounts/login/", len(body), csrf_cookie))
    for piece in (body[:10], body[10:20], body[20:]):
        time.sleep(TIMEOUT * 0.6)
        sock.sendall(piece)
    status = _status(sock, TIMEOUT * 3)
    assert status.startswith("HTTP/1.1 "), status
    assert " 408 " not in status
    sock.close()
