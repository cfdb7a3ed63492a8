"""The rater workspace's reads, written by hand (reviews/selectors_workspace.py), give what the
ORM's queries gave: the same rows in the same order, with the same related instances (a
candidate without a source has None), on SQLite and on PostgreSQL."""

import pytest

from reviews.models import Answer, Claim, ItemSource, QuestionStatus, Role
from reviews.selectors_workspace import (
    question_candidate,
    workspace_answers,
    workspace_candidates,
    workspace_documents,
    workspace_questions,
)
from tests.factories import member

pytestmark = pytest.mark.django_db


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


@pytest.fixture
def item(project, review_item, rate, attach_evidence):
    project.overlap = 2
    project.save()
    item = review_item(
        project,
        {"$.total": ["1,200.00", "1,290.00"], "$.date": ["2026-01-01", "2026-01-02"]},
        criteria={"tone": ["good", "bad"]},
    )
    attach_evidence(item)
    Claim.objects.filter(question__key="$.date").update(source=None)  # one without a source
    item.questions.filter(key="$.date").update(status=QuestionStatus.ADJUDICATION)
    return item


def test_questions_as_the_orm_reads_them(item):
    for every, orm in (
        (False, item.questions.filter(status=QuestionStatus.OPEN)),
        (True, item.questions.all()),
    ):
        read = workspace_questions(item, every=every)
        expected = list(orm.order_by("position", "id"))
        assert [_fields(q) for q in read] == [_fields(q) for q in expected]
        assert all(q.item is item for q in read)
    assert len(workspace_questions(item, every=True)) == 3
    assert len(workspace_questions(item, every=False)) == 2


def test_candidates_with_their_sources_as_the_orm_reads_them(item, django_assert_num_queries):
    questions = workspace_questions(item, every=True)
    with django_assert_num_queries(1):
        read = workspace_candidates(questions)
        sources = [
            (c.source and _fields(c.source), c.source and _fields(c.source.document)) for c in read
        ]
    orm = list(
        Claim.objects.filter(question__in=questions)
        .select_related("source__document")
        .order_by("position", "id")
    )
    assert [_fields(c) for c in read] == [_fields(c) for c in orm]
    assert sources == [
        (c.source and _fields(c.source), c.source and _fields(c.source.document)) for c in orm
    ]
    assert any(c.source is None for c in read) and any(c.source for c in read)
    with django_assert_num_queries(0):
        assert workspace_candidates([]) == []


def test_only_the_raters_own_answers_oldest_first(project, item, rate):
    me = member(project, Role.RATER, username="me")
    other = member(project, Role.RATER, username="other")
    rate(other, item, {"$.total": "1,290.00"}, submit=False)
    assignment = rate(me, item, {"$.total": "1,200.00"}, submit=False)
    rate(me, item, {"$.total": "1,290.00"}, submit=False, assignment=assignment)
    questions = workspace_questions(item, every=True)
    read = workspace_answers(questions, me)
    orm = Answer.objects.filter(question__in=questions, rater=me).order_by("seq")
    assert [_fields(a) for a in read] == [_fields(a) for a in orm]
    assert [a.seq for a in read] == [1, 2] and {a.rater_id for a in read} == {me.pk}
    assert workspace_answers([], me) == []


def test_documents_in_source_order_each_once(item, attach_evidence):
    first = item.sources.get().document
    item.sources.update(artifact_id="statement")
    second = attach_evidence(item, text="Receipt. Total 12.00")  # another document, position 0
    ItemSource.objects.filter(document=second).update(position=2, artifact_id="receipt")
    ItemSource.objects.create(  # the first document cited again, in between
        item=item, artifact_id="statement-p2", document=first, path="statement.pdf", position=1
    )
    orm: dict = {}
    for source in item.sources.select_related("document").order_by("position", "id"):
        orm.setdefault(source.document_id, source.document)
    read = workspace_documents(item)
    assert [_fields(d) for d in read] == [_fields(d) for d in orm.values()]
    assert [d.pk for d in read] == [first.pk, second.pk]


def test_the_candidate_an_autosave_names_only_under_its_question(item):
    total = item.questions.get(key="$.total")
    date = item.questions.get(key="$.date")
    claim = total.candidates.order_by("position").first()
    read = question_candidate(total, claim.pk)
    assert _fields(read) == _fields(claim) and read.question is total
    assert question_candidate(date, claim.pk) is None  # another question's candidate
    assert question_candidate(total, 10**30) is None  # past any row id: no query, no error
