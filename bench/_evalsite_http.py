"""Evalsite over loopback HTTP: gunicorn with production settings on SQLite or PostgreSQL.

Per size: a fresh database (``bench/_evalsite_setup.py``), one gunicorn (2 workers, DEBUG off,
whitenoise's manifest, the database task backend) on a free port of 127.0.0.1, then the rater's
requests as a browser sends them: import (API, one request), the item list's first page,
next item (claim), save an answer (htmx autosave), submit & next.
"""

from __future__ import annotations

import json
import re
import secrets
import subprocess
import sys
from pathlib import Path

import httpx

from bench._servers import HOST, Server, free_port, median, timed

ROOT = Path(__file__).resolve().parent.parent
PG_BASE = "postgres://postgres@127.0.0.1:5432"
CSRF = secrets.token_hex(16)  # 32 characters: a valid CSRF secret the client chooses itself
QUESTIONS = ["criterion:correct"]  # every imported item is ready to rate, like a LS task
WARMUP = 2  # raters whose first claim, save and submit are not timed (one per worker)
FALLBACK_CHUNK = 5_000


def _environment(database_url: str, work: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(work),
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": HOST,
        "DATABASE_URL": database_url,
        "EVALSITE_VAR_DIR": str(work),
        "TASKS_BACKEND": "database",  # production: tasks wait for a worker (none runs here)
        "LOG_LEVEL": "WARNING",
        # Loopback is plain HTTP: no HTTPS redirect, HSTS or secure-only cookies.
        "SECURE_SSL_REDIRECT": "false",
        "SESSION_COOKIE_SECURE": "false",
        "CSRF_COOKIE_SECURE": "false",
        "SECURE_HSTS_SECONDS": "0",
    }


class EvalsiteTarget:
    def __init__(self, database: str, work: Path, *, workers: int = 2):
        self.database, self.work, self.workers = database, work, workers
        self.name = f"Evalsite {'PostgreSQL' if database == 'postgresql' else 'SQLite'}"

    def _url(self, size: int) -> str:
        if self.database == "postgresql":
            return f"{PG_BASE}/evalsite_bench_{size}"
        return f"sqlite:///{self.work / f'evalsite-{size}.sqlite3'}"

    def run(self, size: int, body: bytes, repeats: int) -> dict:
        work = self.work / f"{self.database}-{size}"
        (work / "static").mkdir(parents=True, exist_ok=True)
        env = _environment(self._url(size), work)
        slug = f"bench-{size}"
        setup = subprocess.run(
            [sys.executable, "-m", "bench._evalsite_setup", "--slug", slug,
             "--raters", str(repeats + WARMUP)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
        )  # fmt: skip
        if setup.returncode:
            raise RuntimeError(f"set-up failed: {setup.stderr[-2000:]}")
        site = json.loads(setup.stdout.strip().splitlines()[-1])
        port = free_port()
        argv = [
            str(ROOT / ".venv/bin/gunicorn"), "evalsite.wsgi", "--bind", f"{HOST}:{port}",
            "--workers", str(self.workers), "--timeout", "900", "--log-level", "warning",
        ]  # fmt: skip
        with Server(argv, env=env, log=work / "gunicorn.log", cwd=ROOT) as server:
            base = f"http://{HOST}:{port}"
            server.wait_until_up(f"{base}/accounts/login/", seconds=120)
            return Session(base, site).measure(size, body, repeats)


class Session:
    """The requests of one run against one server."""

    def __init__(self, base: str, site: dict):
        self.base, self.site, self.slug = base, site, site["slug"]

    def _client(self, session_key: str | None = None, **headers) -> httpx.Client:
        cookies = {"csrftoken": CSRF, **({"sessionid": session_key} if session_key else {})}
        return httpx.Client(
            base_url=self.base,
            timeout=900,
            cookies=cookies,
            headers={"X-CSRFToken": CSRF, **headers},
        )

    def measure(self, size: int, body: bytes, repeats: int) -> dict:
        result = self._import(size, body)
        admin = self._client(self.site["admin"])
        raters = [self._client(key) for key in self.site["raters"]]
        samples = {"list": [], "next": [], "save": [], "submit": []}
        for rater in raters[:WARMUP]:  # untimed: first requests of each worker
            self._rate(rater, {k: [] for k in samples})
        admin.get(f"/p/{self.slug}/items/")
        for _ in range(repeats):
            timed(samples["list"], admin.get, f"/p/{self.slug}/items/", expect=(200,))
        self._rate_in_phases(raters[WARMUP:], samples)
        for client in (admin, *raters):
            client.close()
        return {**result, **{k: median(v) for k, v in samples.items()}, "n": repeats}

    def _import(self, size: int, body: bytes) -> dict:
        samples: list[float] = []
        with self._client(Authorization=f"Bearer {self.site['token']}") as api:
            url = f"/api/projects/{self.slug}/items"
            try:
                json_type = {"Content-Type": "application/json"}
                response = timed(samples, api.post, url, content=body, headers=json_type)
            except httpx.HTTPError as error:  # the server dropped the connection
                failed = f"{type(error).__name__}"
            else:
                if response.status_code == 201:
                    return {"import": size / (samples[0] / 1000)}
                failed = f"HTTP {response.status_code}"
            payload = json.loads(body)
            records = payload["records"]
            for start in range(0, len(records), FALLBACK_CHUNK):  # so the other rows can run
                chunk = {**payload, "records": records[start : start + FALLBACK_CHUNK]}
                api.post(url, json=chunk).raise_for_status()
        return {"import": None, "import_failed": failed}

    def _rate_in_phases(self, raters: list[httpx.Client], samples: dict) -> None:
        """Every rater claims, then every rater saves, then every rater submits & claims."""
        held = [self._next(rater, samples["next"]) for rater in raters]
        work = [
            (rater, item, self._question(rater, item))
            for rater, item in zip(raters, held, strict=True)
        ]
        for rater, item, question in work:
            self._save(rater, item, question, samples["save"])
        for rater, item, _ in work:
            self._submit(rater, item, samples["submit"])

    def _rate(self, rater: httpx.Client, samples: dict) -> None:
        item = self._next(rater, samples["next"])
        self._save(rater, item, self._question(rater, item), samples["save"])
        self._submit(rater, item, samples["submit"])

    def _next(self, rater: httpx.Client, samples: list[float]) -> int:
        response = timed(samples, rater.post, f"/p/{self.slug}/review/next/", expect=(302,))
        return _item_in(response)

    def _question(self, rater: httpx.Client, item: int) -> int:
        page = rater.get(f"/p/{self.slug}/items/{item}/review/")
        page.raise_for_status()
        return int(re.search(r"/questions/(\d+)/answer/", page.text).group(1))

    def _save(self, rater: httpx.Client, item: int, question: int, samples: list[float]) -> None:
        url = f"/p/{self.slug}/items/{item}/questions/{question}/answer/"
        data = {"choice": "label:pass", "expected_seq": "0"}
        timed(samples, rater.post, url, data=data, headers={"HX-Request": "true"}, expect=(200,))

    def _submit(self, rater: httpx.Client, item: int, samples: list[float]) -> None:
        url = f"/p/{self.slug}/items/{item}/submit/"
        response = timed(samples, rater.post, url, expect=(302,))
        if _item_in(response) is None:
            raise RuntimeError(f"submit & next gave no next item: {response.headers}")


def _item_in(response: httpx.Response) -> int | None:
    match = re.search(r"/items/(\d+)/review/", response.headers.get("location", ""))
    return int(match.group(1)) if match else None
