"""The data the evidence viewer needs (documents, and where each question's evidence is)."""

from reviews import evidence
from reviews.selectors import item_documents


def viewer_context(item, questions_with_candidates) -> dict:
    """`questions_with_candidates`: (question, [CandidateView]) pairs."""
    documents = item_documents(item)
    return {
        "documents": documents,
        # The only resolutions the server renders: the viewer picks its zoom steps from these.
        "viewer_zoom_dpis": " ".join(map(str, evidence.ZOOM_DPIS)),
        "viewer_thumbnail_dpi": evidence.THUMBNAIL_DPI,
        "viewer_documents": [
            {"sha": d.sha256, "kind": d.kind, "pages": d.page_count, "sizes": d.page_sizes}
            for d in documents
        ],
        "viewer_highlights": {
            str(question.pk): [
                {
                    "candidate": c.pk,
                    "doc": c.document_sha,
                    "page": c.page,
                    "bbox": c.bbox,
                    "quote": c.quote,
                }
                for c in candidates
                if c.document_sha and c.page
            ]
            for question, candidates in questions_with_candidates
        },
    }
