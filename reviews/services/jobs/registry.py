"""The kinds of background job. Each app adds its own in its AppConfig.ready (judging: send to
humans, split draws; reviews: the item list's bulk actions), so the worker knows every kind and
reviews imports nothing of judging.

A kind is a Django form (built with `data, project=`) and a service: the worker validates the
form data the job was started with again (a criterion may be gone since) and calls
`run(actor=, project=, **form.cleaned_data, **extra)`, which returns what it did in a sentence.
The worker runs it only if the person who started it still may: active and holding one of the
kind's `roles` in the project when the job runs (a role taken away while it waited stops it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class JobKind:
    name: str
    label: str  # what the job page calls it: "Send to humans"
    form: type
    run: Callable[..., str]
    # Refusals the service raises on bad input: the job fails with the reason, nothing changed.
    refusals: tuple[type[Exception], ...] = ()
    progress: bool = False  # `run` takes progress=callable(done, total)
    # Role values the starter must still hold when it runs; they are also who may watch the
    # job's page and download its file (reviews/views/jobs.py).
    roles: tuple[str, ...] = ("admin",)
    # The service commits its own short steps and may run again after a crash (it skips what is
    # done): the worker runs it outside one long transaction, so on SQLite other writers (the
    # raters' saves) get the write lock between steps. False: the work and the job's outcome
    # commit together, or neither does.
    in_steps: bool = False


KINDS: dict[str, JobKind] = {}


def job_kind_add(kind: JobKind) -> None:
    KINDS[kind.name] = kind
