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


def rater_write_settings() -> tuple[str, ...]:
    """What the rater's transaction sends first to let its COMMIT answer before the log
    reaches the disk: given to its first read (`raw_rows.fetch(first=...)`), which on
    PostgreSQL sends them with it, and with the transaction's BEGIN, in one round trip."""
    if connection.vendor == "postgresql" and not settings.RATER_WRITES_WAIT_FOR_DISK:
        return ("SET LOCAL synchronous_commit TO OFF",)
    return ()
