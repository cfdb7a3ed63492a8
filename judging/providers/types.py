"""What a provider is asked and what it answers: plain data, no HTTP and no ORM."""

import base64
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Part:
    """One piece of the user message: text, or an image (a photo or a rendered PDF page)."""

    text: str = ""
    image: bytes = b""
    media_type: str = ""

    @property
    def is_image(self) -> bool:
        return bool(self.image)

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.b64()}"

    def b64(self) -> str:
        return base64.b64encode(self.image).decode("ascii")


@dataclass(frozen=True)
class ModelRequest:
    """One call: instructions (system), the data (parts) and the JSON Schema of the reply.

    `schema` is `{"name": ..., "schema": {...}}` (judging.formats.replies builds them)."""

    system: str
    parts: tuple[Part, ...]
    schema: dict
    temperature: float | None = None
    max_output_tokens: int = 1024


@dataclass
class ModelReply:
    """The model's text (the JSON it returned, or whatever it said) and what the call cost.

    `truncated`: the reply was larger than the provider's cap; `text` is its beginning only.
    `latency_ms`: the answered attempt's time, from the request sent to the last byte read."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    attempts: int = 1
    truncated: bool = False
    waits: list[float] = field(default_factory=list)
    latency_ms: int | None = None


class ProviderError(Exception):
    """A call that failed after its retries (or could not be made). The message never holds an
    API key: it names the status, the URL and at most the start of the body."""

    def __init__(self, message: str, *, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.status = status
