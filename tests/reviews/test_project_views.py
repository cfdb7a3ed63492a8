"""Project list, project home, members: owner / outsider (404) / wrong role (403)."""

from urllib.parse import urljoin

import pytest
from django.urls import reverse
from django.utils import timezone

from reviews.models import EventKind, ItemStatus, Membership, Project, Role
from reviews.services.assignment.queue import assignment_claim_next
from reviews.services.events import event_record
from tests.factories import ItemFactory, ProjectFactory, UserFactory, member

pytestmark = pytest.mark.django_db


def test_anonymous_is_sent_to_login(client):
    response = client.get(reverse("project_list"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_project_list_shows_only_my_projects(client):
    mine, theirs = ProjectFactory(name="Mine"), ProjectFactory(name="Theirs")
    client.force_login(member(mine, Role.RATER))
    member(theirs, Role.RATER)
    page = client.get(reverse("project_list")).content.decode()
    assert "Mine" in page and "Theirs" not in page


def test_project_home_for_member(client, project, rater):
    client.force_login(rater)
    response = client.get(reverse("project_home", args=[project.slug]))
    assert response.status_code == 200
    assert project.name in response.content.decode()


def test_project_home_outsider_gets_404(client, project, outsider):
    client.force_login(outsider)
    assert client.get(reverse("project_home", args=[project.slug])).status_code == 404


def test_members_page_rater_gets_403(client, project, rater):
    client.force_login(rater)
    assert client.get(reverse("members", args=[project.slug])).status_code == 403


def test_members_page_outsider_gets_404(client, project, outsider):
    client.force_login(outsider)
    assert client.get(reverse("members", args=[project.slug])).status_code == 404


def test_admin_adds_member_by_email_and_removes_a_role(client, project):
    admin = member(project, Role.ADMIN)
    newcomer = UserFactory(username="nina", email="nina@example.com")
    client.force_login(admin)
    url = reverse("members", args=[project.slug])
    client.post(url, {"user": "NINA@example.com", "role": Role.RATER})
    client.post(url, {"user": "nina", "role": Role.APPROVER})
    assert set(newcomer.memberships.values_list("role", flat=True)) == {"rater", "approver"}
    client.post(reverse("member_remove", args=[project.slug, newcomer.pk]), {"role": "rater"})
    assert set(newcomer.memberships.values_list("role", flat=True)) == {"approver"}


def test_removing_an_unknown_role_says_so_and_removes_nothing(client, project):
    client.force_login(member(project, Role.ADMIN))
    nina = member(project, Role.RATER, username="nina")
    url = reverse("member_remove", args=[project.slug, nina.pk])
    page = client.post(url, {"role": "raterr"}, follow=True).content.decode()
    assert "Choose a role." in page and "Removed" not in page
    assert list(nina.memberships.values_list("role", flat=True)) == ["rater"]


def test_last_admin_cannot_be_removed(client, project):
    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    client.post(reverse("member_remove", args=[project.slug, admin.pk]))
    assert Membership.objects.filter(project=project, user=admin, role=Role.ADMIN).exists()


def test_only_staff_create_projects_in_the_ui(client):
    user = UserFactory()
    client.force_login(user)
    assert client.get(reverse("project_new")).status_code == 403
    user.is_staff = True
    user.save()
    response = client.post(
        reverse("project_new"),
        {"name": "Fresh", "slug": "fresh", "overlap": 3, "resolution_rule": "majority"},
    )
    project = Project.objects.get(slug="fresh")
    assert response.status_code == 302 and project.overlap == 3
    assert Membership.objects.filter(project=project, user=user, role=Role.ADMIN).exists()


def test_new_project_form_asks_for_the_name_first_and_derives_the_slug(client):
    client.force_login(UserFactory(is_staff=True))
    page = client.get(reverse("project_new")).content.decode()
    assert page.index('name="name"') < page.index('name="slug"')
    assert 'data-slug-from="id_name"' in page and "js/project-new.js" in page
    assert "<script>" not in page and " onclick=" not in page
    client.post(
        reverse("project_new"),
        {"name": "Café receipts 2026!", "slug": "", "overlap": 2, "resolution_rule": "unanimous"},
    )
    assert Project.objects.filter(slug="cafe-receipts-2026", name="Café receipts 2026!").exists()


def _project_state(project):
    project.refresh_from_db()
    return (
        [(f, getattr(project, f)) for f in ("name", "overlap", "resolution_rule")],
        sorted(Membership.objects.filter(project=project).values_list("user_id", "role")),
    )


def test_staff_creating_an_existing_slug_get_an_error_and_no_membership(client, project):
    member(project, Role.ADMIN)
    staff = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(staff)
    before = _project_state(project)
    response = client.post(
        reverse("project_new"),
        {"name": "Hijack", "slug": project.slug, "overlap": 9, "resolution_rule": "majority"},
    )
    assert response.status_code == 200
    assert "exists already: choose another slug" in response.content.decode()
    assert _project_state(project) == before
    assert not Membership.objects.filter(user=staff).exists()


def test_its_admin_recreating_the_slug_changes_no_setting(client, project):
    admin = member(project, Role.ADMIN)
    client.force_login(admin)
    admin.is_staff = True
    admin.save()
    before = _project_state(project)
    response = client.post(
        reverse("project_new"),
        {"name": project.name, "slug": project.slug, "overlap": 9, "resolution_rule": "majority"},
    )
    assert "settings page" in response.content.decode()
    assert _project_state(project) == before


def test_settings_change_on_the_settings_page_by_its_admins_only(client, project, rater):
    url = reverse("project_settings", args=[project.slug])
    data = {"name": "Renamed", "description": "", "overlap": 3, "resolution_rule": "majority"}
    data |= {"separation_of_duties": "on", "blind": "on", "lease_minutes": 30, "gold_share": 0.1}
    staff = UserFactory(is_staff=True, is_superuser=True)
    for outsider, status in ((rater, 403), (staff, 404)):
        client.force_login(outsider)
        assert client.post(url, data).status_code == status
    assert project.name != "Renamed"
    client.force_login(member(project, Role.ADMIN))
    assert client.get(url).status_code == 200
    assert client.post(url, data).status_code == 302
    project.refresh_from_db()
    assert (project.name, project.overlap, project.resolution_rule) == ("Renamed", 3, "majority")
    assert project.show_rater_names is False and project.gold_share == 0.1


def test_the_settings_page_refuses_bad_values_and_changes_nothing(client, project):
    client.force_login(member(project, Role.ADMIN))
    before = _project_state(project)
    response = client.post(
        reverse("project_settings", args=[project.slug]),
        {
            "name": "",
            "overlap": 0,
            "resolution_rule": "coin-toss",
            "lease_minutes": 30,
            "gold_share": 1.5,
        },
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "This field is required" in page and "coin-toss is not one of" in page
    assert "less than or equal to 1.0" in page
    assert _project_state(project) == before


def test_the_django_admin_shows_project_settings_read_only(client, project):
    superuser = UserFactory(is_staff=True, is_superuser=True)
    client.force_login(superuser)
    assert client.get(reverse("admin:reviews_project_add")).status_code == 403
    url = reverse("admin:reviews_project_change", args=[project.pk])
    page = client.get(url).content.decode()
    assert 'name="overlap"' not in page and 'name="name"' not in page


def test_a_404_is_a_page_of_the_site_naming_the_path(client, rater):
    client.force_login(rater)
    response = client.get("/p/no-such-project/")
    page = response.content.decode()
    assert response.status_code == 404
    assert "<code>/p/no-such-project/</code>" in page and "My queue" in page


def test_the_timeline_shows_event_names_and_details_in_words(client, project):
    item = project.items.create(external_id="t-1")
    event_record(item=item, kind=EventKind.IMPORTED, data={"generated_version": 1, "new": True})
    client.force_login(member(project, Role.ADMIN))
    page = client.get(reverse("item_timeline", args=[project.slug, item.pk])).content.decode()
    assert "<strong>Imported</strong>" in page
    # PostgreSQL's jsonb keeps keys in its own order (shorter first), SQLite in insertion order.
    assert any(
        d in page for d in ("generated version: 1 · new: yes", "new: yes · generated version: 1")
    )


def test_the_item_list_links_each_row_to_its_item_page_and_status(client, project):
    item = ItemFactory(project=project, status=ItemStatus.ADJUDICATION)
    client.force_login(member(project, Role.ADMIN))
    list_url = reverse("item_list", args=[project.slug])
    page = client.get(list_url).content.decode()
    href = f'href="{item.pk}/"'
    assert href in page  # relative: resolves against the list's own path
    assert urljoin(list_url + "?after=1", f"{item.pk}/") == reverse(
        "item_detail", args=[project.slug, item.pk]
    )
    assert '<span class="badge badge-warn">Needs adjudication</span>' in page
    item.questions.create(key="$.a", kind="field", status="resolved")
    item.questions.create(key="$.b", kind="field")
    page = client.get(list_url).content.decode()
    assert '<td class="num">1 / 2</td>' in page  # open / all questions
    updated = timezone.localtime(item.updated_at).strftime("%Y-%m-%d %H:%M")
    assert f"<td>{updated}</td>" in page  # local time, to the minute


def test_a_403_names_the_roles_that_would_do_in_words(client, project):
    item = project.items.create(external_id="t-2")
    client.force_login(member(project, Role.RATER))
    response = client.get(reverse("item_timeline", args=[project.slug, item.pk]))
    assert response.status_code == 403
    assert (
        f"This needs one of the adjudicator, approver or project admin roles in {project.name}."
        in response.content.decode()
    )


def test_a_rater_with_an_item_in_progress_resumes_it(client, project, rater):
    project.items.create(external_id="r-1")
    home = reverse("project_home", args=[project.slug])
    client.force_login(rater)
    assert "Start reviewing" in client.get(home).content.decode()
    assert assignment_claim_next(rater=rater, project=project) is not None
    assert "Resume reviewing" in client.get(home).content.decode()


@pytest.mark.parametrize(
    "query, shown",
    [
        ("?status=adjudication", {"adj-1"}),
        ("?q=open", {"open-1"}),
        ("?after=-1&before=abc&status=bogus", {"open-1", "adj-1"}),  # ignored, never a 500
        (f"?after={10**30}&q={'x' * 5000}", set()),  # bounded: a huge id and a long search
    ],
)
def test_the_item_list_filters_parse_through_a_form(client, project, query, shown):
    ItemFactory(project=project, external_id="open-1")
    ItemFactory(project=project, external_id="adj-1", status=ItemStatus.ADJUDICATION)
    client.force_login(member(project, Role.ADMIN))
    response = client.get(reverse("item_list", args=[project.slug]) + query)
    assert response.status_code == 200
    page = response.content.decode()
    assert {name for name in ("open-1", "adj-1") if name in page} == shown


def test_the_project_home_shows_the_pages_judging_added(client, project):
    """Judging adds its pages to reviews' navigation (judging/apps.py); reviews names none."""
    from reviews.navigation import ProjectTab, project_tab_add

    home = reverse("project_home", args=[project.slug])
    client.force_login(member(project, Role.ADMIN, username="ada"))
    page = client.get(home).content.decode()
    for name in ("project_dashboard", "score_list", "questions"):
        assert f'href="{reverse(name, args=[project.slug])}"' in page
    client.force_login(member(project, Role.APPROVER, username="april"))
    page = client.get(home).content.decode()
    assert reverse("project_dashboard", args=[project.slug]) in page
    assert reverse("questions", args=[project.slug]) not in page  # admins only
    client.force_login(member(project, Role.RATER, username="rita"))
    assert (
        reverse("project_dashboard", args=[project.slug]) not in client.get(home).content.decode()
    )
    with pytest.raises(ValueError, match="already added"):
        project_tab_add(ProjectTab("questions", "Questions", "project_home", "admin"))


def test_the_project_home_decides_by_the_access_objects_decisions(client, project):
    """A rater only sees the counts; an overseer's counts link to the item list; only admins
    and approvers see the export."""
    home = reverse("project_home", args=[project.slug])
    items = reverse("item_list", args=[project.slug])
    client.force_login(member(project, Role.RATER, username="rita"))
    page = client.get(home).content.decode()
    assert f'href="{items}?status=' not in page and "export-heading" not in page
    client.force_login(member(project, Role.RATER, Role.ADJUDICATOR, username="adam"))
    page = client.get(home).content.decode()
    assert f'href="{items}?status=' in page and "export-heading" not in page
    client.force_login(member(project, Role.APPROVER, username="april"))
    assert "export-heading" in client.get(home).content.decode()
