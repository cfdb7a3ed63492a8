"""Project slugs are unique ignoring case: `Demo` beside `demo` would be a look-alike project
(a link to /p/Demo/ that is not the project its members know). The page, the command and the
service refuse it naming the existing slug; the database refuses it too (both databases); the
migration that adds the constraint stops, naming the clash, when existing data already has one."""

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from reviews.models import Membership, Project, Role
from reviews.services.projects.members import project_create
from tests.factories import UserFactory, member

pytestmark = pytest.mark.django_db

LOOK_ALIKE = "slugs ignore case: 'Demo' would look like it"


@pytest.fixture
def demo(db):
    project = Project.objects.create(slug="demo", name="Demo")
    return project, member(project, Role.ADMIN, username="demo-admin")


@pytest.mark.parametrize("who", ["its admin", "other staff"])
def test_the_service_refuses_a_slug_differing_only_in_case(demo, who):
    project, admin = demo
    actor = admin if who == "its admin" else UserFactory(is_staff=True, is_superuser=True)
    with pytest.raises(ValidationError, match=LOOK_ALIKE) as refused:
        project_create(actor=actor, slug="Demo", name="Demo")
    assert "'demo' exists already" in str(refused.value)
    assert list(Project.objects.values_list("slug", flat=True)) == ["demo"]


def test_the_new_project_page_names_the_existing_slug(client, demo):
    staff = UserFactory(is_staff=True)
    client.force_login(staff)
    page = client.post(
        reverse("project_new"),
        {"name": "Look-alike", "slug": "DEMO", "overlap": 2, "resolution_rule": "unanimous"},
    )
    assert page.status_code == 200
    text = page.content.decode()
    assert "A project with the slug &#x27;demo&#x27; exists already" in text
    assert Project.objects.count() == 1 and not Membership.objects.filter(user=staff).exists()


def test_create_project_refuses_it_in_one_line(demo):
    with pytest.raises(CommandError, match="'demo' exists already, and slugs ignore case"):
        call_command("create_project", "Demo", "--admin", "demo-admin")
    assert Project.objects.count() == 1


def test_the_database_refuses_it_too(demo):
    with pytest.raises(IntegrityError), transaction.atomic():
        Project.objects.create(slug="dEmO", name="Look-alike")
    assert Project.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_the_migration_stops_naming_clashes_that_exist_already():
    executor = MigrationExecutor(connection)
    before, added = (
        ("reviews", "0022_separation_of_duties_approval"),
        (
            "reviews",
            "0023_project_slug_ignoring_case",
        ),
    )
    executor.migrate([before])
    try:
        old = MigrationExecutor(connection).loader.project_state([before]).apps
        OldProject = old.get_model("reviews", "Project")
        for slug in ("demo", "Demo", "receipts"):
            OldProject.objects.create(slug=slug, name=slug)
        with pytest.raises(RuntimeError, match="these do not: 'demo' and 'Demo'. Rename"):
            MigrationExecutor(connection).migrate([added])
        OldProject.objects.filter(slug="Demo").update(slug="demo-look-alike")
    finally:
        MigrationExecutor(connection).migrate(
            MigrationExecutor(connection).loader.graph.leaf_nodes()
        )
    assert set(Project.objects.values_list("slug", flat=True)) == {
        "demo",
        "demo-look-alike",
        "receipts",
    }
