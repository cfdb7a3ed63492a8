"""The item list's choice lists are read by hand in one statement (reviews/selectors_options.py):
they must be the ORM's lists, in the ORM's order, on both databases (the database's collation
orders names), and the project's only."""

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from reviews.models import AssignmentBatch, Role, Slice
from reviews.selectors_options import list_options
from tests.factories import ProjectFactory, member

pytestmark = pytest.mark.django_db

NAMES = ["beta", "Alpha", "alpha-2", "Ümlaut", "_under", "zeta", "Zeta-9", "10", "9"]


def _world():
    project, other = ProjectFactory(), ProjectFactory()
    for n, name in enumerate(NAMES):
        Slice.objects.create(project=project, name=name)
        Slice.objects.create(project=other, name=f"o{n}")
        member(project, Role.RATER, username=f"{name}-r")
        member(project, Role.ADJUDICATOR, Role.APPROVER, username=f"{name}-adj")  # not raters
        member(other, Role.RATER, username=f"{name}-other")
    member(project, Role.RATER, Role.ADMIN, username="both")
    start = timezone.now()
    for n, name in enumerate(NAMES):
        for project_of in (project, other):
            batch = AssignmentBatch.objects.create(project=project_of, name=f"{name} <b>")
            # every second pair created at the same moment: ties go newest id first
            at = start - timedelta(minutes=n // 2)
            AssignmentBatch.objects.filter(pk=batch.pk).update(created_at=at)
    return project


def test_the_lists_are_the_orms():
    project = _world()
    options = list_options(project)
    assert options.slices == list(project.slices.order_by("name").values_list("pk", "name"))
    raters = get_user_model().objects.filter(
        memberships__project=project, memberships__role=Role.RATER
    )
    assert options.raters == list(raters.order_by("username").values_list("pk", "username"))
    batches = AssignmentBatch.objects.filter(project=project).order_by("-created_at", "-pk")
    assert options.batches == list(batches.values_list("pk", "name"))
    assert len(options.raters) == len(NAMES) + 1 and len(options.batches) == len(NAMES)


def test_an_empty_project_has_empty_lists():
    options = list_options(ProjectFactory())
    assert (options.slices, options.raters, options.batches) == ([], [], [])


def test_one_read_per_project_object():
    project = _world()
    with CaptureQueriesContext(connection) as queries:
        assert list_options(project) is list_options(project)
    assert len(queries) == 1
