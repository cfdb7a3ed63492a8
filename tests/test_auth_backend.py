"""evalsite.auth.UserBackend: ModelBackend with the request's user read by hand. A real login
stores it in the session, and the session then finds the same user, or nobody."""

import pytest
from django.contrib.auth import BACKEND_SESSION_KEY
from django.urls import reverse

from evalsite.auth import UserBackend
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _fields(user) -> dict:
    return {f.attname: getattr(user, f.attname) for f in user._meta.concrete_fields}


def test_it_reads_the_user_the_orm_reads_and_nobody_else():
    user = UserFactory()
    backend = UserBackend()
    assert _fields(backend.get_user(user.pk)) == _fields(type(user).objects.get(pk=user.pk))
    assert backend.get_user(str(user.pk)) == user  # as the session keeps it
    assert backend.get_user(user.pk + 1000) is None
    assert backend.get_user("not a number") is None
    user.is_active = False
    user.save()
    assert backend.get_user(user.pk) is None  # inactive users are nobody


def test_a_login_signs_in_through_it(client):
    user = UserFactory()
    user.set_password("s3cret-enough-pass")
    user.save()
    response = client.post(
        reverse("login"), {"username": user.username, "password": "s3cret-enough-pass"}
    )
    assert response.status_code == 302
    assert client.session[BACKEND_SESSION_KEY] == "evalsite.auth.UserBackend"
    assert client.get(reverse("api_tokens")).status_code == 200  # signed in on the next request
