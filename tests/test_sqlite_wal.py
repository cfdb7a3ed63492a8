"""SQLite runs in WAL mode or the site does not start (issue 26, F4): a connection whose
journal mode is not WAL is refused when it opens, naming the file and the mode."""

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db.utils import ConnectionHandler

from evalsite.env import parse_database_url


def test_a_sqlite_file_not_in_wal_mode_refuses_to_connect(db, tmp_path):
    path = tmp_path / "rollback.sqlite3"
    settings = parse_database_url(f"sqlite:///{path}", base_dir=tmp_path)
    settings["OPTIONS"]["init_command"] = "PRAGMA journal_mode=DELETE;"
    other = ConnectionHandler({"default": settings})["default"]
    try:
        with pytest.raises(ImproperlyConfigured, match=r"rollback\.sqlite3 is in journal mode "
                           r"'delete', not 'wal'"):  # fmt: skip
            other.ensure_connection()
    finally:
        other.close()
