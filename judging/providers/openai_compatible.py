"""Chat Completions at a configurable base URL (vLLM, Ollama, llama.cpp server, LiteLLM...).

Structured output via `response_format: json_schema`, which these servers accept (the ones that
ignore it still get the schema in the instructions, and the first JSON object is parsed)."""

from judging.providers.base import Provider
from judging.providers.types import ModelRequest


class OpenAICompatibleProvider(Provider):
    name = "openai-compatible"
    default_base_url = "http://127.0.0.1:8001/v1"

    def build(self, request: ModelRequest, api_key: str):
        content = [
            {"type": "image_url", "image_url": {"url": part.data_url()}}
            if part.is_image
            else {"type": "text", "text": part.text}
            for part in request.parts
        ]
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": content},
            ],
            "max_tokens": request.max_output_tokens,
            "response_format": {"type": "json_schema", "json_schema": request.schema},
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        return f"{self.base_url}/chat/completions", headers, body

    def read(self, body: dict):
        text = body["choices"][0]["message"]["content"]
        if not isinstance(text, str):
            raise TypeError("content")
        usage = body.get("usage") or {}
        return text, usage.get("prompt_tokens"), usage.get("completion_tokens")
