"""The form renderer writes a <select> in Python (evalsite/form_renderer.py): its HTML must be
Django's own, for every kind of select the site renders."""

import pytest
from django import forms
from django.contrib.auth import get_user_model
from django.forms.renderers import DjangoTemplates
from django.utils.safestring import mark_safe
from django.utils.translation import gettext_lazy

from evalsite.form_renderer import FormRenderer, QuickSelect


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


class Quick(forms.Form):
    status = forms.ChoiceField(
        choices=[("", "Any status"), ("open", "Open <new>"), ("a&b", 'B "quoted"')],
        required=False,
        widget=QuickSelect,
    )
    number = forms.TypedChoiceField(
        coerce=int, choices=[(1, "one"), (2, "two")], widget=QuickSelect
    )
    later = forms.ChoiceField(
        choices=lambda: [("", "Pick"), ("x", mark_safe("<i>x</i>"))], widget=QuickSelect
    )
    lazy = forms.ChoiceField(choices=[("a", gettext_lazy("Approved"))], widget=QuickSelect)
    grouped = forms.ChoiceField(
        choices=[("Fruit", [("a", "Apple")]), ("c", "Loose")], widget=QuickSelect
    )
    attributed = forms.ChoiceField(
        choices=[(None, "none"), ("k", "K")],
        widget=QuickSelect(attrs={"class": "wide", "data-x": True, "data-off": False}),
    )


def _quick_and_djangos(form: forms.Form, name: str) -> tuple[str, str]:
    field = form[name]
    ours = str(field)
    field.field.widget.__class__ = forms.Select  # the same widget, Django's way
    form.renderer = DjangoTemplates()
    return ours, str(form[name])


@pytest.mark.parametrize("name", ["status", "number", "later", "lazy", "grouped", "attributed"])
@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {
            "status": "open",
            "number": "2",
            "later": "x",
            "lazy": "a",
            "grouped": "a",
            "attributed": "k",
        },
        {"status": "a&b", "number": "9", "later": "nope", "attributed": ""},
    ],
)
def test_a_quick_select_is_djangos_html(name, data):
    form = Quick(data, renderer=FormRenderer())
    ours, theirs = _quick_and_djangos(form, name)
    assert ours == theirs
    assert "<option" in ours


@pytest.mark.django_db
def test_a_quick_model_choice_select_is_djangos_html():
    get_user_model().objects.create(username="b<o>b")

    class Pick(forms.Form):
        user = forms.ModelChoiceField(
            get_user_model().objects.order_by("pk"), empty_label="Choose", widget=QuickSelect
        )

    for data in (None, {"user": str(get_user_model().objects.get().pk)}):
        ours, theirs = _quick_and_djangos(Pick(data, renderer=FormRenderer()), "user")
        assert ours == theirs and "b&lt;o&gt;b" in ours


INPUTS = [
    forms.TextInput,
    forms.NumberInput,
    forms.EmailInput,
    forms.URLInput,
    forms.PasswordInput,
    forms.HiddenInput,
    forms.SearchInput,
    forms.TelInput,
    forms.ColorInput,
    forms.DateInput,
    forms.DateTimeInput,
    forms.TimeInput,
    forms.CheckboxInput,
    forms.FileInput,
]
VALUES = [None, "", "a<b> & \"c\" 'd'", mark_safe("<i>safe</i>"), 0, 12.5, True, False]


@pytest.mark.parametrize("widget_class", INPUTS)
@pytest.mark.parametrize("value", VALUES)
def test_each_input_is_djangos_html(widget_class, value):
    attrs = {"class": "a&b", "required": True, "disabled": False, "data-s": mark_safe("<x>")}
    ours = widget_class(attrs=attrs).render("field<name>", value, renderer=FormRenderer())
    theirs = widget_class(attrs=attrs).render("field<name>", value, renderer=DjangoTemplates())
    assert ours == theirs
    assert ours.startswith("<input")


def test_a_bound_forms_inputs_are_djangos_html():
    class Typed(forms.Form):
        q = forms.CharField(required=False, label="Id or title")
        n = forms.IntegerField(min_value=1)
        when = forms.DateField(required=False)
        tick = forms.BooleanField(required=False)

    for data in (None, {"q": "x<y", "n": "3", "when": "2026-12-02", "tick": "on"}, {"n": "no"}):
        form = Typed(data, renderer=FormRenderer())
        for name in form.fields:
            ours = str(form[name])
            form.renderer = DjangoTemplates()
            assert ours == str(form[name])
            form.renderer = FormRenderer()


def test_escaping_is_djangos():
    from django.utils.html import conditional_escape as djangos

    from evalsite.form_renderer import conditional_escape

    for value in ["a<b>&\"c'", mark_safe("<b>kept</b>"), gettext_lazy("Any <status>"), 42, None]:
        assert conditional_escape(value) == djangos(value)


class Plain(forms.Form):
    pick = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, widget=QuickSelect)


@pytest.mark.parametrize("data", [None, {"pick": "2"}, {"pick": "9"}, {"pick": ""}])
def test_plain_choices_act_as_the_same_list(data):
    """PlainChoices skip Django's walk of every option; the field checks and draws the same."""
    from evalsite.form_renderer import PlainChoices

    pairs = [("", "Anyone"), (1, "ana <admin>"), (2, 'ben "b"')]
    listed, plain = Plain(data), Plain(data)
    listed.fields["pick"].choices = pairs
    plain.fields["pick"].choices = PlainChoices(pairs)
    assert list(plain.fields["pick"].choices) == list(listed.fields["pick"].choices) == pairs
    assert plain.is_valid() == listed.is_valid()
    assert plain.errors == listed.errors
    assert str(plain["pick"]) == str(listed["pick"])
    callable_choices = Plain(data)
    callable_choices.fields["pick"].choices = lambda: PlainChoices(pairs)
    assert str(callable_choices["pick"]) == str(listed["pick"])
    assert callable_choices.is_valid() == listed.is_valid()
