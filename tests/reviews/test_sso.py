"""Single sign-on against our own identity provider on 127.0.0.1 (tests/oidc_provider.py):
users matched by verified e-mail, created without a role; an unverified address refused; the
approval of an SSO-only account asks for a recent sign-in at the provider."""

import re
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from evalsite.sso import AUTH_TIME
from reviews.models import Approval, Membership, Role
from reviews.services.projects.members import membership_add
from tests.factories import PASSWORD, UserFactory
from tests.oidc_provider import IdentityProvider

pytestmark = pytest.mark.django_db
User = get_user_model()


@pytest.fixture
def idp(settings):
    with IdentityProvider() as provider:
        for name, value in provider.settings().items():
            setattr(settings, name, value)
        yield provider


def sso_sign_in(client, start=None):
    """What a browser does: our link (and our redirects), the provider's page, then back to our
    callback, whose response is returned."""
    response = client.get(start or reverse("oidc_authentication_init"))
    while True:
        assert response.status_code == 302, response
        where = urlsplit(response["Location"])
        if where.netloc not in ("", "testserver"):  # the provider's own page
            with httpx.Client(trust_env=False) as browser:
                back = urlsplit(browser.get(response["Location"]).headers["location"])
            return client.get(f"{back.path}?{back.query}")
        response = client.get(f"{where.path}?{where.query}")


def test_the_login_page_offers_sso_only_when_configured(client, settings):
    assert "Sign in with SSO" not in client.get(reverse("login")).content.decode()
    assert client.get(reverse("oidc_authentication_init")).status_code == 404
    with IdentityProvider() as provider:
        for name, value in provider.settings().items():
            setattr(settings, name, value)
        assert "Sign in with SSO" in client.get(reverse("login")).content.decode()


def test_a_new_person_gets_an_account_without_any_role(client, idp):
    response = sso_sign_in(client)
    assert response.status_code == 302 and response["Location"] == reverse("home")
    user = User.objects.get(email="ann@example.org")
    assert user.username == "ann@example.org" and not user.has_usable_password()
    assert not Membership.objects.filter(user=user).exists() and not user.is_staff
    assert int(client.session["_auth_user_id"]) == user.pk
    assert isinstance(client.session[AUTH_TIME], int)
    [asked] = idp.authorize_requests
    assert asked["code_challenge_method"] == "S256" and "prompt" not in asked
    client.logout()
    sso_sign_in(client)  # again: the same account
    assert User.objects.filter(email__iexact="ann@example.org").count() == 1


def test_an_unverified_address_is_refused(client, idp):
    idp.person = {"sub": "sub-2", "email": "bob@example.org", "email_verified": False}
    response = sso_sign_in(client)
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert "email_verified" in client.get(reverse("login")).content.decode()
    assert not User.objects.filter(email="bob@example.org").exists()
    assert "_auth_user_id" not in client.session
    idp.person = {"sub": "sub-2", "email": "bob@example.org"}  # not said at all: refused too
    sso_sign_in(client)
    assert not User.objects.filter(email="bob@example.org").exists()


def test_an_existing_account_is_matched_by_its_address(client, idp):
    carol = UserFactory(username="carol", email="Carol@Example.org")
    idp.person = {"sub": "sub-3", "email": "carol@example.org", "email_verified": True}
    sso_sign_in(client)
    assert int(client.session["_auth_user_id"]) == carol.pk
    assert User.objects.count() == 1


def test_a_verified_address_of_a_superuser_does_not_sign_in_as_them(client, idp):
    root = UserFactory(username="root", email="ops@example.org", is_superuser=True, is_staff=True)
    idp.person = {"sub": "sub-9", "email": "OPS@example.org", "email_verified": True}
    response = sso_sign_in(client)
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert "_auth_user_id" not in client.session
    assert "superuser" in client.get(reverse("login")).content.decode()
    assert list(User.objects.filter(email__iexact="ops@example.org")) == [root]  # none made


def test_a_closed_account_does_not_come_back_as_a_new_one(client, idp):
    gone = UserFactory(username="gone", email="gone@example.org", is_active=False)
    idp.person = {"sub": "sub-8", "email": "gone@example.org", "email_verified": True}
    response = sso_sign_in(client)
    assert response.status_code == 302 and response["Location"] == reverse("login")
    assert "_auth_user_id" not in client.session
    assert list(User.objects.filter(email__iexact="gone@example.org")) == [gone]


# --- approval re-authentication ----------------------------------------------------------------


