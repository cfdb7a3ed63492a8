"""What another app adds to the item list: filters and bulk actions (judging adds the split
filter and *Send to humans*). Reviews knows nothing of judging: judging registers here in its
AppConfig.ready, as its importers register with the import dispatcher. Reviews' own bulk
actions register the same way (reviews/apps.py), so the list treats every action alike.

A bulk action is a Django form (the action's own fields, built with `project=`) and a service
called with the chosen items: `run(actor=, project=, item_ids=, **form.cleaned_data)` returns
the sentence the page shows. Services take item ids, never a request, so one over thousands of
items runs as a background job (kind `items.<name>`, the list's filters in its params: the
worker finds the matching items with `CHOOSE`) without changing them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ListFilter:
    name: str  # the GET parameter
    label: str  # "Any <label>" heads the select
    choices: Callable[[object], list[tuple[str, str]]]  # project -> [(value, label)]
    # value -> (SQL condition on `reviews_item i`, params); only called with a listed value
    condition: Callable[[str], tuple[str, list]]


@dataclass(frozen=True)
class BulkAction:
    name: str  # the button's value
    label: str  # the button's text
    form: type  # a django Form taking (data, project=)
    run: Callable[..., str]
    help: str = ""
    # The same action as a background job that commits its own steps (on SQLite short
    # transactions, so raters' saves go between) and may run again after a crash, skipping what
    # is done: `run_in_steps(actor=, project=, item_ids=, progress=, **fields)`. None: the job
    # runs `run` in one transaction with its outcome (all or nothing).
    run_in_steps: Callable[..., str] | None = None
    # The statements its form reads, as `(sql, params)` for `evalsite.raw_rows`: the list reads
    # them ahead with its own, in one round trip, and the form finds their rows there
    # (`raw_rows.fetch_kept`).
    reads: Callable[[object], list[tuple[str, list]]] | None = None


FILTERS: dict[str, ListFilter] = {}
ACTIONS: dict[str, BulkAction] = {}
# (project, the list's query string) -> the matching item ids: reviews.item_choice, set by
# reviews/apps.py (it imports the list's form, which imports this module).
CHOOSE: Callable[[object, str], list[int]] | None = None


def filter_register(item_filter: ListFilter) -> None:
    FILTERS[item_filter.name] = item_filter


def action_register(action: BulkAction) -> None:
    from reviews.services.jobs.registry import JobKind, job_kind_add

    ACTIONS[action.name] = action
    steps = action.run_in_steps is not None
    job_kind_add(JobKind(bulk_job_kind(action.name), action.label, action.form, _as_job(action),
                         progress=steps, in_steps=steps))  # fmt: skip


def bulk_job_kind(name: str) -> str:
    return f"items.{name}"


def _as_job(action: BulkAction) -> Callable[..., str]:
    """The action on every item the list's filters (`items`, its query string) match when the
    job runs."""

    def run(*, actor, project, items: str, **fields) -> str:
        run = action.run_in_steps or action.run  # `progress` is among `fields` only in steps
        return run(actor=actor, project=project, item_ids=CHOOSE(project, items), **fields)

    return run
