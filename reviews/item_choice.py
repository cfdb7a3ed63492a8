"""The items a bulk action over the whole filtered list acts on, found when its background job
runs (as a click finds them when it runs inline): every item the list's filters match then.
Set as `item_hooks.CHOOSE` by reviews/apps.py: item_hooks cannot import the list's form and
selector, which import it."""

from django.http import QueryDict

from reviews.forms_items import ItemListForm
from reviews.selectors_pages import items_chosen


def items_matching(project, listing: str) -> list[int]:
    """The ids of every item of `project` the list's query string `listing` filters to."""
    form = ItemListForm(QueryDict(listing), project=project)
    return items_chosen(project=project, filters=form.filters(), every=True, ticked=[])
