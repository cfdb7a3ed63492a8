"""Gold items from the UI: an admin marks an item as gold on its page (or takes the mark back),
and sets the rater-quality alert on the Raters page."""

from django.contrib import messages
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from evalsite.posting import post_then_redirect
from reviews.access import item_for_user, project_for_user
from reviews.forms import GoldMarkForm, RaterQualitySettingForm
from reviews.models import Role
from reviews.services.rating.quality import GoldError, gold_mark, rater_quality_setting_update


@require_POST
def item_gold(request, slug, item_pk):
    _access, item = item_for_user(request.user, slug, item_pk, roles=[Role.ADMIN])
    form = GoldMarkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose to mark the item as gold or to take the mark back.")
        return redirect("item_detail", slug, item.pk)
    gold = form.cleaned_data["gold"]
    try:
        mark = gold_mark(actor=request.user, item=item, gold=gold)
    except GoldError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            f"{item} is gold (known answer from {mark.source})."
            if gold
            else f"{item} is no longer gold.",
        )
    return redirect("item_detail", slug, item.pk)


@require_POST
def rater_quality_settings(request, slug):
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])

    def save(**data) -> str:
        rater_quality_setting_update(actor=request.user, project=access.project, **data)
        return "Alert threshold saved."

    form = RaterQualitySettingForm(request.POST)
    to = ("rater_quality", slug)
    return post_then_redirect(
        request, form, save, (GoldError,), failed="Alert not saved", to=to, keep="rater-alert"
    )
