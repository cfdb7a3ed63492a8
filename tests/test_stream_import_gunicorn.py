"""Under gunicorn, one API request takes a JSONL body larger than DATA_UPLOAD_MAX_MEMORY_SIZE:
the streamed import reads the request stream, never request.body (bench/stream_import.py at
a size just over the 10 MB limit; 100k items are what bench/README.md records)."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.conf import settings

from bench import stream_import

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.scale,
    pytest.mark.skipif(
        not (ROOT / ".venv/bin/gunicorn").exists(), reason="needs the project's gunicorn"
    ),
]


def test_one_request_over_the_json_body_limit_imports_every_item(tmp_path):
    items = 32_000  # about 10.9 MB of JSONL
    result = stream_import.run(items, "sqlite", tmp_path)
    assert result["bytes"] > settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert result["status"] == 201, result["counts"]
    assert result["counts"] == {"items_created": items, "questions": items}
