"""The hostile-input corpus (tests/data/hostile/): one file per way an import file can attack.

Small files are committed under tests/data/hostile/ (rebuild them with
`.venv/bin/python -m tests.hostile`); the ones that are large on disk (a 17 MB line) are
made in a temporary folder by `build_large`. Each case names the message fragment its
refusal must carry: every limit and parser failure has its own.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile"
MB = 1024 * 1024


@dataclass(frozen=True)
class Hostile:
    name: str
    reason: str  # the fragment the refusal must carry
    large: bool = False  # made at test time, not committed


CASES = [
    Hostile("big-string.zip", "IMPORT_MAX_ZIP_RATIO"),  # a 450 MB string in a 0.5 MB bundle
    Hostile("deep.review.json", "JSON nesting is over the limit of 64 (IMPORT_MAX_DEPTH)"),
    Hostile("deep-record.jsonl", "JSON nesting is over the limit of 64 (IMPORT_MAX_DEPTH)"),
    Hostile("wrong-size.zip", "corrupt zip member"),
    Hostile("invalid-utf8.jsonl", "not UTF-8 text"),
    Hostile("utf16.csv", "UTF-16 text: save the file as UTF-8"),
    Hostile("utf16-no-mark.csv", "UTF-16 text: save the file as UTF-8"),
    Hostile("nul.csv", "a NUL byte: not text"),
    # Evidence from outside the file's own upload or bundle (another project's upload).
    Hostile("escape.review.json", "path escapes the bundle root: '../imports/"),
    Hostile("escape.zip", "path escapes the bundle root: '../../media/imports/"),
    Hostile("pixel-bomb.zip", "400.0 megapixels (limit 50.0)"),  # a 52 KB PNG, 20000 x 20000
    Hostile("long-string.review.json", "IMPORT_MAX_STRING_CHARS", large=True),
    Hostile("huge-line.jsonl", "IMPORT_MAX_LINE_BYTES", large=True),
    Hostile("huge-line.csv", "IMPORT_MAX_LINE_BYTES", large=True),
]


def _review(case_id: str, **extra) -> dict:
    return {"case_id": case_id, "claims": [{"path": "$.total", "expected_value": "1"}], **extra}


def _big_string_zip(path: Path) -> None:
    head = b'{"case_id": "big", "claims": [], "note": "'
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as bundle,
        bundle.open("big.json", "w", force_zip64=True) as member,
    ):
        member.write(head)
        chunk = b"a" * MB
        for _ in range(450):
            member.write(chunk)
        member.write(b'"}')


def _wrong_size_zip(path: Path) -> None:
    """A member whose declared size (in both headers) is smaller than its content."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("case.json", json.dumps(_review("wrong-size")) + " " * 5000)
    data = bytearray(buffer.getvalue())
    struct.pack_into("<I", data, data.rfind(b"PK\x01\x02") + 24, 10)  # central directory
    struct.pack_into("<I", data, data.find(b"PK\x03\x04") + 22, 10)  # local header
    path.write_bytes(bytes(data))


def _citing(case_id: str, path: str) -> str:
    return json.dumps(
        _review(
            case_id,
            sources=[{"artifact_id": "p1", "path": path, "authority": "evidence"}],
            claims=[{"path": "$.total", "expected_value": "1", "reference_id": "p1"}],
        )
    )


def _evidence_cases(folder: Path) -> None:
    from tests.bad_evidence import bomb_png

    (folder / "escape.review.json").write_text(_citing("escape", "../imports/7/1/secret.pdf"))
    with zipfile.ZipFile(folder / "escape.zip", "w") as bundle:
        bundle.writestr("case.json", _citing("escape", "../../media/imports/7/1/secret.pdf"))
    with zipfile.ZipFile(folder / "pixel-bomb.zip", "w") as bundle:
        bundle.writestr("case.json", _citing("bomb", "bomb.png"))
        bundle.writestr("bomb.png", bomb_png())


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def build_small(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    _big_string_zip(folder / "big-string.zip")
    (folder / "deep.review.json").write_text(
        '{"case_id": "deep", "claims": [], "note": ' + _nested(200_000) + "}\n"
    )
    record = '{"type": "item", "item_id": "deep", "metadata": {"x": ' + _nested(80) + "}}"
    (folder / "deep-record.jsonl").write_text(
        json.dumps({"type": "item", "item_id": "fine"}) + "\n" + record + "\n"
    )
    _wrong_size_zip(folder / "wrong-size.zip")
    (folder / "invalid-utf8.jsonl").write_bytes(
        b'{"type": "item", "item_id": "ok"}\n{"type": "item", "item_id": "caf\xe9"}\n'
    )
    (folder / "utf16.csv").write_bytes("type,item_id\nitem,a\n".encode("utf-16"))
    (folder / "utf16-no-mark.csv").write_bytes("type,item_id\nitem,a\n".encode("utf-16-le"))
    (folder / "nul.csv").write_bytes(b"type,item_id\nitem,a\nitem,b\x00c\n")
    _evidence_cases(folder)


def build_large(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    long = json.dumps(_review("long", note="x" * 1_500_000))
    (folder / "long-string.review.json").write_text(long)
    with (folder / "huge-line.jsonl").open("w") as handle:
        handle.write('{"type": "item", "item_id": "a", "input": "' + "y" * (17 * MB) + '"}\n')
    with (folder / "huge-line.csv").open("w") as handle:
        handle.write("type,item_id,input\nitem,a," + "z" * (17 * MB) + "\n")


if __name__ == "__main__":
    build_small(HOSTILE)
    print(f"wrote {sorted(p.name for p in HOSTILE.iterdir())}")
