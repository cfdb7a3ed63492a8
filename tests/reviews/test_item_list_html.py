"""The item list's filters and bulk actions are written in Python (reviews/item_list_html.py):
their HTML must be the template's it replaced, for every filter and action registered (reviews'
own and judging's), chosen values and hostile labels included."""

import pytest
from django import forms
from django.template import engines

from reviews import item_hooks
from reviews.forms_items import ItemListForm
from reviews.item_list_html import bulk_actions_html, filters_html
from tests.factories import ProjectFactory

# The item list's filters and actions as its template wrote them (item_list.html, before).
FILTERS = """{% for field in form %}{% if field.name != "after" and field.name != "before" %}
  <div class="field"><label for="{{ field.id_for_label }}">{{ field.label }}</label>{{ field }}</div>
  {% endif %}{% endfor %}"""
ACTIONS = """{% for action, action_form in actions %}
    <div class="bulk-action" data-bulk="{{ action.name }}">
      {% for field in action_form %}<label class="visually-hidden" for="{{ field.id_for_label }}">{{ field.label }}</label>{{ field }}{% endfor %}
      <button type="submit" class="button" name="action" value="{{ action.name }}" title="{{ action.help }}">{{ action.label }}</button>
    </div>{% endfor %}"""


def _render(template: str, **context) -> str:
    return engines["django"].from_string(template).render(context)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query", [{}, {"q": '<b>"x"&', "status": "open", "label": "pass", "after": "5"}]
)
def test_the_filters_are_the_templates_html(query):
    project = ProjectFactory()
    project.slices.create(name='<slice "one">')
    form = ItemListForm(query, project=project)
    assert filters_html(form) == _render(FILTERS, form=form)


class Hostile(forms.Form):
    note = forms.CharField(label="Note <&\"'>", required=False)
    pick = forms.ChoiceField(choices=[("a", "<a>"), ("b", "b & c")], label="Pick")


@pytest.mark.django_db
def test_the_bulk_actions_are_the_templates_html():
    project = ProjectFactory()
    actions = [(a, a.form(project=project)) for a in item_hooks.ACTIONS.values()]
    assert len(actions) >= 3  # reviews' re-open, assign and batch, and judging's send
    hostile = item_hooks.BulkAction(
        name='odd"name', label="<Do it>", form=Hostile, run=None, help='It "does" <it>'
    )
    actions.append((hostile, Hostile()))
    assert bulk_actions_html(actions) == _render(ACTIONS, actions=actions)
    assert bulk_actions_html([]) == _render(ACTIONS, actions=[]) == ""
