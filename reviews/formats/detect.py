"""FORMATS §5: choose the import format from a file name and its first bytes.

Only the head of the file is needed (``HEAD_BYTES``), so uploads can be sniffed before they are
read whole. What each format looks like is its importer's business (a ``Sniffer`` each, handed
in by the import pipeline's registry); the containers are judged here. Rules, in order:
  * an image (PNG, JPEG, WebP, TIFF) or a PDF, by its magic bytes -> the format that reads
    ``evidence`` (each file an item of its own);
  * ``.zip`` name or zip magic -> the format that reads ``zip``;
  * a top-level JSON array: its first element is asked of the formats whose files are arrays
    (``array``), e.g. Label Studio's export, a list of tasks;
  * a JSON object on the first line followed by more lines (or a ``.jsonl``/``.ndjson`` name) is
    JSONL: its first record decides, among the formats that read JSONL;
  * otherwise a (possibly truncated) JSON object is scanned key by key and each format's
    ``looks_like`` is asked;
  * a plausible CSV header line (>= 2 distinct identifier-like names) -> the format that reads
    ``csv``.
No match, or more than one, raises FormatError naming the choices.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reviews.evidence import sniff

from .errors import FormatError

__all__ = ["HEAD_BYTES", "Sniffer", "csv_flavour", "detect_format"]

HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class Sniffer:
    """What one import format looks like from its first bytes."""

    format: str
    looks_like: Callable[[dict[str, Any]], bool]  # a (partial) JSON object of this format?
    lines: bool = False  # may come as JSONL, one object per line
    container: str = ""  # "zip", "csv" or "evidence": the format that reads that container
    array: bool = False  # its files are a JSON array of objects: looks_like gets the first one


_COLUMN = re.compile(r"^[A-Za-z_][\w.-]*$")  # snake_case-like names, no spaces
_TRUNCATED = object()  # a value cut off by the end of the head


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _scan_object(text: str, i: int, depth: int = 0) -> dict[str, Any]:
    """Keys/values of the object starting at ``text[i] == "{"`` as far as the text goes.

    A value cut off by the end of the head is ``_TRUNCATED`` (or, for an object, its partial
    keys one level down), so a large file is judged by its first keys.
    """
    dec = json.JSONDecoder()
    out: dict[str, Any] = {}
    i = _ws(text, i + 1)
    try:
        while i < len(text) and text[i] != "}":
            key, i = dec.raw_decode(text, i)
            i = _ws(text, i)
            if not isinstance(key, str) or text[i] != ":":
                return out
            i = _ws(text, i + 1)
            try:
                out[key], i = dec.raw_decode(text, i)
            except (json.JSONDecodeError, RecursionError):
                partial = i < len(text) and text[i] == "{" and depth == 0
                out[key] = _scan_object(text, i, depth + 1) if partial else _TRUNCATED
                return out
            i = _ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _ws(text, i + 1)
    except (json.JSONDecodeError, IndexError, RecursionError):
        pass  # the head ended inside a key: judge what we have
    return out


def _classify(obj: dict[str, Any], sniffers: Sequence[Sniffer], *, name: str, what: str) -> str:
    found = [s.format for s in sniffers if s.looks_like(obj)]
    if len(found) == 1:
        return found[0]
    if found:
        raise FormatError(
            f"ambiguous {what}: looks like {' and '.join(found)}; {_choices(sniffers)}", file=name
        )
    raise FormatError(f"unknown {what}; {_choices(sniffers)}", file=name)


def _choices(sniffers: Sequence[Sniffer]) -> str:
    return f"pass the format explicitly: one of {', '.join(s.format for s in sniffers)}"


def _container(sniffers: Sequence[Sniffer], container: str, name: str) -> str:
    for sniffer in sniffers:
        if sniffer.container == container:
            return sniffer.format
    raise FormatError(f"no importer reads {container} files; {_choices(sniffers)}", file=name)


def _first_line_object(body: str) -> tuple[dict[str, Any] | None, bool]:
    """The first line as a complete JSON object, and whether another record follows."""
    line, _, rest = body.partition("\n")
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):  # the importer's own reader names the problem
        return None, False
    return (obj if isinstance(obj, dict) else None), rest.strip().startswith("{")


def _detect_csv(name: str, text: str, sniffers: Sequence[Sniffer]) -> str:
    line = text.splitlines()[0] if text else ""
    try:
        header = next(csv.reader([line]))
    except (csv.Error, StopIteration):
        header = []
    names = [h.strip() for h in header]
    if len(names) >= 2 and len(set(names)) == len(names) and all(_COLUMN.match(n) for n in names):
        return _container(sniffers, "csv", name)
    raise FormatError(
        f"unknown format: not a zip, JSON object, JSONL, CSV header, image or PDF; "
        f"{_choices(sniffers)}",
        file=name,
    )


# Where files that are not records go, for errors about a file no text format reads.
EVIDENCE_HINT = (
    "images (PNG, JPEG, WebP, TIFF) and PDFs import as items of their own, several at once, "
    "in a folder or in a .zip (docs/formats.md, Files: images and PDFs)"
)


def _refuse_nul_bytes(name: str, sample: bytes) -> None:
    """UTF-16 (a byte-order mark, or a NUL in most characters: one without its mark) is named
    as such; a stray NUL byte is named where it is: no text column stores it."""
    if sample[:2] in (b"\xff\xfe", b"\xfe\xff") or sample.count(b"\x00") * 4 >= len(sample) > 0:
        raise FormatError(
            f"UTF-16 text: save the file as UTF-8 (if it is not text: {EVIDENCE_HINT})",
            file=name,
        )
    at = sample.find(b"\x00")
    if at >= 0:
        line = sample.count(b"\n", 0, at) + 1
        raise FormatError(
            "a NUL byte: not text (no database text column stores it); " + EVIDENCE_HINT,
            file=name,
            record=f"line {line}",
        )


def _detect_array(name: str, body: str, sniffers: Sequence[Sniffer]) -> str:
    """A top-level array is read only by a format whose files are arrays, judged by the first
    element (scanned as far as the head goes)."""
    start = _ws(body, 1)
    arrays = [s for s in sniffers if s.array]
    if start < len(body) and body[start] == "{" and arrays:
        found = [s.format for s in arrays if s.looks_like(_scan_object(body, start))]
        if len(found) == 1:
            return found[0]
    raise FormatError(
        f"a top-level JSON array is not an import format; {_choices(sniffers)}", file=name
    )


def detect_format(name: str, head: bytes, sniffers: Sequence[Sniffer]) -> str:
    """The format of the sniffer that recognises the name and first bytes."""
    lower = name.lower()
    if sniff(head) is not None:
        return _container(sniffers, "evidence", name)
    if lower.endswith(".zip") or head.startswith(b"PK\x03\x04"):
        return _container(sniffers, "zip", name)
    _refuse_nul_bytes(name, head[:4096])
    # A cut multi-byte character at the end of the head must not fail detection.
    text = head[:HEAD_BYTES].decode("utf-8", errors="replace").lstrip("\ufeff")
    body = text.lstrip()
    if not body:
        raise FormatError(f"empty file; {_choices(sniffers)}", file=name)
    if body[0] == "{":
        obj, more = _first_line_object(body)
        if obj is not None and (more or lower.endswith((".jsonl", ".ndjson"))):
            kind = _classify(obj, sniffers, name=name, what="JSONL record on line 1")
            if not next(s for s in sniffers if s.format == kind).lines:
                raise FormatError(
                    f"{kind} files are one JSON object, not JSONL; {_choices(sniffers)}",
                    file=name,
                )
            return kind
        return _classify(
            obj if obj is not None else _scan_object(body, 0),
            sniffers,
            name=name,
            what="JSON object",
        )
    if body[0] == "[":
        return _detect_array(name, body, sniffers)
    if lower.endswith((".json", ".jsonl", ".ndjson")):
        raise FormatError(f"does not start with a JSON object; {_choices(sniffers)}", file=name)
    return _detect_csv(name, text, sniffers)


def csv_flavour(head: bytes) -> str:
    """For a ``csv`` file: ``reference`` (§3 ``path,expected`` table) or ``records`` (§4).

    A header with a path column (``path``/``field_path``) and a value column
    (``expected_value``/``expected``/``value``) and no ``type`` column is a reference table.
    """
    line = head.decode("utf-8", errors="replace").lstrip("\ufeff").splitlines()[:1]
    names = {h.strip().lower() for h in next(csv.reader(line), [])}
    is_reference = bool(names & {"path", "field_path"}) and bool(
        names & {"expected_value", "expected", "value"}
    )
    return "reference" if is_reference and "type" not in names else "records"
