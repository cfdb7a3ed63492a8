"""Items with PDF and image evidence, and reading the images a request carried back out of each
provider's wire format (the tests of visual judges and their browser test share these)."""

import base64
import io

from PIL import Image

from reviews.evidence import DrawText, build_pdf
from tests.judging.helpers import (
    criterion_record,
    human_record,
    import_items,
    item_record,
    write_jsonl,
)


def pdf_bytes(*texts: str) -> bytes:
    """A PDF with one page per text, each page telling which it is."""
    return build_pdf([[DrawText(72, 100 + 40 * i, text, size=24)] for i, text in enumerate(texts)])


def png_bytes(size=(400, 300), colour=(200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, "PNG")
    return out.getvalue()


def evidence_project(project, tmp_path, *, pages=("page one", "page two", "page three")):
    """Items `doc` (a PDF of `pages`), `photo` (a PNG) and `bare` (no evidence), each with a
    human label; no split drawn (runs use `--split all`)."""
    (tmp_path / "doc.pdf").write_bytes(pdf_bytes(*pages))
    (tmp_path / "photo.png").write_bytes(png_bytes())
    records = [
        criterion_record(),
        item_record("doc", output="the invoice total is 10", evidence=["doc.pdf"]),
        item_record("photo", output="a red square", evidence=["photo.png"]),
        item_record("bare", output="no evidence here"),
    ]
    records += [human_record(i, "rita", "pass") for i in ("doc", "photo", "bare")]
    import_items(project, write_jsonl(tmp_path / "items.jsonl", records))
    return project


def images_sent(wire: str, body: dict) -> list[tuple[str, bytes]]:
    """(media type, decoded bytes) of every image part of one request, in order."""
    if wire == "anthropic":
        parts = body["messages"][-1]["content"]
        return [
            (p["source"]["media_type"], base64.b64decode(p["source"]["data"]))
            for p in parts
            if p["type"] == "image"
        ]
    if wire == "openai":
        parts = body["input"][-1]["content"]
        urls = [p["image_url"] for p in parts if p["type"] == "input_image"]
    else:
        parts = body["messages"][-1]["content"]
        urls = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
    out = []
    for url in urls:
        head, data = url.split(",", 1)
        assert head.startswith("data:") and head.endswith(";base64")
        out.append((head[5:-7], base64.b64decode(data)))
    return out


def text_sent(wire: str, body: dict) -> str:
    """The text parts of one request's user message, joined."""
    if wire == "openai":
        parts = body["input"][-1]["content"]
        return "".join(p["text"] for p in parts if p["type"] == "input_text")
    parts = body["messages"][-1]["content"]
    return "".join(p["text"] for p in parts if p["type"] == "text")


def decoded(data: bytes) -> Image.Image:
    image = Image.open(io.BytesIO(data))
    image.load()
    return image