@pytest.fixture
def sso_approver(project, resolved, idp):
    """An SSO-only account holding the approver role of `project` (which has a resolved item)."""
    idp.person = {"sub": "sub-4", "email": "dee@example.org", "email_verified": True}
    user = UserFactory(username="dee", email="dee@example.org")
    user.set_unusable_password()
    user.save()
    membership_add(actor=None, project=project, user=user, role=Role.APPROVER)
    return user


def _approve(client, project, item):
    url = reverse("item_approve", args=[project.slug, item.pk])
    page = client.get(url).content.decode()
    shown = parse_qs_value(page, "shown")
    return page, client.post(url, {"confirm": "yes", "shown": shown}, follow=True)


def parse_qs_value(html: str, name: str) -> str:
    marker = f'name="{name}" value="'
    return html.split(marker, 1)[1].split('"', 1)[0]


def test_an_sso_account_approves_after_a_recent_sign_in_without_a_password(
    client, project, resolved, sso_approver, idp
):
    sso_sign_in(client)
    page, response = _approve(client, project, resolved)
    assert 'type="password"' not in page and "You signed in with SSO recently" in page
    assert Approval.objects.filter(item=resolved, approver=sso_approver).count() == 1
    assert "Approved" in response.content.decode()


def test_a_stale_sso_sign_in_must_be_renewed_at_the_provider(
    client, project, resolved, sso_approver, idp, settings
):
    idp.auth_age = settings.SSO_REAUTH_MINUTES * 60 + 5  # the provider's session is older
    sso_sign_in(client)
    page, response = _approve(client, project, resolved)
    assert "Sign in again with SSO" in page
    assert "Signing needs a recent sign-in" in response.content.decode()
    assert not Approval.objects.exists()

    # The page's link asks the provider for a new sign-in, and comes back to the item.
    again = re.search(r'<a href="([^"]+)">Sign in again with SSO</a>', page).group(1)
    idp.auth_age = 0
    response = sso_sign_in(client, start=again.replace("&amp;", "&"))
    assert response["Location"] == reverse("item_approve", args=[project.slug, resolved.pk])
    assert (idp.authorize_requests[-1]["prompt"], idp.authorize_requests[-1]["max_age"]) == (
        "login",
        "0",
    )
    _approve(client, project, resolved)
    assert Approval.objects.filter(approver=sso_approver).count() == 1


def test_a_provider_that_ignores_prompt_login_does_not_renew_the_session(
    client, project, resolved, sso_approver, idp, settings
):
    idp.auth_age = settings.SSO_REAUTH_MINUTES * 60 + 5
    sso_sign_in(client)
    sso_sign_in(client, start=reverse("sso_reauth"))  # answered with the same old sign-in
    _, response = _approve(client, project, resolved)
    assert "Signing needs a recent sign-in" in response.content.decode()


def test_a_password_account_signed_in_by_sso_still_types_its_password(
    client, project, resolved, idp
):
    user = UserFactory(username="eve", email="eve@example.org")
    membership_add(actor=None, project=project, user=user, role=Role.APPROVER)
    idp.person = {"sub": "sub-5", "email": "eve@example.org", "email_verified": True}
    sso_sign_in(client)
    page, response = _approve(client, project, resolved)
    assert 'type="password"' in page
    assert "That password is not correct" in response.content.decode()
    url = reverse("item_approve", args=[project.slug, resolved.pk])
    shown = parse_qs_value(page, "shown")
    client.post(url, {"confirm": "yes", "shown": shown, "password": PASSWORD})
    assert Approval.objects.filter(approver=user).count() == 1


def test_batch_approval_asks_an_sso_account_for_the_same_recent_sign_in(
    client, project, resolved, sso_approver, idp, settings
):
    idp.auth_age = settings.SSO_REAUTH_MINUTES * 60 + 5
    sso_sign_in(client)
    url = reverse("approval_batch", args=[project.slug])
    preview = client.post(url, {"item": [resolved.pk]}).content.decode()
    assert "Sign in again with SSO" in preview and 'type="password"' not in preview
    sign = {
        "item": [resolved.pk],
        "confirm": "on",
        "sign": "on",
        f"shown-{resolved.pk}": parse_qs_value(preview, f"shown-{resolved.pk}"),
    }
    assert "Signing needs a recent sign-in" in client.post(url, sign).content.decode()
    assert not Approval.objects.exists()
    idp.auth_age = 0
    response = sso_sign_in(client, start=reverse("sso_reauth"))
    assert response["Location"] == reverse("home")  # no page to go back to was given
    client.post(url, sign)
    assert Approval.objects.filter(item=resolved, approver=sso_approver).count() == 1
