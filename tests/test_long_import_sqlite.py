"""Real processes on one SQLite file (issue 26, F4): gunicorn serves raters who log in, claim,
open their item, save an answer and log out, again and again, while `manage.py db_worker`
imports a large review bundle (bench/long_import.py, at a size that holds the old one-
transaction import's write lock for well over 5 s). Every request is answered in under 5 s,
none fails ("database is locked" was a 500), and nothing is lost: every case is imported and
every answer the site said it saved is in the database."""

from pathlib import Path

import pytest

from bench import long_import

pytestmark = [
    pytest.mark.scale,
    pytest.mark.skipif(not long_import.GUNICORN.exists(), reason="needs the project's gunicorn"),
]

CASES = 600
CLIENTS = 4


def test_raters_log_in_claim_and_save_while_a_worker_imports_a_large_bundle(tmp_path: Path):
    figures = long_import.run(
        CASES, CLIENTS, "worker", tmp_path, settings="tests.fast_hash_settings"
    )
    assert figures["failed"] == 0, figures["failures"]
    assert figures["over_5_s"] == 0, figures["slowest"]
    assert figures["logins"] >= 2 * CLIENTS, figures  # they kept at it during the import
    assert figures["saves"] >= CLIENTS, figures
    assert figures["items"] == figures["items_expected"], figures
    assert figures["answers"] >= figures["saves"], figures
