"""Every reviews view: the permitted user gets it, an outsider 404, a member without the role 403.

Outsiders hold every role in another project, so a 404 can only come from the membership
check. A refused POST writes nothing. Then the htmx answer endpoint's three outcomes.
"""

from dataclasses import dataclass

import pytest
from django.urls import reverse

from reviews.models import (
    Answer,
    Approval,
    Assignment,
    AssignmentBatch,
    Event,
    ImportJob,
    Membership,
    Resolution,
    Role,
)
from tests import builders
from tests.factories import ProjectFactory, member
from tests.helpers import per_test_copy

pytestmark = pytest.mark.django_db


@dataclass
class World:
    project: object
    item: object
    question: object
    claim: object
    document: object
    job: object
    users: dict

    def kwargs(self, name: str) -> dict:
        slug, item, doc = self.project.slug, self.item.pk, self.document.sha256
        return {
            "project_home": {"slug": slug},
            "members": {"slug": slug},
            "project_instructions": {"slug": slug},
            "member_remove": {"slug": slug, "user_pk": self.users["spare"].pk},
            "member_unlock": {"slug": slug, "user_pk": self.users["spare"].pk},
            "assignments": {"slug": slug},
            "import_upload": {"slug": slug},
            "project_export": {"slug": slug},
            "import_job": {"slug": slug, "job_pk": self.job.pk},
            "item_list": {"slug": slug},
            "item_detail": {"slug": slug, "item_pk": item},
            "item_timeline": {"slug": slug, "item_pk": item},
            "item_approve": {"slug": slug, "item_pk": item},
            "question_adjudicate": {"slug": slug, "item_pk": item, "question_pk": self.question.pk},
            "adjudication_queue": {"slug": slug},
            "approval_queue": {"slug": slug},
            "review_next": {"slug": slug},
            "review_item": {"slug": slug, "item_pk": item},
            "answer_save": {"slug": slug, "item_pk": item, "question_pk": self.question.pk},
            "review_submit": {"slug": slug, "item_pk": item},
            "review_skip": {"slug": slug, "item_pk": item},
            "evidence_page": {"slug": slug, "sha256": doc, "page": 1},
            "evidence_words": {"slug": slug, "sha256": doc, "page": 1},
            "evidence_locate": {"slug": slug, "sha256": doc, "page": 1},
        }[name]

    def url(self, name: str) -> str:
        return reverse(name, kwargs=self.kwargs(name))

    def data(self, name: str) -> dict:
        return {
            "member_remove": {"role": Role.RATER},
            "project_instructions": {"instructions": "Read **twice**."},
            "question_adjudicate": {"choice": "value", "value": "1200", "reason": "page 1"},
            "answer_save": {"choice": f"claim:{self.claim.pk}", "expected_seq": "0"},
            "review_skip": {"reason": "unreadable"},
            "project_export": {"format": "csv"},
        }.get(name, {})


def _build_world():
    project = ProjectFactory()
    item = builders.review_item_builder()(project, {"$.total": ["1,200.00", "1,290.00"]})
    document = builders.attach_evidence(item)
    users = {role: member(project, role, username=role) for role in Role.values}
    users["spare"] = member(project, Role.RATER, username="spare")
    users["outsider"] = member(ProjectFactory(), *Role.values, username="outsider")
    builders.rate(users[Role.RATER], item, {}, submit=False)  # the rater's live claim
    job = ImportJob.objects.create(project=project, file="imports/x.jsonl", original_name="x.jsonl")
    question = item.questions.get()
    return World(project, item, question, question.candidates.first(), document, job, users)


@pytest.fixture(scope="module")
def _world(module_db):
    return module_db.build(_build_world)


# The same world for every test of the module, built once (each test's writes roll back).
world = per_test_copy("_world")


