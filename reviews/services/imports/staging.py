"""A long import on SQLite without holding the database for minutes (issue 26, F4).

SQLite lets one connection write at a time: an import that wrote 30,000 review cases in one
transaction held the write lock for minutes, and every login, claim and autosave failed with
"database is locked". On SQLite the import therefore writes its NEW items in short transactions
(each holds the lock at most `SLICE_SECONDS`, then waiting writers get their turn) under a
holding project of its own: a Project row with no members, so no page, queue, API or dashboard
shows its items. A final, quick transaction publishes them (one UPDATE moves the items into the
real project) together with everything that touches items already there; all-or-nothing holds:
until that commit nobody sees a row, and a failure discards the holding project and what it
held (`holding_discard`).

PostgreSQL keeps the one transaction: its row locks block no login, and its history triggers
let nothing delete history, even unpublished.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from django.db import connection, transaction

from evalsite.history_triggers import history_unlocked
from reviews.formats.errors import FormatError
from reviews.models import Document, Item, Project

logger = logging.getLogger(__name__)

SLICE_SECONDS = 0.25  # the longest one short transaction holds SQLite's write lock
# Then the import waits this long: SQLite's busy handler retries a waiting writer every 100 ms
# at most, so each waiting writer's next retry falls in the pause and gets the lock.
PAUSE_SECONDS = 0.1
HOLDING_PREFIX = "~importing-"  # a slug no form accepts: a holding project, never a real one
LOOKUP_CHUNK = 500  # case ids looked up in one query

Unit = TypeVar("Unit")


def staged_writes() -> bool:
    """Whether imports write in short transactions (SQLite) or in one (PostgreSQL)."""
    return connection.vendor == "sqlite"


def in_short_transactions(units: Iterable[Unit], write: Callable[[Unit], None]) -> None:
    """`write(unit)` for each unit, in transactions that each hold the lock about
    SLICE_SECONDS, pausing between them so that waiting writers go first."""
    pending = iter(units)
    finished = False
    while not finished:
        deadline = time.monotonic() + SLICE_SECONDS
        with transaction.atomic():
            finished = True
            for unit in pending:
                write(unit)
                if time.monotonic() >= deadline:
                    finished = False
                    break
        if not connection.in_atomic_block:  # inside a caller's transaction the lock stays held
            time.sleep(PAUSE_SECONDS)


@dataclass
class Staging:
    """One import's holding project, and the evidence rows it created (to remove on failure)."""

    project: Project  # where the rows go when published
    holding: Project  # where they wait, seen by no one
    documents: list[int] | None = field(default_factory=list)  # None: every unattached one
    published: bool = False  # once published, new items go straight into the project

    def split_new(
        self, units: Iterable[Unit], key: Callable[[Unit], str], *, later: Callable[[Unit], bool]
    ) -> tuple[Iterator[Unit], list[Unit]]:
        """The units whose item the project lacks (written now, into the holding project) as an
        iterator, and, filled as it runs, those for items already there or `later(unit)`
        (written in the publishing transaction, as they change what people see)."""
        deferred: list[Unit] = []

        def fresh() -> Iterator[Unit]:
            for chunk in _chunks(units, LOOKUP_CHUNK):
                keys = {key(unit) for unit in chunk}
                there = set(
                    Item.objects.filter(project=self.project, external_id__in=keys).values_list(
                        "external_id", flat=True
                    )
                )
                for unit in chunk:
                    if key(unit) in there or later(unit):
                        deferred.append(unit)
                    else:
                        yield unit

        return fresh(), deferred

    def publish(self, *, file: str) -> None:
        """Move the held items into the project (inside the caller's transaction). Refused if
        another import created one of their ids there meanwhile."""
        held = Item.objects.filter(project=self.holding)
        clash = (
            Item.objects.filter(project=self.project, external_id__in=held.values("external_id"))
            .values_list("external_id", flat=True)
            .first()
        )
        if clash is not None:
            raise FormatError(
                f"case {clash!r} was imported by another import while this one ran; "
                "import this file again",
                file=file,
            )
        held.update(project=self.project)
        Project.objects.filter(pk=self.holding.pk).delete()
        self.published = True


def holding_open(project: Project) -> Staging:
    """A new holding project for one import into `project`, saying which process owns it."""
    owner = {"importing_into": project.slug, "pid": os.getpid(), "host": socket.gethostname()}
    with transaction.atomic():
        holding = Project.objects.create(
            slug=f"{HOLDING_PREFIX}{uuid.uuid4().hex[:16]}",
            name=f"(an import into {project.slug}, not yet published)",
            description=json.dumps(owner),
        )
    return Staging(project=project, holding=holding)


def holding_discard(staging: Staging) -> None:
    """Remove an unpublished import's rows, in short transactions (nobody sees them). Their
    history rows (the imported events and generated references) were never shown: deleting
    them is not editing history, so the SQLite triggers are unlocked for it."""
    pks = list(Item.objects.filter(project=staging.holding).values_list("pk", flat=True))
    with history_unlocked(connection):
        in_short_transactions(
            _chunks(pks, 100), lambda chunk: Item.objects.filter(pk__in=chunk).delete()
        )
        with transaction.atomic():
            Project.objects.filter(pk=staging.holding.pk).delete()
            documents = Document.objects.filter(sources__isnull=True)
            if staging.documents is not None:
                documents = documents.filter(pk__in=staging.documents)
            documents.delete()


def holdings_abandoned_discard() -> int:
    """Discard holding projects whose import died with its process (killed mid-import) on this
    machine; returns how many."""
    host, discarded = socket.gethostname(), 0
    for holding in Project.objects.filter(slug__startswith=HOLDING_PREFIX):
        try:
            owner = json.loads(holding.description)
        except ValueError:
            continue
        if owner.get("host") != host or _alive(owner.get("pid")):
            continue
        logger.warning("discarding the unpublished rows of a dead import (%s)", holding.slug)
        # Which evidence rows it created died with it; every import attaches a document to an
        # item in the transaction that creates it, so the ones attached to none are its own.
        holding_discard(Staging(project=holding, holding=holding, documents=None))
        discarded += 1
    return discarded


def _alive(pid) -> bool:
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _chunks(units: Iterable[Unit], size: int) -> Iterator[list[Unit]]:
    chunk: list[Unit] = []
    for unit in units:
        chunk.append(unit)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
