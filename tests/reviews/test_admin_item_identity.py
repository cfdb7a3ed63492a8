"""An item's case id and project are what its signed ground truth is bound to: the admin cannot
rename or move an item (that would make a never-reviewed case id, or another project's item,
approved without an approver)."""

import pytest
from django.urls import reverse

from reviews.models import Item
from tests.factories import ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_admin_cannot_rename_or_move_an_item(client, approved_item):
    other = ProjectFactory()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    url = reverse("admin:reviews_item_change", args=[approved_item.pk])
    page = client.get(url).content.decode()
    assert 'name="external_id"' not in page and 'name="project"' not in page
    client.post(
        url,
        {
            "project": other.pk,
            "external_id": "never-reviewed",
            "title": approved_item.title,
            "input": "null",
            "output": "null",
            "expected": "null",
            "metadata": "{}",
        },
    )
    approved_item.refresh_from_db()
    assert (approved_item.project_id, approved_item.external_id) != (other.pk, "never-reviewed")
    assert Item.objects.filter(external_id="never-reviewed").count() == 0
