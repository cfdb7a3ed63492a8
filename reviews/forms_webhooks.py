"""The webhooks page's form: an endpoint this server may call, and the events it is sent."""

from django import forms

from evalsite.outbound import HostRefused
from reviews.models import WebhookEvent
from reviews.services.webhooks.hooks import webhook_url_check


class WebhookForm(forms.Form):
    url = forms.URLField(
        max_length=500,
        assume_scheme="https",
        label="Endpoint URL",
        help_text="https:// on a host this server allows (listed above).",
    )
    events = forms.MultipleChoiceField(
        choices=WebhookEvent.choices,
        widget=forms.CheckboxSelectMultiple,
        initial=WebhookEvent.values,
        error_messages={"required": "Choose at least one event."},
    )

    def clean_url(self):
        url = self.cleaned_data["url"]
        try:
            webhook_url_check(url)
        except HostRefused as refused:
            raise forms.ValidationError(str(refused).removeprefix("url: ")) from None
        return url
