"""Reviews writes what judging imports onto its items: pairwise pairs kept on the item, critical
slices marked (judging asks these services; it never writes a reviews row itself)."""

import pytest

from reviews.models import Item, Slice
from reviews.services.items import PairwiseConflict, items_pairwise_keep, slices_critical_set

pytestmark = pytest.mark.django_db


def test_a_pair_is_kept_once_and_a_contradicting_one_refused_with_nothing_written(project):
    a = Item.objects.create(project=project, external_id="a")
    b = Item.objects.create(project=project, external_id="b")
    assert items_pairwise_keep([(a.pk, "preference", ["x", "y"])]) == 1
    assert items_pairwise_keep([(a.pk, "preference", ["x", "y"])]) == 0  # the same again
    with pytest.raises(PairwiseConflict) as refused:
        items_pairwise_keep([(b.pk, "preference", ["p", "q"]), (a.pk, "preference", ["y", "x"])])
    assert (refused.value.index, refused.value.current) == (1, ["x", "y"])
    b.refresh_from_db()
    assert "pairwise" not in b.metadata  # the refusal came before any write
    a.refresh_from_db()
    assert a.metadata["pairwise"] == {"preference": ["x", "y"]}


def test_slices_are_marked_critical_by_name(project):
    Slice.objects.create(project=project, name="safety-sensitive")
    Slice.objects.create(project=project, name="other")
    assert slices_critical_set(project=project, names=["safety-sensitive", "missing"]) == 1
    assert dict(Slice.objects.values_list("name", "critical")) == {
        "safety-sensitive": True,
        "other": False,
    }
