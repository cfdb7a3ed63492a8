"""`{{ item.status|status_badge }}`: the badge colour of an item status (one place for it).

A filter, not an `{% include %}` per row: the item list renders fifty of them per page."""

from django import template

register = template.Library()

_CLASSES = {"approved": "badge-ok", "adjudication": "badge-warn", "resolved": "badge-accent"}


@register.filter
def status_badge(status: str) -> str:
    return _CLASSES.get(status, "")
