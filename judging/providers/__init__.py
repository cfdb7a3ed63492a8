"""Model APIs over httpx, one interface (base.Provider); no ORM, no Django models."""

from judging.providers.anthropic import AnthropicProvider
from judging.providers.base import Provider
from judging.providers.openai import OpenAIProvider
from judging.providers.openai_compatible import OpenAICompatibleProvider
from judging.providers.types import ModelReply, ModelRequest, Part, ProviderError

PROVIDERS: dict[str, type[Provider]] = {
    cls.name: cls for cls in (OpenAIProvider, AnthropicProvider, OpenAICompatibleProvider)
}


def make_provider(name: str, **options) -> Provider:
    try:
        cls = PROVIDERS[name]
    except KeyError:
        raise ProviderError(
            f"unknown provider {name!r}: choose one of {', '.join(PROVIDERS)}"
        ) from None
    return cls(**options)


__all__ = [
    "PROVIDERS",
    "ModelReply",
    "ModelRequest",
    "Part",
    "Provider",
    "ProviderError",
    "make_provider",
]
