"""Which items a text-metric or pass@k report reads: one split, optionally one slice.

`all` needs no split; `held_out` and `calibration` need a drawn one (items imported since the
draw are drawn into it first, the late-item rule). Reading `held_out` or `all` leaves a
`HeldOutAccess` row, as the agreement report does: these figures are measured on held-out items
too.
"""

from __future__ import annotations

from django.db.models import QuerySet

from judging.services.calibration.splits import (
    SplitError,
    current_draw,
    held_out_access_log,
    items_in_split,
    split_extend,
)
from reviews.models import Project, Slice


def scoped_items(
    *,
    actor,
    project: Project,
    split: str,
    slice_name: str | None,
    what: str,
    record_look: bool = True,
) -> QuerySet:
    """The project's items in `split` (and `slice_name`), ordered by external id. `what` names
    the report in the held-out access log; `record_look=False` (a page whose *Show held-out
    figures* recorded the look already) writes nothing."""
    if split != "all":
        if current_draw(project) is None:
            raise SplitError(
                f"no split has been drawn for project {project.slug!r}: draw it first "
                "(manage.py split_draw) or ask for --split all"
            )
        split_extend(project=project)
    items = items_in_split(project=project, split=split)
    if slice_name:
        if not Slice.objects.filter(project=project, name=slice_name).exists():
            names = ", ".join(Slice.objects.filter(project=project).values_list("name", flat=True))
            raise SplitError(
                f"no slice {slice_name!r} in project {project.slug!r} (slices: {names or 'none'})"
            )
        items = items.filter(slices__name=slice_name)
    if record_look and split in ("held_out", "all"):
        where = f", slice {slice_name}" if slice_name else ""
        held_out_access_log(actor=actor, project=project, what=f"{what}, split {split}{where}")
    return items.order_by("external_id")
