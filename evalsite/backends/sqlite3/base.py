"""Django's SQLite backend, with the write transactions of all processes taken in turn.

SQLite lets one writer in at a time. A writer that finds the lock taken is put to sleep by
SQLite's busy handler in growing steps (1, 2, 5, 10 ... 100 ms) and is not woken when the
lock frees: under 16 raters at once the writes queued that way made most of the save's p95
(bench/README.md, issue #33). Here each write transaction (`BEGIN IMMEDIATE`, evalsite/env.py)
first takes an exclusive `flock` on a file beside the database, which the kernel hands to a
waiter as soon as the holder commits or rolls back, then begins. The kernel drops the lock when
a process dies, so a crashed writer never holds it. SQLite's own lock and busy timeout stay as
they were: a write that does not go through here (an autocommit statement, another program)
still waits for them, and nothing about what is written changes.
"""

from __future__ import annotations

import fcntl
import os

from django.db.backends.sqlite3 import base

QUEUED_MODES = {"IMMEDIATE", "EXCLUSIVE"}  # the transactions that take the write lock at BEGIN


class DatabaseWrapper(base.DatabaseWrapper):
    # Python's sqlite3 keeps each connection's compiled statements already (its statement
    # cache): the PostgreSQL backend's prepared cursor is the plain one here.
    def prepared_cursor(self):
        return self.cursor()

    _queue_fd: int | None = None
    _queue_pid: int | None = None  # the process that opened _queue_fd
    _queue_held = False

    def _queue_file(self) -> int | None:
        """The lock file's descriptor, opened once per connection and process (none for
        in-memory)."""
        if self._queue_fd is not None and self._queue_pid != os.getpid():
            self._queue_fd = None  # the parent's: leave it open for the parent, untouched
        if self._queue_fd is None and not self.is_in_memory_db():
            path = f"{self.settings_dict['NAME']}-writers.lock"
            self._queue_fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            self._queue_pid = os.getpid()
        return self._queue_fd

    def _start_transaction_under_autocommit(self):
        fd = self._queue_file() if self.transaction_mode in QUEUED_MODES else None
        if fd is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)  # releases the GIL while it waits
            self._queue_held = True
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._queue_leave()
            raise

    def _queue_leave(self) -> None:
        if self._queue_held:
            self._queue_held = False
            fcntl.flock(self._queue_fd, fcntl.LOCK_UN)

    def _commit(self):
        try:
            return super()._commit()
        finally:
            self._queue_leave()

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self._queue_leave()

    def _close(self):
        try:
            return super()._close()
        finally:
            self._queue_leave()
            if self._queue_fd is not None:
                os.close(self._queue_fd)
                self._queue_fd = None
