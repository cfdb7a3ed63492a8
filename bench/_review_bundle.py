"""A large review bundle (FORMATS §2): ``n`` cases in one ``.jsonl`` member citing a few shared
evidence files, for the long-import measurements and the SQLite writability test.

    .venv/bin/python -m bench._review_bundle 30000 /tmp/reviews-30000.zip

Each case has two consensus claims, two disputed fields (three candidates) and two sources
(pages of one of the example PDFs or the example PNG), like the example statement.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "tests" / "data" / "examples"
EVIDENCE = ("statement-0912.pdf", "ticket-88.png")


def review_case(i: int, *, prefix: str = "case") -> dict:
    evidence = EVIDENCE[i % len(EVIDENCE)]
    sources = [
        {"artifact_id": f"p{page}", "path": evidence, "authority": "evidence",
         "metadata": {"page": page}}
        for page in (1, 2)
    ]  # fmt: skip

    def cited(value, source, provider=None):
        claim = {"expected_value": value, "reference_id": source, "evidence": f"value {value}",
                 "confidence": 0.9}  # fmt: skip
        return {**claim, "provider": provider} if provider else claim

    return {
        "case_id": f"{prefix}-{i:06d}",
        "status": "pending",
        "approved_by": None,
        "expected_fields": ["$.account", "$.currency", "$.total", "$.holder"],
        "sources": sources,
        "claims": [
            {"path": "$.account", **cited(f"NW-{i:06d}", "p1"), "providers": ["a", "b"]},
            {"path": "$.currency", **cited("EUR", "p2"), "providers": ["a", "b"]},
        ],
        "review_items": [
            {
                "path": "$.total",
                "reason": "disagreement",
                "candidates": [cited(f"{i}.00", "p1", "a"), cited(f"{i + 1}.00", "p2", "b")],
                "decision": None,
                "value": None,
                "note": None,
            },
            {
                "path": "$.holder",
                "reason": "omitted_by_some",
                "candidates": [cited(f"Holder {i}", "p1", "a")],
                "decision": None,
                "value": None,
                "note": None,
            },
        ],  # fmt: skip
    }


def write_review_bundle(path: Path, n: int, *, prefix: str = "case") -> Path:
    """Write a bundle of ``n`` cases to ``path`` (a .zip); returns ``path``."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as bundle:
        lines = (json.dumps(review_case(i, prefix=prefix)) for i in range(n))
        bundle.writestr("reviews.jsonl", "\n".join(lines) + "\n")
        for name in EVIDENCE:
            bundle.write(EXAMPLES / name, name)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", type=int)
    parser.add_argument("path", type=Path)
    parser.add_argument("--prefix", default="case")
    args = parser.parse_args()
    write_review_bundle(args.path, args.cases, prefix=args.prefix)
    print(f"{args.path}: {args.cases} cases")


if __name__ == "__main__":
    main()
