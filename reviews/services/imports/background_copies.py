"""COPYs sent by a helper thread while the importer goes on (issue #33).

An import's server stored a batch while its Python waited, then waited while Python made the
next batch: the server sat idle a third of a 100k-item import. With the COPYs sent from here,
a batch's slice links and timeline lines, and the next batch's records, are made while the
server stores its items (bench/README.md). PostgreSQL only: on SQLite an import's rows are
one INSERT each table and batch, in this process, with nothing to overlap.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from django.db import connection


def background_copies() -> BackgroundCopies | None:
    """A helper for this thread's connection on PostgreSQL; None elsewhere (write directly)."""
    return BackgroundCopies(connection) if connection.vendor == "postgresql" else None


class BackgroundCopies:
    """COPYs sent by one helper thread, in the order given, on the caller's own connection (so
    in its transaction), while the caller goes on making the next rows. Only COPYs go through
    here (`bulk_insert.insert_rows(copies=...)`); the caller calls `wait()` before it uses the
    connection for anything else (psycopg's lock keeps two statements from mixing, not their
    order) and `close()` when it is done, whatever happened: a COPY not started then never
    starts."""

    # COPYs given and not yet stored, at most (an import's batch makes three): the caller then
    # waits for the oldest, so the texts held stay a few batches' whatever the file's size.
    MAX_PENDING = 3

    def __init__(self, conn) -> None:
        self.conn = conn
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="evalsite-copy")
        self.pending: list[Future] = []

    def copy(self, statement: str, pieces: list[str]) -> None:
        while len(self.pending) >= self.MAX_PENDING:
            with self.conn.wrap_database_errors:
                self.pending.pop(0).result()
        connection = self.conn.connection  # psycopg's: Django's wrapper stays in its thread

        def send() -> None:
            with connection.cursor() as cursor, cursor.copy(statement) as copy:
                for piece in pieces:
                    copy.write(piece)

        self.pending.append(self.pool.submit(send))

    def wait(self) -> None:
        """Every COPY given so far is stored; the first that failed raises, as Django's error
        (a refused row: IntegrityError, as `insert_rows` raises it)."""
        pending, self.pending = self.pending, []
        with self.conn.wrap_database_errors:
            for future in pending:
                future.result()

    def close(self) -> None:
        for future in self.pending:
            future.cancel()  # not started: never starts (the transaction is ending)
        self.pool.shutdown(wait=True)  # the one under way ends (its error: the caller's is told)
        self.pending = []
