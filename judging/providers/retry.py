"""When to retry a call and how long to wait (tenacity): jittered exponential backoff, the
server's Retry-After honoured as the minimum."""

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

from tenacity import RetryCallState, wait_random_exponential

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


class wait_backoff:  # noqa: N801 (named like tenacity's wait strategies)
    """Attempt 1, 2, 3...: full jitter in [0, base * 2^(attempt-1)], capped at MAX_WAIT; a
    failure that carries the server's ``retry_after`` waits at least that long."""

    def __init__(self, base: float):
        self._jitter = wait_random_exponential(multiplier=base, max=MAX_WAIT)

    def __call__(self, state: RetryCallState) -> float:
        server = getattr(state.outcome.exception(), "retry_after", None)
        return min(MAX_WAIT, max(server or 0.0, self._jitter(state)))