# (url name, method, a permitted role, what it answers, a member role it must refuse with 403)
VIEWS = [
    ("project_home", "get", Role.RATER, 200, None),
    ("members", "get", Role.ADMIN, 200, Role.RATER),
    ("project_instructions", "post", Role.ADMIN, 302, Role.RATER),
    ("member_remove", "post", Role.ADMIN, 302, Role.APPROVER),
    ("member_unlock", "post", Role.ADMIN, 302, Role.APPROVER),
    ("assignments", "get", Role.ADMIN, 200, Role.RATER),
    ("import_upload", "get", Role.ADMIN, 200, Role.APPROVER),
    ("project_export", "post", Role.APPROVER, 302, Role.RATER),  # nothing approved: a message
    ("import_job", "get", Role.ADMIN, 200, Role.RATER),
    ("item_list", "get", Role.ADJUDICATOR, 200, Role.RATER),
    ("item_detail", "get", Role.APPROVER, 200, Role.RATER),
    ("item_timeline", "get", Role.ADMIN, 200, Role.RATER),
    ("item_approve", "get", Role.APPROVER, 200, Role.ADJUDICATOR),
    ("question_adjudicate", "post", Role.ADJUDICATOR, 302, Role.APPROVER),
    ("adjudication_queue", "get", Role.ADJUDICATOR, 200, Role.APPROVER),
    ("approval_queue", "get", Role.APPROVER, 200, Role.ADJUDICATOR),
    ("review_next", "post", Role.RATER, 302, Role.ADMIN),
    ("review_item", "get", Role.RATER, 200, Role.ADMIN),
    ("answer_save", "post", Role.RATER, 200, Role.ADJUDICATOR),
    ("review_submit", "post", Role.RATER, 302, Role.ADMIN),
    ("review_skip", "post", Role.RATER, 302, Role.APPROVER),
    ("evidence_page", "get", Role.RATER, 200, None),
    ("evidence_words", "get", Role.ADJUDICATOR, 200, None),
    ("evidence_locate", "get", Role.APPROVER, 200, None),
]
NAMES = [v[0] for v in VIEWS]


def _snapshot():
    """Everything a refused request must leave as it was."""
    return (
        Answer.objects.count(),
        Resolution.objects.count(),
        Approval.objects.count(),
        Event.objects.count(),
        Membership.objects.count(),
        AssignmentBatch.objects.count(),
        sorted(Assignment.objects.values_list("pk", "status")),
    )


def _request(client, world, name, method, user):
    client.force_login(user)
    return getattr(client, method)(world.url(name), world.data(name))


@pytest.mark.parametrize(("name", "method", "role", "ok", "wrong"), VIEWS, ids=NAMES)
def test_permitted_member(client, world, name, method, role, ok, wrong):
    response = _request(client, world, name, method, world.users[role])
    assert response.status_code == ok
    if ok == 302:
        assert "login" not in response.url


@pytest.mark.parametrize(("name", "method", "role", "ok", "wrong"), VIEWS, ids=NAMES)
def test_outsider_gets_404(client, world, name, method, role, ok, wrong):
    before = _snapshot()
    response = _request(client, world, name, method, world.users["outsider"])
    assert response.status_code == 404
    assert _snapshot() == before


@pytest.mark.parametrize(
    ("name", "method", "role", "ok", "wrong"),
    [v for v in VIEWS if v[4]],
    ids=[v[0] for v in VIEWS if v[4]],
)
def test_member_with_the_wrong_role_gets_403(client, world, name, method, role, ok, wrong):
    before = _snapshot()
    response = _request(client, world, name, method, world.users[wrong])
    assert response.status_code == 403
    assert _snapshot() == before


@pytest.mark.parametrize(("name", "method", "role", "ok", "wrong"), VIEWS, ids=NAMES)
def test_anonymous_is_sent_to_login(client, world, name, method, role, ok, wrong):
    response = getattr(client, method)(world.url(name), world.data(name))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


@pytest.mark.parametrize(
    "name", ["item_detail", "item_timeline", "item_approve", "review_item", "review_submit"]
)
def test_an_item_of_another_project_is_404_through_my_project(client, world, review_item, name):
    foreign = review_item(ProjectFactory())
    user = world.users[Role.ADMIN]
    for role in Role.values:
        Membership.objects.get_or_create(project=world.project, user=user, role=role)
    client.force_login(user)
    url = reverse(name, kwargs={"slug": world.project.slug, "item_pk": foreign.pk})
    response = client.post(url) if name == "review_submit" else client.get(url)
    assert response.status_code == 404


