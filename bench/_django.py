"""Configure Django for a benchmark: a throwaway SQLite database, migrated, in a temp folder.

    from bench._django import setup_django
    work = setup_django()          # call before importing any model

Environment defaults (anything already set wins, e.g. ``DATABASE_URL`` for PostgreSQL):
``SECRET_KEY`` (a throwaway), ``DEBUG=false``, ``TASKS_BACKEND=immediate``,
``EVALSITE_VAR_DIR`` and ``DATABASE_URL`` pointing at ``<temp>/bench.sqlite3``. The folder is
removed when the process exits (unless ``keep=True``). Idempotent: a second call returns the same
folder without migrating again.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

_WORK: Path | None = None


def setup_django(*, keep: bool = False, prefix: str = "evalsite-bench-") -> Path:
    """Set env defaults, ``django.setup()``, migrate quietly; returns the temp folder."""
    global _WORK
    if _WORK is not None:
        return _WORK
    work = Path(tempfile.mkdtemp(prefix=prefix))
    if not keep:
        atexit.register(shutil.rmtree, work, ignore_errors=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalsite.settings")
    os.environ.setdefault("SECRET_KEY", "bench-only-not-secret-" + "x" * 40)
    os.environ.setdefault("DEBUG", "false")
    os.environ.setdefault("TASKS_BACKEND", "immediate")
    os.environ.setdefault("EVALSITE_VAR_DIR", str(work))
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{work / 'bench.sqlite3'}")
    (Path(os.environ["EVALSITE_VAR_DIR"]) / "static").mkdir(parents=True, exist_ok=True)

    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    _WORK = work
    return work


__all__ = ["setup_django"]
