"""One item as the calibration work sees it: its evidence (input, output, reference, files),
every human label, every judge sample, and the failure tags of its disagreements. Verdicts and
labels given on an earlier revision of its content are listed apart ("given on an earlier
output"), with the diff of that output to the current one."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.models import Split
from judging.selectors_item import item_criterion_panels, item_split
from judging.services.calibration.failures import buckets_for, current_tags
from judging.views.held_out import held_out_shown
from reviews.access import OVERSEERS, item_for_overseer
from reviews.selectors import item_documents, item_slices
from reviews.services.revisions import earlier_outputs


@require_safe
def dashboard_item(request, slug, item_pk):
    access, item = item_for_overseer(request.user, slug, item_pk, roles=OVERSEERS)
    split = item_split(item)
    hidden = split == Split.HELD_OUT and not held_out_shown(request, access.project)
    tags = current_tags(access.project)
    return render(
        request,
        "judging/item.html",
        {
            "access": access,
            "project": access.project,
            "item": item,
            "split": split,
            "documents": item_documents(item),
            "slices": item_slices(item),
            "panels": [] if hidden else item_criterion_panels(item, tags),
            "earlier_outputs": [] if hidden else earlier_outputs(item),
            "buckets": buckets_for(access.project),
            "can_tag": access.is_adjudicator,
            "held_out_hidden": hidden,
            "held_out_what": f"item {item.external_id}",
        },
    )
