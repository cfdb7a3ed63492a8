"""Password guessing is throttled (django-axes): login and the approver's password re-entry,
per account and per client address; the approve form checks everything else first."""

import re

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.urls import reverse

from reviews.models import Approval, Role
from tests.factories import PASSWORD, UserFactory, member

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT


def _login(client, username, password, address="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_login_locks_an_account_after_the_limit_even_for_the_right_password(client):
    UserFactory(username="lee")
    for n in range(LIMIT):
        _login(client, "lee", f"guess-{n}", address=f"10.0.1.{n}")  # from many addresses
    locked = _login(client, "lee", PASSWORD, address="10.0.2.1")
    assert locked.status_code == 429
    assert "Too many wrong passwords" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_login_locks_an_address_across_accounts(client):
    for n in range(LIMIT):
        UserFactory(username=f"u{n}")
        _login(client, f"u{n}", "wrong")  # one guess per account, one address
    UserFactory(username="fresh")
    assert _login(client, "fresh", PASSWORD).status_code == 429
    assert _login(client, "fresh", PASSWORD, address="10.9.9.9").status_code == 302


def test_a_right_password_before_the_limit_resets_the_account(client):
    UserFactory(username="kim")
    for _ in range(LIMIT - 1):
        _login(client, "kim", "wrong", address="10.0.3.1")
    assert _login(client, "kim", PASSWORD, address="10.0.3.1").status_code == 302


@pytest.fixture
def resolved(project, review_item, rate):
    item = review_item(project)
    for n in (1, 2):
        rate(member(project, Role.RATER, username=f"r{n}"), item, {"$.total": "1,200.00"})
    return item


def _approve(client, item, password, **extra):
    """The approve form as the page fills it (with the fingerprint of the rows it shows)."""
    url = reverse("item_approve", args=[item.project.slug, item.pk])
    shown = re.search(r'name="shown" value="(\w*)"', client.get(url).content.decode())
    data = {"password": password, "confirm": "yes", "shown": shown[1] if shown else "", **extra}
    return client.post(url, data, REMOTE_ADDR="10.0.4.1", follow=True)


def test_approval_password_is_throttled_and_checked_after_the_limit(client, resolved):
    approver = member(resolved.project, Role.APPROVER, username="appy")
    client.force_login(approver)
    for _ in range(LIMIT - 1):
        page = _approve(client, resolved, "wrong")
        assert "That password is not correct." in page.content.decode()
    last = _approve(client, resolved, "wrong")
    assert last.status_code == 429  # the limit reached: the lockout page
    locked = _approve(client, resolved, PASSWORD)
    assert "locked" in locked.content.decode().lower()
    assert not Approval.objects.exists()
    # The same account cannot sign in from elsewhere meanwhile either.
    assert _login(client, "appy", PASSWORD, address="10.0.5.5").status_code == 429


def test_the_approve_form_checks_everything_else_before_the_password(
    client, project, review_item, resolved
):
    approver = member(project, Role.APPROVER, username="appy")
    client.force_login(approver)
    unconfirmed = _approve(client, resolved, "wrong", confirm="")
    assert "Confirm the statement" in unconfirmed.content.decode()
    open_item = review_item(project)
    blocked = _approve(client, open_item, "wrong")
    assert "still open" in blocked.content.decode()
    assert not AccessAttempt.objects.exists()  # no password was tried
    assert "That password is not correct." in _approve(client, resolved, "wrong").content.decode()
    assert AccessAttempt.objects.get().failures_since_start == 1
