import os
from pathlib import Path

import pytest

from tests.factories import ProjectFactory, member

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture
def project(db):
    return ProjectFactory()


@pytest.fixture
def rater(project):
    return member(project, "rater")


@pytest.fixture
def outsider(db):
    return member(ProjectFactory())


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes evidence, renders and keys into its own folder."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.EVIDENCE_CACHE_DIR = tmp_path / "media" / "renders"
    settings.SIGNING_KEY_PATH = tmp_path / "signing-key.pem"
    # Tests do not run collectstatic, so no hashed manifest.
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium, never a downloaded browser."""
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs /usr/bin/chromium for the browser tests (apt-get install chromium)")
        pytest.skip("/usr/bin/chromium is not installed")
    return {
        **browser_type_launch_args,
        "executable_path": str(CHROMIUM),
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }
