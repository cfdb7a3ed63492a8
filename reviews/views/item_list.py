"""The item list: filters kept in the URL, a keyset page, and bulk actions on the ticked rows
or on every item the filters match. Each action is a form and a service (reviews/item_hooks.py);
this view parses, calls the one service, and goes back to the same filtered list."""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from evalsite import raw_rows
from evalsite.posting import errors_text
from reviews import item_hooks
from reviews.access import OVERSEERS, project_for_user
from reviews.forms_items import BulkForm, ItemListForm
from reviews.item_list_html import bulk_actions_html, filters_html
from reviews.item_rows_html import item_rows_html
from reviews.models import Role
from reviews.selectors import recent_jobs
from reviews.selectors_pages import item_list_reads, items_chosen, items_more_than, items_page
from reviews.services.jobs.records import job_start

# Ticked rows (at most forms_items.MAX_TICKED) and up to this many matching items are acted on
# inside the request (a click on a page of rows answers with what it did); more matching items
# run as a background job, whose page shows the progress (bench/jobs.py times that path).
INLINE_MAX = 1000


@require_safe
def item_list(request, slug):
    access = project_for_user(request.user, slug, roles=OVERSEERS)
    reads = item_list_reads(access.project, filtered=bool(request.GET), admin=access.is_admin)
    raw_rows.read_ahead(access.project, reads)
    form = ItemListForm(request.GET, project=access.project)
    filters = form.filters()
    page = items_page(project=access.project, filters=filters, **form.page())
    actions = [
        (action, action.form(project=access.project))
        for action in item_hooks.ACTIONS.values()
    ] if access.is_admin else []  # fmt: skip
    return render(
        request,
        "reviews/item_list.html",
        {
            "access": access,
            "project": access.project,
            "page": page,
            "rows_html": item_rows_html(page.rows, ticks=bool(actions), filtered=filters.any),
            "filters_html": filters_html(form),
            "actions_html": bulk_actions_html(actions),
            "filtered": filters.any,
            "kept": form.query_string(),
            "actions": actions,
            "jobs": recent_jobs(access.project) if access.is_admin else [],
        },
    )


@require_POST
def item_bulk(request, slug):
    """One bulk action, on the ticked items or all that the URL's filters match; back to the
    same filtered list with what it did, or why it did nothing."""
    access = project_for_user(request.user, slug, roles=[Role.ADMIN])
    listing = ItemListForm(request.GET, project=access.project)
    kept = listing.query_string()
    back = reverse("item_list", args=[slug]) + (f"?{kept}" if kept else "")
    form = BulkForm(request.POST)
    if not form.is_valid():
        messages.error(request, errors_text(form))
        return redirect(back)
    action = item_hooks.ACTIONS[form.cleaned_data["action"]]
    fields = action.form(request.POST, project=access.project)
    if not fields.is_valid():
        messages.error(request, f"{action.label}: {errors_text(fields)}")
        return redirect(back)
    every, ticked = form.cleaned_data["all"], form.cleaned_data["item"]
    filters = listing.filters()
    if every and items_more_than(project=access.project, filters=filters, limit=INLINE_MAX):
        job = job_start(
            kind=item_hooks.bulk_job_kind(action.name), actor=request.user,
            project=access.project, form=fields, back=back, extra={"items": kept},
        )  # fmt: skip
        return redirect("job", slug, job.pk)
    item_ids = items_chosen(project=access.project, filters=filters, every=every, ticked=ticked)
    try:
        done = action.run(
            actor=request.user, project=access.project, item_ids=item_ids, **fields.cleaned_data
        )
    except ValidationError as error:
        messages.error(request, f"{action.label}: {' '.join(error.messages)}")
    else:
        messages.success(request, done)
    return redirect(back)
