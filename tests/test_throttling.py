"""Password guessing is throttled (django-axes): login and the approver's password re-entry,
per (account, client address) pair and per address, so a guesser elsewhere cannot lock an
approver out; the client's address behind TRUSTED_PROXIES reverse proxies; a project admin
clears a member's lockout at once; the approve form checks everything else first."""

import re

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.urls import reverse

from reviews.models import Approval, Role
from tests.factories import PASSWORD, ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db

LIMIT = settings.AXES_FAILURE_LIMIT


def _login(client, username, password, address="10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_login_locks_an_account_from_the_guessing_address_even_for_the_right_password(client):
    UserFactory(username="lee")
    for n in range(LIMIT):
        _login(client, "lee", f"guess-{n}", address="10.0.1.1")
    locked = _login(client, "lee", PASSWORD, address="10.0.1.1")
    assert locked.status_code == 429
    assert "Too many wrong passwords" in locked.content.decode()
    assert "_auth_user_id" not in client.session


def test_guesses_from_elsewhere_never_lock_the_owner_out(client):
    """Five wrong passwords from each of many addresses: the owner still signs in from theirs."""
    UserFactory(username="april")
    for n in range(3 * LIMIT):
        _login(client, "april", f"guess-{n}", address=f"10.0.1.{n % 3}")
    assert _login(client, "april", "guess", address="10.0.1.0").status_code == 429
    assert _login(client, "april", PASSWORD, address="10.0.2.1").status_code == 302


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
    # The same account cannot sign in from that address meanwhile; from elsewhere it can.
    assert _login(client, "appy", PASSWORD, address="10.0.4.1").status_code == 429
    assert _login(client, "appy", PASSWORD, address="10.0.5.5").status_code == 302


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


def _proxied(client, username, password, *, client_address, forwarded_by="192.0.2.10", spoof=""):
    """A login through one reverse proxy at `forwarded_by`, which appends the address it saw."""
    chain = f"{spoof}, {client_address}" if spoof else client_address
    return client.post(
        reverse("login"),
        {"username": username, "password": password},
        REMOTE_ADDR=forwarded_by,
        HTTP_X_FORWARDED_FOR=chain,
    )


def test_behind_a_proxy_each_client_has_its_own_address(client, settings):
    settings.TRUSTED_PROXIES = 1
    UserFactory(username="april")
    for n in range(LIMIT):  # a guesser behind the same proxy, forging addresses on the left
        _proxied(client, f"nobody-{n}", "wrong", client_address="198.51.100.7", spoof=f"10.9.{n}.1")
    guesser = _proxied(client, "april", PASSWORD, client_address="198.51.100.7", spoof="10.8.0.1")
    assert guesser.status_code == 429  # its real address is locked, whatever it forges
    assert _proxied(client, "april", PASSWORD, client_address="203.0.113.5").status_code == 302


def test_without_trusted_proxies_a_forwarded_header_changes_nothing(client, settings):
    settings.TRUSTED_PROXIES = 0
    for n in range(LIMIT):  # a new forged address each time: still one client address
        _proxied(client, f"nobody-{n}", "wrong", client_address=f"10.7.0.{n}")
    UserFactory(username="fresh")
    assert _proxied(client, "fresh", PASSWORD, client_address="10.7.1.1").status_code == 429


@pytest.mark.parametrize(
    "proxies, remote, forwarded, expected",
    [
        (0, "192.0.2.10", "198.51.100.7", "192.0.2.10"),
        (1, "192.0.2.10", "198.51.100.7", "198.51.100.7"),
        (1, "192.0.2.10", "6.6.6.6, 198.51.100.7", "198.51.100.7"),
        (2, "192.0.2.11", "6.6.6.6, 198.51.100.7, 192.0.2.10", "198.51.100.7"),
        (2, "192.0.2.11", "198.51.100.7", "192.0.2.11"),  # did not pass every proxy
        (1, "192.0.2.10", "not-an-address", "192.0.2.10"),
        (1, "192.0.2.10", "", "192.0.2.10"),
    ],
)
def test_the_client_address_is_the_one_the_outermost_trusted_proxy_saw(
    settings, proxies, remote, forwarded, expected
):
    from django.test import RequestFactory

    from evalsite.client_address import client_address

    settings.TRUSTED_PROXIES = proxies
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)
    assert client_address(request) == expected


def test_check_deploy_warns_behind_a_tls_proxy_without_trusted_proxies(settings):
    from django.core.checks import run_checks

    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.TRUSTED_PROXIES = 0
    ids = [message.id for message in run_checks(include_deployment_checks=True)]
    assert "evalsite.W002" in ids
    settings.TRUSTED_PROXIES = 1
    ids = [message.id for message in run_checks(include_deployment_checks=True)]
    assert "evalsite.W002" not in ids


def test_a_project_admin_clears_an_approvers_lockout_at_once(client, resolved):
    project = resolved.project
    approver = member(project, Role.APPROVER, username="appy")
    for n in range(LIMIT):
        _login(client, "appy", f"guess-{n}", address="10.0.4.1")
    assert _login(client, "appy", PASSWORD, address="10.0.4.1").status_code == 429
    rater = project.memberships.filter(role=Role.RATER).first().user
    client.force_login(rater)
    unlock = reverse("member_unlock", args=[project.slug, approver.pk])
    assert client.post(unlock).status_code == 403  # not an admin of the project
    client.force_login(member(ProjectFactory(), Role.ADMIN, username="elsewhere"))
    assert client.post(unlock).status_code == 404  # another project's admin
    client.force_login(member(project, Role.ADMIN, username="boss"))
    page = client.get(reverse("members", args=[project.slug])).content.decode()
    assert "locked out" in page and unlock in page
    client.post(unlock)
    assert not AccessAttempt.objects.filter(username="appy").exists()
    client.logout()
    assert _login(client, "appy", PASSWORD, address="10.0.4.1").status_code == 302
    assert "locked out" not in client.get(reverse("members", args=[project.slug])).content.decode()


def test_only_a_members_lockout_is_cleared_and_only_by_their_admins(project):
    from django.core.exceptions import PermissionDenied

    from reviews.services.projects.lockouts import lockout_clear

    stranger, admin = UserFactory(), member(project, Role.ADMIN)
    with pytest.raises(PermissionDenied, match="is not a member"):
        lockout_clear(actor=admin, project=project, user=stranger)
    with pytest.raises(PermissionDenied, match="Only the admins"):
        lockout_clear(actor=member(project, Role.APPROVER), project=project, user=admin)


def test_behind_proxies_the_access_log_shows_the_forwarded_chain(monkeypatch):
    """gunicorn's access log (make serve) names the client behind TRUSTED_PROXIES, not only the
    proxy that connected."""
    import runpy

    from django.conf import settings

    config = str(settings.BASE_DIR / "gunicorn.conf.py")
    monkeypatch.setenv("TRUSTED_PROXIES", "0")
    assert "access_log_format" not in runpy.run_path(config)
    monkeypatch.setenv("TRUSTED_PROXIES", "1")
    assert '"%({x-forwarded-for}i)s"' in runpy.run_path(config)["access_log_format"]
