"""The demo project's review files, written to a folder beside their evidence.

The demo loads them through the same importer users use (`file_import`), so what the demo
shows is what an import produces. Citations (pages, quotes, boxes) come from the generated
evidence itself, so highlights land on the right words.
"""

from __future__ import annotations

import json
from pathlib import Path

from reviews.demo import documents

STATEMENT_FILE = "statement-march.pdf"
RECEIPT_FILE = "receipt-blue-heron.png"


def _cite(document: str, field: str, value, provider: str, confidence: float, *, bbox=True):
    citation = documents.citation(document, field)
    artifact = f"{document}-p{citation.page}"
    candidate = {
        "provider": provider,
        "expected_value": value,
        "reference_id": artifact,
        "evidence": citation.quote,
        "confidence": confidence,
    }
    if bbox:
        candidate["bbox"] = [round(v, 2) for v in citation.bbox]
    return candidate


def _open_question(path: str, reason: str, *candidates: dict) -> dict:
    """A review item the models left open: nobody has decided it yet."""
    return {
        "path": path,
        "reason": reason,
        "decision": None,
        "value": None,
        "note": None,
        "candidates": list(candidates),
    }


def _statement_disagreement(path: str, field: str, *, right: tuple, wrong: tuple) -> dict:
    """Two models read a statement field differently; `right` and `wrong` are (value,
    provider, confidence), and only the right reading has a box."""
    return _open_question(
        path,
        "disagreement",
        _cite("statement", field, *right),
        _cite("statement", field, *wrong, bbox=False),
    )


def _claim(document: str, field: str, path: str, value, providers=("openai", "claude")):
    citation = documents.citation(document, field)
    return {
        "path": path,
        "expected_value": value,
        "reference_id": f"{document}-p{citation.page}",
        "evidence": citation.quote,
        "confidence": 0.97,
        "providers": list(providers),
        "bbox": [round(v, 2) for v in citation.bbox],
    }


def _statement_sources():
    return [
        {
            "artifact_id": f"statement-p{page}",
            "path": STATEMENT_FILE,
            "authority": "evidence",
            "metadata": {"page": page},
        }
        for page in (1, 2, 3)
    ]


def statement_case(case_id: str, *, wrong_total: str, wrong_balance: str) -> dict:
    """A statement where two models disagree on the closing balance and the total due."""
    return {
        "case_id": case_id,
        "status": "pending",
        "approved_by": None,
        "expected_fields": [
            "$.account",
            "$.closing_balance",
            "$.currency",
            "$.holder",
            "$.period",
            "$.total_due",
        ],
        "sources": _statement_sources(),
        "claims": [
            _claim("statement", "account_holder", "$.holder", documents.HOLDER),
            _claim("statement", "account_number", "$.account", documents.ACCOUNT),
            _claim("statement", "currency", "$.currency", documents.CURRENCY),
        ],
        "review_items": [
            _statement_disagreement(
                "$.closing_balance",
                "closing_balance",
                right=(documents.money(documents.CLOSING), "openai", 0.88),
                wrong=(wrong_balance, "claude", 0.61),
            ),
            _statement_disagreement(
                "$.total_due",
                "total_due",
                right=(documents.money(documents.TOTAL_DUE), "claude", 0.81),
                wrong=(wrong_total, "openai", 0.64),
            ),
            _open_question(
                "$.period",
                "omitted_by_some",
                _cite("statement", "statement_period", documents.PERIOD, "openai", 0.72),
            ),
        ],
    }


def receipt_case(case_id: str) -> dict:
    return {
        "case_id": case_id,
        "status": "pending",
        "approved_by": None,
        "expected_fields": ["$.date", "$.store", "$.total"],
        "sources": [
            {
                "artifact_id": "receipt-p1",
                "path": RECEIPT_FILE,
                "authority": "evidence",
                "metadata": {"page": 1},
            }
        ],
        "claims": [_claim("receipt", "store_name", "$.store", "Blue Heron Cafe")],
        "review_items": [
            _open_question(
                "$.total",
                "disagreement",
                _cite("receipt", "total", documents.money(documents.RECEIPT_TOTAL), "openai", 0.9),
                _cite("receipt", "total", "28.40", "claude", 0.55),
            ),
            _open_question(
                "$.date",
                "low_confidence",
                _cite("receipt", "date", "2024-03-14", "claude", 0.42),
            ),
        ],
    }


def demo_cases() -> list[dict]:
    statements = [
        statement_case("statement-0001", wrong_total="1,290.00", wrong_balance="12,840.55"),
        statement_case("statement-0002", wrong_total="120.00", wrong_balance="12,480.50"),
        statement_case("statement-0003", wrong_total="1,200.0", wrong_balance="2,480.55"),
        statement_case("statement-0004", wrong_total="1 200.00", wrong_balance="12480.55 USD"),
    ]
    return [*statements, receipt_case("receipt-0001"), receipt_case("receipt-0002")]


def write_demo_reviews(folder: Path) -> Path:
    """Write evidence and `demo.reviews.jsonl` into `folder`; returns the JSONL path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STATEMENT_FILE).write_bytes(documents.statement_pdf())
    (folder / RECEIPT_FILE).write_bytes(documents.receipt_png())
    target = folder / "demo.reviews.jsonl"
    with target.open("w", encoding="utf-8") as handle:
        for case in demo_cases():
            handle.write(json.dumps(case) + "\n")
    return target
