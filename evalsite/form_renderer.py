"""Django's form renderer, with `<select>` and `<input>` written in Python.

Django renders a select through its template, which includes one template per option (and an
attributes template per option): on the item list, whose filters and bulk actions hold seven
selects of raters, slices and batches, that was half the page's CPU (175 options: 8 of 16 ms).
The HTML here is the templates' own, character for character where it matters (same
attributes, same escaping: tests/test_form_renderer.py compares the two for every kind of
select, and for inputs); any other widget, and a select whose options use another template,
goes to Django.
"""

from __future__ import annotations

import html

from django import forms
from django.forms.renderers import DjangoTemplates
from django.utils.choices import BaseChoiceIterator
from django.utils.safestring import mark_safe

SELECT = "django/forms/widgets/select.html"
OPTION = "django/forms/widgets/select_option.html"
# The input widgets whose template is `{% include "django/forms/widgets/input.html" %}`, no more.
INPUTS = {
    f"django/forms/widgets/{kind}.html"
    for kind in (
        "input", "text", "number", "email", "url", "password", "hidden", "search", "tel",
        "color", "date", "datetime", "time", "checkbox", "file",
    )
}  # fmt: skip


def conditional_escape(value) -> str:
    """Django's `conditional_escape`, the same text, without its lazy-argument wrapper: the
    item list escapes ~750 values a view, and the wrapper was most of their cost."""
    if hasattr(value, "__html__"):
        return value.__html__()
    return html.escape(str(value))  # what django.utils.html.escape returns, marked safe


class PlainChoices(BaseChoiceIterator):
    """A field's choices as (value, label) pairs of plain values: the form Django normalizes
    choices to, which it then takes as they are. Set as a list, they are walked option by
    option twice (the field's and its widget's copy): on the item list, 370 options cost more
    than drawing them (issue #33). Not for grouped or lazy labels."""

    def __init__(self, pairs: list[tuple]) -> None:
        self.pairs = pairs

    def __iter__(self):
        return iter(self.pairs)


def _attrs(attrs: dict) -> str:
    """As attrs.html: in order, True as a bare name, False left out."""
    return "".join(
        f" {name}" if value is True else f' {name}="{conditional_escape(str(value))}"'
        for name, value in attrs.items()
        if value is not False
    )


def _option(option: dict) -> str:
    return (
        f'<option value="{conditional_escape(str(option["value"]))}"'
        f"{_attrs(option['attrs'])}>{conditional_escape(option['label'])}</option>\n"
    )  # the option template's file ends with a newline, kept by its include


def select_html(widget: dict) -> str:
    parts = [f'<select name="{conditional_escape(widget["name"])}"{_attrs(widget["attrs"])}>']
    for group, options, _index in widget["optgroups"]:
        if group:
            parts.append(f'\n  <optgroup label="{conditional_escape(group)}">')
        parts.extend(f"\n  {_option(option)}" for option in options)
        if group:
            parts.append("\n  </optgroup>")
    parts.append("\n</select>")
    return mark_safe("".join(parts))  # noqa: S308 (every value above is escaped)


def input_html(widget: dict) -> str:
    value = widget["value"]
    value = "" if value is None else f' value="{conditional_escape(str(value))}"'
    html = (
        f'<input type="{conditional_escape(widget["type"])}"'
        f' name="{conditional_escape(widget["name"])}"{value}{_attrs(widget["attrs"])}>'
    )
    return mark_safe(html)  # noqa: S308 (every value above is escaped)


class QuickSelect(forms.Select):
    """A single select written straight from its choices, without Django's option dicts (on
    the item list, whose selects are redrawn on every view): the HTML of `select_html`, so
    Django's own (tests/test_form_renderer.py). Grouped choices or other templates: Django's
    way."""

    def render(self, name, value, attrs=None, renderer=None):
        choices = list(self.choices)  # once: a callable's choices are read again per iteration
        if (
            self.template_name != SELECT
            or self.option_template_name != OPTION
            or self.allow_multiple_selected
            or any(isinstance(label, (list, tuple)) for _value, label in choices)
        ):
            return super().render(name, value, attrs, renderer)
        chosen = self.format_value(value)
        attributes = _attrs(self.build_attrs(self.attrs, attrs))
        parts = [f'<select name="{conditional_escape(name)}"{attributes}>']
        found = False
        for option_value, label in choices:
            option_value = "" if option_value is None else option_value
            selected = not found and str(option_value) in chosen  # the first match only
            found |= selected
            parts.append(  # _option's HTML, without its dicts
                f'\n  <option value="{conditional_escape(str(option_value))}"'
                f"{' selected' if selected else ''}>{conditional_escape(label)}</option>\n"
            )
        parts.append("\n</select>")
        return mark_safe("".join(parts))  # noqa: S308 (every value above is escaped)


class FormRenderer(DjangoTemplates):
    def render(self, template_name, context, request=None):
        widget = context.get("widget", {})
        if template_name == SELECT and all(
            option.get("template_name") == OPTION
            for _group, options, _index in widget.get("optgroups", ())
            for option in options
        ):
            return select_html(widget)
        if template_name in INPUTS and not isinstance(widget.get("value"), (list, tuple)):
            return input_html(widget)
        return super().render(template_name, context, request)
