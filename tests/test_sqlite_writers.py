"""SQLite's write transactions queue on a file lock (evalsite/backends/sqlite3/base.py): taken
at BEGIN IMMEDIATE, given back at COMMIT, ROLLBACK or close, and a waiting writer goes on as
soon as the one before it is done."""

import fcntl
import os
import threading

import pytest
from django.db.utils import ConnectionHandler

from evalsite.env import parse_database_url


@pytest.fixture
def sqlite_pair(db, tmp_path):
    """Two connections to one new SQLite file, and a probe of its writers' lock."""
    path = tmp_path / "writers.sqlite3"
    settings = parse_database_url(f"sqlite:///{path}", base_dir=tmp_path)
    handler = ConnectionHandler({"default": dict(settings), "b": dict(settings)})
    first, second = handler["default"], handler["b"]
    with first.cursor() as cursor:
        cursor.execute("CREATE TABLE t (n integer)")
    probe = os.open(f"{path}-writers.lock", os.O_RDWR | os.O_CREAT)

    def locked() -> bool:
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False

    yield first, second, locked
    os.close(probe)
    first.close()
    second.close()


def _begin(connection):  # what transaction.atomic does on entering the outermost block
    connection.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)


def _end(connection, how):
    getattr(connection, how)()
    connection.set_autocommit(True)


@pytest.mark.parametrize("how", ["commit", "rollback"])
def test_a_write_transaction_holds_the_queue_until_it_ends(sqlite_pair, how):
    first, _, locked = sqlite_pair
    assert not locked()
    _begin(first)
    first.cursor().execute("INSERT INTO t VALUES (1)")
    assert locked()
    _end(first, how)
    assert not locked()
    assert first.cursor().execute("SELECT count(*) FROM t").fetchone()[0] == (how == "commit")


def test_closing_the_connection_gives_the_queue_back(sqlite_pair):
    first, _, locked = sqlite_pair
    _begin(first)
    assert locked()
    first.close()
    assert not locked()


def test_a_second_writer_waits_its_turn_then_goes_on(sqlite_pair):
    first, second, _ = sqlite_pair
    _begin(first)
    first.cursor().execute("INSERT INTO t VALUES (1)")
    done = threading.Event()

    def write():
        second.inc_thread_sharing()
        _begin(second)
        second.cursor().execute("INSERT INTO t VALUES (2)")
        _end(second, "commit")
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    assert not done.wait(0.3)  # queued behind the first writer
    _end(first, "commit")
    assert done.wait(10)
    writer.join()
    assert sorted(r[0] for r in first.cursor().execute("SELECT n FROM t")) == [1, 2]


def test_a_forked_child_killed_while_writing_leaves_no_lock_behind(sqlite_pair):
    """A child shares its parent's open files: through the parent's, its lock would outlive it."""
    first, _, locked = sqlite_pair
    _begin(first)  # the parent opens its lock file...
    _end(first, "commit")
    assert first._queue_fd is not None
    child = os.fork()
    if child == 0:  # ...the child writes and dies mid-transaction, its lock taken
        try:
            fcntl.flock(first._queue_file(), fcntl.LOCK_EX)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    assert not locked()
