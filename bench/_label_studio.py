"""Label Studio 1.x (from PyPI) as the peer: its own server (`label-studio start`) on SQLite.

It never goes into the project's virtualenv (its Django pin differs): on first use it is
installed into ``var/bench/label-studio`` (git-ignored). Driven through its REST API with a
legacy token, exactly as a script would: create a project with a pass/fail labeling config,
import the tasks in one request, list tasks (first page of 50), get the next task from the
label stream, save an annotation.
"""

from __future__ import annotations

import json
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import httpx

from bench._servers import HOST, Server, checked, elapsed_ms, free_port

ROOT = Path(__file__).resolve().parent.parent
HOME = ROOT / "var/bench"
VENV = HOME / "label-studio"
BIN = VENV / "bin/label-studio"
REQUIREMENT = "label-studio>=1,<2"
LABEL_CONFIG = """<View>
  <Text name="output" value="$output"/>
  <Choices name="correct" toName="output"><Choice value="pass"/><Choice value="fail"/></Choices>
</View>"""
# Run by Label Studio's Python (as `label-studio start` sets itself up): users, their tokens.
ANNOTATORS = """
import json, os, sys
import label_studio
sys.path.insert(0, os.path.dirname(label_studio.__file__))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "label_studio.core.settings.label_studio")
import django
django.setup()
from organizations.models import Organization
from users.models import User
organization, tokens = Organization.objects.first(), []
for email in sys.argv[1:]:
    user = User.objects.create_user(email=email, password=None)
    organization.add_user(user)
    user.active_organization = organization
    user.save(update_fields=["active_organization"])
    tokens.append(user.auth_token.key)
print(json.dumps(tokens))
"""
RESULT = [
    {"from_name": "correct", "to_name": "output", "type": "choices", "value": {"choices": ["pass"]}}
]


def installed() -> tuple[bool, str]:
    """(available, version or why not); installs on first use (a few minutes)."""
    if not BIN.exists():
        try:
            subprocess.run(["python3", "-m", "venv", str(VENV)], check=True, timeout=300)
            subprocess.run(
                [str(VENV / "bin/pip"), "install", "--quiet", REQUIREMENT],
                check=True,
                timeout=1800,
                capture_output=True,
            )
        except (OSError, subprocess.SubprocessError) as error:
            shutil.rmtree(VENV, ignore_errors=True)
            return False, f"could not install {REQUIREMENT} ({type(error).__name__})"
    version = subprocess.run(
        [str(VENV / "bin/python"), "-c", "import label_studio; print(label_studio.__version__)"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if version.returncode:
        return False, f"label-studio does not import: {version.stderr[-300:]}"
    return True, version.stdout.strip()


class LabelStudio:
    """One Label Studio server for the whole run (one project per size); a context manager."""

    name = "Label Studio"

    def __init__(self, work: Path, *, port: int | None = None, user: str = "bench@example.com"):
        self.data = work / "label-studio"
        shutil.rmtree(self.data, ignore_errors=True)
        self.data.mkdir(parents=True)
        self.token = secrets.token_hex(20)
        self.port = port or free_port()
        self.base = f"http://{HOST}:{self.port}"
        self.env = env = {
            "PATH": f"{VENV / 'bin'}:/usr/bin:/bin",
            "HOME": str(self.data),
            "DEBUG": "false",
            "SENTRY_DSN": "",
            "FRONTEND_SENTRY_DSN": "",
            "COLLECT_ANALYTICS": "false",
        }
        argv = [
            str(BIN), "start", "--no-browser", "--data-dir", str(self.data),
            "--internal-host", HOST, "--port", str(self.port), "--log-level", "WARNING",
            "--username", user, "--password", secrets.token_urlsafe(16),
            "--user-token", self.token, "--enable-legacy-api-token",
        ]  # fmt: skip
        self.server = Server(argv, env=env, log=self.data / "server.log")

    def annotators(self, n: int) -> list[str]:
        """`n` new annotators of the server's organization: their legacy API tokens. Made in
        Label Studio's own Django (its virtualenv, its database): its API makes a user but
        hands out only the caller's own token."""
        emails = [f"annotator-{secrets.token_hex(4)}@example.com" for _ in range(n)]
        made = subprocess.run(
            [str(VENV / "bin/python"), "-c", ANNOTATORS, *emails],
            env={**self.env, "LABEL_STUDIO_BASE_DATA_DIR": str(self.data)},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        if made.returncode:
            raise RuntimeError(f"Label Studio made no annotators: {made.stderr[-500:]}")
        return json.loads(made.stdout.strip().splitlines()[-1])

    def __enter__(self) -> LabelStudio:
        self.server.__enter__()
        try:
            # The first start migrates a new SQLite database: a minute or more on a busy machine.
            self.server.wait_until_up(f"{self.base}/version/", seconds=600)
        except BaseException:  # SIGTERM or a timeout while it starts: stop it all the same
            self.server.stop()
            raise
        self.api = httpx.Client(
            base_url=self.base, timeout=900, headers={"Authorization": f"Token {self.token}"}
        )
        return self

    def __exit__(self, *exc) -> None:
        self.api.close()
        self.server.stop()

    def open(self, size: int, tasks_body: bytes, raters: int) -> dict:
        """A new project of `size` tasks, imported in one request (timed): {"import": items/s}.
        One user labels (`raters` is for Evalsite): each next follows an annotation, so it
        claims a new task (a lock), as a rater's does."""
        config = {"title": f"Bench {size}", "label_config": LABEL_CONFIG, "maximum_annotations": 1}
        self.pk = checked(self.api.post("/api/projects/", json=config), 201).json()["id"]
        start = time.perf_counter()
        imported = self.api.post(
            f"/api/projects/{self.pk}/import",
            content=tasks_body,
            headers={"Content-Type": "application/json"},
        )
        took = elapsed_ms(start)
        if checked(imported, 201).json().get("task_count") != size:
            raise RuntimeError(f"Label Studio imported {imported.json()} of {size} tasks")
        return {"import": size / (took / 1000)}

    def close(self, *, discard: bool = False) -> None:
        """The project stays (the server stops with the context manager) unless `discard`:
        then it is deleted, so Label Studio's next import finds a database of the same size."""
        if discard:
            checked(self.api.delete(f"/api/projects/{self.pk}/", timeout=600), 204)

    def list(self) -> float:
        start = time.perf_counter()
        checked(self.api.get(f"/api/tasks/?project={self.pk}&page=1&page_size=50"), 200)
        return elapsed_ms(start)

    def next(self, n: int) -> float:
        start = time.perf_counter()
        response = checked(self.api.get(f"/api/projects/{self.pk}/next"), 200)
        took = elapsed_ms(start)
        self.task = response.json()["id"]
        return took

    def save(self, n: int) -> float:
        annotation = {"result": RESULT, "lead_time": 1.0}
        start = time.perf_counter()
        checked(self.api.post(f"/api/tasks/{self.task}/annotations/", json=annotation), 201)
        return elapsed_ms(start)

    def submit(self, n: int) -> None:
        """Label Studio has no such request: its UI posts the annotation, then asks for next."""
        return None
