"""The item list's rows are written in Python (reviews/item_rows_html.py): their HTML must be
the template's it replaced, for every status, with and without tick boxes, and escaped."""

import pytest
from django.template import engines

from reviews.item_rows_html import item_rows_html
from reviews.models import ItemStatus
from reviews.selectors_pages import ItemRow

# The item list's rows as its template wrote them (templates/reviews/item_list.html, before).
TEMPLATE = """{% load badges %}{% for row in page.rows %}
  <tr data-item="{{ row.external_id }}">
    {# Each row is printed as the selector made it (reviews/selectors_pages.py: ItemRow). #}
    {% if actions %}<td><input type="checkbox" name="item" value="{{ row.pk }}" aria-label="Tick {{ row.external_id }}"></td>{% endif %}
    <td><a href="{{ row.href }}">{{ row.external_id }}</a></td>
    <td><span class="badge {{ row.status|status_badge }}">{{ row.status_label }}</span></td>
    <td class="num">{{ row.questions }}</td>
    <td>{{ row.updated }}</td>
  </tr>
  {% empty %}
  <tr><td colspan="5" class="empty">No items{% if filtered %} match{% endif %}.</td></tr>
  {% endfor %}"""

ROWS = [
    ItemRow(
        pk=pk,
        href=f"{pk}/",
        external_id=external_id,
        status=status,
        status_label=label,
        questions=f"{pk % 3} / 2",
        updated="2026-12-02 07:55",
    )
    for pk, (external_id, (status, label)) in enumerate(
        zip(
            ["plain-1", '<b>&\'"quoted"', "ünï cødé", "a" * 300, "", "x y"],
            [*ItemStatus.choices, ("unknown", "unknown <status>")],
            strict=False,
        ),
        start=1,
    )
]


@pytest.mark.parametrize("actions", [[], ["an action"]])
@pytest.mark.parametrize("filtered", [False, True])
@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], []])
def test_the_rows_are_the_templates_html(rows, actions, filtered):
    template = engines["django"].from_string(TEMPLATE)
    theirs = template.render({"page": {"rows": rows}, "actions": actions, "filtered": filtered})
    ours = item_rows_html(rows, ticks=bool(actions), filtered=filtered)
    assert ours == theirs


def test_every_status_is_covered():
    assert {row.status for row in ROWS} >= set(ItemStatus.values)
