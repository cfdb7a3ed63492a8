"""Helpers shared by the whole suite: database and storage snapshots, API credentials, module data,
evidence refusals."""

import inspect
import json
import os
from pathlib import Path

import pytest
from django.apps import apps
from django.conf import settings


def row_counts() -> dict[str, int]:
    """Rows of every model of `reviews` and `judging` (M2M link tables included).

    Equal before and after anything that must change nothing (a refused import, a rolled-back
    request).
    """
    models = [
        model
        for app in ("reviews", "judging")
        for model in apps.get_app_config(app).get_models(include_auto_created=True)
    ]
    return {model._meta.label: model._default_manager.count() for model in models}


def media_files() -> list[str]:
    """Every file under MEDIA_ROOT, relative to it, sorted."""
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def bearer(user) -> dict:
    """Authorization header of a fresh API token of `user`."""
    from reviews.services.projects.tokens import token_create

    _, secret = token_create(actor=user, name="test")
    return {"Authorization": f"Bearer {secret}"}


def sqlite_site_env(folder: Path, **extra: str) -> dict[str, str]:
    """Environment for `manage.py` subprocesses sharing one SQLite file site in `folder`."""
    return {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "EVALSITE_VAR_DIR": str(folder),
        "DEBUG": "true",
        "ALLOWED_HOSTS": "testserver",
        **extra,
    }


def write_item_lines(path: Path, n: int) -> Path:
    """A JSONL file of `n` plain §4 items (`i00000`, ...)."""
    with path.open("w") as handle:
        for i in range(n):
            handle.write(json.dumps({"type": "item", "item_id": f"i{i:05}", "output": "a"}) + "\n")
    return path


def per_test_copy(module_fixture: str):
    """A fixture giving each test its own copy of a module-scoped fixture built with
    `module_db.build` (tests/conftest.py): `world = per_test_copy("_world")`."""

    def fixture(db, module_db, settings, **built):
        (value,) = built.values()
        return module_db.fresh(value, settings)

    # Asked for by name, so pytest sets the module's rows up before the test's own savepoint.
    names = ("db", "module_db", "settings", module_fixture)
    fixture.__signature__ = inspect.Signature(
        [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in names]
    )
    fixture.__doc__ = f"This test's own copy of `{module_fixture}` (built once for the module)."
    return pytest.fixture(fixture)


def evidence_refusal(fn):
    """The EvidenceError that `fn()` raises (the test fails if it raises none)."""
    from reviews.evidence import EvidenceError

    with pytest.raises(EvidenceError) as caught:
        fn()
    return caught.value
