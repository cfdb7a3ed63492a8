"""`criterion_names` reads by hand (judging/selectors.py): the ORM's list of the project's
criterion names, each once however many versions, in the database's order, on both
databases."""

import pytest

from judging.models import Criterion
from judging.selectors import criterion_names
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

NAMES = ["faithful", "Faithful", "clear_2", "clear-10", "ümlaut", "Zeta", "a b", "_first"]


def test_the_names_are_the_orms_each_once():
    project, other = ProjectFactory(), ProjectFactory()
    for name in NAMES:
        for version in ("1", "2"):
            Criterion.objects.create(
                project=project, name=name, version=version, labels=["y", "n"], sha256="0"
            )
    Criterion.objects.create(project=other, name="elsewhere", labels=["y", "n"], sha256="0")
    names = Criterion.objects.filter(project=project).order_by("name")
    assert criterion_names(project) == list(dict.fromkeys(names.values_list("name", flat=True)))
    assert sorted(criterion_names(project)) == sorted(NAMES)
    assert criterion_names(ProjectFactory()) == []
