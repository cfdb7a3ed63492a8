"""A gunicorn worker loads the site and freezes what it loaded (evalsite/wsgi.py), so Python's
cyclic collector stops walking it on every full pass."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_loading_the_wsgi_application_freezes_the_site_with_its_views(tmp_path):
    script = (
        "import gc, sys; import evalsite.wsgi; "
        "print(gc.get_freeze_count(), 'reviews.views.item_list' in sys.modules)"
    )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalsite.settings",
        "DEBUG": "true",
        "EVALSITE_VAR_DIR": str(tmp_path),
    }
    env.pop("DATABASE_URL", None)  # nothing here opens a connection
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    frozen, views_loaded = done.stdout.split()
    assert int(frozen) > 50_000
    assert views_loaded == "True"
