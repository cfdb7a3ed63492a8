"""History cannot be rewritten: not by the ORM, not by the admin, not over HTTP."""

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.db import transaction
from django.test import RequestFactory
from django.urls import URLPattern, URLResolver, reverse

from reviews import urls as review_urls
from reviews.models import (
    Answer,
    AppendOnlyError,
    Approval,
    Event,
    ImportJob,
    Reference,
    Resolution,
    Role,
)
from tests.factories import UserFactory, member

pytestmark = pytest.mark.django_db

HISTORY = [Answer, Resolution, Approval, Reference, Event]


def _row(model):
    row = model.objects.order_by("pk").first()
    assert row is not None, f"no {model.__name__} row to test with"
    return row


FIELD = {
    "Answer": "note",
    "Resolution": "reason",
    "Approval": "statement",
    "Reference": "reason",
    "Event": "kind",
}


@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_saving_an_existing_row_is_refused(approved_item, model):
    row = _row(model)
    field = FIELD[model.__name__]
    setattr(row, field, "rewritten")
    with pytest.raises(AppendOnlyError):
        row.save()
    with pytest.raises(AppendOnlyError):
        row.save(update_fields=[field])
    with pytest.raises(AppendOnlyError):
        row.save(force_update=True)
    assert not model.objects.filter(**{field: "rewritten"}).exists()


@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_deleting_a_row_is_refused(approved_item, model):
    row = _row(model)
    count = model.objects.count()
    with pytest.raises(AppendOnlyError):
        row.delete()
    assert model.objects.count() == count


@pytest.mark.parametrize("model", HISTORY, ids=lambda m: m.__name__)
def test_queryset_update_and_delete_are_refused(approved_item, model):
    count = model.objects.count()
    field = FIELD[model.__name__]
    with pytest.raises(AppendOnlyError):
        model.objects.all().update(**{field: "rewritten"})
    with pytest.raises(AppendOnlyError):
        model.objects.filter(pk=_row(model).pk).delete()
    with pytest.raises(AppendOnlyError):
        model.objects.all().delete()
    row = _row(model)
    setattr(row, field, "rewritten")
    with pytest.raises(AppendOnlyError), transaction.atomic():  # bulk_update runs in atomic
        model.objects.bulk_update([row], [field])
    assert model.objects.count() == count
    assert not model.objects.filter(**{field: "rewritten"}).exists()


@pytest.mark.parametrize("model", [*HISTORY, ImportJob], ids=lambda m: m.__name__)
def test_admin_cannot_add_change_or_delete_history(approved_item, model):
    model_admin = admin.site._registry[model]
    superuser = UserFactory(is_staff=True, is_superuser=True)
    request = RequestFactory().get("/admin/")
    request.user = superuser
    row = model.objects.first()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
    if row is not None:
        assert not model_admin.has_change_permission(request, row)
        assert not model_admin.has_delete_permission(request, row)


def test_admin_change_page_of_an_answer_is_read_only(client, approved_item):
    superuser = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(superuser)
    answer = _row(Answer)
    url = reverse("admin:reviews_answer_change", args=[answer.pk])
    assert client.get(url).status_code == 200  # viewable
    response = client.post(url, {"note": "rewritten", "seq": 99})
    assert response.status_code == 403
    assert (
        client.post(
            reverse("admin:reviews_answer_delete", args=[answer.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    answer.refresh_from_db()
    assert answer.note != "rewritten" and answer.seq == 1


def _patterns(patterns, converters=()):
    """Every view's pattern, with the names its path takes (its prefixes' and its own)."""
    for entry in patterns:
        if isinstance(entry, URLResolver):
            yield from _patterns(entry.url_patterns, (*converters, *entry.pattern.converters))
        elif isinstance(entry, URLPattern):
            yield entry, (*converters, *entry.pattern.converters)


def _url_for(pattern, names, world):
    values = {
        "slug": world["slug"],
        "item_pk": world["item"],
        "question_pk": world["question"],
        "user_pk": world["user"],
        "job_pk": world["job"],
        "hook_pk": world["hook"],
        "job_id": world["background_job"],
        "sha256": world["sha"],
        "page": 1,
        "pk": world["token"],
        "name": "formats",  # a served doc (docs/<slug:name>/)
    }
    return reverse(pattern.name, kwargs={name: values[name] for name in names})


@pytest.mark.parametrize("method", ["DELETE", "PUT", "PATCH"])
def test_no_review_url_accepts_delete_put_or_patch(client, approved_item, method):
    """Even for a member holding every role, on URLs pointing at real objects: 405."""
    from reviews.models import ApiToken, ImportJob, Job, Webhook
    from reviews.services.projects.tokens import token_create

    project = approved_item.project
    user = member(project, *Role.values, username="all-roles")
    user.is_staff = True
    user.save()
    token, _ = token_create(actor=user, name="t")
    job = ImportJob.objects.create(project=project, file="imports/x.jsonl", original_name="x")
    hook = Webhook.objects.create(project=project, url="https://hooks.example.org/", secret="s")
    background = Job.objects.create(project=project, kind="split_draw")
    world = {
        "slug": project.slug,
        "item": approved_item.pk,
        "question": approved_item.questions.get().pk,
        "user": get_user_model().objects.get(username="r1").pk,
        "job": job.pk,
        "sha": approved_item.sources.get().document.sha256,
        "token": token.pk,
        "hook": hook.pk,
        "background_job": background.pk,
    }
    assert ApiToken.objects.filter(pk=token.pk).exists()
    client.force_login(user)
    before = [m.objects.count() for m in HISTORY]
    answered = {}
    for pattern, names in _patterns(review_urls.urlpatterns):
        url = _url_for(pattern, names, world)
        answered[pattern.name] = client.generic(method, url).status_code
    assert answered == dict.fromkeys(answered, 405)
    assert [m.objects.count() for m in HISTORY] == before


def test_a_resolutions_source_answers_cannot_be_rewritten(project, review_item, rate):
    """The links from a resolution to its answers are history too."""
    from reviews.models import AppendOnlyError, Resolution, Role
    from tests.factories import member

    item = review_item(project, {"$.total": ["1,200.00", "1,290.00"]})
    for name in ("r1", "r2"):
        rate(member(project, Role.RATER, username=name), item, {"$.total": "1200"})
    resolution = Resolution.objects.filter(source_answers__isnull=False).first()
    assert resolution is not None
    from django.db import transaction

    for rewrite in (resolution.source_answers.clear, lambda: resolution.source_answers.set([])):
        with pytest.raises(AppendOnlyError), transaction.atomic():
            rewrite()
    assert resolution.source_answers.count() == 2
