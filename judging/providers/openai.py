"""OpenAI's Responses API (POST /v1/responses), structured output via `text.format`."""

from judging.providers.base import Provider
from judging.providers.types import ModelRequest


class OpenAIProvider(Provider):
    name = "openai"
    default_base_url = "https://api.openai.com/v1"

    def build(self, request: ModelRequest, api_key: str):
        content = [
            {"type": "input_image", "image_url": part.data_url()}
            if part.is_image
            else {"type": "input_text", "text": part.text}
            for part in request.parts
        ]
        body = {
            "model": self.model,
            "instructions": request.system,
            "input": [{"role": "user", "content": content}],
            "max_output_tokens": request.max_output_tokens,
            "text": {"format": {"type": "json_schema", "strict": True, **request.schema}},
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        return f"{self.base_url}/responses", headers, body

    def read(self, body: dict):
        texts = [
            part["text"]
            for item in body["output"]
            if item.get("type") == "message"
            for part in item["content"]
            if part.get("type") == "output_text"
        ]
        if not texts:
            raise KeyError("output_text")
        usage = body.get("usage") or {}
        return "".join(texts), usage.get("input_tokens"), usage.get("output_tokens")
