"""The one Provider interface over httpx: timeouts, a concurrency limit, retries, a reply cap.

A subclass says how its API spells a request (`build`) and where the text and token counts are in
its reply (`read`); everything else (keys, retries, limits) is here, once. Calls are synchronous
and thread-safe: the runner calls `complete` from a pool of threads and the semaphore bounds how
many are in flight at once.
"""

import functools
import json
import os
import ssl
import threading
import time
from collections.abc import Callable

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt

from judging.providers.images import ImageLimits
from judging.providers.retry import RETRY_STATUSES, retry_after_seconds, wait_backoff
from judging.providers.types import ModelReply, ModelRequest, ProviderError

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_REPLY_BYTES = 2 * 1024 * 1024
ERROR_BODY_CHARS = 300


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """One TLS context for every provider: loading the CA bundle costs ~25 ms of CPU per client,
    and a judge run (or the test suite) makes many; one context is safe to share."""
    return httpx.create_ssl_context()


class Provider:
    """Subclasses set `name`, `default_base_url` and implement `build` and `read`."""

    name = ""
    default_base_url = ""
    # What one image may be: the API's documented limits, with room to spare.
    image_limits = ImageLimits(max_side=2048, max_bytes=10 * 1024 * 1024)

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "",
        api_key_env: str = "",
        timeout: float = DEFAULT_TIMEOUT,
        concurrency: int = 8,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ):
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self.api_key_env = api_key_env
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.max_reply_bytes = max_reply_bytes
        self._sleep = sleep
        self._slots = threading.BoundedSemaphore(max(1, concurrency))
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            limits=httpx.Limits(max_connections=max(1, concurrency)),
            transport=transport,
            verify=_tls_context(),
        )

    def __repr__(self):  # never the key, only where it comes from
        return f"<{type(self).__name__} {self.model} at {self.base_url}>"

    def close(self) -> None:
        self._client.close()

    # --- what a subclass provides ---

    def build(self, request: ModelRequest, api_key: str) -> tuple[str, dict, dict]:
        """(url, headers, JSON body) of one call."""
        raise NotImplementedError

    def read(self, body: dict) -> tuple[str, int | None, int | None]:
        """(reply text, input tokens, output tokens) from a successful JSON reply."""
        raise NotImplementedError

    # --- the call ---

    def api_key(self) -> str:
        """The key, read from the environment at call time (never stored on the object)."""
        if not self.api_key_env:
            return ""
        key = os.environ.get(self.api_key_env, "")
        if not key:
            raise ProviderError(f"the environment variable {self.api_key_env} is not set")
        return key

    def complete(self, request: ModelRequest) -> ModelReply:
        """One call with its retries. Raises ProviderError when it finally fails."""
        url, headers, body = self.build(request, self.api_key())
        waits: list[float] = []
        retrying = Retrying(
            retry=retry_if_exception(lambda exc: getattr(exc, "retryable", False)),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_backoff(self.backoff_base),
            sleep=self._sleep,
            before_sleep=lambda state: waits.append(state.next_action.sleep),
            reraise=True,
        )
        try:
            for attempt in retrying:
                with attempt, self._slots:
                    started = time.monotonic()
                    reply = self._once(url, headers, body)
                    reply.latency_ms = round(1000 * (time.monotonic() - started))
        except ProviderError as exc:
            tries = retrying.statistics["attempt_number"]
            raise ProviderError(
                f"{exc} (after {tries} attempt{'s' * (tries > 1)})", status=exc.status
            ) from None
        reply.attempts, reply.waits = retrying.statistics["attempt_number"], waits
        return reply

    def _once(self, url: str, headers: dict, body: dict) -> ModelReply:
        try:
            with self._client.stream("POST", url, headers=headers, json=body) as response:
                data, truncated = self._read_capped(response)
                status = response.status_code
                retry_after = response.headers.get("retry-after")
        except httpx.TimeoutException:
            raise ProviderError(f"timed out calling {url}", retryable=True) from None
        except httpx.TransportError as exc:
            raise ProviderError(
                f"could not reach {url}: {type(exc).__name__}", retryable=True
            ) from None
        text = data.decode("utf-8", errors="replace")
        if status >= 400:
            error = ProviderError(
                f"HTTP {status} from {url}: {text[:ERROR_BODY_CHARS]}",
                retryable=status in RETRY_STATUSES,
                status=status,
            )
            error.retry_after = retry_after_seconds(retry_after)
            raise error
        if truncated:
            return ModelReply(text=text, truncated=True)
        return self._reply_from(text)

    def _read_capped(self, response: httpx.Response) -> tuple[bytes, bool]:
        """At most max_reply_bytes of the body: a runaway reply never fills the memory."""
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size > self.max_reply_bytes:
                return b"".join(chunks)[: self.max_reply_bytes], True
        return b"".join(chunks), False

    def _reply_from(self, text: str) -> ModelReply:
        """The API's envelope is read strictly; a broken envelope keeps its raw text, unparsed."""
        try:
            envelope = json.loads(text)
            answer, tokens_in, tokens_out = self.read(envelope)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return ModelReply(text=text)
        return ModelReply(text=answer, input_tokens=tokens_in, output_tokens=tokens_out)
