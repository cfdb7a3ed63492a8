"""Current planner statistics right after a bulk write (issue 33).

PostgreSQL plans every query from the statistics ANALYZE gathers. Autovacuum gathers them only
when it next wakes (within a minute by default; never, where it is off), so right after a 100k-
item import the item list was planned for an almost empty table: 40-60 ms instead of ~10. So
an import, every background job (a split of every item, questions for 50k items, a bulk
action; reviews/services/jobs/records.py) and a judge run that wrote verdicts
(judging/services/runs/control.py) call `planner_statistics_refresh` once their rows are
committed: every table changed past autovacuum's own threshold (50 rows + 10 % of the table) is
analyzed now, timed and logged.

The site's role owns no table and so cannot ANALYZE one (docs/security.md); the owner's function
`evalsite_analyze_changed()` (evalsite/migrations/0001) does it for the caller and takes no
argument: it can only do early what autovacuum would do anyway.

SQLite: nothing. Its planner has no statistics to go stale here, and `ANALYZE` would change
plans that bench/README.md measured as they are.
"""

from __future__ import annotations

import logging
import time

from django.db import connection, transaction

logger = logging.getLogger(__name__)


def planner_statistics_refresh(*, after: str) -> list[str]:
    """Analyze the tables a committed bulk write changed (PostgreSQL); returns their names.
    Inside a transaction it runs when that commits (uncommitted rows are not counted yet)."""
    if connection.vendor != "postgresql":
        return []
    if connection.in_atomic_block:
        # Once, when it commits: not through this function again, which would defer itself
        # for ever where the commit runs inside an outer block (a test's captured callbacks).
        transaction.on_commit(lambda: _analyze_changed(after))
        return []
    return _analyze_changed(after)


def _analyze_changed(after: str) -> list[str]:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        # This connection's row counts reach the shared statistics now, not within a second.
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT * FROM evalsite_analyze_changed()")
        tables = [name for (name,) in cursor.fetchall()]
    if tables:
        logger.info(
            "ANALYZE after %s: %s (%.0f ms)",
            after,
            ", ".join(tables),
            1000 * (time.perf_counter() - started),
        )
    return tables
