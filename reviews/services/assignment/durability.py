"""How long a rater's write waits for the disk before the request answers.

PostgreSQL flushes its log to disk at every COMMIT (an fdatasync: 1.4 to 3.6 ms on the bench
machine, more than all the rest of a claim's database work). A rater's claim and autosave are
frequent, cheap to redo, and nothing is signed on them, so they commit without waiting for that
flush (`SET LOCAL synchronous_commit TO OFF`, for their own transaction only). A crash of the
machine itself (not of Evalsite or of PostgreSQL) can then lose the last fraction of a second of
them; nothing is ever corrupted or half-written. That is the guarantee SQLite gives every write
here (WAL with synchronous=NORMAL). Submits, adjudications, approvals, imports and everything
else keep the server's setting. `RATER_WRITES_WAIT_FOR_DISK=true` makes these wait too.
"""

from django.conf import settings
from django.db import connection


def rater_write_commits_async() -> None:
    """Inside the rater's transaction: let its COMMIT answer before the log reaches the disk."""
    if (
        connection.vendor == "postgresql"
        and connection.in_atomic_block
        and not settings.RATER_WRITES_WAIT_FOR_DISK
    ):
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
