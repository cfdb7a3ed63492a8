"""Anthropic's Messages API (POST /v1/messages).

Structured output: one tool whose input schema is the reply schema, and `tool_choice` forcing it;
the tool call's input is the reply. A text block is accepted too (then parsed as text)."""

import json

from judging.providers.base import Provider
from judging.providers.images import ImageLimits
from judging.providers.types import ModelRequest

API_VERSION = "2023-06-01"


class AnthropicProvider(Provider):
    name = "anthropic"
    default_base_url = "https://api.anthropic.com"
    # 5 MB per image once base64-encoded (3.75 MB of bytes); sides past 1568 px are scaled
    # down by the API anyway, costing tokens for nothing.
    image_limits = ImageLimits(max_side=1568, max_bytes=3_750_000)

    def build(self, request: ModelRequest, api_key: str):
        content = [
            {
                "type": "image",
                "source": {"type": "base64", "media_type": part.media_type, "data": part.b64()},
            }
            if part.is_image
            else {"type": "text", "text": part.text}
            for part in request.parts
        ]
        tool = request.schema["name"]
        body = {
            "model": self.model,
            "system": request.system,
            "max_tokens": request.max_output_tokens,
            "messages": [{"role": "user", "content": content}],
            "tools": [
                {
                    "name": tool,
                    "description": "Return your answer.",
                    "input_schema": request.schema["schema"],
                }
            ],
            "tool_choice": {"type": "tool", "name": tool},
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        headers = {"anthropic-version": API_VERSION}
        if api_key:
            headers["x-api-key"] = api_key
        return f"{self.base_url}/v1/messages", headers, body

    def read(self, body: dict):
        usage = body.get("usage") or {}
        tokens = usage.get("input_tokens"), usage.get("output_tokens")
        for block in body["content"]:
            if block.get("type") == "tool_use":
                return json.dumps(block["input"]), *tokens
        texts = [block["text"] for block in body["content"] if block.get("type") == "text"]
        if not texts:
            raise KeyError("content")
        return "".join(texts), *tokens
