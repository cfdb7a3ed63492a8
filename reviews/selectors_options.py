"""The item list's choice lists (the slice and rater filters, *Assign*'s rater, *Add to batch*'s
batch) in one hand-written statement, read once per request.

Through the ORM they were three statements and, for *Assign*, a user object per rater: about a
fifth of the page's CPU (issue #33: the item list at 15x Label Studio). `evalsite/raw_rows.py`
says when SQL is written by hand; tests/reviews/test_list_options.py holds these lists to the
ORM's on both databases. The forms that show them keep their ORM querysets to check a post.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from evalsite import raw_rows
from reviews.models import AssignmentBatch, Membership, Role, Slice


@dataclass(frozen=True)
class ListOptions:
    slices: list[tuple[int, str]]  # (id, name) by name
    raters: list[tuple[int, str]]  # (user id, username) by username
    batches: list[tuple[int, str]]  # (id, name), newest first


def _sql() -> str:
    # The database orders each list (its collation, as the ORM's order_by); names come from
    # the models, values are parameters.
    user = get_user_model()._meta.db_table
    return (
        f"SELECT 0, s.id, s.name, ROW_NUMBER() OVER (ORDER BY s.name)"  # noqa: S608
        f" FROM {Slice._meta.db_table} s WHERE s.project_id = %s"
        f" UNION ALL SELECT 1, u.id, u.username, ROW_NUMBER() OVER (ORDER BY u.username)"
        f" FROM {Membership._meta.db_table} m JOIN {user} u ON u.id = m.user_id"
        f" WHERE m.project_id = %s AND m.role = %s"
        f" UNION ALL SELECT 2, b.id, b.name,"
        f" ROW_NUMBER() OVER (ORDER BY b.created_at DESC, b.id DESC)"
        f" FROM {AssignmentBatch._meta.db_table} b WHERE b.project_id = %s"
        " ORDER BY 1, 4"
    )


def list_options_statement(project) -> tuple[str, list]:
    """The statement `list_options` runs (the item list reads it ahead: raw_rows.read_ahead)."""
    return _sql(), [project.pk, project.pk, Role.RATER, project.pk]


def list_options(project) -> ListOptions:
    """The project's choice lists, read on first use and kept on this `project` object: the
    list's filters and its bulk actions' forms share one read per request."""
    cached = project.__dict__.get("_list_options")
    if cached is None:
        rows = raw_rows.fetch_kept(project, *list_options_statement(project))
        lists = ([], [], [])
        for kind, pk, name, _n in rows:
            lists[kind].append((pk, name))
        cached = project.__dict__["_list_options"] = ListOptions(*lists)
    return cached
