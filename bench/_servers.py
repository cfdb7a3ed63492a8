"""Servers on loopback for the HTTP benchmarks: a free port on 127.0.0.1, wait until it
answers, stop it (and every process it started) at the end; checked, timed requests.

Nothing here talks to any address but 127.0.0.1.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import httpx

HOST = "127.0.0.1"


def free_port() -> int:
    """A free port: any the system picks, or the first free one of ``BENCH_PORTS=8750-8799``
    (on a machine shared by several people, each keeps to a range)."""
    first, _, last = os.environ.get("BENCH_PORTS", "0-0").partition("-")
    for port in range(int(first), int(last or first) + 1):
        with socket.socket() as sock:
            try:
                sock.bind((HOST, port))
            except OSError:  # taken: the next one
                continue
            return sock.getsockname()[1]
    raise RuntimeError(f"no free port in BENCH_PORTS={os.environ['BENCH_PORTS']}")


class Server:
    """A server process in its own process group, its output in `log`; a context manager."""

    def __init__(self, argv: list[str], *, env: dict[str, str], log: Path, cwd: Path | None = None):
        self.argv, self.env, self.log, self.cwd = argv, env, log, cwd
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Server:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                self.argv,
                env=self.env,
                cwd=self.cwd,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own group: stop() ends its children too
            )
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def wait_until_up(self, url: str, *, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"{self.argv[0]} exited with {self.process.returncode}: {self.tail()}"
                )
            try:
                httpx.get(url, timeout=5)
                return
            except httpx.HTTPError:
                time.sleep(0.5)
        raise RuntimeError(f"{url} did not answer within {seconds:.0f} s: {self.tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        group = os.getpgid(self.process.pid)
        os.killpg(group, signal.SIGTERM)
        try:
            self.process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            self.process.wait(10)

    def tail(self, lines: int = 15) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def workers_peak_mb(master: int) -> float:
    """The largest peak resident memory (VmHWM, MB) among the gunicorn master's worker
    processes (its children)."""
    children = subprocess.run(
        ["pgrep", "-P", str(master)], capture_output=True, text=True, check=False
    ).stdout.split()
    peaks = [0.0]
    for pid in children:
        status = Path(f"/proc/{pid}/status")
        for line in status.read_text().splitlines() if status.exists() else []:
            if line.startswith("VmHWM:"):
                peaks.append(int(line.split()[1]) / 1024)
    return max(peaks)


def elapsed_ms(start: float) -> float:
    """Milliseconds since `start` (a `time.perf_counter()` reading)."""
    return (time.perf_counter() - start) * 1000


def checked(response: httpx.Response, *expected: int) -> httpx.Response:
    if response.status_code not in expected:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: HTTP "
            f"{response.status_code} (wanted {expected}): {response.text[:300]}"
        )
    return response


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"
