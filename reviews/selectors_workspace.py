"""The rater workspace's reads (questions, candidates, the rater's own answers, the item's
documents, the candidate an autosave names), written
by hand (`evalsite/raw_rows.py` says why): every review page runs them, and building them
through the ORM cost a third of the page's view (bench/README.md, issue #33). Same rows, same
order and the same related instances as the ORM's: `reviews/selectors.py: rater_workspace`."""

from __future__ import annotations

from evalsite import raw_rows
from reviews.models import Answer, Claim, Document, ItemSource, Question, QuestionStatus


def _ids(values) -> str:
    return ", ".join(["%s"] * len(values))


def workspace_questions(item, *, every: bool) -> list[Question]:
    """The item's open questions (`every`: all of them), by position; each knows its item."""
    status = "" if every else " AND q.status = %s"
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Question, 'q')} FROM reviews_question q"  # noqa: S608
        f" WHERE q.item_id = %s{status} ORDER BY q.position, q.id",
        [item.pk, *([] if every else [QuestionStatus.OPEN])],
        Question,
    )
    for (question,) in rows:
        question.item = item
    return [question for (question,) in rows]


def workspace_candidates(questions: list[Question]) -> list[Claim]:
    """The questions' candidates by position, each with its source and the source's document
    (what `select_related("source__document")` gives: a claim without a source has None)."""
    if not questions:  # the ORM runs no query for an empty `__in`
        return []
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Claim, 'c')}, {raw_rows.columns(ItemSource, 's')},"  # noqa: S608
        f" {raw_rows.columns(Document, 'd')} FROM reviews_claim c"
        " LEFT JOIN reviews_itemsource s ON s.id = c.source_id"
        " LEFT JOIN reviews_document d ON d.id = s.document_id"
        f" WHERE c.question_id IN ({_ids(questions)}) ORDER BY c.position, c.id",
        [q.pk for q in questions],
        Claim,
        ItemSource,
        Document,
    )
    claims = []
    for claim, source, document in rows:
        if claim.source_id is None:
            claim.source = None
        else:
            source.document = document
            claim.source = source
        claims.append(claim)
    return claims


def workspace_answers(questions: list[Question], rater) -> list[Answer]:
    """`rater`'s own answers to the questions, oldest first (no one else's row is read)."""
    if not questions:
        return []
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Answer, 'a')} FROM reviews_answer a"  # noqa: S608
        f" WHERE a.question_id IN ({_ids(questions)}) AND a.rater_id = %s ORDER BY a.seq",
        [*(q.pk for q in questions), rater.pk],
        Answer,
    )
    return [answer for (answer,) in rows]


def workspace_documents(item) -> list[Document]:
    """The item's evidence documents in source order (position, then id), each once."""
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Document, 'd')} FROM reviews_itemsource s"  # noqa: S608
        " JOIN reviews_document d ON d.id = s.document_id"
        " WHERE s.item_id = %s ORDER BY s.position, s.id",
        [item.pk],
        Document,
    )
    seen: dict[int, Document] = {}
    for (document,) in rows:
        seen.setdefault(document.pk, document)
    return list(seen.values())


def question_candidate(question, claim_pk: int) -> Claim | None:
    """Candidate `claim_pk` if it belongs to `question` (the autosave's choice), else None."""
    if not 0 < claim_pk < 2**63:  # no such row; SQLite refuses a larger integer outright
        return None
    rows = raw_rows.fetch(
        f"SELECT {raw_rows.columns(Claim, 'c')} FROM reviews_claim c"  # noqa: S608
        " WHERE c.id = %s AND c.question_id = %s",
        [claim_pk, question.pk],
        Claim,
    )
    if not rows:
        return None
    ((claim,),) = rows
    claim.question = question
    return claim