def test_evidence_of_another_project_is_404_through_my_project(
    client, world, review_item, attach_evidence
):
    other = ProjectFactory()
    document = attach_evidence(review_item(other), text="Someone else's statement")
    client.force_login(world.users[Role.RATER])
    url = reverse("evidence_words", args=[world.project.slug, document.sha256, 1])
    assert client.get(url).status_code == 404


def test_my_queue_lists_only_projects_where_i_rate(client, world):
    client.force_login(world.users[Role.RATER])
    page = client.get(reverse("my_queue"))
    assert page.status_code == 200
    assert f'data-project="{world.project.slug}"' in page.content.decode()
    for who in ("outsider", Role.APPROVER):
        client.force_login(world.users[who])
        page = client.get(reverse("my_queue"))
        assert page.status_code == 200
        assert f'data-project="{world.project.slug}"' not in page.content.decode()


def test_the_rater_without_a_claim_is_sent_back_to_the_queue(client, world):
    client.force_login(world.users["spare"])
    response = client.get(world.url("review_item"))
    assert response.status_code == 302 and response.url == reverse("my_queue")


def test_import_job_progress_is_a_partial_for_htmx(client, world):
    client.force_login(world.users[Role.ADMIN])
    full = client.get(world.url("import_job"))
    partial = client.get(world.url("import_job"), headers={"HX-Request": "true"})
    assert b"<html" in full.content
    assert partial.status_code == 200 and b"<html" not in partial.content


# --- the htmx answer endpoint ---------------------------------------------------------------


@pytest.fixture
def answering(client, world):
    client.force_login(world.users[Role.RATER])
    return lambda data: client.post(world.url("answer_save"), data, headers={"HX-Request": "true"})


def test_htmx_answer_returns_the_status_partial(answering, world):
    response = answering({"choice": f"claim:{world.claim.pk}", "expected_seq": "0"})
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert f'id="status-{world.question.pk}"' in html and "Saved" in html
    assert f'id="seq-{world.question.pk}" value="1"' in html  # the next expected_seq, out of band
    answer = Answer.objects.get()
    assert (answer.seq, answer.value) == (1, "1,200.00")


def test_htmx_stale_answer_is_409_with_the_newer_state(answering, world):
    answering({"choice": "value", "value": "1,234.56", "expected_seq": "0"})
    response = answering({"choice": "omit", "expected_seq": "0"})  # a tab that missed seq 1
    html = response.content.decode()
    assert response.status_code == 409
    assert "<html" not in html and "Changed elsewhere" in html
    # The whole card is swapped (its notice with it), not just the status line.
    assert response["HX-Retarget"] == f"#q-{world.question.pk}" and 'value="1,234.56"' in html
    assert f'id="seq-{world.question.pk}" value="1"' in html
    assert list(Answer.objects.values_list("decision", flat=True)) == ["set"]


@pytest.mark.parametrize(
    "data",
    [
        {"choice": "", "expected_seq": "0"},
        {"choice": "claim:999999", "expected_seq": "0"},
        {"choice": "label:good", "expected_seq": "0"},
        {"choice": "A", "expected_seq": "0"},
        {"choice": "value", "value": "   ", "expected_seq": "0"},
        {"choice": "omit", "expected_seq": "not-a-number"},
    ],
    ids=["no-choice", "foreign-claim", "label-on-field", "pairwise-on-field", "blank", "bad-seq"],
)
def test_htmx_bad_choice_is_422_and_saves_nothing(answering, data):
    response = answering(data)
    assert response.status_code == 422
    assert b"<html" not in response.content and b"Not saved" in response.content
    assert not Answer.objects.exists()


def test_answer_on_an_item_no_longer_mine_is_409(answering, world):
    Assignment.objects.filter(rater=world.users[Role.RATER]).update(status="expired")
    response = answering({"choice": "omit", "expected_seq": "0"})
    assert response.status_code == 409 and b"no longer assigned" in response.content
    assert not Answer.objects.exists()
