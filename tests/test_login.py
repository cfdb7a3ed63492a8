import pytest
from django.urls import reverse

from tests.factories import PASSWORD, UserFactory

pytestmark = pytest.mark.django_db


def test_login_logout_flow(client):
    UserFactory(username="lee")
    page = client.get(reverse("login"))
    assert page.status_code == 200
    bad = client.post(reverse("login"), {"username": "lee", "password": "wrong"})
    assert bad.status_code == 200 and "correct username and password" in bad.content.decode()
    good = client.post(reverse("login"), {"username": "lee", "password": PASSWORD})
    assert good.status_code == 302
    assert client.get(reverse("project_list")).status_code == 200
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("project_list")).status_code == 302


def test_password_change(client):
    user = UserFactory(username="kim")
    client.force_login(user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "a-new-long-pass-77",
            "new_password2": "a-new-long-pass-77",
        },
    )
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.check_password("a-new-long-pass-77")


def test_healthz_needs_no_login(client):
    assert client.get("/healthz").content == b"ok"
