"""The page that shows a new API token once keeps it out of every cache (and Back)."""

import pytest
from django.urls import reverse

from reviews.models import ApiToken
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def test_the_page_showing_a_new_token_is_not_cached(client):
    client.force_login(UserFactory(username="nina"))
    response = client.post(reverse("api_tokens"), {"name": "notebook", "lifetime": "30"})
    assert response.status_code == 200 and ApiToken.objects.filter(name="notebook").exists()
    assert "no-store" in response["Cache-Control"]
