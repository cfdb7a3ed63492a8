from django import forms

from reviews.models import ResolutionRule


class ProjectCreateForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="Used in URLs and on the command line.")
    name = forms.CharField(max_length=200)
    overlap = forms.IntegerField(min_value=1, max_value=20, initial=2)
    resolution_rule = forms.ChoiceField(
        choices=ResolutionRule.choices, initial=ResolutionRule.UNANIMOUS
    )
