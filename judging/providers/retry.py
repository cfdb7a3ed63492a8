"""When to retry a call and how long to wait: jittered exponential backoff, Retry-After wins."""

import random
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

RETRY_STATUSES = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
MAX_WAIT = 60.0


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds (a number, or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_seconds(
    attempt: int, base: float, rng: random.Random, retry_after: float | None
) -> float:
    """Attempt 1, 2, 3...: full jitter in [0, base * 2^(attempt-1)], capped; the server's
    Retry-After, when given, is honoured as the minimum."""
    jittered = rng.uniform(0, min(MAX_WAIT, base * 2 ** (attempt - 1)))
    if retry_after is not None:
        return min(MAX_WAIT, max(retry_after, jittered))
    return jittered
