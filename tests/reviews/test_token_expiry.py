"""API tokens stop working when they expire; the owner picks the lifetime (default 90 days)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.models import ApiToken, Role
from reviews.services.projects.tokens import token_create, token_user
from tests.factories import ItemFactory, member

pytestmark = pytest.mark.django_db


def _item_url(project, external_id):
    return f"/api/projects/{project.slug}/items/{external_id}"


def test_an_expired_token_is_401_and_a_live_one_works(client, project):
    ItemFactory(project=project, external_id="q-1")
    token, secret = token_create(actor=member(project, Role.ADJUDICATOR), name="ci", days=30)
    headers = {"Authorization": f"Bearer {secret}"}
    assert client.get(_item_url(project, "q-1"), headers=headers).status_code == 200

    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(_item_url(project, "q-1"), headers=headers)
    assert response.status_code == 401
    assert response.json()["error"]["reason"] == "Invalid, revoked or expired API token."


def test_never_means_never(rater):
    token, secret = token_create(actor=rater, name="forever", days=None)
    assert token.expires_at is None
    assert token_user(secret) == rater


def test_the_page_creates_a_token_for_the_lifetime_chosen(client, rater):
    client.force_login(rater)
    url = reverse("api_tokens")
    page = client.get(url).content.decode()
    assert '<option value="90" selected>90 days</option>' in page  # the default
    before = timezone.now()
    client.post(url, {"name": "nightly", "lifetime": "365"})
    token = ApiToken.objects.get(name="nightly")
    assert before + timedelta(days=365) <= token.expires_at <= timezone.now() + timedelta(days=365)
    client.post(url, {"name": "kept", "lifetime": ""})
    assert ApiToken.objects.get(name="kept").expires_at is None


def test_a_lifetime_not_offered_is_refused_and_creates_nothing(client, rater):
    client.force_login(rater)
    response = client.post(reverse("api_tokens"), {"name": "odd", "lifetime": "7"})
    assert response.status_code == 200
    assert "lifetime: Select a valid choice." in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_list_says_when_each_token_expires(client, rater):
    token, _ = token_create(actor=rater, name="old", days=30)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(days=1))
    client.force_login(rater)
    page = client.get(reverse("api_tokens")).content.decode()
    assert '<span class="badge">expired</span>' in page
