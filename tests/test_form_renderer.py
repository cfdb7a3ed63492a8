"""The form renderer writes a <select> in Python (evalsite/form_renderer.py): its HTML must be
Django's own, for every kind of select the site renders."""

import pytest
from django import forms
from django.contrib.auth import get_user_model
from django.forms.renderers import DjangoTemplates

from evalsite.form_renderer import FormRenderer


class Choices(forms.Form):
    status = forms.ChoiceField(choices=[("", "Any status"), ("open", "Open <new>")])
    grouped = forms.ChoiceField(
        choices=[("Fruit", [("a", "Apple"), ("b", 'B "quoted" & more')]), ("c", "Loose")],
        required=False,
    )
    number = forms.TypedChoiceField(coerce=int, choices=[(1, "one"), (2, "two")])
    many = forms.MultipleChoiceField(choices=[("x", "X"), ("y", "Y"), ("z", "Z")])
    attributed = forms.ChoiceField(
        choices=[("k", "K")],
        widget=forms.Select(attrs={"class": "wide", "aria-describedby": "help", "data-x": True}),
    )


def _both(form: forms.Form, name: str) -> tuple[str, str]:
    field = form[name]
    ours = field.as_widget()
    form.renderer = DjangoTemplates()
    theirs = form[name].as_widget()
    return str(ours), str(theirs)


@pytest.mark.parametrize("name", ["status", "grouped", "number", "many", "attributed"])
@pytest.mark.parametrize(
    "data",
    [
        None,
        {"status": "open", "grouped": "b", "number": "2", "many": ["x", "z"], "attributed": "k"},
    ],
)
def test_each_select_is_djangos_html(name, data):
    form = Choices(data, renderer=FormRenderer())
    ours, theirs = _both(form, name)
    assert ours == theirs
    assert "<option" in ours


@pytest.mark.django_db
def test_a_model_choice_select_is_djangos_html():
    get_user_model().objects.create(username="b<o>b")

    class Pick(forms.Form):
        user = forms.ModelChoiceField(get_user_model().objects.all(), empty_label="Choose")

    ours, theirs = _both(Pick(renderer=FormRenderer()), "user")
    assert ours == theirs and "b&lt;o&gt;b" in ours


def test_the_site_renders_with_it(settings):
    assert settings.FORM_RENDERER == "evalsite.form_renderer.FormRenderer"
